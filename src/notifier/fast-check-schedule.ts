// When the cgroup v2 fast check looks next. A working set can only move as fast as the pods charge
// memory, so a check that finds it `distance` bytes from the nearest crossing (either way) can sleep
// for `distance / worst-case rate` and still see the crossing within one interval of it happening:
// far from every threshold the check runs seldom, close to one it runs at the shortest interval.
// The usage bounds the working set from above, so a distance measured from the usage (when
// memory.stat was not read) is never more than the true one.

import type { MemoryThresholdFigures } from '../api/memory-thresholds.js';

export interface FastCheckTiming {
  readonly minIntervalMs: number;
  readonly maxIntervalMs: number;
  /** The fastest the pods are assumed to charge memory. */
  readonly allocationBytesPerSecond: number;
}

/**
 * The working set at which a threshold becomes met once exceeded: `capacity - threshold`, rounded
 * down to a byte (the threshold may be a fraction of a byte). Met is `workingSet > crossing` for
 * a whole crossing, and the exact comparison decides; this figure only schedules.
 */
export function crossingWorkingSetBytes(figures: MemoryThresholdFigures): bigint {
  const NANOS = 1_000_000_000n;
  const crossingNanos = figures.capacityBytes * NANOS - figures.threshold.nanos;
  // Floor division for negative values too (a threshold above capacity is met by any working set).
  return crossingNanos >= 0n ? crossingNanos / NANOS : -((-crossingNanos + NANOS - 1n) / NANOS);
}

/** How far `bytes` is from the nearest crossing of `figures`, either way; null for no figures. */
export function distanceToNearestCrossingBytes(figures: Iterable<MemoryThresholdFigures>, bytes: bigint): bigint | null {
  let nearest: bigint | null = null;
  for (const f of figures) {
    const gap = crossingWorkingSetBytes(f) - bytes;
    const distance = gap < 0n ? -gap : gap;
    if (nearest === null || distance < nearest) nearest = distance;
  }
  return nearest;
}

/** The delay before the next check; the longest interval when there is nothing to measure against. */
export function nextCheckDelayMs(distanceBytes: bigint | null, timing: FastCheckTiming): number {
  if (distanceBytes === null) return timing.maxIntervalMs;
  const ms = (Number(distanceBytes) * 1000) / timing.allocationBytesPerSecond;
  return Math.min(timing.maxIntervalMs, Math.max(timing.minIntervalMs, Math.floor(ms)));
}
