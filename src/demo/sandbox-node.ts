// The demo's sandboxed node: a cgroup v1 memory cgroup with a hard limit that stands in for a
// node (`/sys/fs/cgroup/memory/kea-demo-<pid>`), a kubepods tree under it, and pods as real child
// processes placed in their container cgroups before they allocate anything. Everything it
// creates is recorded and removed by `destroy()`, also after a failure or Ctrl-C.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MEMORY_ROOT = '/sys/fs/cgroup/memory';

/** Whether real cgroups can be used: root, and the cgroup v1 memory controller with threshold events. */
export function realCgroupsAvailable(): { ok: true } | { ok: false; reason: string } {
  if (process.getuid?.() !== 0) return { ok: false, reason: 'not running as root' };
  if (!existsSync(join(MEMORY_ROOT, 'cgroup.event_control'))) return { ok: false, reason: `no cgroup v1 memory controller at ${MEMORY_ROOT}` };
  return { ok: true };
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

export class SandboxNode {
  readonly name: string;
  readonly dir: string;
  private readonly created: string[] = [];
  private readonly children = new Set<ChildProcess>();

  constructor(limitBytes: number) {
    this.name = `kea-demo-${process.pid}`;
    this.dir = join(MEMORY_ROOT, this.name);
    this.mkdir(this.dir);
    // Swap would let the leak go on past the limit instead of meeting the OOM killer.
    try {
      writeFileSync(join(this.dir, 'memory.swappiness'), '0');
    } catch {
      // Not every kernel lets it be set; without swap it does not matter.
    }
    writeFileSync(join(this.dir, 'memory.limit_in_bytes'), String(limitBytes));
    this.mkdir(join(this.dir, 'kubepods'));
    this.mkdir(join(this.dir, 'kubepods', 'burstable'));
  }

  private mkdir(path: string): void {
    if (!existsSync(path)) {
      mkdirSync(path);
      this.created.push(path);
    }
  }

  /** Starts a pod's process in `kubepods/burstable/pod<uid>/<containerId>`. */
  startPod(uid: string, containerId: string, _containerName: string, plan: AllocationPlan): ChildProcess {
    const podDir = join(this.dir, 'kubepods', 'burstable', `pod${uid}`);
    const containerDir = join(podDir, containerId);
    this.mkdir(podDir);
    this.mkdir(containerDir);
    // The shell joins the cgroup first, then becomes node: no allocation is charged elsewhere.
    const child = spawn('/bin/sh', ['-c', `echo $$ > ${join(containerDir, 'cgroup.procs')} && exec "$0" -e "$1" "$2" "$3" "$4"`, process.execPath, ALLOCATOR, String(plan.initialBytes), String(plan.stepBytes), String(plan.intervalMs)], {
      stdio: 'ignore',
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  /** The node cgroup's memory.usage_in_bytes. */
  usageBytes(): number {
    return Number(readFileSync(join(this.dir, 'memory.usage_in_bytes'), 'utf8'));
  }

  /**
   * How many times the kernel OOM killer fired in the node cgroup. cgroup v1 counts a kill only
   * in the victim's own cgroup, so the whole tree is summed.
   */
  oomKills(): number {
    const count = (dir: string): number => {
      let total = 0;
      try {
        total = Number(/oom_kill (\d+)/.exec(readFileSync(join(dir, 'memory.oom_control'), 'utf8'))?.[1] ?? 0);
        for (const entry of readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) total += count(join(dir, entry.name));
      } catch {
        // A cgroup removed meanwhile counts nothing.
      }
      return total;
    };
    return count(this.dir);
  }

  maxUsageBytes(): number {
    return Number(readFileSync(join(this.dir, 'memory.max_usage_in_bytes'), 'utf8'));
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
