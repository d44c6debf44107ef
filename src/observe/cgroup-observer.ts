// The node observer that reads the host directly: cgroups for node, `pods` and per-pod memory
// and process counts, /proc for memory capacity and PID limits, statfs for nodefs/imagefs/
// containerfs, and a cached background walk for per-pod disk usage. It produces the kubelet Summary
// the engine consumes, with the numbers computed the way cAdvisor computes them. A missing or
// unreadable source leaves its stat out (the kubelet's "no observation") and is reported; observe()
// never rejects.

import type { Pod } from '../api/pod.js';
import { SYSTEM_CONTAINER_PODS, type ContainerStats, type FsStats, type MemoryStats, type NodeStats, type PodStats, type Summary, type SystemContainerStats } from '../api/summary.js';
import type { NodeObserver, Observation } from '../daemon/ports.js';
import { detectCgroupLayout, type CgroupLayout } from '../host/cgroup-layout.js';
import { nodeHostFs, type HostFs } from '../host/host-fs.js';
import { memTotalBytes } from '../host/meminfo.js';
import { parseCounter } from '../host/memory-limit.js';
import { PodCgroupLocator } from '../host/pod-cgroup-locator.js';
import { describeError } from '../host/read-result.js';
import { readCgroupMemory, readCgroupMemoryLimit } from './cgroup-memory-reader.js';
import { containerNamesById } from './container-id.js';
import type { DiskUsage } from './disk-usage.js';
import { CGROUP_FS_MAGICS, KernelFileCache } from './kernel-file-cache.js';
import { readNodeFilesystems } from './node-filesystems.js';
import { DEFAULT_OBSERVER_OPTIONS, resolveObserverPaths, type CgroupObserverOptions } from './observer-options.js';
import { maxPid, parseLoadavgTaskCount } from './pid-limits.js';
import { PodCgroupReader } from './pod-cgroup-reader.js';
import { ephemeralStorageUsage, PodDiskUsageCache, type PodDiskUsage } from './pod-disk-usage.js';
import { ProblemLog } from './problem-log.js';

export type { CgroupObserverOptions } from './observer-options.js';

// What is known once the memory hierarchy has been found.
interface ObserverCgroups {
  readonly layout: CgroupLayout;
  /** The host, with memory files kept open when the hierarchy is a real cgroup filesystem. */
  readonly fs: HostFs;
  readonly locator: PodCgroupLocator;
  readonly reader: PodCgroupReader;
}

/** A NodeObserver over cgroupfs, /proc and statfs. */
export interface CgroupObserver extends NodeObserver {
  /** The problems of the latest observation (each a short sentence). */
  problems(): readonly string[];
  /**
   * Walks the disk usage of these pods now (or joins the walk already running) and resolves when it
   * is done; observe() only starts walks in the background, at most once per `diskUsageIntervalMs`.
   */
  refreshDiskUsage(pods: readonly Pod[]): Promise<void>;
  /** Closes the cgroup files kept open between syncs. Idempotent; a later observe() reopens them. */
  close(): void;
}

function toMemoryStats(time: string, usageBytes: bigint, workingSetBytes: bigint, availableBytes?: bigint): MemoryStats {
  const stats: MemoryStats = { time, usageBytes: Number(usageBytes), workingSetBytes: Number(workingSetBytes) };
  if (availableBytes !== undefined) stats.availableBytes = Number(availableBytes);
  return stats;
}

function diskStats(time: string, usage: DiskUsage): FsStats {
  return { time, usedBytes: Number(usage.usedBytes), inodesUsed: Number(usage.inodesUsed) };
}

