// Ranks pods for eviction the way the kubelet does (`helpers.go`: `orderedBy`, the comparators,
// `rankMemoryPressure`, `rankPIDPressure`, `rankDiskPressureFunc`, `buildSignalToRankFunc`).
// Usage comes from the pod's Summary stats, requests from pod-resources.ts. Go's sort.Sort is not
// stable; this sort is (Array.prototype.sort), so equal pods keep the caller's order and the same
// inputs always give the same ranking.

import type { Pod, Volume } from '../api/pod.js';
import { quantityValue } from '../api/quantity.js';
import { isMemorySignal, type Signal } from '../api/signals.js';
import type { FsStats, PodStats } from '../api/summary.js';
import { isCriticalPod } from './critical.js';
import { podPriority, podRequest, podRequestQuantity } from './pod-resources.js';
import type { RankedPod } from './types.js';

/** A pod's stats from the current Summary, matched by `podRef.uid`; undefined when it has none. */
export type StatsFunc = (pod: Pod) => PodStats | undefined;

/** Which of a pod's filesystem stats count toward a disk signal (kubelet `fsStatsType`). */
export type FsStatsType = 'root' | 'logs' | 'localVolumeSource' | 'images';

/** The disk resources a disk signal starves: bytes (`*.available`) or inodes (`*.inodesFree`). */
export type DiskResource = 'ephemeral-storage' | 'inodes';

/** Negative when p1 should be evicted before p2, positive after, 0 when this key cannot tell. */
export type CmpFunc = (p1: Pod, p2: Pod) => number;

/** Sorts `pods` in place, first victim first. */
export type RankFunc = (pods: Pod[], stats: StatsFunc) => void;

/** The kubelet's `multiSorter`: a comparator made of keys tried in order. */
export interface MultiSorter {
  /** The first key that tells the pods apart decides; the last key decides ties of all the others. */
  compare: CmpFunc;
  /** Sorts in place; stable, so pods every key ties keep their input order. */
  sort(pods: Pod[]): void;
}

export function orderedBy(...cmp: CmpFunc[]): MultiSorter {
  const compare: CmpFunc = (p1, p2) => {
    for (const key of cmp) {
      const result = key(p1, p2);
      if (result !== 0) return result;
    }
    return 0;
  };
  return { compare, sort: (pods) => void pods.sort(compare) };
}

/** Places true before false. */
export function cmpBool(a: boolean, b: boolean): number {
  if (a === b) return 0;
  return b ? 1 : -1;
}

/** Lower priority first (unset priority is 0). */
export function priority(p1: Pod, p2: Pod): number {
  const priority1 = podPriority(p1);
  const priority2 = podPriority(p2);
  return priority1 === priority2 ? 0 : priority1 > priority2 ? 1 : -1;
}

function compareBigInt(a: bigint, b: bigint): number {
  return a === b ? 0 : a > b ? 1 : -1;
}

// Summary numbers are JSON integers; an absent stat counts as zero, as the kubelet's *Usage helpers do.
function toBigInt(value: number | undefined): bigint {
  return value === undefined || value === null ? 0n : BigInt(Math.trunc(value));
}

/** The pod's working set bytes (`memoryUsage`); 0 when the stat is absent. */
export function memoryUsage(podStats: PodStats): bigint {
  return toBigInt(podStats.memory?.workingSetBytes);
}

/** The pod's process count (`processUsage`); 0 when the stat is absent. */
export function processUsage(podStats: PodStats): bigint {
  return toBigInt(podStats.process_stats?.process_count);
}

/**
 * `volumeutils.IsLocalEphemeralVolume` as of current Kubernetes: gitRepo, an emptyDir on the
 * default (disk) medium, or configMap. Releases before 1.10 used "medium is not Memory" and also
 * counted downwardAPI; the current rule is the one implemented, so a `HugePages` emptyDir and a
 * downwardAPI volume are not counted.
 */
export function isLocalEphemeralVolume(volume: Volume): boolean {
  const emptyDir = volume.emptyDir;
  const diskMediumEmptyDir = emptyDir !== undefined && emptyDir !== null && (emptyDir.medium ?? '') === '';
  return present(volume.gitRepo) || diskMediumEmptyDir || present(volume.configMap);
}

function present(source: unknown): boolean {
  return source !== undefined && source !== null;
}

/** The pod's volumes that use node-local storage (`localVolumeNames`): hostPath plus local ephemeral ones. */
export function localVolumeNames(pod: Pod): string[] {
  return (pod.spec.volumes ?? []).filter((v) => present(v.hostPath) || isLocalEphemeralVolume(v)).map((v) => v.name);
}

/** Disk bytes and inodes a pod uses on the filesystems a signal measures. */
export interface DiskUsage {
  readonly 'ephemeral-storage': bigint;
  readonly inodes: bigint;
}

function fsUsage(fs: FsStats | undefined): DiskUsage {
  return { 'ephemeral-storage': toBigInt(fs?.usedBytes), inodes: toBigInt(fs?.inodesUsed) };
}

