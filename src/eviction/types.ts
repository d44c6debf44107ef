// The engine's contract: what one synchronize pass takes and what it decides. The engine is pure;
// the caller (the run loop, replay, explain) performs and reports what it returns.

import type { EvictionConfig } from '../api/eviction-config.js';
import type { Pod } from '../api/pod.js';
import type { NodeConditionType, ResourceName, Signal } from '../api/signals.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';

/** One synchronize pass's inputs. */
export interface SynchronizeInput {
  /** The clock reading for this pass (the kubelet's `clock.Now()`). */
  readonly nowMs: number;
  /** The latest observation; null when it could not be taken (the pass then does nothing). */
  readonly summary: Summary | null;
  /** The node's active pods (non-terminal, bound to this node). */
  readonly pods: readonly Pod[];
  /** The filesystem layout: a dedicated image filesystem, and container writable layers split from it. */
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
  /**
   * Signals whose pods cannot be ranked this pass (too many pods without stats; see
   * stats-coverage.ts): their thresholds are met and raise node conditions as usual, but no pod is
   * evicted for them. Empty when omitted.
   */
  readonly unrankableSignals?: ReadonlySet<Signal>;
  /**
   * What the observation subtracted from node memory.available for hugepages (the kubelet's
   * HugepageAwareEviction, applied by the cgroupfs source); quoted in a memory.available
   * eviction's message. 0 when omitted (the kubelet's summary carries its own, unquoted).
   */
  readonly hugepagesSubtractedBytes?: bigint;
}

/** A signal's observed value (kubelet `signalObservation`); numbers exact. */
export interface SignalObservation {
  readonly available: bigint;
  readonly capacity: bigint;
  /** The stat's timestamp in ms since the epoch; 0 when the summary carried none. */
  readonly timeMs: number;
}

export type SignalObservations = ReadonlyMap<Signal, SignalObservation>;

/** A threshold that is met, with the figures that met it (for reports and the replay output). */
export interface ThresholdMet {
  readonly threshold: Threshold;
  /** The threshold as a quantity of this capacity (min-reclaim not included). */
  readonly quantity: string;
  /** The observed available amount, canonical form. */
  readonly available: string;
}

/** Why a pod was chosen. */
export type EvictionReason =
  | { readonly kind: 'threshold'; readonly signal: Signal; readonly hard: boolean }
  | { readonly kind: 'local-storage'; readonly limit: 'emptydirfs.limit' | 'ephemeralpodfs.limit' | 'ephemeralcontainerfs.limit' };

/** One pod to evict, with everything the kubelet would attach to it. */
export interface Eviction {
  readonly pod: Pod;
  readonly reason: EvictionReason;
  /** The grace-period override: 1 for hard and local-storage evictions, the soft rule otherwise. */
  readonly gracePeriodSeconds: number;
  /** The kubelet's exact message (every sentence ends with ". "). */
  readonly message: string;
  /** `offending_containers`, `offending_containers_usage`, `starved_resource` (and pod-level keys). */
  readonly annotations: Readonly<Record<string, string>>;
  /** The DisruptionTarget condition to set, or null (local-storage evictions carry none). */
  readonly condition: { readonly type: 'DisruptionTarget'; readonly reason: 'TerminationByKubelet'; readonly message: string } | null;
}

/** A ranked pod with the figures that ranked it (for `explain` and for logs). */
export interface RankedPod {
  readonly pod: Pod;
  readonly critical: boolean;
  /** Usage of the starved resource (working set bytes, disk bytes, inodes or process count); null without stats. */
  readonly usage: bigint | null;
  readonly request: bigint;
  readonly priority: number;
  readonly exceedsRequest: boolean;
}

/** What one synchronize pass decided. */
export interface SynchronizeResult {
  readonly nowMs: number;
  /** Every signal's observation this pass. */
  readonly observations: SignalObservations;
  /** Node conditions after the pressure transition period. */
  readonly nodeConditions: readonly NodeConditionType[];
  /** Thresholds met whose grace period has elapsed (before the stale-stats filter). */
  readonly thresholdsMet: readonly ThresholdMet[];
  /** Thresholds met, grace periods ignored (they raise node conditions at once). */
  readonly thresholdsMetIgnoringGrace: readonly ThresholdMet[];
  /** The threshold acted on this pass, if any: the node Event is `EvictionThresholdMet` `Attempting to reclaim <resource>`. */
  readonly reclaim: { readonly threshold: Threshold; readonly resource: ResourceName } | null;
  /** The pods ranked for `reclaim` (critical ones included, flagged). */
  readonly ranking: readonly RankedPod[];
  /**
   * The pods to evict now, in order: at most one for threshold pressure (the first non-critical
   * pod in rank order), every violator for local-storage limits.
   */
  readonly evictions: readonly Eviction[];
  /**
   * For threshold pressure: the rest of the non-critical ranked pods, in order, each with its
   * message. Used when the first choice is refused (a PodDisruptionBudget answers 429).
   */
  readonly fallbacks: readonly Eviction[];
  /** Things the caller should log (the pure engine never logs). */
  readonly notes: readonly SynchronizeNote[];
  /**
   * When the first grace period of a threshold met but not yet acted on runs out (ms since the
   * epoch), or null when none is running: a pass then acts on it without waiting for the next
   * periodic one (not the kubelet's; see README, Differences).
   */
  readonly nextGracePeriodEndMs: number | null;
  /**
   * The dry-run thresholds' own pass (`dryRunThresholds`), decided beside the live one on the same
   * observation and with state of its own: what would be evicted, never acted on. Its conditions are
   * not the node's (`nodeConditions` above holds the live thresholds' only). Absent without
   * dry-run thresholds.
   */
  readonly dryRun?: DryRunDecision;
}

/** What the dry-run thresholds would do this pass. */
export interface DryRunDecision {
  /** The node conditions the dry-run thresholds alone would report (transition period applied). */
  readonly nodeConditions: readonly NodeConditionType[];
  readonly thresholdsMet: readonly ThresholdMet[];
  readonly thresholdsMetIgnoringGrace: readonly ThresholdMet[];
  readonly reclaim: { readonly threshold: Threshold; readonly resource: ResourceName } | null;
  readonly ranking: readonly RankedPod[];
  /** The pod that would be evicted (at most one), with the kubelet's message. */
  readonly evictions: readonly Eviction[];
}

/** One thing a pass asks its caller to log: a code, its fields, and the kubelet's sentence. */
export type SynchronizeNote =
  /** A threshold's signal had no observation this pass. */
  | { readonly code: 'no-observation'; readonly signal: Signal; readonly message: string }
  /** A critical pod met before the one evicted (or a critical local-storage violator) is left alone. */
  | { readonly code: 'critical-pod'; readonly pod: string; readonly message: string }
  | { readonly code: 'no-active-pods'; readonly message: string }
  /** Every ranked pod is critical. */
  | { readonly code: 'unable-to-evict'; readonly message: string }
  /** A user-given containerfs threshold, replaced by one fitted to the filesystem layout. */
  | { readonly code: 'containerfs-threshold-ignored'; readonly signal: Signal; readonly hard: boolean; readonly message: string }
  /** KubeletSeparateDiskGC off on a split filesystem: the kubelet has no rank function, so no threshold evicts. */
  | { readonly code: 'no-ranking-function'; readonly signal: Signal; readonly message: string };

export type { EvictionConfig };
