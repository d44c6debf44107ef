// A sandbox node for the benchmarks: a memory cgroup with a hard limit standing in for a node
// (`kea-bench-<pid>-<label>`), the cgroupfs driver's kubepods tree under it, and the agent's real
// adapters pointed at it (the cgroup observer, the memcg v1 notifier and the pod terminator treat
// the sandbox as the node). The same wiring as the `demo` command's sandbox node.

import { join } from 'node:path';
import { createPodTerminator } from '../../src/act/pod-terminator.js';
import type { Clock } from '../../src/api/clock.js';
import type { Logger } from '../../src/api/logger.js';
import type { LocalTerminator, MemoryThresholdNotifier } from '../../src/daemon/ports.js';
import { createMemoryThresholdNotifier } from '../../src/notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver, type CgroupObserver } from '../../src/observe/cgroup-observer.js';
import { BenchCgroup } from './bench-cgroup.js';

export interface NodeAdapters {
  readonly observer: CgroupObserver;
  readonly notifier: MemoryThresholdNotifier;
  readonly terminator: LocalTerminator;
}

export class BenchNode {
  readonly cgroup: BenchCgroup;

  private constructor(
    label: string,
    readonly limitBytes: bigint | undefined,
  ) {
    this.cgroup = BenchCgroup.create(label, limitBytes);
    this.cgroup.mkdir('kubepods/burstable');
  }

  static create(label: string, limitBytes?: bigint): BenchNode {
    return new BenchNode(label, limitBytes);
  }

  get name(): string {
    return this.cgroup.name;
  }

  /**
   * The agent's adapters for this node. `scratchDir` stands in for the kubelet's and the runtime's
   * directories (nodefs and imagefs statfs); the disk-usage walk is pushed out of the way.
   */
  adapters(options: {
    nodeName: string;
    scratchDir: string;
    notifierMode: 'memcg-v1' | 'disabled';
    /** As `run` sets it: process counts are refreshed once per housekeeping interval (0: every pass). */
    processCountIntervalMs: number;
    clock: Clock;
    logger: Logger;
  }): NodeAdapters {
    const common = { cgroupRoot: '/sys/fs/cgroup', cgroupDriver: 'cgroupfs' as const, clock: options.clock, logger: options.logger };
    const { scratchDir } = options;
    return {
      observer: createCgroupObserver({
        ...common,
        nodeCgroup: this.name,
        podCgroupRoot: 'kubepods',
        kubeletRootDir: scratchDir,
        imageFsPath: scratchDir,
        podLogsDir: scratchDir,
        diskUsageIntervalMs: 24 * 3600_000,
        processCountIntervalMs: options.processCountIntervalMs,
        nodeName: options.nodeName,
      }),
      notifier: createMemoryThresholdNotifier({ mode: options.notifierMode, cgroupRoot: '/sys/fs/cgroup', nodeCgroup: this.name, podCgroupRoot: `${this.name}/kubepods`, clock: options.clock, logger: options.logger }),
      terminator: createPodTerminator({ ...common, nodeCgroup: this.name, podCgroupRoot: 'kubepods' }),
    };
  }

  usageBytes(): bigint {
    return this.cgroup.readBytes('', 'memory.usage_in_bytes');
  }

  maxUsageBytes(): bigint {
    return this.cgroup.readBytes('', 'memory.max_usage_in_bytes');
  }

  failCount(): number {
    return Number(this.cgroup.readBytes('', 'memory.failcnt'));
  }

  /** OOM kills anywhere on the node (the count is kept in each victim's own cgroup). */
  oomKills(): number {
    return this.cgroup.oomKillsInTree();
  }

  /** `total_inactive_file` of memory.stat: page cache the kubelet's working set leaves out. */
  inactiveFileBytes(): bigint {
    return BigInt(/^total_inactive_file (\d+)$/m.exec(this.cgroup.read('', 'memory.stat'))?.[1] ?? '0');
  }

  /** The node's memory.usage_in_bytes file, for processes that watch it themselves. */
  get usagePath(): string {
    return join(this.cgroup.path, 'memory.usage_in_bytes');
  }

  /** Starts the peak and the limit-hit counter afresh (writing 0 resets them to now). */
  resetCounters(): void {
    this.cgroup.write('', 'memory.max_usage_in_bytes', '0');
    this.cgroup.write('', 'memory.failcnt', '0');
  }

  destroy(): Promise<void> {
    return this.cgroup.destroy();
  }
}
