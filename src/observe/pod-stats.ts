// Each pod's stats for one observation: memory and process counts from its cgroup subtree, and disk
// usage from the background walk's cache. A pod found in neither has no stats; a pod whose
// containers have started but whose cgroup cannot be found is reported.
//
// The cgroup figures are read when the observation asks for them (every time without a plan;
// process counts then at most once per interval), and otherwise carried from the last reading as
// they were, with their read time and the problems that reading met: a carried pod's stats are
// built exactly as they were when read, with the disk figures of now.

import type { Pod } from '../api/pod.js';
import type { ContainerStats, FsStats, MemoryStats, PodStats, PodStatsReads } from '../api/summary.js';
import { containerNamesById } from '../api/container-id.js';
import type { DiskUsage } from './disk-usage.js';
import { toMemoryStats, type Report } from './node-stats.js';
import type { ObserverCgroups } from './observer-cgroups.js';
import { ephemeralStorageUsage, type PodDiskUsage, type PodDiskUsageCache } from './pod-disk-usage.js';

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

// What one reading of a pod's cgroups found, kept until the next reading.
interface CgroupReading {
  /** Absent when the pod's cgroup was not found or its memory could not be read. */
  readonly memory?: MemoryStats;
  /** Its containers' memory, in the pod's own order. */
  readonly containers: readonly ContainerStats[];
  /** What the reading met, each naming the pod. */
  readonly problems: readonly string[];
}

const NOT_FOUND: CgroupReading = Object.freeze({ containers: [], problems: [] });

export class PodStatsCollector {
  // The latest cgroup reading and process count of each pod, by pod UID, and when each kind was
  // last read for every pod.
  private readonly readings = new Map<string, CgroupReading>();
  private readonly processCounts = new Map<string, number>();
  private memoryReadAtMs = Number.NEGATIVE_INFINITY;
  private processesCountedAtMs = Number.NEGATIVE_INFINITY;
  private readNow = true;
  private countNow = false;
  private readonly podDirs = new Set<string>();

  constructor(
    private readonly diskCache: PodDiskUsageCache,
    private readonly processCountIntervalMs: number,
    private readonly report: Report,
  ) {}

  /** Which cgroup figures were last read for every pod longer than `maxAgeMs` before `nowMs`. */
  due(nowMs: number, maxAgeMs: number): PodStatsReads {
    return { memory: nowMs - this.memoryReadAtMs >= maxAgeMs, processes: nowMs - this.processesCountedAtMs >= maxAgeMs };
  }

  /**
   * Starts one observation at `nowMs`, reading what `reads` asks for (counting processes reads
   * memory too); without it, memory, and process counts once per interval.
   */
  begin(nowMs: number, reads?: PodStatsReads): void {
    this.countNow = reads === undefined ? nowMs - this.processesCountedAtMs >= this.processCountIntervalMs : reads.processes;
    this.readNow = reads === undefined || reads.memory || this.countNow;
    if (this.readNow) this.memoryReadAtMs = nowMs;
    if (this.countNow) this.processesCountedAtMs = nowMs;
    this.podDirs.clear();
  }

  /** One pod's stats, or undefined when nothing about it was found. */
  collect(pod: Pod, uid: string, cgroups: ObserverCgroups | undefined, time: string): PodStats | undefined {
    let reading = this.readings.get(uid);
    if (this.readNow) {
      reading = cgroups === undefined ? NOT_FOUND : this.readCgroups(pod, uid, cgroups, time);
      this.readings.set(uid, reading);
    }
    for (const problem of reading?.problems ?? []) this.report(problem);
    const podRef = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid };
    const stats: PodStats = { podRef };
    const containers = new Map<string, ContainerStats>();
    let found = false;
    if (reading?.memory !== undefined) {
      found = true;
      stats.memory = reading.memory;
      // Copies: the disk figures are added to them.
      for (const container of reading.containers) containers.set(container.name, { ...container });
      const processCount = this.processCounts.get(uid);
      if (processCount !== undefined) stats.process_stats = { process_count: processCount };
    }
    const disk = this.diskCache.get(uid);
    if (disk !== undefined) {
      found = true;
      addDiskStats(pod, disk, containers, stats);
    }
    if (!found) return undefined;
    if (containers.size > 0) stats.containers = [...containers.values()];
    return stats;
  }

  /** Ends the observation: forgets what belongs to pods no longer on the node. */
  end(cgroups: ObserverCgroups | undefined, uids: ReadonlySet<string>): void {
    cgroups?.locator.retain(uids);
    // Only a reading knows which pod directories are still read.
    if (this.readNow) cgroups?.reader.retain(this.podDirs);
    for (const uid of this.readings.keys()) if (!uids.has(uid)) this.readings.delete(uid);
    for (const uid of this.processCounts.keys()) if (!uids.has(uid)) this.processCounts.delete(uid);
  }

  // Memory and the process count from the pod's cgroup.
  private readCgroups(pod: Pod, uid: string, cgroups: ObserverCgroups, time: string): CgroupReading {
    const namesById = containerNamesById(pod);
    let podDir = cgroups.locator.locate(uid, pod.status?.qosClass);
    // A pod never counted yet is counted now, whatever the interval.
    const count = this.countNow || !this.processCounts.has(uid);
    let reading = podDir === undefined ? undefined : cgroups.reader.read(podDir, namesById, count);
    if (reading?.notFound === true) {
      // The remembered cgroup is gone: look again once (the pod may have moved QoS tier).
      cgroups.locator.forget(uid);
      podDir = cgroups.locator.locate(uid, pod.status?.qosClass);
      reading = podDir === undefined ? undefined : cgroups.reader.read(podDir, namesById, count);
    }
    const problems = (reading?.problems ?? []).map((problem) => `pod ${podLabel(pod)}: ${problem}`);
    if (podDir === undefined || reading === undefined || reading.notFound) {
      // Without a pod cgroup root no pod is found; that one problem is reported once, not per pod.
      if (hasStartedContainers(pod) && cgroups.locator.podCgroupRootDir().ok) problems.push(`no cgroup found for pod ${podLabel(pod)} (uid ${uid})`);
      return { containers: [], problems };
    }
    if (reading.memory === undefined) {
      cgroups.locator.forget(uid);
      return { containers: [], problems };
    }
    this.podDirs.add(podDir);
    if (count) {
      if (reading.processCount === undefined) this.processCounts.delete(uid);
      else this.processCounts.set(uid, reading.processCount);
    }
    const containers = [...reading.containers].map(([name, memory]) => ({ name, memory: toMemoryStats(time, memory.usageBytes, memory.workingSetBytes) }));
    return { memory: toMemoryStats(time, reading.memory.usageBytes, reading.memory.workingSetBytes), containers, problems };
  }
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
