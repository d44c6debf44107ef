// What the cgroup observer is given: the compiled `observe` settings as they are (every path a host
// path, resolved under `hostRoot`, because the agent runs in a DaemonSet that mounts the host's
// filesystem at e.g. /host; tests point `hostRoot` at a fixture tree or a sandbox), and what only
// its caller knows.

import { join } from 'node:path';
import type { ObserveSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { HostFs } from '../host/host-fs.js';

export interface CgroupObserverContext {
  /** Reported as `node.nodeName`. */
  readonly nodeName?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /**
   * The minimum time between two counts of each pod's processes (the housekeeping interval).
   * Counting opens every cgroup's `cgroup.procs` and is the larger part of a pass; the counts only
   * rank pods under PID pressure, so a pass woken by a memory notification reuses counts up to
   * this old (as the kubelet's cAdvisor stats are up to a housekeeping interval old).
   */
  readonly processCountIntervalMs: number;
  /**
   * A cgroup (relative to the memory hierarchy's root) that stands in for the node: its usage is
   * the node's, its limit caps the capacity, and the pod cgroup root is under it. Empty (the
   * hierarchy's root, the default) on a real node; the demo, tests and benchmarks use a sandbox.
   */
  readonly nodeCgroup?: string;
  /**
   * With a plan (ObservePlan), how long the pods' cgroup figures may go unread because no decision
   * needed them: past it, an observation reads every pod's memory and processes whatever the plan
   * says (a full read). DEFAULT_FULL_READ_INTERVAL_MS by default.
   */
  readonly fullReadIntervalMs?: number;
  /** Directory entries examined between two yields to the event loop during a walk (256 by default). */
  readonly diskWalkBatchEntries?: number;
  /** Cgroup memory files kept open between syncs (see kernel-file-cache.ts); by default 8192, or half the process's open-file limit when lower. */
  readonly maxOpenCgroupFiles?: number;
  /** The host access; node:fs by default. */
  readonly hostFs?: HostFs;
  /**
   * The kubelet's HugepageAwareEviction gate as in force (the pinned kubelet's default, on, when
   * absent): the node's memory.available less the hugepage capacity, as the kubelet's summary has it.
   */
  readonly hugepageAwareEviction?: boolean;
  /** The kernel's hugepage pools directory (/sys/kernel/mm/hugepages: the agent's own sysfs is the host kernel's). */
  readonly hugepagesDir?: string;
  /** The Node's `status.capacity` hugepages total in bytes, when the agent knows its Node; the kubelet subtracts that figure. */
  readonly nodeHugepageCapacityBytes?: () => bigint | undefined;
}

export const DEFAULT_DISK_WALK_BATCH_ENTRIES = 256;

/**
 * The full read's interval: no decision reads the pods' cgroup figures unless a threshold is met
 * (see EvictionManager.podStatsNeeded), so this bounds only how old they may be in what the agent
 * reports without one (the stats-coverage verdict, `explain`): the kubelet's volume stats period, the
 * age the pods' disk figures may have too.
 */
export const DEFAULT_FULL_READ_INTERVAL_MS = 60_000;

// The settings that name a host path the observer reads.
const OBSERVED_PATHS = ['cgroupRoot', 'procRoot', 'kubeletRootDir', 'imageFsPath', 'containerFsPath', 'podLogsDir'] as const;

/** The observed paths, each resolved under the host root. */
export type ResolvedObserverPaths = Pick<ObserveSettings, (typeof OBSERVED_PATHS)[number]> & {
  readonly resolveHostPath: (hostPath: string) => string;
};

export function resolveObserverPaths(settings: ObserveSettings): ResolvedObserverPaths {
  const resolveHostPath = (hostPath: string): string => join(settings.hostRoot, hostPath);
  const resolved = Object.fromEntries(OBSERVED_PATHS.map((name) => [name, resolveHostPath(settings[name])])) as Record<(typeof OBSERVED_PATHS)[number], string>;
  return { ...resolved, resolveHostPath };
}
