// A benchmark's own corner of the real cgroup v1 memory hierarchy:
// `/sys/fs/cgroup/memory/kea-bench-<pid>-<label>`, the cgroups below it, and the processes the
// benchmark starts inside them. A process joins its cgroup before it execs its program, so
// everything it allocates is charged there. `destroy()` ends those processes and removes the
// cgroups deepest first; the cleanup registry does the same on Ctrl-C or an early exit.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { removeCgroupTreeSync, trackCgroup, trackChild, untrackCgroup } from './cleanup.js';

export const MEMORY_ROOT = '/sys/fs/cgroup/memory';

/** Why real cgroup v1 benchmarks cannot run here, or null when they can. */
export function cgroupV1Unavailable(): string | null {
  if (process.getuid?.() !== 0) return 'not running as root';
  if (!existsSync(join(MEMORY_ROOT, 'cgroup.event_control'))) return `no cgroup v1 memory hierarchy with threshold events at ${MEMORY_ROOT}`;
  return null;
}

/** A process started in a cgroup, and how it ended. */
export interface CgroupProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves once it has exited: the signal that ended it (if any) and when (process.hrtime ns). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atNs: bigint }>;
}

export class BenchCgroup {
  readonly name: string;
  readonly path: string;
  private readonly processes = new Set<CgroupProcess>();
  private destroyed = false;

  private constructor(label: string) {
    this.name = `kea-bench-${process.pid}-${label}`;
    this.path = join(MEMORY_ROOT, this.name);
  }

  /** Creates the top cgroup, with a hard limit and swappiness 0 when a limit is given. */
  static create(label: string, limitBytes?: bigint): BenchCgroup {
    const cgroup = new BenchCgroup(label);
    // A leftover from an interrupted run of the same PID cannot exist; a stale one of another is not ours.
    mkdirSync(cgroup.path);
    trackCgroup(cgroup.path);
    if (limitBytes !== undefined) {
      try {
        // Swap would let an allocation go on past the limit instead of meeting the OOM killer.
        writeFileSync(join(cgroup.path, 'memory.swappiness'), '0');
      } catch {
        // Not settable on every kernel; without swap it does not matter.
      }
      writeFileSync(join(cgroup.path, 'memory.limit_in_bytes'), `${limitBytes}`);
    }
    return cgroup;
  }

  resolve(relative: string): string {
    return relative === '' ? this.path : join(this.path, relative);
  }

  mkdir(relative: string): string {
    const path = this.resolve(relative);
    mkdirSync(path, { recursive: true });
    return path;
  }

  read(relative: string, file: string): string {
    return readFileSync(join(this.resolve(relative), file), 'utf8');
  }

  readBytes(relative: string, file: string): bigint {
    return BigInt(this.read(relative, file).trim());
  }

  write(relative: string, file: string, value: string): void {
    writeFileSync(join(this.resolve(relative), file), value);
  }

  /**
   * How many processes the kernel OOM killer killed in this cgroup and every cgroup below it. On
   * cgroup v1 the `oom_kill` count of memory.oom_control is kept in the victim's own cgroup only,
   * not in its parents, so the whole tree is summed.
   */
  oomKillsInTree(relative = ''): number {
    let kills = 0;
    const visit = (dir: string): void => {
      try {
        kills += Number(/^oom_kill (\d+)$/m.exec(readFileSync(join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0);
        for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) visit(join(dir, entry.name));
      } catch {
        // A cgroup removed meanwhile: nothing to count there.
      }
    };
    visit(this.resolve(relative));
    return kills;
  }

  /**
   * Starts `command` inside the cgroup (created if needed). The shell moves itself into the
   * cgroup (and sets its oom_score_adj, if given) and then becomes the command, keeping its PID.
   */
  spawn(relative: string, command: readonly string[], options: { stdio?: 'pipe' | 'ignore'; env?: NodeJS.ProcessEnv; oomScoreAdj?: number } = {}): CgroupProcess {
    const dir = this.mkdir(relative);
    const stdio = options.stdio ?? 'pipe';
    const adjust = options.oomScoreAdj === undefined ? '' : `echo ${Math.round(options.oomScoreAdj)} > /proc/self/oom_score_adj || exit 96; `;
    const child = trackChild(
      spawn('/bin/sh', ['-c', `echo $$ > "$0/cgroup.procs" || exit 97; ${adjust}exec "$@"`, dir, ...command], {
        stdio: stdio === 'pipe' ? ['pipe', 'pipe', 'pipe'] : 'ignore',
        env: options.env ?? { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
      }),
    );
    if (child.pid === undefined) throw new Error(`cannot start ${command[0] ?? ''} in ${dir}`);
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atNs: bigint }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal, atNs: process.hrtime.bigint() })),
    );
    const started: CgroupProcess = { child, pid: child.pid, exited };
    this.processes.add(started);
    void exited.then(() => this.processes.delete(started));
    return started;
  }

  /** Starts a process that only sleeps (a pause container, an idle pod); resolves once it is in its cgroup. */
  async spawnIdle(relative: string): Promise<CgroupProcess> {
    const started = this.spawn(relative, ['sleep', '1000000'], { stdio: 'ignore' });
    const procs = join(this.resolve(relative), 'cgroup.procs');
    for (let i = 0; i < 500; i++) {
      if (readFileSync(procs, 'utf8').split('\n').includes(String(started.pid))) return started;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    throw new Error(`sleep did not join ${relative}`);
  }

  /** SIGKILLs these processes (only ones this cgroup started) and waits until they are reaped. */
  async kill(processes: Iterable<CgroupProcess>): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const p of processes) {
      if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
      waits.push(p.exited);
    }
    await Promise.all(waits);
  }

  /** Removes a cgroup below the top (and everything below it); its processes must be gone. */
  remove(relative: string): void {
    const failures = removeCgroupTreeSync(this.resolve(relative));
    if (failures.length > 0) throw new Error(`could not remove ${failures.join(', ')}`);
  }

  /** Ends every process started here and removes every cgroup, the top last. Idempotent. */
  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    await this.kill([...this.processes]);
    const failures = removeCgroupTreeSync(this.path);
    if (failures.length > 0) throw new Error(`could not remove ${failures.join(', ')}`);
    untrackCgroup(this.path);
  }
}
