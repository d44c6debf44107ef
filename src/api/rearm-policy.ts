// When a memcg threshold is re-armed. The kubelet re-arms every notifier at most every 10 s
// (`notifierRefreshInterval`), whatever moved. Here the loop offers the new observation on every
// sync, and a threshold is re-armed only when its computed value changed, and either more than 10 s
// passed since it was armed or a crossing happened since: after a crossing, usage has moved and the
// old value is stale, so waiting out the interval would leave the wrong point armed.

/** kubelet `notifierRefreshInterval`: the minimum gap between re-arming a threshold whose value moved. */
export const NOTIFIER_REFRESH_INTERVAL_MS = 10_000;

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
