// The demo's sandboxed node: a memory cgroup with a hard limit that stands in for a node, on
// whichever hierarchy the host's kernel gives: cgroup v1 (`/sys/fs/cgroup/memory/kea-demo-<pid>`,
// `memory.limit_in_bytes`) or cgroup v2 (`/sys/fs/cgroup/kea-demo-<pid>`, `memory.max`, with the
// memory and pids controllers enabled down to the container cgroups, as the kubelet's tree has
// them), a kubepods tree under it, and pods as real child processes placed in their container
// cgroups before they allocate anything. Everything it creates is recorded and removed by
// `destroy()`, also after a failure or Ctrl-C.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MEMORY_ROOT = '/sys/fs/cgroup/memory';
export const UNIFIED_ROOT = '/sys/fs/cgroup';

export type CgroupVersion = 'v1' | 'v2';

/**
 * Whether real cgroups can be used, and which: root, and the cgroup v1 memory controller with
 * threshold events, or else a cgroup v2 hierarchy whose root enables the memory controller for its
 * children (the demo never changes what the host's root cgroup enables).
 */
export function realCgroupsAvailable(memoryRoot = MEMORY_ROOT, unifiedRoot = UNIFIED_ROOT): { ok: true; version: CgroupVersion } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not running as root' };
  if (existsSync(join(memoryRoot, 'cgroup.event_control'))) return { ok: true, version: 'v1' };
  let enabled: string;
  try {
    enabled = readFileSync(join(unifiedRoot, 'cgroup.subtree_control'), 'utf8');
  } catch {
    return { ok: false, reason: `no cgroup v1 memory controller at ${memoryRoot} and no cgroup v2 hierarchy at ${unifiedRoot}` };
  }
  if (!enabled.split(/\s+/).includes('memory')) return { ok: false, reason: `the cgroup v2 root ${unifiedRoot} does not enable the memory controller for its children` };
  return { ok: true, version: 'v2' };
}

/** What one pod's process does: allocate `initialBytes`, then `stepBytes` every `intervalMs` (a leak), touching every page. */
export interface AllocationPlan {
  readonly initialBytes: number;
  readonly stepBytes: number;
  readonly intervalMs: number;
}

// The pod's program: runs in the container cgroup, so everything it touches is charged there.
export const ALLOCATOR = `
const [initial, step, interval] = process.argv.slice(1).map(Number);
const kept = [];
const grow = (bytes) => { if (bytes <= 0) return; const b = Buffer.allocUnsafe(bytes); b.fill(7); kept.push(b); };
grow(initial);
if (step > 0) setInterval(() => grow(step), interval);
else setInterval(() => {}, 1 << 30);
process.on('SIGTERM', () => process.exit(0));
`;

/** The files of a memory cgroup, by hierarchy. */
const FILES = {
  v1: { limit: 'memory.limit_in_bytes', usage: 'memory.usage_in_bytes', peak: 'memory.max_usage_in_bytes' },
  v2: { limit: 'memory.max', usage: 'memory.current', peak: 'memory.peak' },
} as const;

/** What a v2 cgroup enables for its children: memory for the pods' memory files, pids for their process counts. */
const V2_CONTROLLERS = '+memory +pids';

export class SandboxNode {
  readonly name: string;
  readonly dir: string;
  private readonly created: string[] = [];
  private readonly children = new Set<ChildProcess>();
  /** The highest usage sampled, where the kernel keeps no peak (cgroup v2 before Linux 5.19). */
  private sampledPeakBytes = 0;

  constructor(
    limitBytes: number,
    readonly version: CgroupVersion = 'v1',
  ) {
    this.name = `kea-demo-${process.pid}`;
    this.dir = join(version === 'v1' ? MEMORY_ROOT : UNIFIED_ROOT, this.name);
    this.mkdir(this.dir);
    // Swap would let the leak go on past the limit instead of meeting the OOM killer.
    this.tryWrite(version === 'v1' ? 'memory.swappiness' : 'memory.swap.max', '0');
    writeFileSync(join(this.dir, FILES[version].limit), String(limitBytes));
    this.mkdir(join(this.dir, 'kubepods'));
    this.mkdir(join(this.dir, 'kubepods', 'burstable'));
  }

