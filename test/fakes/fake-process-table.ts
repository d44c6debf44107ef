// A simulated node for the terminator's logic: a cgroup v1 memory tree and a /proc in a scratch
// directory (cgroup.procs, /proc/<pid>/stat and /proc/<pid>/cgroup written as the kernel would),
// processes that live in cgroups and start at given clock ticks, and process handles (pidfds) on
// them that record every signal and end a process on SIGKILL (or on SIGTERM unless it ignores it).
// What /proc shows can be made to disagree with cgroup.procs, and pidfds can be made unavailable.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NativeError } from '../../src/errors.js';
import type { PidFd, ProcessHandles } from '../../native/process-handles.js';

interface FakeProcess {
  readonly pid: number;
  cgroup: string;
  readonly startTicks: number;
  readonly ignoresSigterm: boolean;
}

export class FakeProcessTable {
  /** The scratch directory standing for the host's root. */
  readonly root: string;
  /** The memory hierarchy's root directory. */
  readonly memoryRoot: string;
  readonly procRoot: string;
  /** Every signal delivered, in order. */
  readonly signals: { readonly pid: number; readonly signal: NodeJS.Signals }[] = [];
  private readonly processes = new Map<number, FakeProcess>();
  private readonly handles = new Map<number, number>();
  private nextFd = 100;
  private selfCgroup: string | null = null;
  /** When set, pidfd_open fails with this errno (38: ENOSYS, a kernel before 5.3). */
  pidfdErrno: number | null = null;

  constructor(readonly selfPid = 4242) {
    this.root = mkdtempSync(join(tmpdir(), 'kea-fake-node-'));
    this.memoryRoot = join(this.root, 'sys/fs/cgroup/memory');
    this.procRoot = join(this.root, 'proc');
    mkdirSync(this.memoryRoot, { recursive: true });
    writeFileSync(join(this.memoryRoot, 'memory.usage_in_bytes'), '0\n');
    writeFileSync(join(this.memoryRoot, 'cgroup.procs'), '');
    mkdirSync(join(this.procRoot, 'self'), { recursive: true });
    this.setSelfCgroup('/system.slice/agent', '/system.slice/agent');
  }

  remove(): void {
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Creates a cgroup (and its parents) below the hierarchy's root, e.g. `kubepods/burstable/pod<uid>/<id>`. */
  mkdir(relative: string): string {
    const parts = relative.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const dir = join(this.memoryRoot, ...parts.slice(0, i));
      mkdirSync(dir, { recursive: true });
      try {
        readFileSync(join(dir, 'cgroup.procs'));
      } catch {
        writeFileSync(join(dir, 'cgroup.procs'), '');
      }
    }
    return join(this.memoryRoot, relative);
  }

  /** Removes a cgroup directory (the kubelet cleaning up a pod). */
  rmdir(relative: string): void {
    rmSync(join(this.memoryRoot, relative), { recursive: true, force: true });
  }

  /** Starts a process in a cgroup at a start time in clock ticks. */
  start(pid: number, relative: string, startTicks: number, options: { ignoresSigterm?: boolean } = {}): number {
    this.mkdir(relative);
    this.processes.set(pid, { pid, cgroup: relative, startTicks, ignoresSigterm: options.ignoresSigterm === true });
    mkdirSync(join(this.procRoot, String(pid)), { recursive: true });
    writeFileSync(join(this.procRoot, String(pid), 'stat'), `${pid} (some (odd) name) S 1 ${pid} ${pid} 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 ${startTicks} 1000 10\n`);
    this.showCgroup(pid, `/${relative}`);
    this.writeProcs(relative);
    return pid;
  }

  /** What /proc/<pid>/cgroup shows for the memory hierarchy (as the reader's namespace sees it). */
  showCgroup(pid: number, shown: string): void {
    writeFileSync(join(this.procRoot, String(pid), 'cgroup'), `12:pids:/\n4:memory:${shown}\n0::/\n`);
  }

  /** The agent's own cgroup: where it is in the hierarchy, and what its /proc/self/cgroup shows. */
  setSelfCgroup(relative: string, shown: string): void {
    if (this.selfCgroup !== null) writeFileSync(join(this.memoryRoot, this.selfCgroup, 'cgroup.procs'), '');
    this.selfCgroup = relative;
    this.mkdir(relative.replace(/^\//, ''));
    writeFileSync(join(this.procRoot, 'self', 'cgroup'), `4:memory:${shown}\n`);
    writeFileSync(join(this.memoryRoot, relative, 'cgroup.procs'), `${this.selfPid}\n`);
  }

  alive(pid: number): boolean {
    return this.processes.has(pid);
  }

  signalsTo(pid: number): NodeJS.Signals[] {
    return this.signals.filter((s) => s.pid === pid).map((s) => s.signal);
  }

  private writeProcs(relative: string): void {
    const pids = [...this.processes.values()].filter((p) => p.cgroup === relative).map((p) => p.pid);
    writeFileSync(join(this.memoryRoot, relative, 'cgroup.procs'), pids.map((pid) => `${pid}\n`).join(''));
  }

  private exit(pid: number): void {
    const process = this.processes.get(pid);
    if (process === undefined) return;
    this.processes.delete(pid);
    rmSync(join(this.procRoot, String(pid)), { recursive: true, force: true });
    this.writeProcs(process.cgroup);
  }

  /** pidfds on the simulated processes. */
  processHandles(): ProcessHandles {
    return {
      open: (pid) => {
        if (this.pidfdErrno !== null) throw new NativeError('pidfd_open', this.pidfdErrno, 'ENOSYS');
        if (!this.processes.has(pid)) return null;
        const fd = this.nextFd++;
        this.handles.set(fd, pid);
        return fd as PidFd;
      },
      signal: (handle, signal) => {
        const pid = this.handles.get(handle);
        if (pid === undefined) throw new Error(`fd ${handle} is not an open pidfd`);
        const process = this.processes.get(pid);
        if (process === undefined) return false;
        this.signals.push({ pid, signal });
        if (signal === 'SIGKILL' || !process.ignoresSigterm) this.exit(pid);
        return true;
      },
      close: (handle) => {
        this.handles.delete(handle);
      },
    };
  }

  /** pidfds still open (every one must be closed after use). */
  openHandles(): number {
    return this.handles.size;
  }
}
