// A cgroup standing in for a node's memory: a CgroupSandbox (test/helpers/cgroup-sandbox.ts,
// under the `kea-test-` prefix) with a memory limit, and the cgroupfs driver's pod tree below it
// (`kubepods/{burstable,besteffort}/pod<uid>/<container id>`). The fake kubelet runs pods in it, and
// the agent's observer, notifier and terminator point at it as they would at a node's root cgroup.
// Besides the sandbox's own cleanup, a watchdog empties and removes the cgroups if the test
// process dies outright.

import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CgroupSandbox } from '../../helpers/cgroup-sandbox.js';
import { shellQuote, startWatchdog, type Watchdog } from './exit-cleanup.js';

export const POD_CGROUP_ROOT = 'kubepods';

/** A cgroup's memory as cAdvisor computes it (working set = usage - total_inactive_file). */
export interface CgroupMemory {
  readonly usageBytes: number;
  readonly workingSetBytes: number;
}

export function readCgroupMemory(dir: string): CgroupMemory {
  const usageBytes = Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8'));
  const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
  const inactiveFileBytes = Number(/^total_inactive_file (\d+)$/m.exec(stat)?.[1] ?? 0);
  return { usageBytes, workingSetBytes: Math.max(0, usageBytes - inactiveFileBytes) };
}

function oomKillCount(dir: string): number {
  const text = readFileSync(join(dir, 'memory.oom_control'), 'utf8');
  const count = /^oom_kill (\d+)$/m.exec(text)?.[1];
  if (count === undefined) throw new Error(`${dir}/memory.oom_control has no oom_kill counter (kernel too old?): ${text}`);
  return Number(count);
}

/** A directory and every directory (cgroup) below it, deepest first. */
export function subtreeDeepestFirst(dir: string): string[] {
  const found: string[] = [];
  const visit = (path: string): void => {
    let entries;
    try {
      entries = readdirSync(path, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) if (entry.isDirectory()) visit(join(path, entry.name));
    found.push(path);
  };
  visit(dir);
  return found;
}

export class NodeSandbox {
  private readonly watchdog: Watchdog;
  // Cgroup v1 counts an OOM kill only in the victim's own cgroup, so the counts of removed pod
  // cgroups are kept here.
  private removedOomKills = 0;

  private constructor(
    readonly sandbox: CgroupSandbox,
    readonly limitBytes: bigint,
  ) {
    // Kill whatever runs in the sandbox's cgroups (only the harness's workloads can), then remove
    // them deepest first.
    const top = shellQuote(sandbox.path);
    this.watchdog = startWatchdog(
      [
        `for f in $(find ${top} -name cgroup.procs 2>/dev/null); do for p in $(cat "$f"); do kill -9 "$p" 2>/dev/null; done; done`,
        'sleep 1',
        `find ${top} -depth -type d -exec rmdir {} \\; 2>/dev/null`,
      ].join('\n'),
    );
  }

  /** Creates the node cgroup with a memory limit and its empty pod tree. */
  static async create(limitBytes: bigint): Promise<NodeSandbox> {
    const sandbox = await CgroupSandbox.create({ limitBytes });
    const node = new NodeSandbox(sandbox, limitBytes);
    for (const tier of ['', '/burstable', '/besteffort']) sandbox.mkdir(`${POD_CGROUP_ROOT}${tier}`);
    return node;
  }

  /** The node cgroup relative to the memory hierarchy's root (what `nodeCgroup` options take). */
  get nodeCgroup(): string {
    return this.sandbox.name;
  }

  /** The node cgroup's absolute path. */
  get path(): string {
    return this.sandbox.path;
  }

  /** The pod cgroup for a QoS class and UID (cgroupfs driver naming), relative to the node cgroup. */
  podCgroup(qosClass: string | undefined, uid: string): string {
    if (qosClass === 'Guaranteed') return `${POD_CGROUP_ROOT}/pod${uid}`;
    return `${POD_CGROUP_ROOT}/${qosClass === 'BestEffort' ? 'besteffort' : 'burstable'}/pod${uid}`;
  }

  resolve(relative: string): string {
    return this.sandbox.resolve(relative);
  }

  exists(relative: string): boolean {
    return existsSync(this.sandbox.resolve(relative));
  }

  /** The node's memory now, and memory.available as the kubelet computes it (limit - working set). */
  memory(): CgroupMemory & { readonly availableBytes: number } {
    const memory = readCgroupMemory(this.sandbox.path);
    return { ...memory, availableBytes: Number(this.limitBytes) - memory.workingSetBytes };
  }

  /**
   * How many processes the kernel OOM killer killed anywhere in the node cgroup since it was
   * created: cgroup v1 counts a kill only in the victim's own cgroup (memory.oom_control), so this
   * sums the subtree, plus the counts of pod cgroups already removed.
   */
  oomKills(): number {
    return this.removedOomKills + subtreeDeepestFirst(this.sandbox.path).reduce((sum, dir) => sum + oomKillCount(dir), 0);
  }

  /** The node cgroup's peak usage since the last reset (memory.max_usage_in_bytes). */
  maxUsageBytes(): number {
    return Number(this.sandbox.read('', 'memory.max_usage_in_bytes'));
  }

  resetMaxUsage(): void {
    writeFileSync(join(this.sandbox.path, 'memory.max_usage_in_bytes'), '0\n');
  }

  /** Removes a cgroup below the node and its children (their processes must have exited), keeping their OOM kill counts. */
  async removeCgroup(relative: string): Promise<void> {
    for (const dir of subtreeDeepestFirst(this.sandbox.resolve(relative))) {
      let kills = 0;
      try {
        kills = oomKillCount(dir);
      } catch {
        // Already removed.
      }
      for (let attempt = 0; ; attempt++) {
        try {
          rmdirSync(dir);
          this.removedOomKills += kills;
          break;
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === 'ENOENT') break;
          // A just-reaped task can take a moment to leave the cgroup.
          if (code === 'EBUSY' && attempt < 100) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            continue;
          }
          throw error;
        }
      }
    }
  }

  /** Removes every cgroup (the workloads must have been stopped first). */
  async cleanup(): Promise<void> {
    await this.sandbox.cleanup();
    this.watchdog.disarm();
  }
}
