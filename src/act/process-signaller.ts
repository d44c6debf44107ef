// Signals the processes of chosen cgroups and nothing else, whatever a file says or a race does.
// Each PID read from the cgroups' `cgroup.procs` is first pinned by a pidfd (the handle names that
// one process for as long as it is held), then proven a member after pinning (listed again by the
// cgroups' own `cgroup.procs`, and its `/proc/<pid>/cgroup` naming a cgroup inside them), never PID
// 1 or the agent itself, and only then signalled, through the pidfd: a PID that was reused by
// another process between the read and the signal is never hit.

import { errorMessage } from '../errors.js';
import type { HostFs } from '../host/host-fs.js';
import type { CgroupVersion } from '../host/memory-stat.js';
import { hierarchyPath, isWithinCgroup, memoryCgroupOf } from '../host/proc-pid.js';
import { isNotFound, readOk, type ReadResult } from '../host/read-result.js';
import type { PidFd, ProcessHandles } from '../../native/process-handles.js';

/** A process that was not signalled although its cgroup listed it, and why. */
export interface SignalRefusal {
  readonly pid: number;
  readonly reason: string;
}

export interface SignalOutcome {
  /** Processes the signal was delivered to. */
  readonly signalled: number;
  readonly refusals: readonly SignalRefusal[];
  /** Of those killed, the processes whose memory process_mrelease freed before they exited. */
  readonly released?: number;
}

/** Where a signaller on another thread (the kill path's) finds a process and places it: the deps below, the namespace root found. */
export interface SignallerPlace {
  readonly procRoot: string;
  readonly memoryRoot: string;
  readonly version: CgroupVersion;
  readonly selfPid: number;
  readonly namespaceRoot: string;
}

export interface ProcessSignallerDeps {
  readonly fs: HostFs;
  /** The host's /proc (host-resolved), in the PID namespace the cgroups' `cgroup.procs` speak. */
  readonly procRoot: string;
  readonly handles: ProcessHandles;
  /** The memory hierarchy's root directory; every signalled cgroup lies below it. */
  readonly memoryRoot: string;
  readonly version: CgroupVersion;
  /** The agent's own PID, never signalled. */
  readonly selfPid: number;
  /** The root of the agent's cgroup namespace as a hierarchy path (see proc-pid.ts), found once. */
  readonly namespaceRoot: () => ReadResult<string>;
}

/** Every PID in the cgroups at `dirs` and their descendants, with the directory that listed it. */
export function pidsInCgroupTrees(fs: HostFs, dirs: readonly string[]): Map<number, string> {
  const pids = new Map<number, string>();
  const walk = (dir: string): void => {
    let procs: string;
    try {
      procs = fs.readSmallFile(`${dir}/cgroup.procs`);
    } catch {
      return; // The cgroup vanished meanwhile: nothing left to signal there.
    }
    for (const line of procs.split('\n')) {
      if (!/^\d+$/.test(line)) continue;
      const pid = Number(line);
      if (Number.isSafeInteger(pid) && pid > 0) pids.set(pid, dir);
    }
    let children: string[];
    try {
      children = fs.subdirectories(dir);
    } catch {
      return;
    }
    // Names read from the kernel are single components (readdir never returns `.` or `..`).
    for (const child of children) walk(`${dir}/${child}`);
  };
  for (const dir of dirs) walk(dir);
  return pids;
}

/**
 * process_mrelease on each killed process (Linux 5.15): its memory is freed now, by the caller, not
 * when the process gets to run its exit (which a starved or stalled process may take long to do).
 * Returns how many were released; stops at the first `unsupported` (the kernel lacks the call).
 */
export function releaseMemory(handles: ProcessHandles, killed: readonly PidFd[]): number {
  if (handles.release === undefined) return 0;
  let released = 0;
  for (const handle of killed) {
    let outcome;
    try {
      outcome = handles.release(handle);
    } catch {
      continue; // An unexpected errno: the kill stands, the memory comes back as the process exits.
    }
    if (outcome === 'unsupported') break;
    if (outcome === 'released') released++;
  }
  return released;
}

/** Pins each PID with a pidfd and releases its memory: for processes already killed by cgroup.kill. */
export function releaseMemoryOfPids(handles: ProcessHandles, pids: Iterable<number>): number {
  if (handles.release === undefined) return 0;
  const pinned: PidFd[] = [];
  try {
    for (const pid of pids) {
      try {
        const handle = handles.open(pid);
        if (handle !== null) pinned.push(handle);
      } catch {
        break; // No pidfds on this kernel: nothing can be released either.
      }
    }
    // A PID reused since the kill names a process that is not dying: process_mrelease refuses it (EINVAL).
    return releaseMemory(handles, pinned);
  } finally {
    for (const handle of pinned) {
      try {
        handles.close(handle);
      } catch {
        // Already closed.
      }
    }
  }
}

