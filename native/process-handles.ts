// The port between the pod terminator and the kernel's process handles: a pidfd names exactly one
// process for as long as it is held, so a signal sent through it can never reach another process
// that was given the same PID after the first exited. native/libc-process-handles.ts implements it
// on pidfd_open and pidfd_send_signal; tests wrap it to inject a PID reuse between two steps.

/** An open pidfd. The brand keeps it from being passed where a PID or another descriptor belongs. */
export type PidFd = number & { readonly __handle: 'pidfd' };

export interface ProcessHandles {
  /** `pidfd_open(pid)`: a handle on the process that has this PID now; null when none has (ESRCH). Throws a NativeError otherwise (ENOSYS before Linux 5.3). */
  open(pid: number): PidFd | null;
  /** `pidfd_send_signal`: true when delivered, false when the process has exited meanwhile (ESRCH). Throws a NativeError otherwise. */
  signal(handle: PidFd, signal: NodeJS.Signals): boolean;
  /**
   * `process_mrelease`: frees the memory of a process already killed, at once, in the caller. Absent
   * on a handle set that cannot (a fake); `unsupported` before Linux 5.15 (ENOSYS) or where a
   * seccomp profile refuses it; `not-dying` when the process has no SIGKILL pending.
   */
  release?(handle: PidFd): ReleaseOutcome;
  close(handle: PidFd): void;
}

export type ReleaseOutcome = 'released' | 'gone' | 'not-dying' | 'unsupported';