/**
 * `podDiskUsage`: containers' writable layers (`root`) and logs (`logs`), plus the pod's local
 * volumes (`localVolumeSource`, the first stat of each volume's name). `images` adds nothing: the
 * Summary has no per-pod image usage.
 */
export function podDiskUsage(podStats: PodStats, pod: Pod, fsStatsToMeasure: readonly FsStatsType[]): DiskUsage {
  let bytes = 0n;
  let inodes = 0n;
  const add = (fs: FsStats | undefined): void => {
    const usage = fsUsage(fs);
    bytes += usage['ephemeral-storage'];
    inodes += usage.inodes;
  };
  for (const container of podStats.containers ?? []) {
    if (fsStatsToMeasure.includes('root')) add(container.rootfs);
    if (fsStatsToMeasure.includes('logs')) add(container.logs);
  }
  if (fsStatsToMeasure.includes('localVolumeSource')) {
    for (const name of localVolumeNames(pod)) {
      add(podStats.volume?.find((v) => v.name === name));
    }
  }
  return { 'ephemeral-storage': bytes, inodes };
}

// Each comparator computes a pod's figures once per ranking: a comparator is built per rank call,
// and the pods do not change while they are sorted.
function memoized<T>(compute: (pod: Pod) => T): (pod: Pod) => T {
  const cache = new Map<Pod, T>();
  return (pod) => {
    if (cache.has(pod)) return cache.get(pod) as T;
    const value = compute(pod);
    cache.set(pod, value);
    return value;
  };
}

// The comparators' shared rule: a pod without stats goes first, before any key is looked at.
function withStats<T>(stats: StatsFunc, figure: (podStats: PodStats, pod: Pod) => T, compare: (f1: T, f2: T) => number): CmpFunc {
  const figureOf = memoized((pod) => {
    const podStats = stats(pod);
    return podStats === undefined ? undefined : { value: figure(podStats, pod) };
  });
  return (p1, p2) => {
    const f1 = figureOf(p1);
    const f2 = figureOf(p2);
    if (f1 === undefined || f2 === undefined) return cmpBool(f1 === undefined, f2 === undefined);
    return compare(f1.value, f2.value);
  };
}

/** Pods whose working set strictly exceeds their memory request first. */
export function exceedMemoryRequests(stats: StatsFunc, podLevelResources = true): CmpFunc {
  return withStats(stats, (podStats, pod) => memoryUsage(podStats) > podRequest(pod, 'memory', podLevelResources), cmpBool);
}

/** The largest working set above the memory request first. */
export function memory(stats: StatsFunc, podLevelResources = true): CmpFunc {
  return withStats(stats, (podStats, pod) => memoryUsage(podStats) - podRequest(pod, 'memory', podLevelResources), (m1, m2) => compareBigInt(m2, m1));
}

/** The most processes first. */
export function process(stats: StatsFunc): CmpFunc {
  return withStats(stats, (podStats) => processUsage(podStats), (n1, n2) => compareBigInt(n2, n1));
}

// The request a disk usage is compared with: ephemeral-storage bytes, or inodes, which no pod can
// request, so every pod that uses an inode "exceeds".
function diskRequest(pod: Pod, diskResource: DiskResource, podLevelResources: boolean): bigint {
  return quantityValue(podRequestQuantity(pod, diskResource, podLevelResources));
}

/** Pods whose usage of the disk resource strictly exceeds their request for it first. */
export function exceedDiskRequests(stats: StatsFunc, fsStatsToMeasure: readonly FsStatsType[], diskResource: DiskResource, podLevelResources = true): CmpFunc {
  return withStats(
    stats,
    (podStats, pod) => podDiskUsage(podStats, pod, fsStatsToMeasure)[diskResource] > diskRequest(pod, diskResource, podLevelResources),
    cmpBool,
  );
}

/**
 * The largest usage above the request first. As upstream, the ephemeral-storage byte request is
 * subtracted even when the usage is in inodes.
 */
export function disk(stats: StatsFunc, fsStatsToMeasure: readonly FsStatsType[], diskResource: DiskResource, podLevelResources = true): CmpFunc {
  return withStats(
    stats,
    (podStats, pod) => podDiskUsage(podStats, pod, fsStatsToMeasure)[diskResource] - podRequest(pod, 'ephemeral-storage', podLevelResources),
    (d1, d2) => compareBigInt(d2, d1),
  );
}

/** Memory pressure: pods over their request, then lowest priority, then most memory above request. */
export function rankMemoryPressure(pods: Pod[], stats: StatsFunc, podLevelResources = true): void {
  orderedBy(exceedMemoryRequests(stats, podLevelResources), priority, memory(stats, podLevelResources)).sort(pods);
}

/** Memory pressure with the PodLevelResources gate off: pods request what their containers do (pod-level requests still replace the sum). */
export const rankMemoryPressureWithoutPodLevelResources: RankFunc = (pods, stats) => rankMemoryPressure(pods, stats, false);

/** PID pressure: lowest priority, then most processes. */
export function rankPIDPressure(pods: Pod[], stats: StatsFunc): void {
  orderedBy(priority, process(stats)).sort(pods);
}

