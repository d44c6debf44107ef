// Eviction thresholds: the parsed form of `evictionHard`/`evictionSoft` entries, and the one
// helper that turns a threshold value into a quantity for a given capacity (kubelet
// `GetThresholdQuantity`, float32 percentages included).

import { quantityFromInteger, type Quantity } from './quantity.js';
import type { Signal } from './signals.js';

/**
 * A threshold value: an exact quantity, or a percentage of capacity held as the kubelet holds it,
 * a float32 ratio (`10%` is 0.100000001490116...).
 */
export type ThresholdValue =
  | { readonly kind: 'quantity'; readonly quantity: Quantity }
  | { readonly kind: 'percentage'; readonly ratio: number };

/**
 * One threshold. The operator is always LessThan (kubelet `OpForSignal`), so it is implied.
 * A threshold is hard if and only if `gracePeriodMs === 0`.
 */
export interface Threshold {
  readonly signal: Signal;
  readonly value: ThresholdValue;
  readonly gracePeriodMs: number;
  readonly minReclaim: ThresholdValue | null;
  /**
   * False for a threshold that can never be met: a `containerfs.*` threshold synthesized from a
   * source threshold that does not exist has an empty operator upstream.
   */
  readonly operatorSet?: boolean;
}

export function isHardEvictionThreshold(threshold: Threshold): boolean {
  return threshold.gracePeriodMs === 0;
}

/** Parses a percentage the way the kubelet does: float32, then divided by 100 in float32. */
export function percentageRatio(percent: number): number {
  return Math.fround(Math.fround(percent) / 100);
}

/**
 * The quantity a threshold value stands for on a resource of the given capacity. Percentages
 * are `trunc(capacity * float32(ratio))` in float64, as upstream; the result prints as BinarySI.
 */
export function getThresholdQuantity(value: ThresholdValue, capacity: bigint): Quantity {
  if (value.kind === 'quantity') return value.quantity;
  return quantityFromInteger(BigInt(Math.trunc(Number(capacity) * value.ratio)), 'BinarySI');
}

/** Same signal, grace period and value (kubelet `hasThreshold`/`compareThresholdValue`); min-reclaim ignored. */
export function thresholdEquals(a: Threshold, b: Threshold): boolean {
  if (a.signal !== b.signal || a.gracePeriodMs !== b.gracePeriodMs) return false;
  if ((a.operatorSet ?? true) !== (b.operatorSet ?? true)) return false;
  return thresholdValueEquals(a.value, b.value);
}

export function thresholdValueEquals(a: ThresholdValue, b: ThresholdValue): boolean {
  if (a.kind === 'quantity' && b.kind === 'quantity') return a.quantity.nanos === b.quantity.nanos;
  if (a.kind === 'percentage' && b.kind === 'percentage') return a.ratio === b.ratio;
  return false;
}
