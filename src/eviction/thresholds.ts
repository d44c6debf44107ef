// Threshold evaluation, as the kubelet's eviction helpers do it: which thresholds the observations
// meet (strict `>`, min-reclaim added for hysteresis), when each was first met, which have waited
// out their grace period, which rest on fresh stats, and which one to act on first.

import { formatQuantity, type Quantity } from '../api/quantity.js';
import { SIGNALS, isMemorySignal, signalToResource, type ResourceName, type Signal } from '../api/signals.js';
import { getThresholdQuantity, isHardEvictionThreshold, thresholdEquals, type Threshold } from '../api/threshold.js';
import { signalQuantity } from './observations.js';
import type { SignalObservations, ThresholdMet } from './types.js';

/** When each threshold was first observed met (kubelet `thresholdsObservedAt`), in threshold order. */
export type ThresholdsObservedAt = readonly { readonly threshold: Threshold; readonly observedAtMs: number }[];

/**
 * The thresholds the observations meet (kubelet `thresholdsMet`). A threshold is met when its
 * quantity, plus its min-reclaim when `enforceMinReclaim`, is strictly greater than the available
 * amount: equality never triggers. Thresholds without an observation, and synthesized thresholds
 * without an operator (`operatorSet === false`), are never met.
 */
export function thresholdsMet(thresholds: readonly Threshold[], observations: SignalObservations, enforceMinReclaim: boolean): Threshold[] {
  const results: Threshold[] = [];
  for (const threshold of thresholds) {
    const observed = observations.get(threshold.signal);
    if (observed === undefined) continue;
    if (threshold.operatorSet === false) continue;
    let thresholdNanos = getThresholdQuantity(threshold.value, observed.capacity).nanos;
    if (enforceMinReclaim && threshold.minReclaim !== null) {
      thresholdNanos += getThresholdQuantity(threshold.minReclaim, observed.capacity).nanos;
    }
    const available = signalQuantity(threshold.signal, observed.available);
    if (thresholdNanos > available.nanos) results.push(threshold);
  }
  return results;
}

/**
 * The signals of thresholds that have no observation, in SIGNALS order (the kubelet logs each of
 * them every pass). Thresholds that can never be met (`operatorSet === false`) are left out: there
 * is nothing to miss about them.
 */
export function signalsWithoutObservation(thresholds: readonly Threshold[], observations: SignalObservations): Signal[] {
  const missing = new Set<Signal>();
  for (const threshold of thresholds) {
    if (threshold.operatorSet !== false && !observations.has(threshold.signal)) missing.add(threshold.signal);
  }
  return SIGNALS.filter((signal) => missing.has(signal));
}

/** `a` plus each threshold of `b` it does not already hold (kubelet `mergeThresholds`; min-reclaim ignored). */
export function mergeThresholds(a: readonly Threshold[], b: readonly Threshold[]): Threshold[] {
  const results = [...a];
  for (const threshold of b) {
    if (!hasThreshold(results, threshold)) results.push(threshold);
  }
  return results;
}

/** Whether the list holds a threshold with the same signal, grace period and value (kubelet `hasThreshold`). */
export function hasThreshold(thresholds: readonly Threshold[], threshold: Threshold): boolean {
  return thresholds.some((t) => thresholdEquals(t, threshold));
}

/**
 * When each threshold was first observed (kubelet `thresholdsFirstObservedAt`): a threshold keeps
 * its previous time, a new one gets `nowMs`. Thresholds not in the list are dropped, so a single
 * pass without the threshold met restarts its grace period.
 */
export function thresholdsFirstObservedAt(thresholds: readonly Threshold[], lastObservedAt: ThresholdsObservedAt, nowMs: number): ThresholdsObservedAt {
  return thresholds.map((threshold) => {
    const previous = lastObservedAt.find((entry) => thresholdEquals(entry.threshold, threshold));
    return { threshold, observedAtMs: previous?.observedAtMs ?? nowMs };
  });
}

/**
 * The thresholds whose grace period has elapsed (kubelet `thresholdsMetGracePeriod`):
 * `now - firstObserved >= grace`. A hard threshold (grace 0) qualifies the pass it is first met.
 */
export function thresholdsMetGracePeriod(observedAt: ThresholdsObservedAt, nowMs: number): Threshold[] {
  return observedAt.filter((entry) => nowMs - entry.observedAtMs >= entry.threshold.gracePeriodMs).map((entry) => entry.threshold);
}

