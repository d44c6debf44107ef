// The eviction manager's state machine (kubelet `managerImpl.synchronize`): one pass turns an
// observation of the node and its pods into node conditions and, at most, the pods to evict. It
// is pure: the caller supplies the time and the inputs, and performs and reports what comes back.
// The state it carries between passes is the kubelet's: when each threshold was first met, when
// each condition was last seen, the thresholds met last pass (for min-reclaim) and the last
// observations (for the stale-stats check).

import type { EvictionConfig } from '../api/eviction-config.js';
import { DECISION_GATE_DEFAULTS, type DecisionFeatureGates } from '../api/feature-gates.js';
import type { Pod } from '../api/pod.js';
import type { NodeConditionType, ResourceName } from '../api/signals.js';
import type { PodStats, PodStatsReads, Summary } from '../api/summary.js';
import { isHardEvictionThreshold, thresholdEquals, type Threshold } from '../api/threshold.js';
import {
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  type NodeConditionsObservedAt,
} from './conditions.js';
import { thresholdKey, type CarriedEngineState } from './carried-state.js';
import { updateContainerFsThresholds } from './containerfs-thresholds.js';
import { evictionGracePeriodSeconds } from './grace-period.js';
import { evictionMessage, type ThresholdMetInfo } from './eviction-message.js';
import { localStorageEvictionsOf, localStorageViolations } from './local-storage.js';
import { makeSignalObservations, makeStatsFunc, type FilesystemLayout } from './observations.js';
import { rankedPods, type StatsFunc } from './ranking.js';
import {
  describeThresholdsMet,
  getReclaimableThreshold,
  mergeThresholds,
  nextGracePeriodEndMs,
  signalsWithoutObservation,
  sortByEvictionPriority,
  thresholdFigures,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
  type ThresholdsObservedAt,
} from './thresholds.js';
import { criticalPodNote, noActivePodsNote, noObservationNote, noRankingFunctionNote, unableToEvictNote } from './notes.js';
import { hardMemoryPressure, type HardMemoryPressure } from './memory-shortcut.js';
import type { DryRunDecision, Eviction, RankedPod, SignalObservations, SynchronizeInput, SynchronizeNote, SynchronizeResult } from './types.js';

const NO_OBSERVATIONS: SignalObservations = new Map();
const NO_POD_READS: PodStatsReads = Object.freeze({ memory: false, processes: false });

/** What {@link EvictionManager.podStatsNeeded} decides on: a pass's input before its pods are read. */
export type PodStatsInput = Pick<SynchronizeInput, 'pods' | 'dedicatedImageFs' | 'splitContainerFs'> & { readonly summary: Summary };

/**
 * The kubelet's eviction manager, without its I/O. Calls must be serialized (one pass at a time);
 * the kubelet's own concurrent passes from the loop and the memcg notifier are a source of races
 * this engine does not reproduce.
 */
export class EvictionManager {
  private config: EvictionConfig;

  // The filesystem layout the thresholds were last fitted to (kubelet `dedicatedImageFs`, nil
  // until the first pass), and the thresholds with `containerfs.*` fitted to it.
  private layout: FilesystemLayout | null = null;
  private effectiveThresholds: readonly Threshold[];

  // The kubelet's state between passes.
  private thresholdsFirstObservedAtState: ThresholdsObservedAt = [];
  private nodeConditionsLastObservedAtState: NodeConditionsObservedAt = new Map();
  private thresholdsMetState: readonly Threshold[] = [];
  private lastObservations: SignalObservations | null = null;
  private nodeConditionsState: readonly NodeConditionType[] = [];
  // What the latest pass's observation subtracted for hugepages: its evictions (and the memory
  // shortcut's, which read the same adjusted figure) quote it.
  private hugepagesSubtractedBytes = 0n;

  // The dry-run thresholds run in an engine of their own: their grace periods, min-reclaim memory
  // and conditions never mix with the live thresholds', so a dry run cannot change what is acted on.
  private dryRunEngine: EvictionManager | null = null;

  constructor(config: EvictionConfig) {
    this.config = { ...config, dryRunThresholds: [] };
    this.effectiveThresholds = config.thresholds;
    this.updateDryRunEngine(config.dryRunThresholds ?? []);
  }

