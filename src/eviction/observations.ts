// Signal observations (kubelet `makeSignalObservations`): the available amount, capacity and stat
// time of every eviction signal, read from one Summary, plus the pod-stats lookup the ranking and
// messages use. Values are exact BigInts; a signal whose stat fields are missing gets no
// observation, so thresholds on it can never be met.

import { nodePodUid } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';
import { quantityFromInteger, type Quantity, type QuantityFormat } from '../api/quantity.js';
import { signalToResource, type Signal } from '../api/signals.js';
import { SYSTEM_CONTAINER_PODS, type FsStats, type MemoryStats, type PodStats, type Summary } from '../api/summary.js';
import type { StatsFunc } from './ranking.js';
import type { SignalObservation } from './types.js';

/** The filesystem layout, used only to stand in for a `containerFs` stat older kubelets do not send. */
export interface FilesystemLayout {
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
}

// Go's zero time.Time marshals as this instant; the kubelet's `IsZero()` treats it as "no time".
const GO_ZERO_TIME_MS = -62_135_596_800_000; // 0001-01-01T00:00:00Z

/** A stat's RFC 3339 timestamp in ms since the epoch; 0 when absent, unparsable or Go's zero time. */
export function statTimeMs(time: string | undefined): number {
  if (time === undefined || time === '') return 0;
  const parsedMs = Date.parse(time);
  if (Number.isNaN(parsedMs) || parsedMs === GO_ZERO_TIME_MS) return 0;
  return parsedMs;
}

// JSON numbers become exact integers; a value that is not a finite number counts as absent.
function toBigInt(value: number | undefined): bigint | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  return BigInt(Math.trunc(value));
}

function memoryObservation(memory: MemoryStats | undefined): SignalObservation | undefined {
  const availableBytes = toBigInt(memory?.availableBytes);
  const workingSetBytes = toBigInt(memory?.workingSetBytes);
  if (availableBytes === undefined || workingSetBytes === undefined) return undefined;
  // The cgroup limit the kubelet measures against: available = limit - workingSet.
  return { available: availableBytes, capacity: availableBytes + workingSetBytes, timeMs: statTimeMs(memory?.time) };
}

function bytesObservation(fs: FsStats | undefined): SignalObservation | undefined {
  const availableBytes = toBigInt(fs?.availableBytes);
  const capacityBytes = toBigInt(fs?.capacityBytes);
  if (availableBytes === undefined || capacityBytes === undefined) return undefined;
  return { available: availableBytes, capacity: capacityBytes, timeMs: statTimeMs(fs?.time) };
}

function inodesObservation(fs: FsStats | undefined): SignalObservation | undefined {
  const inodesFree = toBigInt(fs?.inodesFree);
  const inodes = toBigInt(fs?.inodes);
  if (inodesFree === undefined || inodes === undefined) return undefined;
  return { available: inodesFree, capacity: inodes, timeMs: statTimeMs(fs?.time) };
}

/**
 * The filesystem holding container writable layers. The kubelet's summary provider always fills
 * `runtime.containerFs` (newer kubelets): with the image filesystem's stats unless the container
 * filesystem is split from it, and then with the node filesystem's (writable layers stay on
 * nodefs, §5.3). A summary without it (older kubelets, observers that leave it out) gets the same
 * stand-in here: nodefs when split, otherwise imagefs, otherwise nodefs (the kubelet reports
 * nodefs as imagefs when there is no dedicated image filesystem).
 */
export function containerFsStats(summary: Summary, layout?: FilesystemLayout, separateDiskGC = true): FsStats | undefined {
  const runtime = summary.node.runtime;
  // With KubeletSeparateDiskGC off the kubelet's stats providers report the image filesystem as
  // the container filesystem, split or not.
  if (!separateDiskGC) return runtime?.imageFs ?? summary.node.fs;
  if (runtime?.containerFs !== undefined) return runtime.containerFs;
  if (layout?.splitContainerFs === true) return summary.node.fs;
  return runtime?.imageFs ?? summary.node.fs;
}

/**
 * Reads every signal's observation from a summary (kubelet `makeSignalObservations`), and returns
 * the pod-stats lookup by pod UID (kubelet `cachedStatsFunc`). `layout` only matters for a
 * summary without `runtime.containerFs` (see {@link containerFsStats}).
 */
export function makeSignalObservations(
  summary: Summary,
  layout?: FilesystemLayout,
  separateDiskGC = true,
): { observations: Map<Signal, SignalObservation>; statsFunc: StatsFunc } {
  const observations = new Map<Signal, SignalObservation>();
  const set = (signal: Signal, observation: SignalObservation | undefined): void => {
    if (observation !== undefined) observations.set(signal, observation);
  };
  const node = summary.node;

  set('memory.available', memoryObservation(node.memory));
  // The kubepods cgroup; without it the kubelet logs an error and has no allocatable observation.
  const podsContainer = node.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS);
  set('allocatableMemory.available', memoryObservation(podsContainer?.memory));
  set('nodefs.available', bytesObservation(node.fs));
  set('nodefs.inodesFree', inodesObservation(node.fs));
  set('imagefs.available', bytesObservation(node.runtime?.imageFs));
  set('imagefs.inodesFree', inodesObservation(node.runtime?.imageFs));
  const containerFs = containerFsStats(summary, layout, separateDiskGC);
  set('containerfs.available', bytesObservation(containerFs));
  set('containerfs.inodesFree', inodesObservation(containerFs));

  const maxPid = toBigInt(node.rlimit?.maxpid);
  const runningProcesses = toBigInt(node.rlimit?.curproc);
  if (maxPid !== undefined && runningProcesses !== undefined) {
    observations.set('pid.available', { available: maxPid - runningProcesses, capacity: maxPid, timeMs: statTimeMs(node.rlimit?.time) });
  }

  return { observations, statsFunc: makeStatsFunc(summary.pods ?? []) };
}

/**
 * Pod stats by pod UID (kubelet `cachedStatsFunc`), the UID the node knows the pod by: a mirror
 * pod's stats are its static pod's, under the static pod's own UID (src/api/node-pod-uid.ts), as
 * the kubelet, which sees the static pod itself, matches them. A pod without a usable UID matches
 * nothing, so two UID-less objects can never share stats.
 */
export function makeStatsFunc(podStats: readonly PodStats[]): StatsFunc {
  const statsByUid = new Map<string, PodStats>();
  for (const stats of podStats) {
    const uid = stats.podRef?.uid;
    if (typeof uid === 'string' && uid !== '') statsByUid.set(uid, stats);
  }
  return (pod: Pod) => {
    const id = nodePodUid(pod);
    return id.ok ? statsByUid.get(id.uid) : undefined;
  };
}

/** How the kubelet formats a signal's amounts: inodes and PIDs in DecimalSI, bytes in BinarySI. */
export function signalQuantityFormat(signal: Signal): QuantityFormat {
  const resource = signalToResource[signal];
  return resource === 'inodes' || resource === 'pids' ? 'DecimalSI' : 'BinarySI';
}

/** An observed amount of a signal as a quantity in the kubelet's format for that signal. */
export function signalQuantity(signal: Signal, amount: bigint): Quantity {
  return quantityFromInteger(amount, signalQuantityFormat(signal));
}