/**
 * When the first grace period still running ends (ms since the epoch), or null when none is: the
 * earliest `firstObserved + grace` after `nowMs`. Not the kubelet's: it acts on an elapsed grace
 * period at its next 10 s pass; the agent's loop wakes a pass at this moment instead.
 */
export function nextGracePeriodEndMs(observedAt: ThresholdsObservedAt, nowMs: number): number | null {
  let next: number | null = null;
  for (const entry of observedAt) {
    const endMs = entry.observedAtMs + entry.threshold.gracePeriodMs;
    if (endMs > nowMs && (next === null || endMs < next)) next = endMs;
  }
  return next;
}

/**
 * The thresholds whose signal's stats are fresh (kubelet `thresholdsUpdatedStats`): there is no
 * previous observation, or the stat carries no time (time 0 counts as always fresh), or its time
 * is strictly later than the previous one. Equal timestamps mean the stats were not updated, and
 * acting on them again would evict a second pod for the same data.
 */
export function thresholdsUpdatedStats(thresholds: readonly Threshold[], observations: SignalObservations, lastObservations: SignalObservations | null): Threshold[] {
  return thresholds.filter((threshold) => {
    const observed = observations.get(threshold.signal);
    if (observed === undefined) return false;
    const last = lastObservations?.get(threshold.signal);
    return last === undefined || observed.timeMs === 0 || observed.timeMs > last.timeMs;
  });
}

/**
 * The order thresholds are acted on (kubelet `byEvictionPriority`): memory-class signals first.
 * Upstream leaves the rest to map order, i.e. random; here ties break deterministically: hard
 * before soft (so an elapsed hard threshold always gets the 1 s grace), then the fixed signal
 * order of SIGNALS.
 */
export function byEvictionPriority(a: Threshold, b: Threshold): number {
  const memoryA = isMemorySignal(a.signal);
  const memoryB = isMemorySignal(b.signal);
  if (memoryA !== memoryB) return memoryA ? -1 : 1;
  const hardA = isHardEvictionThreshold(a);
  const hardB = isHardEvictionThreshold(b);
  if (hardA !== hardB) return hardA ? -1 : 1;
  return SIGNALS.indexOf(a.signal) - SIGNALS.indexOf(b.signal);
}

/**
 * A sorted copy, by {@link byEvictionPriority}, then by position in `configOrder` (the
 * configuration's thresholds), then by input position.
 */
export function sortByEvictionPriority(thresholds: readonly Threshold[], configOrder: readonly Threshold[] = thresholds): Threshold[] {
  const configIndex = (threshold: Threshold): number => {
    const index = configOrder.findIndex((t) => thresholdEquals(t, threshold));
    return index === -1 ? Number.MAX_SAFE_INTEGER : index;
  };
  // Array.prototype.sort is stable, so input order is the last tie-break.
  return [...thresholds].sort((a, b) => byEvictionPriority(a, b) || configIndex(a) - configIndex(b));
}

/** The first threshold whose signal starves a resource, and that resource (kubelet `getReclaimableThreshold`). */
export function getReclaimableThreshold(thresholds: readonly Threshold[]): { threshold: Threshold; resource: ResourceName } | null {
  for (const threshold of thresholds) {
    const resource = signalToResource[threshold.signal] as ResourceName | undefined;
    if (resource !== undefined) return { threshold, resource };
  }
  return null;
}

/**
 * A met threshold's figures as quantities: the threshold quantity at the observed capacity
 * (BinarySI for a percentage, the configured quantity's own format otherwise) and the available
 * amount (BinarySI for bytes, DecimalSI for inodes and PIDs). Null without an observation.
 */
export function thresholdFigures(
  threshold: Threshold,
  observations: SignalObservations,
): { signal: Signal; quantity: Quantity; available: Quantity } | null {
  const observed = observations.get(threshold.signal);
  if (observed === undefined) return null;
  return {
    signal: threshold.signal,
    quantity: getThresholdQuantity(threshold.value, observed.capacity),
    available: signalQuantity(threshold.signal, observed.available),
  };
}

/** The report form of met thresholds: canonical quantity strings, as the kubelet prints them. */
export function describeThresholdsMet(thresholds: readonly Threshold[], observations: SignalObservations): ThresholdMet[] {
  const results: ThresholdMet[] = [];
  for (const threshold of thresholds) {
    const figures = thresholdFigures(threshold, observations);
    if (figures === null) continue;
    results.push({ threshold, quantity: formatQuantity(figures.quantity), available: formatQuantity(figures.available) });
  }
  return results;
}