  /** The dry-run thresholds in force (containerfs copies fitted once a pass has seen the layout). */
  get dryRunThresholds(): readonly Threshold[] {
    return this.dryRunEngine?.thresholds ?? [];
  }

  /** The kubelet feature gates that change a decision, as configured (the followed kubelet's defaults when unset). */
  get featureGates(): DecisionFeatureGates {
    return this.config.featureGates ?? DECISION_GATE_DEFAULTS;
  }

  /** The node conditions committed by the last pass (kubelet `IsUnderMemoryPressure` and friends read these). */
  get nodeConditions(): readonly NodeConditionType[] {
    return this.nodeConditionsState;
  }

  /**
   * The thresholds in force: the configuration's, with the `containerfs.*` thresholds fitted to
   * the filesystem layout once a pass has seen it. The memory notifier arms from these.
   */
  get thresholds(): readonly Threshold[] {
    return this.effectiveThresholds;
  }

  /**
   * Swaps the configuration (hot reload). What carries over is keyed by threshold identity (same
   * signal, grace period and value; min-reclaim may change): a threshold that still exists keeps
   * when it was first met (its grace period keeps running) and its place in the min-reclaim
   * memory, now with the new min-reclaim. A changed value or grace period makes a new threshold,
   * whose grace period starts over. Node conditions and when each was last seen, and the last
   * observations, are facts about the node and are kept whole, so the transition period and the
   * stale-stats check continue across a reload.
   */
  updateConfig(config: EvictionConfig): void {
    this.config = { ...config, dryRunThresholds: [] };
    this.updateDryRunEngine(config.dryRunThresholds ?? []);
    this.effectiveThresholds = this.layout === null ? config.thresholds : this.fitThresholds(this.layout).thresholds;
    this.retainStateFor(this.effectiveThresholds);
  }

  /**
   * One pass of the kubelet's `synchronize` (§4.2), at `input.nowMs`, and, with dry-run thresholds,
   * their pass on the same input, reported under `dryRun`. The live decision is computed first and
   * never reads the dry-run one; the next grace-period end is the earlier of the two, so a dry-run
   * soft threshold reports "would evict" when its grace period ends, as a live one would act.
   */
  synchronize(input: SynchronizeInput): SynchronizeResult {
    const live = this.synchronizeLive(input);
    if (this.dryRunEngine === null) return live;
    const shadow = this.dryRunEngine.synchronizeLive(input);
    const dryRun: DryRunDecision = {
      nodeConditions: shadow.nodeConditions,
      thresholdsMet: shadow.thresholdsMet,
      thresholdsMetIgnoringGrace: shadow.thresholdsMetIgnoringGrace,
      reclaim: shadow.reclaim,
      ranking: shadow.ranking,
      evictions: shadow.evictions,
    };
    const ends = [live.nextGracePeriodEndMs, shadow.nextGracePeriodEndMs].filter((ms): ms is number => ms !== null);
    return { ...live, dryRun, nextGracePeriodEndMs: ends.length === 0 ? null : Math.min(...ends) };
  }

  /**
   * Which per-pod figures the next synchronize, on this input, reads: with the node's figures fresh
   * in `input.summary`, the pods' cgroup figures (memory, process counts) in it may be as old as
   * they like, and a pass that reads afresh only what this returns decides exactly as one that
   * reads everything. Changes no state.
   *
   * Why that holds (docs/observation.md, "What a pass reads"): a pod's figures are read by the
   * ranking and the eviction message (step 22-23), reached only through a threshold met at step 8
   * (met now, or met before and short of its minimum reclaim), and by the local-storage limits
   * (step 16), whose violations come from disk figures alone. So: memory whenever a threshold is met
   * at step 8, live or dry-run, or a local-storage limit is violated (a ranking of any signal puts
   * pods without stats first, and the message of a limit lists containers in their stats order);
   * process counts whenever a `pid.available` threshold is among them (the PID ranking's figure).
   * Every other step reads only the node's figures, which are always fresh.
   */
  podStatsNeeded(input: PodStatsInput): PodStatsReads {
    const live = this.podStatsNeededLive(input);
    const shadow = this.dryRunEngine?.podStatsNeededLive(input) ?? NO_POD_READS;
    return { memory: live.memory || shadow.memory, processes: live.processes || shadow.processes };
  }

