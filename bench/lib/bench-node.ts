// A sandbox node for the benchmarks: a memory cgroup with a hard limit standing in for a node
// (`kea-bench-<pid>-<label>`), the cgroupfs driver's kubepods tree under it, and the agent's real
// adapters pointed at it (the cgroup observer, the memcg v1 notifier and the pod terminator treat
// the sandbox as the node). The same wiring as the `demo` command's sandbox node.

import { join } from 'node:path';
import type { Clock } from '../../src/api/clock.js';
import type { Logger } from '../../src/api/logger.js';
import { hostKillPath, hostNotifier, hostTerminator } from '../../src/compose/node-side.js';
import { parseConfigText } from '../../src/config/load.js';
import type { LoadedConfig } from '../../src/config/types.js';
import type { KillPath, LocalTerminator, MemoryThresholdNotifier } from '../../src/daemon/ports.js';
import type { HostFs } from '../../src/host/host-fs.js';
import { createCgroupObserver, type CgroupObserver, type CgroupObserverContext } from '../../src/observe/cgroup-observer.js';
import { BenchCgroup } from './bench-cgroup.js';

export interface NodeAdapters {
  readonly observer: CgroupObserver;
  readonly notifier: MemoryThresholdNotifier;
  readonly terminator: LocalTerminator;
  /** The kill path, with the memcg v1 notifier (as `run` wires it). */
  readonly killPath?: KillPath;
}

/**
 * The sandbox's settings, as a file would give them: the cgroupfs driver, `scratchDir` for the
 * kubelet's and the runtime's directories, and the disk-usage walk pushed out of the way.
 */
export function sandboxNodeConfig(scratchDir: string, notifierMode: 'memcg-v1' | 'disabled', evictionYaml = ''): LoadedConfig {
  const observe = `observe:\n  cgroupDriver: cgroupfs\n  podCgroupRoot: kubepods\n  kubeletRootDir: ${scratchDir}\n  imageFsPath: ${scratchDir}\n  podLogsDir: ${scratchDir}\n  diskUsageInterval: 1h\n`;
  return parseConfigText(`${evictionYaml}${observe}notifier:\n  mode: ${notifierMode}\n`, 'bench-node');
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
    /** The observer's door to the host (the real one unless given). */
    hostFs?: HostFs;
    /** The observer's full-read interval and cap on kept-open files, where not its defaults. */
    observer?: Pick<CgroupObserverContext, 'fullReadIntervalMs' | 'maxOpenCgroupFiles'>;
  }): NodeAdapters {
    const config = sandboxNodeConfig(options.scratchDir, options.notifierMode);
    const context = { nodeName: options.nodeName, nodeCgroup: this.name, clock: options.clock, logger: options.logger };
    const notifier = hostNotifier(config, context);
    const terminator = hostTerminator(config, context);
    const killPath = hostKillPath(config, context, notifier, terminator);
    return {
      observer: createCgroupObserver(config.agent.observe, {
        ...context,
        processCountIntervalMs: options.processCountIntervalMs,
        ...(options.hostFs === undefined ? {} : { hostFs: options.hostFs }),
        ...options.observer,
      }),
      notifier,
      terminator,
      ...(killPath === undefined ? {} : { killPath }),
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
