// When a memcg threshold is re-armed. The kubelet re-arms every notifier at most every 10 s
// (`notifierRefreshInterval`), whatever moved. Here the loop offers the new observation on every
// sync, and a threshold is re-armed only when its computed value changed, and either more than 10 s
// passed since it was armed or a crossing happened since: after a crossing, usage has moved and the
// old value is stale, so waiting out the interval would leave the wrong point armed.

/** kubelet `notifierRefreshInterval`: the minimum gap between re-arming a threshold whose value moved. */
export const NOTIFIER_REFRESH_INTERVAL_MS = 10_000;

/** One page: how far a point crossed at its very value moves up. */
export const PAGE_BYTES = 4096n;

/** What is armed for one threshold now. */
export interface ArmedThresholdState {
  readonly memcgThresholdBytes: bigint;
  readonly armedAtMs: number;
  /** A threshold crossing was reported since this value was armed. */
  readonly crossedSinceArmed: boolean;
}

/** `arm`: nothing armed yet; `rearm`: replace; `unchanged` and `too-soon`: keep what is armed. */
export type RearmDecision = 'arm' | 'rearm' | 'unchanged' | 'too-soon';

export function rearmDecision(armed: ArmedThresholdState | null, memcgThresholdBytes: bigint, nowMs: number): RearmDecision {
  if (armed === null) return 'arm';
  if (armed.memcgThresholdBytes === memcgThresholdBytes) return 'unchanged';
  if (armed.crossedSinceArmed) return 'rearm';
  // Strictly more than the interval, as the kubelet's `clock.Since(thresholdsLastUpdated) > notifierRefreshInterval`.
  return nowMs - armed.armedAtMs > NOTIFIER_REFRESH_INTERVAL_MS ? 'rearm' : 'too-soon';
}

/**
 * The point to register now for the one computed, or null to keep what is registered: the decision
 * above, except that a point usage crossed at that very value, whose pass then found the threshold
 * not met (the page cache grew, or usage stands exactly at it), moves one page up: the kernel
 * signals nothing more while usage stays at or above a point, and the next page charged is seen there.
 */
export function pointToRegister(armed: ArmedThresholdState | null, computedBytes: bigint, nowMs: number): bigint | null {
  const decision = rearmDecision(armed, computedBytes, nowMs);
  if (decision === 'arm' || decision === 'rearm') return computedBytes;
  if (decision === 'unchanged' && armed !== null && armed.crossedSinceArmed) return computedBytes + PAGE_BYTES;
  return null;
}