  private podStatsNeededLive(input: PodStatsInput): PodStatsReads {
    if (this.config.thresholds.length === 0 && !this.config.localStorageCapacityIsolation) return NO_POD_READS;
    // Steps 2, 6, 7 and 8 of synchronizeLive, without committing anything.
    const layout: FilesystemLayout = { dedicatedImageFs: input.dedicatedImageFs, splitContainerFs: input.splitContainerFs };
    const fitted = this.layout !== null && this.layout.dedicatedImageFs === layout.dedicatedImageFs && this.layout.splitContainerFs === layout.splitContainerFs;
    const thresholds = fitted ? this.effectiveThresholds : this.fitThresholds(layout).thresholds;
    const { observations, statsFunc } = makeSignalObservations(input.summary, layout, this.featureGates.KubeletSeparateDiskGC);
    let met = thresholdsMet(thresholds, observations, false);
    const previouslyMet = this.thresholdsMetState.flatMap((t) => thresholds.find((c) => thresholdEquals(c, t)) ?? []);
    if (previouslyMet.length > 0) met = mergeThresholds(met, thresholdsMet(previouslyMet, observations, true));
    const storageViolated =
      this.config.localStorageCapacityIsolation &&
      localStorageViolations(input.pods, statsFunc, layout.dedicatedImageFs, this.featureGates.InPlacePodVerticalScalingMemoryBackedVolumes).length > 0;
    return { memory: met.length > 0 || storageViolated, processes: met.some((t) => t.signal === 'pid.available') };
  }

