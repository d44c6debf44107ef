// The compiled eviction configuration the engine runs on: the kubelet's internal eviction
// `Config`, with defaults applied and every duration in milliseconds. Produced by src/config/.

import type { DecisionFeatureGates } from './feature-gates.js';
import type { Threshold } from './threshold.js';

export interface EvictionConfig {
  /** Hard and soft thresholds, allocatable copies included (kubelet `ParseThresholdConfig` output). */
  readonly thresholds: readonly Threshold[];
  /**
   * Thresholds evaluated, ranked and reported but never acted on (`dryRunThresholds`); kept apart
   * from `thresholds` so nothing that acts can read them by mistake. None when omitted.
   */
  readonly dryRunThresholds?: readonly Threshold[];
  /** `evictionPressureTransitionPeriod`; 5 minutes by default, and an explicit 0 also becomes 5 minutes. */
  readonly pressureTransitionPeriodMs: number;
  /** `evictionMaxPodGracePeriod` in seconds (0 by default; negative passed through, as upstream). */
  readonly maxPodGracePeriodSeconds: number;
  /** `localStorageCapacityIsolation`; true by default. */
  readonly localStorageCapacityIsolation: boolean;
  /** `kernelMemcgNotification` as written in the file (the kubelet's default is false). */
  readonly kernelMemcgNotification: boolean;
  /** The synchronize loop interval (the kubelet's fixed 10 s housekeeping interval). */
  readonly housekeepingIntervalMs: number;
  /**
   * `featureGates`: the kubelet gates that change a decision, as in force; absent, the defaults of
   * the kubelet followed (src/api/feature-gates.ts).
   */
  readonly featureGates?: DecisionFeatureGates;
  /** The gates the file set by name (`AllAlpha`/`AllBeta` included), for reports; absent when none. */
  readonly featureGatesSet?: Readonly<Record<string, boolean>>;
}
