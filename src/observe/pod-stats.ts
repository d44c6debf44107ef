// Each pod's stats for one observation: memory and process counts from its cgroup subtree (the
// counts reused for up to the housekeeping interval), and disk usage from the background walk's
// cache. A pod found in neither has no stats; a pod whose containers have started but whose cgroup
// cannot be found is reported.

import type { Pod } from '../api/pod.js';
import type { ContainerStats, FsStats, PodStats } from '../api/summary.js';
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

export class PodStatsCollector {
  // Process counts by pod UID, and when they were last counted.
  private readonly processCounts = new Map<string, number>();
  private processesCountedAtMs = Number.NEGATIVE_INFINITY;
  private countNow = false;
  private readonly podDirs = new Set<string>();

  constructor(
    private readonly diskCache: PodDiskUsageCache,
    private readonly processCountIntervalMs: number,
    private readonly report: Report,
  ) {}

  /** Starts one observation at `nowMs`: whether process counts are due this time. */
  begin(nowMs: number): void {
    this.countNow = nowMs - this.processesCountedAtMs >= this.processCountIntervalMs;
    if (this.countNow) this.processesCountedAtMs = nowMs;
    this.podDirs.clear();
  }

  /** One pod's stats, or undefined when nothing about it was found. */
  collect(pod: Pod, uid: string, cgroups: ObserverCgroups | undefined, time: string): PodStats | undefined {
    const podRef = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid };
    const stats: PodStats = { podRef };
    const containers = new Map<string, ContainerStats>();
    let found = cgroups !== undefined && this.addCgroupStats(pod, uid, cgroups, time, containers, stats);
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
    cgroups?.reader.retain(this.podDirs);
    for (const uid of this.processCounts.keys()) if (!uids.has(uid)) this.processCounts.delete(uid);
  }

  // Memory and the process count from the pod's cgroup; false when the cgroup was not read.
  private addCgroupStats(pod: Pod, uid: string, cgroups: ObserverCgroups, time: string, containers: Map<string, ContainerStats>, stats: PodStats): boolean {
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
    for (const problem of reading?.problems ?? []) this.report(`pod ${podLabel(pod)}: ${problem}`);
    if (podDir === undefined || reading === undefined || reading.notFound) {
      // Without a pod cgroup root no pod is found; that one problem is reported once, not per pod.
      if (hasStartedContainers(pod) && cgroups.locator.podCgroupRootDir().ok) this.report(`no cgroup found for pod ${podLabel(pod)} (uid ${uid})`);
      return false;
    }
    if (reading.memory === undefined) {
      cgroups.locator.forget(uid);
      return false;
    }
    this.podDirs.add(podDir);
    stats.memory = toMemoryStats(time, reading.memory.usageBytes, reading.memory.workingSetBytes);
    for (const [name, memory] of reading.containers) containers.set(name, { name, memory: toMemoryStats(time, memory.usageBytes, memory.workingSetBytes) });
    if (count) {
      if (reading.processCount === undefined) this.processCounts.delete(uid);
      else this.processCounts.set(uid, reading.processCount);
    }
    const processCount = this.processCounts.get(uid);
    if (processCount !== undefined) stats.process_stats = { process_count: processCount };
    return true;
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