  private synchronizeLive(input: SynchronizeInput): SynchronizeResult {
    const notes: SynchronizeNote[] = [];
    const nowMs = input.nowMs;
    this.hugepagesSubtractedBytes = input.hugepagesSubtractedBytes ?? 0n;

    // 1. Nothing to do without thresholds or local storage isolation.
    if (this.config.thresholds.length === 0 && !this.config.localStorageCapacityIsolation) return this.emptyResult(nowMs, notes);

    // 2. Fit the containerfs thresholds to the filesystem layout on the first pass. Deviation: the
    // kubelet discovers the layout once; the input carries it on every pass here, so a changed
    // layout (a runtime reconfigured under a running agent) is fitted again instead of ignored.
    const layout: FilesystemLayout = { dedicatedImageFs: input.dedicatedImageFs, splitContainerFs: input.splitContainerFs };
    if (this.layout === null || this.layout.dedicatedImageFs !== layout.dedicatedImageFs || this.layout.splitContainerFs !== layout.splitContainerFs) {
      const fitted = this.fitThresholds(layout);
      notes.push(...fitted.notes);
      this.layout = layout;
      this.effectiveThresholds = fitted.thresholds;
      this.retainStateFor(fitted.thresholds);
    }

    // 3. The active pods come with the input.
    const activePods = input.pods;

    // 4. Without a summary there is nothing to decide; the state stays as it was.
    if (input.summary === null) return this.emptyResult(nowMs, notes);

    // 5. Re-arming the memory notifiers is the caller's (it reads `thresholds`).

    // 6. Make observations and get a function to derive pod usage stats relative to those observations.
    const { observations, statsFunc } = makeSignalObservations(input.summary, layout, this.featureGates.KubeletSeparateDiskGC);
    for (const signal of signalsWithoutObservation(this.effectiveThresholds, observations)) {
      notes.push(noObservationNote(signal));
    }

    // 7. Determine the set of thresholds met independent of grace period.
    let thresholds = thresholdsMet(this.effectiveThresholds, observations, false);

    // 8. Determine the set of thresholds previously met that have not yet satisfied the associated min-reclaim.
    if (this.thresholdsMetState.length > 0) {
      const thresholdsNotYetResolved = thresholdsMet(this.thresholdsMetState, observations, true);
      thresholds = mergeThresholds(thresholds, thresholdsNotYetResolved);
    }
    const thresholdsMetIgnoringGrace = thresholds;

    // 9. Track when a threshold was first observed; one pass without it met drops it.
    const thresholdsFirstObservedAtNow = thresholdsFirstObservedAt(thresholds, this.thresholdsFirstObservedAtState, nowMs);

    // 10. The set of node conditions that are triggered by currently observed thresholds (grace periods ignored).
    let conditions = nodeConditions(thresholds);

    // 11. Track when a node condition was last observed.
    const nodeConditionsLastObservedAtNow = nodeConditionsLastObservedAt(conditions, this.nodeConditionsLastObservedAtState, nowMs);

    // 12. Node conditions report true if they have been observed within the transition period window.
    conditions = nodeConditionsObservedSince(nodeConditionsLastObservedAtNow, this.config.pressureTransitionPeriodMs, nowMs);

    // 13. Determine the set of thresholds we need to drive eviction behavior (i.e. all grace periods are met).
    thresholds = thresholdsMetGracePeriod(thresholdsFirstObservedAtNow, nowMs);

    // 14. Commit the pass's state (the kubelet's locked block).
    this.nodeConditionsState = conditions;
    this.thresholdsFirstObservedAtState = thresholdsFirstObservedAtNow;
    this.nodeConditionsLastObservedAtState = nodeConditionsLastObservedAtNow;
    this.thresholdsMetState = thresholds;
    const committedThresholdsMet = thresholds;

    // 15. Determine the set of thresholds whose stats have been updated since the last sync.
    thresholds = thresholdsUpdatedStats(thresholds, observations, this.lastObservations);
    this.lastObservations = observations;

    const base = {
      nowMs,
      observations,
      nodeConditions: conditions,
      thresholdsMet: describeThresholdsMet(committedThresholdsMet, observations),
      thresholdsMetIgnoringGrace: describeThresholdsMet(thresholdsMetIgnoringGrace, observations),
      nextGracePeriodEndMs: nextGracePeriodEndMs(thresholdsFirstObservedAtNow, nowMs),
    };

    // 16. Evict pods if there is a resource usage violation from local volume temporary storage;
    // if any pod was evicted, thresholds are not acted on this pass.
    if (this.config.localStorageCapacityIsolation) {
      // Critical violators are left out of the evictions; the kubelet logs its refusal.
      const violations = localStorageViolations(activePods, statsFunc, layout.dedicatedImageFs, this.featureGates.InPlacePodVerticalScalingMemoryBackedVolumes);
      const criticalViolators = violations.filter((v) => v.critical).map((v) => v.pod);
      for (const pod of new Set(criticalViolators)) notes.push(criticalPodNote(pod));
      const localStorageEvictions = localStorageEvictionsOf(violations);
      if (localStorageEvictions.length > 0) {
        return { ...base, reclaim: null, ranking: [], evictions: localStorageEvictions, fallbacks: [], notes };
      }
    }

    // 17. No thresholds, nothing to reclaim.
    if (thresholds.length === 0) return { ...base, reclaim: null, ranking: [], evictions: [], fallbacks: [], notes };

    // 18. Rank the thresholds by eviction priority, and act on the first one. Beyond the kubelet:
    // not on one whose pods cannot be ranked (their stats are missing), which is left to the caller.
    const unrankable = input.unrankableSignals;
    if (unrankable !== undefined) thresholds = thresholds.filter((t) => !unrankable.has(t.signal));
    thresholds = sortByEvictionPriority(thresholds, this.effectiveThresholds);
    const reclaim = getReclaimableThreshold(thresholds);
    if (reclaim === null) return { ...base, reclaim: null, ranking: [], evictions: [], fallbacks: [], notes };

    // 19. The node event `EvictionThresholdMet` / `Attempting to reclaim <resource>` is the caller's, from `reclaim`.

    // 20. No node-level reclaim: deleting unused containers and images is the kubelet's own garbage
    // collection, which keeps running on the node; the agent goes straight to ranking pods.

    // 21. Nothing to evict without active pods.
    if (activePods.length === 0) {
      notes.push(noActivePodsNote());
      return { ...base, reclaim, ranking: [], evictions: [], fallbacks: [], notes };
    }

    // 22. Rank the pods for eviction. With KubeletSeparateDiskGC off on a split filesystem the
    // kubelet's first pass fails before building its rank functions, which it never builds after:
    // no threshold ever evicts there (local-storage limits still do).
    if (layout.splitContainerFs && !this.featureGates.KubeletSeparateDiskGC) {
      notes.push(noRankingFunctionNote(reclaim.threshold.signal));
      return { ...base, reclaim, ranking: [], evictions: [], fallbacks: [], notes };
    }
    const ranking = rankedPods(reclaim.threshold.signal, layout.dedicatedImageFs, layout.splitContainerFs, activePods, statsFunc, this.featureGates.PodLevelResources);

    // 23. Evict at most one pod: the first one in rank order that is not critical; the others are
    // the fallbacks when the first is refused.
    const { evictions, fallbacks } = this.thresholdEvictions(ranking, reclaim, thresholds, observations, statsFunc, notes);
    return { ...base, reclaim, ranking, evictions, fallbacks, notes };
  }