export class ProcessSignaller {
  constructor(private readonly deps: ProcessSignallerDeps) {}

  /** The signaller of `place`, on the host door and process handles of the thread it runs on. */
  static at(place: SignallerPlace, fs: HostFs, handles: ProcessHandles): ProcessSignaller {
    const namespaceRoot = readOk(place.namespaceRoot);
    return new ProcessSignaller({ fs, handles, procRoot: place.procRoot, memoryRoot: place.memoryRoot, version: place.version, selfPid: place.selfPid, namespaceRoot: () => namespaceRoot });
  }

  /** The root of the agent's cgroup namespace the processes are placed against (found once). */
  namespaceRoot(): ReadResult<string> {
    return this.deps.namespaceRoot();
  }

  /**
   * Signals every process in the cgroup trees at `dirs`, each proven a member first, except those in
   * `done` (signalled by an earlier round), to which each one signalled is added. Never throws.
   */
  signalTrees(dirs: readonly string[], signal: NodeJS.Signals, done: Set<number> = new Set(), options: { release?: boolean } = {}): SignalOutcome {
    const { fs, handles } = this.deps;
    const refusals: SignalRefusal[] = [];
    const pinned = new Map<number, PidFd>();
    try {
      for (const pid of pidsInCgroupTrees(fs, dirs).keys()) {
        if (done.has(pid)) continue;
        // Never init, never the agent, whatever a cgroup file says.
        if (pid === 1 || pid === this.deps.selfPid) {
          refusals.push({ pid, reason: pid === 1 ? 'PID 1 is never signalled' : 'the agent never signals itself' });
          continue;
        }
        const handle = handles.open(pid);
        if (handle !== null) pinned.set(pid, handle);
      }
      // Listed again now that each is pinned: a PID that left (or was reused outside) is not.
      const members = pidsInCgroupTrees(fs, dirs);
      let signalled = 0;
      const killed: PidFd[] = [];
      for (const [pid, handle] of pinned) {
        if (!members.has(pid)) continue; // Exited (or moved) between the two reads.
        const outside = this.outsideReason(pid, dirs);
        if (outside === 'gone') continue;
        if (outside !== null) {
          refusals.push({ pid, reason: outside });
          continue;
        }
        if (handles.signal(handle, signal)) {
          signalled++;
          done.add(pid);
          killed.push(handle);
        }
      }
      // Every process is killed first; then each one's memory is reaped now, through the same pidfd.
      const released = options.release === true && signal === 'SIGKILL' ? releaseMemory(handles, killed) : 0;
      return { signalled, refusals, released };
    } catch (error) {
      // ENOSYS (a kernel before 5.3) or a seccomp profile refusing pidfds: nothing is signalled
      // without a handle, so local termination is refused rather than done unsafely.
      refusals.push({ pid: 0, reason: `cannot signal through a pidfd: ${errorMessage(error)}` });
      return { signalled: 0, refusals };
    } finally {
      for (const handle of pinned.values()) {
        try {
          handles.close(handle);
        } catch {
          // Already closed: nothing is held either way.
        }
      }
    }
  }

  // Why /proc/<pid>/cgroup does not place the process inside one of `dirs` (null when it does;
  // 'gone' when the process has exited).
  private outsideReason(pid: number, dirs: readonly string[]): string | null | 'gone' {
    const { fs, procRoot, memoryRoot, version } = this.deps;
    let text: string;
    try {
      text = fs.readSmallFile(`${procRoot}/${pid}/cgroup`);
    } catch (error) {
      return isNotFound(error) || (error as NodeJS.ErrnoException).code === 'ESRCH' ? 'gone' : `cannot read ${procRoot}/${pid}/cgroup: ${errorMessage(error)}`;
    }
    const shown = memoryCgroupOf(text, version);
    if (shown === undefined) return `${procRoot}/${pid}/cgroup names no memory cgroup`;
    const root = this.deps.namespaceRoot();
    if (!root.ok) return `cannot place /proc/${pid}/cgroup in the hierarchy: ${root.reason}`;
    const path = hierarchyPath(root.value, shown);
    if (path === null) return `/proc/${pid}/cgroup shows ${JSON.stringify(shown)}, above the hierarchy's root`;
    const inside = dirs.some((dir) => dir.startsWith(`${memoryRoot}/`) && isWithinCgroup(path, dir.slice(memoryRoot.length)));
    return inside ? null : `the process is in ${path}, outside the pod's cgroup`;
  }
}
