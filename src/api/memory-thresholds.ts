// Where the kernel should wake us, computed from the latest observation (kubelet
// `memoryThresholdNotifier.UpdateThreshold`): for each memory.available and
// allocatableMemory.available threshold, hard and soft, the memory.usage_in_bytes value at which the
// working set reaches `capacity - threshold`. usage_in_bytes counts the inactive page cache that the
// working set leaves out, so the inactive_file of the observation is added back.

import { addQuantity, compareQuantity, formatQuantity, quantityFromInteger, quantityValue, type Quantity } from './quantity.js';
import type { MemoryStats, Summary } from './summary.js';
import { SYSTEM_CONTAINER_PODS } from './summary.js';
import { getThresholdQuantity, isHardEvictionThreshold, type Threshold } from './threshold.js';

export type MemorySignal = 'memory.available' | 'allocatableMemory.available';

/** One armed threshold's identity: its signal, hard or soft, and the kubelet's `Description()`. */
export interface MemoryThresholdTarget {
  readonly signal: MemorySignal;
  readonly hard: boolean;
  /** `hard memory eviction threshold`, `soft allocatable memory eviction threshold`, ... (also the key). */
  readonly description: string;
}

/** The figures of one threshold for one observation. */
export interface MemoryThresholdFigures {
  readonly target: MemoryThresholdTarget;
  /** The value to arm on memory.usage_in_bytes: `capacity - threshold + inactive_file`, rounded up. */
  readonly memcgThresholdBytes: bigint;
  /** `available + workingSet` of the observation. */
  readonly capacityBytes: bigint;
  /** The threshold as a quantity of that capacity (float32 percentages as the kubelet computes them). */
  readonly threshold: Quantity;
  /** `usage - workingSet` of the observation. */
  readonly inactiveFileBytes: bigint;
}

/** A threshold that cannot be armed from this observation, and why (the kubelet's wording). */
export interface MemoryThresholdProblem {
  readonly target: MemoryThresholdTarget;
  readonly problem: string;
}

export type MemoryThresholdComputation = MemoryThresholdFigures | MemoryThresholdProblem;

export function isProblem(computation: MemoryThresholdComputation): computation is MemoryThresholdProblem {
  return 'problem' in computation;
}

/** kubelet `memoryThresholdNotifier.Description()`. */
export function memoryThresholdDescription(signal: MemorySignal, hard: boolean): string {
  return `${hard ? 'hard' : 'soft'} ${signal === 'allocatableMemory.available' ? 'allocatable ' : ''}memory eviction threshold`;
}

/** The memory-class thresholds the notifier arms, hard and soft, in the order given; the first of duplicates wins. */
export function memoryThresholdTargets(thresholds: readonly Threshold[]): { readonly target: MemoryThresholdTarget; readonly threshold: Threshold }[] {
  const seen = new Set<string>();
  const targets: { target: MemoryThresholdTarget; threshold: Threshold }[] = [];
  for (const threshold of thresholds) {
    if (threshold.signal !== 'memory.available' && threshold.signal !== 'allocatableMemory.available') continue;
    // A threshold with no operator can never be met upstream: nothing to wake for.
    if (threshold.operatorSet === false) continue;
    const hard = isHardEvictionThreshold(threshold);
    const description = memoryThresholdDescription(threshold.signal, hard);
    if (seen.has(description)) continue;
    seen.add(description);
    targets.push({ target: { signal: threshold.signal, hard, description }, threshold });
  }
  return targets;
}

/** Computes every memory threshold from one observation. */
export function computeMemoryThresholds(summary: Summary, thresholds: readonly Threshold[]): MemoryThresholdComputation[] {
  return memoryThresholdTargets(thresholds).map(({ target, threshold }) => computeMemoryThreshold(summary, target, threshold));
}

function computeMemoryThreshold(summary: Summary, target: MemoryThresholdTarget, threshold: Threshold): MemoryThresholdComputation {
  let stats: MemoryStats | undefined = summary.node.memory;
  if (target.signal === 'allocatableMemory.available') {
    const pods = summary.node.systemContainers?.find((c) => c.name === SYSTEM_CONTAINER_PODS);
    if (pods === undefined) return { target, problem: `system container "${SYSTEM_CONTAINER_PODS}" not found in metrics` };
    stats = pods.memory;
  }
  const usageBytes = exactBytes(stats?.usageBytes);
  const workingSetBytes = exactBytes(stats?.workingSetBytes);
  const availableBytes = exactBytes(stats?.availableBytes);
  if (usageBytes === null || workingSetBytes === null || availableBytes === null) {
    // No figures in the message: it is reported once while it persists, not once per value.
    const where = target.signal === 'memory.available' ? 'node.memory' : `the "${SYSTEM_CONTAINER_PODS}" system container's memory`;
    return { target, problem: `summary was incomplete: expected usageBytes, workingSetBytes and availableBytes in ${where}` };
  }
  const inactiveFileBytes = usageBytes - workingSetBytes;
  const capacityBytes = availableBytes + workingSetBytes;
  const thresholdQuantity = getThresholdQuantity(threshold.value, capacityBytes);
  const memcgThreshold = addQuantity(
    { nanos: quantityFromInteger(capacityBytes).nanos - thresholdQuantity.nanos, format: 'BinarySI' },
    quantityFromInteger(inactiveFileBytes),
  );
  const memcgThresholdBytes = quantityValue(memcgThreshold);
  if (memcgThresholdBytes <= 0n) {
    return { target, problem: `the threshold ${formatQuantity(thresholdQuantity)} leaves nothing to watch on a capacity of ${capacityBytes} bytes` };
  }
  return { target, memcgThresholdBytes, capacityBytes, threshold: thresholdQuantity, inactiveFileBytes };
}

/**
 * Whether a working set meets the threshold: the kubelet's `threshold > available` with
 * `available = capacity - workingSet`, exact (equality never triggers).
 */
export function workingSetMeetsThreshold(figures: MemoryThresholdFigures, workingSetBytes: bigint): boolean {
  return compareQuantity(figures.threshold, quantityFromInteger(figures.capacityBytes - workingSetBytes)) > 0;
}

function exactBytes(value: number | undefined): bigint | null {
  if (value === undefined || value === null || !Number.isSafeInteger(value)) return null;
  return BigInt(value);
}