function podLabel(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

// Whether the pod should have a cgroup: some container has been created. Pending pods without
// containers have none yet, and their absence is not a problem.
function hasStartedContainers(pod: Pod): boolean {
  return containerNamesById(pod).size > 0;
}

export function createCgroupObserver(options: CgroupObserverOptions): CgroupObserver {
  const fs: HostFs = options.hostFs ?? nodeHostFs;
  const clock = options.clock;
  const logger = options.logger.child({ component: 'cgroup-observer' });
  const paths = resolveObserverPaths(options);
  const nodeCgroup = (options.nodeCgroup ?? DEFAULT_OBSERVER_OPTIONS.nodeCgroup).replace(/^\/+|\/+$/g, '');
  const cgroupDriver = options.cgroupDriver ?? DEFAULT_OBSERVER_OPTIONS.cgroupDriver;
  const problemLog = new ProblemLog(logger);
  const diskCache = new PodDiskUsageCache(
    fs,
    { kubeletRootDir: paths.kubeletRootDir, podLogsDir: paths.podLogsDir, mountInfoPath: `${paths.procRoot}/1/mountinfo`, resolveHostPath: paths.resolveHostPath },
    options.diskUsageIntervalMs ?? DEFAULT_OBSERVER_OPTIONS.diskUsageIntervalMs,
    options.diskWalkBatchEntries ?? DEFAULT_OBSERVER_OPTIONS.diskWalkBatchEntries,
    () => clock.nowMs(),
  );

  let cgroupState: ObserverCgroups | undefined;
  // Process counts by pod UID, and when they were last counted (see processCountIntervalMs).
  const processCounts = new Map<string, number>();
  const processCountIntervalMs = options.processCountIntervalMs ?? DEFAULT_OBSERVER_OPTIONS.processCountIntervalMs;
  let processesCountedAtMs = Number.NEGATIVE_INFINITY;

  const report = (reason: string): void => problemLog.report(reason);

  // Detected once it succeeds; retried on every observation until then (the hierarchy may be mounted later).
  async function cgroupLayout(): Promise<ObserverCgroups | undefined> {
    if (cgroupState === undefined) {
      const detected = detectCgroupLayout(fs, paths.cgroupRoot);
      if (!detected.ok) {
        report(`memory not observed: ${detected.reason}`);
        return undefined;
      }
      const layout = detected.value;
      const nodeDir = nodeCgroup === '' ? layout.memoryRoot : `${layout.memoryRoot}/${nodeCgroup}`;
      // Files are kept open only on a real cgroup filesystem, where a removed cgroup's files fail
      // (ENODEV) instead of reading on as a renamed regular file would.
      const fsType = await fs.statfs(layout.memoryRoot).then(
        (s) => s.type,
        () => undefined,
      );
      const cgroupFs = fsType !== undefined && CGROUP_FS_MAGICS.includes(fsType) ? new KernelFileCache(fs, layout.memoryRoot, options.maxOpenCgroupFiles) : fs;
      cgroupState = {
        layout,
        fs: cgroupFs,
        locator: new PodCgroupLocator(fs, nodeDir, cgroupDriver, options.podCgroupRoot),
        reader: new PodCgroupReader(cgroupFs, layout.version, (dir) => (cgroupFs instanceof KernelFileCache ? cgroupFs.release(dir) : undefined)),
      };
    }
    return cgroupState;
  }

  function readProcFile(path: string): string | undefined {
    try {
      return fs.readSingleRecordFile(path);
    } catch (error) {
      report(`cannot read ${path}: ${describeError(error)}`);
      return undefined;
    }
  }

  function nodeMemory(cgroups: ObserverCgroups, time: string): MemoryStats | undefined {
    const { layout } = cgroups;
    const nodeDir = nodeCgroup === '' ? layout.memoryRoot : `${layout.memoryRoot}/${nodeCgroup}`;
    const isV2Root = layout.version === 'v2' && nodeCgroup === '';
    const reading = readCgroupMemory(cgroups.fs, nodeDir, layout.version, isV2Root);
    if (!reading.ok) {
      report(`node memory not observed: ${reading.reason}`);
      return undefined;
    }
    const { usageBytes, workingSetBytes } = reading.value;
    // The root cgroup's capacity is the machine's memory (cAdvisor MemoryCapacity = MemTotal); a
    // node cgroup with a lower limit (a sandbox) is capped by it.
    const meminfoText = readProcFile(`${paths.procRoot}/meminfo`);
    let capacityBytes = meminfoText === undefined ? undefined : memTotalBytes(meminfoText);
    if (meminfoText !== undefined && capacityBytes === undefined) report(`${paths.procRoot}/meminfo has no MemTotal`);
    if (!isV2Root) {
      const limit = readCgroupMemoryLimit(cgroups.fs, nodeDir, layout.version);
      if (limit.ok && limit.value !== null && (capacityBytes === undefined || limit.value < capacityBytes)) capacityBytes = limit.value;
    }
    if (capacityBytes === undefined) return toMemoryStats(time, usageBytes, workingSetBytes);
    return toMemoryStats(time, usageBytes, workingSetBytes, availableFrom('node memory', capacityBytes, workingSetBytes));
  }

  // capacity - working set; a working set above capacity is a bogus kernel reading (kubernetes
  // issue 114332), reported instead of turned into an eviction.
  function availableFrom(what: string, capacityBytes: bigint, workingSetBytes: bigint): bigint | undefined {
    if (workingSetBytes <= capacityBytes) return capacityBytes - workingSetBytes;
    report(`${what}: working set ${workingSetBytes} exceeds capacity ${capacityBytes}; availableBytes not reported`);
    return undefined;
  }

  function podsSystemContainer(cgroups: ObserverCgroups, time: string): SystemContainerStats | undefined {
    const root = cgroups.locator.podCgroupRootDir();
    if (!root.ok) {
      report(`allocatable memory not observed: ${root.reason}`);
      return undefined;
    }
    const reading = readCgroupMemory(cgroups.fs, root.value.dir, cgroups.layout.version);
    if (!reading.ok) {
      report(`allocatable memory not observed: ${reading.reason}`);
      return undefined;
    }
    const { usageBytes, workingSetBytes } = reading.value;
    const limit = readCgroupMemoryLimit(cgroups.fs, root.value.dir, cgroups.layout.version);
    if (!limit.ok) report(`allocatable memory has no availableBytes: ${limit.reason}`);
    // An unlimited kubepods cgroup (pods allocatable not enforced) has no availableBytes, as in the kubelet.
    const availableBytes = limit.ok && limit.value !== null ? availableFrom('pods memory', limit.value, workingSetBytes) : undefined;
    return { name: SYSTEM_CONTAINER_PODS, memory: toMemoryStats(time, usageBytes, workingSetBytes, availableBytes) };
  }

  function rlimit(time: string): NodeStats['rlimit'] {
    const limits = ['pid_max', 'threads-max'].map((name) => {
      const text = readProcFile(`${paths.procRoot}/sys/kernel/${name}`);
      return text === undefined ? undefined : parseCounter(text);
    });
    const maxPidCount = maxPid(limits);
    const loadavgText = readProcFile(`${paths.procRoot}/loadavg`);
    const taskCount = loadavgText === undefined ? undefined : parseLoadavgTaskCount(loadavgText);
    if (loadavgText !== undefined && taskCount === undefined) report(`${paths.procRoot}/loadavg has no task count`);
    if (maxPidCount === undefined && taskCount === undefined) return undefined;
    const stats: NonNullable<NodeStats['rlimit']> = { time };
    if (maxPidCount !== undefined) stats.maxpid = Number(maxPidCount);
    if (taskCount !== undefined) stats.curproc = Number(taskCount);
    return stats;
  }

  function podStats(pod: Pod, uid: string, cgroups: ObserverCgroups | undefined, time: string, podDirs: Set<string>, countProcesses: boolean): PodStats | undefined {
    const podRef = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid };
    const stats: PodStats = { podRef };
    const containers = new Map<string, ContainerStats>();
    let found = false;

    if (cgroups !== undefined) {
      const namesById = containerNamesById(pod);
      let podDir = cgroups.locator.locate(uid, pod.status?.qosClass);
      // A pod never counted yet is counted now, whatever the interval.
      const count = countProcesses || !processCounts.has(uid);
      let reading = podDir === undefined ? undefined : cgroups.reader.read(podDir, namesById, count);
      if (reading?.notFound === true) {
        // The remembered cgroup is gone: look again once (the pod may have moved QoS tier).
        cgroups.locator.forget(uid);
        podDir = cgroups.locator.locate(uid, pod.status?.qosClass);
        reading = podDir === undefined ? undefined : cgroups.reader.read(podDir, namesById, count);
      }
      for (const problem of reading?.problems ?? []) report(`pod ${podLabel(pod)}: ${problem}`);
      if (podDir === undefined || reading === undefined || reading.notFound) {
        // Without a pod cgroup root no pod is found; that one problem is reported once, not per pod.
        if (hasStartedContainers(pod) && cgroups.locator.podCgroupRootDir().ok) report(`no cgroup found for pod ${podLabel(pod)} (uid ${uid})`);
      } else if (reading.memory === undefined) {
        cgroups.locator.forget(uid);
      } else {
        found = true;
        podDirs.add(podDir);
        stats.memory = toMemoryStats(time, reading.memory.usageBytes, reading.memory.workingSetBytes);
        for (const [name, memory] of reading.containers) containers.set(name, { name, memory: toMemoryStats(time, memory.usageBytes, memory.workingSetBytes) });
        if (count) {
          if (reading.processCount === undefined) processCounts.delete(uid);
          else processCounts.set(uid, reading.processCount);
        }
        const processCount = processCounts.get(uid);
        if (processCount !== undefined) stats.process_stats = { process_count: processCount };
      }
    }

    const disk = diskCache.get(uid);
    if (disk !== undefined) {
      found = true;
      addDiskStats(pod, disk, containers, stats);
    }
    if (!found) return undefined;
    if (containers.size > 0) stats.containers = [...containers.values()];
    return stats;
  }

  function addDiskStats(pod: Pod, disk: PodDiskUsage, containers: Map<string, ContainerStats>, stats: PodStats): void {
    const time = new Date(disk.timeMs).toISOString();
    const entry = (name: string): ContainerStats => {
      let container = containers.get(name);
      if (container === undefined) {
        container = { name };
        containers.set(name, container);
      }
      return container;
    };
    for (const [name, usage] of disk.rootfs) entry(name).rootfs = diskStats(time, usage);
    for (const [name, usage] of disk.containerLogs) entry(name).logs = diskStats(time, usage);
    if (disk.volumes.size > 0) stats.volume = [...disk.volumes].map(([name, usage]) => ({ name, ...diskStats(time, usage) }));
    stats['ephemeral-storage'] = diskStats(time, ephemeralStorageUsage(pod, disk));
  }

  async function observe(pods: readonly Pod[]): Promise<Observation> {
    problemLog.begin();
    const time = new Date(clock.nowMs()).toISOString();
    // statfs may wait on a disk: started first, so it runs on the thread pool while cgroups are read.
    const filesystems = readNodeFilesystems(fs, paths, time, report);

    const node: NodeStats = {};
    if (options.nodeName !== undefined) node.nodeName = options.nodeName;
    const cgroups = await cgroupLayout();
    if (cgroups !== undefined) {
      const memory = nodeMemory(cgroups, time);
      if (memory !== undefined) node.memory = memory;
      const podsContainer = podsSystemContainer(cgroups, time);
      if (podsContainer !== undefined) node.systemContainers = [podsContainer];
    }
    const limits = rlimit(time);
    if (limits !== undefined) node.rlimit = limits;

    diskCache.refreshIfDue(pods);
    const countProcesses = clock.nowMs() - processesCountedAtMs >= processCountIntervalMs;
    if (countProcesses) processesCountedAtMs = clock.nowMs();
    const uids = new Set<string>();
    const podDirs = new Set<string>();
    const podStatsList: PodStats[] = [];
    for (const pod of pods) {
      const uid = pod.metadata.uid;
      if (uid === undefined || uid === '') continue;
      uids.add(uid);
      const stats = podStats(pod, uid, cgroups, time, podDirs, countProcesses);
      if (stats !== undefined) podStatsList.push(stats);
    }
    cgroups?.locator.retain(uids);
    cgroups?.reader.retain(podDirs);
    for (const uid of processCounts.keys()) if (!uids.has(uid)) processCounts.delete(uid);
    for (const reason of diskCache.problems()) report(reason);

    const { nodeFs, imageFs, containerFs, dedicatedImageFs, splitContainerFs } = await filesystems;
    if (nodeFs !== undefined) node.fs = nodeFs;
    if (imageFs !== undefined || containerFs !== undefined) {
      node.runtime = {};
      if (imageFs !== undefined) node.runtime.imageFs = imageFs;
      if (containerFs !== undefined) node.runtime.containerFs = containerFs;
    }
    const summary: Summary = { node, pods: podStatsList };
    return { summary, dedicatedImageFs, splitContainerFs, problems: problemLog.end() };
  }

  // Observations run one at a time (a notifier wake-up may arrive while the loop's sync is
  // observing): each one's problems are its own, and the caches are not read half-updated.
  let queue: Promise<unknown> = Promise.resolve();
  const observeSerially = (pods: readonly Pod[]): Promise<Observation> => {
    const next = queue.then(() => observe(pods));
    queue = next.catch(() => undefined);
    return next;
  };

  return {
    observe: observeSerially,
    problems: () => problemLog.problems(),
    refreshDiskUsage: (pods) => diskCache.refresh(pods),
    close: () => {
      if (cgroupState?.fs instanceof KernelFileCache) cgroupState.fs.closeAll();
    },
  };
}
