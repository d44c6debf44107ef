// Builds the kernel OOM kill watcher for this node from the compiled `oomKills` settings: which
// memory hierarchy the node has (cgroup v1's memory controller, or cgroup v2 with memory enabled),
// and the kernel log when it is to be read. With `enabled: false`, or no memory hierarchy at all,
// a watcher that finds nothing and says why.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { OomKillSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { KernelOomKill, OomKillSource, OomKillWatcher } from '../daemon/ports.js';
import type { HostFs } from '../host/host-fs.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import type { NativeEvents } from '../../native/native-events.js';
import { KERNEL_LOG_DEVICE } from './kernel-log-reader.js';
import { readOomKillCounts, type CgroupVersionOfMemory, type OomKillCounts } from './oom-cgroup-files.js';
import { KernelOomKillWatcher } from './oom-kill-watcher.js';
import type { SharedEpollLoop } from './shared-epoll-loop.js';

export interface OomKillWatcherContext {
  /** Where the cgroup filesystems are mounted, as the agent sees them (the v1 memory hierarchy is `<cgroupRoot>/memory`). */
  readonly cgroupRoot: string;
  /** The node cgroup, relative to the memory hierarchy's root (`''`: the root). */
  readonly nodeCgroup: string;
  /** The pods' cgroup, relative to the memory hierarchy's root. */
  readonly podCgroupRoot: string;
  /** The node's one epoll loop, shared with the memory threshold notifier. */
  readonly loop: SharedEpollLoop;
  readonly fs: HostFs;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly native?: NativeEvents;
  /** The kernel log device; /dev/kmsg unless a test passes another. */
  readonly kernelLogPath?: string;
  /** The machine's OOM kill count; /proc/vmstat (the container's /proc: the same kernel) unless a test passes another. */
  readonly machineKillCountPath?: string | null;
}

/** Finds nothing; says why once, at start. */
class DisabledOomKillWatcher implements OomKillWatcher {
  constructor(
    private readonly reason: string,
    private readonly logger: Logger,
  ) {}
  sources(): readonly OomKillSource[] {
    return [];
  }
  start(_onKill: (kill: KernelOomKill) => void): void {
    this.logger.info('kernel OOM kills are not watched', { reason: this.reason });
  }
  async stop(): Promise<void> {}
}

/** The memory hierarchy's version under `cgroupRoot`, or null when there is none. */
export function memoryHierarchyVersion(cgroupRoot: string): CgroupVersionOfMemory | null {
  if (existsSync(join(cgroupRoot, 'memory', 'memory.usage_in_bytes'))) return 'v1';
  try {
    if (readFileSync(join(cgroupRoot, 'cgroup.controllers'), 'utf8').split(/\s+/).includes('memory')) return 'v2';
  } catch {
    return null;
  }
  return null;
}

const MACHINE_KILL_COUNT_PATH = '/proc/vmstat';

const trimSlashes = (cgroup: string): string => cgroup.replace(/^\/+|\/+$/g, '');

export function createOomKillWatcher(settings: OomKillSettings, context: OomKillWatcherContext): OomKillWatcher {
  const logger = context.logger.child({ component: 'oom-kill-watcher' });
  if (!settings.enabled) return new DisabledOomKillWatcher('oomKills.enabled is false', logger);
  const version = memoryHierarchyVersion(context.cgroupRoot);
  if (version === null) return new DisabledOomKillWatcher(`no memory cgroup hierarchy under ${context.cgroupRoot}`, logger);
  return new KernelOomKillWatcher({
    version,
    memoryRoot: version === 'v1' ? join(context.cgroupRoot, 'memory') : context.cgroupRoot,
    nodeCgroup: trimSlashes(context.nodeCgroup),
    podCgroupRoot: trimSlashes(context.podCgroupRoot),
    kernelLogPath: settings.kernelLog ? (context.kernelLogPath ?? KERNEL_LOG_DEVICE) : null,
    scanIntervalMs: settings.scanIntervalMs,
    machineKillCountPath: context.machineKillCountPath === undefined ? MACHINE_KILL_COUNT_PATH : context.machineKillCountPath,
    kernelLogWaitMs: settings.kernelLogWaitMs,
    fs: context.fs,
    native: context.native ?? createLibcNativeEvents(),
    loop: context.loop,
    clock: context.clock,
    // CLOCK_MONOTONIC, which the kernel log's timestamps follow (to a few ms).
    monotonicUs: () => process.hrtime.bigint() / 1000n,
    logger: context.logger,
  });
}

/** The kernel's OOM kill counters of the node and its containers now; null without a memory hierarchy. */
export function readNodeOomKillCounts(context: Pick<OomKillWatcherContext, 'cgroupRoot' | 'nodeCgroup' | 'podCgroupRoot' | 'fs'>): OomKillCounts | null {
  const version = memoryHierarchyVersion(context.cgroupRoot);
  if (version === null) return null;
  const memoryRoot = version === 'v1' ? join(context.cgroupRoot, 'memory') : context.cgroupRoot;
  return readOomKillCounts(context.fs, version, memoryRoot, trimSlashes(context.nodeCgroup), trimSlashes(context.podCgroupRoot));
}