  private tryWrite(file: string, value: string): void {
    try {
      writeFileSync(join(this.dir, file), value);
    } catch {
      // Not every kernel lets it be set (or has swap accounting); without swap it does not matter.
    }
  }

  // On v2 a cgroup's memory files exist only when its parent enables the controller, and a cgroup
  // that enables controllers for children holds no process: every level but the container's enables them.
  private mkdir(path: string, leaf = false): void {
    if (!existsSync(path)) {
      mkdirSync(path);
      this.created.push(path);
    }
    if (this.version === 'v2' && !leaf) writeFileSync(join(path, 'cgroup.subtree_control'), V2_CONTROLLERS);
  }

  /** Starts a pod's process in `kubepods/burstable/pod<uid>/<containerId>`. */
  startPod(uid: string, containerId: string, _containerName: string, plan: AllocationPlan): ChildProcess {
    const podDir = join(this.dir, 'kubepods', 'burstable', `pod${uid}`);
    const containerDir = join(podDir, containerId);
    this.mkdir(podDir);
    this.mkdir(containerDir, true);
    // The shell joins the cgroup first, then becomes node: no allocation is charged elsewhere.
    const child = spawn('/bin/sh', ['-c', `echo $$ > ${join(containerDir, 'cgroup.procs')} && exec "$0" -e "$1" "$2" "$3" "$4"`, process.execPath, ALLOCATOR, String(plan.initialBytes), String(plan.stepBytes), String(plan.intervalMs)], {
      stdio: 'ignore',
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /** The node cgroup's usage (memory.usage_in_bytes, or memory.current). */
  usageBytes(): number {
    const used = Number(readFileSync(join(this.dir, FILES[this.version].usage), 'utf8'));
    this.sampledPeakBytes = Math.max(this.sampledPeakBytes, used);
    return used;
  }

  /**
   * How many times the kernel OOM killer fired in the node cgroup. cgroup v1 counts a kill only
   * in the victim's own cgroup, so the whole tree is summed; cgroup v2's memory.events counts the
   * kills of the whole subtree.
   */
  oomKills(): number {
    if (this.version === 'v2') return oomKillsIn(join(this.dir, 'memory.events'));
    const count = (dir: string): number => {
      let total = 0;
      try {
        total = oomKillsIn(join(dir, 'memory.oom_control'));
        for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) total += count(join(dir, entry.name));
      } catch {
        // A cgroup removed meanwhile counts nothing.
      }
      return total;
    };
    return count(this.dir);
  }

  /** The node cgroup's peak usage as the kernel kept it, else the highest usage sampled. */
  maxUsageBytes(): number {
    try {
      return Number(readFileSync(join(this.dir, FILES[this.version].peak), 'utf8'));
    } catch {
      return Math.max(this.sampledPeakBytes, this.usageBytes());
    }
  }

  /** Kills every process this sandbox started and removes every cgroup it created, deepest first. */
  async destroy(): Promise<void> {
    await Promise.all(
      [...this.children].map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
    for (const dir of [...this.created].reverse()) removeCgroup(dir);
  }
}

// The `oom_kill` count of a memory.oom_control (v1) or memory.events (v2) file; 0 when it is gone.
function oomKillsIn(path: string): number {
  try {
    return Number(/^oom_kill (\d+)$/m.exec(readFileSync(path, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

// A cgroup directory can be removed once it has no tasks and no children.
function removeCgroup(dir: string): void {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) removeCgroup(join(dir, entry.name));
  // A killed process takes a moment to leave its cgroup; on a loaded machine, seconds.
  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      rmdirSync(dir);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EBUSY') return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
}