  /**
   * The memory notification's shortcut (memory-shortcut.ts): the hard memory threshold these fresh
   * node figures meet, with the thresholds in force; null when none is. Changes no state: what the
   * shortcut acts on is committed by commitHardMemoryPressure.
   */
  hardMemoryPressure(summary: Summary): HardMemoryPressure | null {
    return hardMemoryPressure(this.effectiveThresholds, summary);
  }

  /**
   * Commits what the shortcut acted on, as the pass that evicts commits it: the pressure condition is
   * observed now (so it is reported through the transition period) and the thresholds stay met until
   * their minimum reclaim is satisfied (step 8), although the pass that follows the kill may already
   * see the memory freed. Grace periods are untouched: hard thresholds have none.
   */
  commitHardMemoryPressure(pressure: HardMemoryPressure, nowMs: number): void {
    this.nodeConditionsLastObservedAtState = nodeConditionsLastObservedAt(nodeConditions(pressure.thresholds), this.nodeConditionsLastObservedAtState, nowMs);
    this.nodeConditionsState = nodeConditionsObservedSince(this.nodeConditionsLastObservedAtState, this.config.pressureTransitionPeriodMs, nowMs);
    this.thresholdsMetState = mergeThresholds(this.thresholdsMetState, pressure.thresholds);
  }

  /** The eviction of `pod` for that pressure, built as synchronize builds it, on the pod's fresh stats. */
  memoryEviction(pressure: HardMemoryPressure, pod: Pod, podStats: PodStats | undefined): Eviction {
    const figures = pressure.thresholds.flatMap((t) => thresholdFigures(t, pressure.observations) ?? []);
    return this.buildEviction(pod, pressure.reclaim, true, figures, makeStatsFunc(podStats === undefined ? [] : [podStats]));
  }

  private buildEviction(
    pod: Pod,
    reclaim: { readonly threshold: Threshold; readonly resource: ResourceName },
    hard: boolean,
    figures: readonly ThresholdMetInfo[],
    statsFunc: StatsFunc,
  ): Eviction {
    const { message, annotations } = evictionMessage(reclaim.resource, pod, statsFunc, figures, this.featureGates.PodLevelResources, this.hugepagesSubtractedBytes);
    return {
      pod,
      reason: { kind: 'threshold', signal: reclaim.threshold.signal, hard },
      gracePeriodSeconds: evictionGracePeriodSeconds(hard, this.config.maxPodGracePeriodSeconds, pod),
      message,
      annotations,
      condition: { type: 'DisruptionTarget', reason: 'TerminationByKubelet', message },
    };
  }

  private thresholdEvictions(
    ranking: readonly RankedPod[],
    reclaim: { readonly threshold: Threshold; readonly resource: ResourceName },
    thresholds: readonly Threshold[],
    observations: SignalObservations,
    statsFunc: StatsFunc,
    notes: SynchronizeNote[],
  ): { evictions: Eviction[]; fallbacks: Eviction[] } {
    const hard = isHardEvictionThreshold(reclaim.threshold);
    // The figures of every threshold acted on this pass; the message quotes the first one for the resource.
    const figures = thresholds.flatMap((t) => thresholdFigures(t, observations) ?? []);
    const candidates: Eviction[] = [];
    for (const ranked of ranking) {
      if (ranked.critical) {
        // The kubelet logs this for every critical pod it meets before the one it evicts.
        if (candidates.length === 0) notes.push(criticalPodNote(ranked.pod));
        continue;
      }
      candidates.push(this.buildEviction(ranked.pod, reclaim, hard, figures, statsFunc));
    }
    if (candidates.length === 0) {
      notes.push(unableToEvictNote());
      return { evictions: [], fallbacks: [] };
    }
    return { evictions: candidates.slice(0, 1), fallbacks: candidates.slice(1) };
  }