/** Disk pressure on the given filesystems: pods over their request, then lowest priority, then most usage above request. */
export function rankDiskPressureFunc(fsStatsToMeasure: readonly FsStatsType[], diskResource: DiskResource, podLevelResources = true): RankFunc {
  return (pods, stats) => {
    orderedBy(exceedDiskRequests(stats, fsStatsToMeasure, diskResource, podLevelResources), priority, disk(stats, fsStatsToMeasure, diskResource, podLevelResources)).sort(pods);
  };
}

const SINGLE_FS: readonly FsStatsType[] = ['images', 'root', 'logs', 'localVolumeSource'];
const NODEFS_WITH_IMAGEFS: readonly FsStatsType[] = ['logs', 'localVolumeSource'];
const IMAGEFS_WITH_CONTAINERS: readonly FsStatsType[] = ['root', 'images'];
const NODEFS_WITH_SPLIT_CONTAINERFS: readonly FsStatsType[] = ['logs', 'localVolumeSource', 'root'];
const IMAGEFS_IMAGES_ONLY: readonly FsStatsType[] = ['images'];

/**
 * The filesystem stats a disk signal measures on this layout (`buildSignalToRankFunc`); null for
 * memory and PID signals. With a dedicated imagefs, container writable layers live on imagefs
 * unless containerfs is split off, in which case they live on nodefs with logs and volumes, and
 * imagefs holds only images (no per-pod usage, so ranking there falls to priority and request).
 * A split containerfs without a dedicated imagefs is ranked as a single filesystem, as upstream.
 */
export function fsStatsForSignal(signal: Signal, dedicatedImageFs: boolean, splitContainerFs: boolean): readonly FsStatsType[] | null {
  if (isMemorySignal(signal) || signal === 'pid.available') return null;
  const fs = signal.slice(0, signal.indexOf('.'));
  if (dedicatedImageFs && !splitContainerFs) return fs === 'nodefs' ? NODEFS_WITH_IMAGEFS : IMAGEFS_WITH_CONTAINERS;
  if (dedicatedImageFs && splitContainerFs) return fs === 'imagefs' ? IMAGEFS_IMAGES_ONLY : NODEFS_WITH_SPLIT_CONTAINERFS;
  return SINGLE_FS;
}

/** The disk resource a disk signal starves: inodes for `*.inodesFree`, ephemeral-storage otherwise. */
export function diskResourceForSignal(signal: Signal): DiskResource {
  return signal.endsWith('.inodesFree') ? 'inodes' : 'ephemeral-storage';
}

/**
 * The rank function the kubelet uses for a signal on this filesystem layout; `podLevelResources`
 * is the kubelet's PodLevelResources gate, which decides what a pod requests.
 */
export function rankFuncForSignal(signal: Signal, dedicatedImageFs: boolean, splitContainerFs: boolean, podLevelResources = true): RankFunc {
  if (isMemorySignal(signal)) return podLevelResources ? rankMemoryPressure : rankMemoryPressureWithoutPodLevelResources;
  if (signal === 'pid.available') return rankPIDPressure;
  const fsStatsToMeasure = fsStatsForSignal(signal, dedicatedImageFs, splitContainerFs) ?? SINGLE_FS;
  return rankDiskPressureFunc(fsStatsToMeasure, diskResourceForSignal(signal), podLevelResources);
}

/**
 * The pods in rank order (a new array; `pods` is not touched), each with the figures that ranked
 * it: usage of the starved resource (working set bytes, disk bytes or inodes on the measured
 * filesystems, or process count; null without stats), the request it was compared with (0 for
 * inodes and PIDs, which cannot be requested), priority, whether usage exceeds that request, and
 * whether the pod is critical (ranked, but never evicted).
 */
export function rankedPods(
  signal: Signal,
  dedicatedImageFs: boolean,
  splitContainerFs: boolean,
  pods: readonly Pod[],
  stats: StatsFunc,
  podLevelResources = true,
): RankedPod[] {
  const ordered = [...pods];
  rankFuncForSignal(signal, dedicatedImageFs, splitContainerFs, podLevelResources)(ordered, stats);
  const fsStatsToMeasure = fsStatsForSignal(signal, dedicatedImageFs, splitContainerFs);
  return ordered.map((pod) => {
    const podStats = stats(pod);
    let usage: bigint | null = null;
    let request = 0n;
    if (isMemorySignal(signal)) {
      request = podRequest(pod, 'memory', podLevelResources);
      if (podStats !== undefined) usage = memoryUsage(podStats);
    } else if (signal === 'pid.available') {
      if (podStats !== undefined) usage = processUsage(podStats);
    } else {
      const diskResource = diskResourceForSignal(signal);
      request = diskRequest(pod, diskResource, podLevelResources);
      if (podStats !== undefined) usage = podDiskUsage(podStats, pod, fsStatsToMeasure ?? SINGLE_FS)[diskResource];
    }
    const exceedsRequest = usage !== null && signal !== 'pid.available' && usage > request;
    return { pod, critical: isCriticalPod(pod), usage, request, priority: podPriority(pod), exceedsRequest };
  });
}
