// The cgroup observer's options and their defaults. Every path is a host path, resolved under
// `hostRoot`, because the agent runs in a DaemonSet that mounts the host's filesystem at e.g. /host;
// tests point `hostRoot` at a fixture tree or a sandbox.

import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { HostFs } from '../host/host-fs.js';
import type { CgroupDriver } from '../host/pod-cgroup-names.js';

export interface CgroupObserverOptions {
  /** Where the host's root filesystem is mounted; `/` when the agent runs on the host itself. */
  readonly hostRoot?: string;
  /** The cgroup mount (`/sys/fs/cgroup`); memory is `<cgroupRoot>/memory` on v1. */
  readonly cgroupRoot?: string;
  /** The host's procfs (`/proc`): meminfo, loadavg, kernel limits and PID 1's mountinfo. */
  readonly procRoot?: string;
  /** The kubelet's root directory (`/var/lib/kubelet`): nodefs, and pod volumes under `pods/`. */
  readonly kubeletRootDir?: string;
  /** A directory on the runtime's image filesystem (containerd: `/var/lib/containerd`). */
  readonly imageFsPath?: string;
  /** A directory on the filesystem of container writable layers; the image filesystem path by default. */
  readonly containerFsPath?: string;
  /** The pod log directory (`/var/log/pods`). */
  readonly podLogsDir?: string;
  /** The kubelet's cgroup driver; `auto` takes whichever pod cgroup tree exists. */
  readonly cgroupDriver?: CgroupDriver | 'auto';
  /** The pod cgroup root relative to the node cgroup (`kubepods`, `kubepods.slice`); by default the driver's. */
  readonly podCgroupRoot?: string;
  /**
   * A cgroup (relative to the memory hierarchy's root) that stands in for the node: its usage is
   * the node's, its limit caps the capacity, and the pod cgroup root is under it. Empty (the
   * hierarchy's root) on a real node; tests use a sandbox cgroup.
   */
  readonly nodeCgroup?: string;
  /** The minimum time between two disk-usage walks (the memory sync never walks). */
  readonly diskUsageIntervalMs?: number;
  /**
   * The minimum time between two counts of each pod's processes. Counting opens every cgroup's
   * `cgroup.procs` and is the larger part of a pass; the counts only rank pods under PID pressure,
   * so a pass woken by a memory notification reuses counts up to this old (as the kubelet's
   * cAdvisor stats are up to a housekeeping interval old).
   */
  readonly processCountIntervalMs?: number;
  /** Directory entries examined between two yields to the event loop during a walk. */
  readonly diskWalkBatchEntries?: number;
  /** Cgroup memory files kept open between syncs (see kernel-file-cache.ts); 2048 by default. */
  readonly maxOpenCgroupFiles?: number;
  /** Reported as `node.nodeName`. */
  readonly nodeName?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The host access; node:fs by default. */
  readonly hostFs?: HostFs;
}

export const DEFAULT_OBSERVER_OPTIONS = Object.freeze({
  hostRoot: '/',
  cgroupRoot: '/sys/fs/cgroup',
  procRoot: '/proc',
  kubeletRootDir: '/var/lib/kubelet',
  imageFsPath: '/var/lib/containerd',
  podLogsDir: '/var/log/pods',
  cgroupDriver: 'auto' as const,
  nodeCgroup: '',
  diskUsageIntervalMs: 60_000,
  processCountIntervalMs: 10_000,
  diskWalkBatchEntries: 256,
});

/** The options with defaults applied and every path resolved under the host root. */
export interface ResolvedObserverPaths {
  readonly cgroupRoot: string;
  readonly procRoot: string;
  readonly kubeletRootDir: string;
  readonly imageFsPath: string;
  readonly containerFsPath: string;
  readonly podLogsDir: string;
  readonly resolveHostPath: (hostPath: string) => string;
}

export function resolveObserverPaths(options: CgroupObserverOptions): ResolvedObserverPaths {
  const hostRoot = options.hostRoot ?? DEFAULT_OBSERVER_OPTIONS.hostRoot;
  const resolveHostPath = (hostPath: string): string => join(hostRoot, hostPath);
  const imageFsPath = options.imageFsPath ?? DEFAULT_OBSERVER_OPTIONS.imageFsPath;
  return {
    cgroupRoot: resolveHostPath(options.cgroupRoot ?? DEFAULT_OBSERVER_OPTIONS.cgroupRoot),
    procRoot: resolveHostPath(options.procRoot ?? DEFAULT_OBSERVER_OPTIONS.procRoot),
    kubeletRootDir: resolveHostPath(options.kubeletRootDir ?? DEFAULT_OBSERVER_OPTIONS.kubeletRootDir),
    imageFsPath: resolveHostPath(imageFsPath),
    containerFsPath: resolveHostPath(options.containerFsPath ?? imageFsPath),
    podLogsDir: resolveHostPath(options.podLogsDir ?? DEFAULT_OBSERVER_OPTIONS.podLogsDir),
    resolveHostPath,
  };
}