  // A reload keeps the dry-run engine (and so its grace periods) while dry-run thresholds remain;
  // a threshold moved to live starts over there, since watching it was never a grant to act.
  /** The state a successor on this node carries on from (src/eviction/carried-state.ts). */
  carriedState(): CarriedEngineState {
    return {
      thresholdsFirstObservedAt: this.thresholdsFirstObservedAtState.map((e) => ({ key: thresholdKey(e.threshold), observedAtMs: e.observedAtMs })),
      nodeConditionsLastObservedAt: [...this.nodeConditionsLastObservedAtState].map(([condition, observedAtMs]) => ({ condition, observedAtMs })),
    };
  }

  /**
   * Carries on from the state another agent on this node published (it held the node lock, this
   * one takes over): each threshold in force keeps the earlier of the two times it was first met,
   * each condition the later time it was last seen, so a soft grace period and the transition
   * period run on from where the previous agent had them instead of starting over. Instants after
   * `nowMs` are not trusted.
   */
  adoptCarriedState(state: CarriedEngineState, nowMs: number): void {
    const carried = new Map(state.thresholdsFirstObservedAt.filter((e) => e.observedAtMs <= nowMs).map((e) => [e.key, e.observedAtMs]));
    const own = new Map(this.thresholdsFirstObservedAtState.map((e) => [thresholdKey(e.threshold), e.observedAtMs]));
    const merged: { threshold: Threshold; observedAtMs: number }[] = [];
    for (const threshold of this.effectiveThresholds) {
      const key = thresholdKey(threshold);
      const times = [own.get(key), carried.get(key)].filter((ms): ms is number => ms !== undefined);
      if (times.length > 0) merged.push({ threshold, observedAtMs: Math.min(...times) });
    }
    this.thresholdsFirstObservedAtState = merged;
    const conditions = new Map(this.nodeConditionsLastObservedAtState);
    for (const { condition, observedAtMs } of state.nodeConditionsLastObservedAt) {
      if (observedAtMs <= nowMs && observedAtMs > (conditions.get(condition) ?? -Infinity)) conditions.set(condition, observedAtMs);
    }
    this.nodeConditionsLastObservedAtState = conditions;
    this.nodeConditionsState = nodeConditionsObservedSince(conditions, this.config.pressureTransitionPeriodMs, nowMs);
  }

  private updateDryRunEngine(thresholds: readonly Threshold[]): void {
    if (thresholds.length === 0) {
      this.dryRunEngine = null;
      return;
    }
    // Local-storage limits are the live engine's alone: the dry run is about thresholds.
    const config: EvictionConfig = { ...this.config, thresholds, dryRunThresholds: [], localStorageCapacityIsolation: false };
    if (this.dryRunEngine === null) this.dryRunEngine = new EvictionManager(config);
    else this.dryRunEngine.updateConfig(config);
  }

  // Always from the configuration as given, so fitting again never sees its own containerfs copies.
  private fitThresholds(layout: FilesystemLayout): { thresholds: Threshold[]; notes: SynchronizeNote[] } {
    return updateContainerFsThresholds(this.config.thresholds, layout.dedicatedImageFs, layout.splitContainerFs);
  }

  // Drops threshold state for thresholds no longer in force, and points what is kept at the
  // thresholds now in force (so a changed min-reclaim applies at once).
  private retainStateFor(thresholds: readonly Threshold[]): void {
    const current = (t: Threshold): Threshold | undefined => thresholds.find((c) => thresholdEquals(c, t));
    this.thresholdsFirstObservedAtState = this.thresholdsFirstObservedAtState.flatMap((entry) => {
      const threshold = current(entry.threshold);
      return threshold === undefined ? [] : [{ threshold, observedAtMs: entry.observedAtMs }];
    });
    this.thresholdsMetState = this.thresholdsMetState.flatMap((t) => current(t) ?? []);
  }

  // A pass that decided nothing: no observations, and the node conditions as last committed.
  private emptyResult(nowMs: number, notes: SynchronizeNote[]): SynchronizeResult {
    return {
      nowMs,
      observations: NO_OBSERVATIONS,
      nodeConditions: this.nodeConditionsState,
      thresholdsMet: [],
      thresholdsMetIgnoringGrace: [],
      reclaim: null,
      ranking: [],
      evictions: [],
      fallbacks: [],
      notes,
      // The state is unchanged: a grace period already running still ends when it ends.
      nextGracePeriodEndMs: nextGracePeriodEndMs(this.thresholdsFirstObservedAtState, nowMs),
    };
  }
}

