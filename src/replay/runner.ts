// Drives the engine over a recording: each step sets the clock to the step's time and runs
// exactly one synchronize on the latest summary and pods, as the kubelet's loop would, and
// renders what was decided as one output line.

import type { StormGuardSettings } from '../api/agent-settings.js';
import type { EvictionConfig } from '../api/eviction-config.js';
import { ManualClock } from '../api/manual-clock.js';
import { podKey, type Node, type Pod } from '../api/pod.js';
import type { Summary } from '../api/summary.js';
import { isMemorySignal, signalToResource } from '../api/signals.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import { OutcomeTracker, type EvictionOutcome, type OutcomeAction } from '../eviction/eviction-outcomes.js';
import { EvictionManager } from '../eviction/manager.js';
import { describeOutcome, outcomeJson } from '../eviction/outcome-message.js';
import { ownerByName, ownerKey } from '../eviction/owner.js';
import { StormGuard, type StormGuardState } from '../eviction/storm-guard.js';
import type { Eviction, SynchronizeResult, ThresholdMet } from '../eviction/types.js';
import type { TaintEvent } from '../taint/taint-event.js';
import { TaintHandler } from '../taint/taint-handler.js';
import type { TaintOptions } from '../taint/taint-options.js';
import { formatRfc3339, type ReplayRefusedPod, type ReplayStep } from './input.js';

export interface ReplayThresholdLine {
  readonly signal: string;
  readonly hard: boolean;
  readonly quantity: string;
  readonly available: string;
}

export interface ReplayEvictionLine {
  readonly pod: string;
  readonly uid: string;
  readonly signal: string;
  readonly gracePeriodSeconds: number;
  readonly message: string;
  readonly annotations: Readonly<Record<string, string>>;
}

export interface ReplayTaintLine {
  readonly pod: string;
  readonly action: 'scheduled' | 'cancelled' | 'deleted';
  readonly at: string;
  readonly fireAt?: string;
}

/** What the eviction storm guard did at a step (only on lines where it did something). */
export interface ReplayStormGuardLine {
  /** The soft eviction the per-node budget held back (then `evictions` is empty). */
  readonly heldBack?: { readonly pod: string; readonly signal: string; readonly message: string };
  /** Owners whose evicted pods reached the event threshold at this step (an `EvictionStorm` Event each). */
  readonly ownerStorms?: readonly { readonly owner: string; readonly count: number; readonly message: string }[];
}

/** One output line per input step. */
export interface ReplayOutputLine {
  readonly time: string;
  readonly nodeConditions: readonly string[];
  readonly thresholdsMet: readonly ReplayThresholdLine[];
  /** What goes ahead: the engine's decision, unless the storm guard held it back. */
  readonly evictions: readonly ReplayEvictionLine[];
  /** NoExecute taint decisions since the previous line, in time order. */
  readonly taintEvictions: readonly ReplayTaintLine[];
  /** Only on the line of a step whose `pods` had refusals: the pods left out, until a step brings other pods. */
  readonly refusedPods?: readonly ReplayRefusedPod[];
  readonly stormGuard?: ReplayStormGuardLine;
  /**
   * Only with dry-run thresholds: what they would do at this step, never acted on. Their
   * conditions are theirs alone; `nodeConditions` above is the live thresholds'.
   */
  readonly dryRun?: ReplayDryRunLine;
  /**
   * Only on a step where the outcome of earlier evictions became known: what they freed, judged
   * from the recorded steps after each decision (docs/eviction-outcomes.md), with the sentence the
   * EvictionOutcome Event would carry.
   */
  readonly outcomes?: readonly Record<string, unknown>[];
}

export interface ReplayDryRunLine {
  readonly nodeConditions: readonly string[];
  readonly thresholdsMet: readonly ReplayThresholdLine[];
  readonly wouldEvict: readonly ReplayEvictionLine[];
}

// The kubelet's active pods are the node's non-terminal pods.
function isActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

/** The agent's default `reporting.retriggerWindow`. */
const DEFAULT_RETRIGGER_WINDOW_MS = 60_000;

export function evictionLine(eviction: Eviction): ReplayEvictionLine {
  return {
    pod: podKey(eviction.pod),
    uid: eviction.pod.metadata.uid ?? '',
    signal: eviction.reason.kind === 'threshold' ? eviction.reason.signal : eviction.reason.limit,
    gracePeriodSeconds: eviction.gracePeriodSeconds,
    message: eviction.message,
    annotations: eviction.annotations,
  };
}


export function taintLine(event: TaintEvent): ReplayTaintLine {
  return {
    pod: event.podKey,
    action: event.type,
    at: formatRfc3339(event.atMs),
    ...(event.type === 'scheduled' ? { fireAt: formatRfc3339(event.fireAtMs) } : {}),
  };
}

function thresholdLine(met: ThresholdMet): ReplayThresholdLine {
  return { signal: met.threshold.signal, hard: isHardEvictionThreshold(met.threshold), quantity: met.quantity, available: met.available };
}

export function outputLine(timeMs: number, result: SynchronizeResult, taintEvents: readonly TaintEvent[] = []): ReplayOutputLine {
  const line: ReplayOutputLine = {
    time: formatRfc3339(timeMs),
    nodeConditions: [...result.nodeConditions],
    thresholdsMet: result.thresholdsMet.map(thresholdLine),
    evictions: result.evictions.map(evictionLine),
    taintEvictions: taintEvents.map(taintLine),
  };
  const dryRun = result.dryRun;
  if (dryRun === undefined) return line;
  return {
    ...line,
    dryRun: { nodeConditions: [...dryRun.nodeConditions], thresholdsMet: dryRun.thresholdsMet.map(thresholdLine), wouldEvict: dryRun.evictions.map(evictionLine) },
  };
}

// The replay's pods are the node's pods; one recorded without spec.nodeName is taken as bound to it.
function boundTo(pods: readonly Pod[], nodeName: string): Pod[] {
  return pods.map((pod) => (pod.spec.nodeName === undefined || pod.spec.nodeName === '' ? { ...pod, spec: { ...pod.spec, nodeName } } : pod));
}

/**
 * Replays steps through one engine and one NoExecute taint handler; keeps the latest value of
 * every key a step omits. The taint logic runs whatever the configuration's `taintEviction`
 * switch says: it answers what the taint-eviction controller (the cluster's or the agent's)
 * decides, and the switch only chooses which of the two acts.
 */
export class ReplayRunner {
  private readonly manager: EvictionManager;
  private readonly stormSettings: StormGuardSettings | null;
  private stormGuard: StormGuard | null = null;
  private lastStormGuardLine: ReplayStormGuardLine | null = null;
  private readonly clock = new ManualClock();
  private readonly taintOptions: Partial<TaintOptions>;
  private taintHandler: TaintHandler | null = null;
  private taintPods: Pod[] = [];
  private taintEvents: TaintEvent[] = [];
  private summary: Summary | null = null;
  private pods: Pod[] = [];
  private refusedPods: readonly ReplayRefusedPod[] = [];
  private node: Node | null = null;
  private dedicatedImageFs = false;
  private splitContainerFs = false;
  private lastTimeMs: number | null = null;
  private lastResultValue: SynchronizeResult | null = null;
  /** Pods decided for eviction that the recording still lists. */
  private readonly evictedUids = new Set<string>();
  private readonly outcomeTracker: OutcomeTracker;
  private readonly retriggerWindowMs: number;

  /** Without `stormGuard` settings every decision goes ahead, as with the guard off. */
  constructor(config: EvictionConfig, taintOptions: Partial<TaintOptions> = {}, stormGuard: StormGuardSettings | null = null, retriggerWindowMs = DEFAULT_RETRIGGER_WINDOW_MS) {
    this.manager = new EvictionManager(config);
    this.retriggerWindowMs = retriggerWindowMs;
    this.outcomeTracker = new OutcomeTracker({ retriggerWindowMs });
    this.taintOptions = taintOptions;
    this.stormSettings = stormGuard;
  }

  /** The storm guard at the last step: its settings, its state and what it did then (null without the guard). */
  stormGuardAtLastStep(): { settings: StormGuardSettings; state: StormGuardState | null; line: ReplayStormGuardLine | null } | null {
    if (this.stormSettings === null) return null;
    const state = this.stormGuard === null || this.lastTimeMs === null ? null : this.stormGuard.state(this.lastTimeMs);
    return { settings: this.stormSettings, state, line: this.lastStormGuardLine };
  }

  /** The outcomes known by the last step, newest last, each with its sentence. */
  recentOutcomes(): readonly { readonly outcome: EvictionOutcome; readonly message: string }[] {
    return this.outcomeTracker.recent().map((outcome) => ({ outcome, message: describeOutcome(outcome, this.retriggerWindowMs) }));
  }

  /** The time of the last step, for the next line's "time goes backwards" check. */
  get previousTimeMs(): number | null {
    return this.lastTimeMs;
  }

  /** The latest node object a step carried. */
  get latestNode(): Node | null {
    return this.node;
  }

  /** The engine's full result for the last step, and the inputs it decided on (for `explain`), with the pods left out of them. */
  lastStep(): {
    result: SynchronizeResult;
    thresholds: readonly Threshold[];
    summary: Summary | null;
    pods: Pod[];
    refusedPods: readonly ReplayRefusedPod[];
    dedicatedImageFs: boolean;
    splitContainerFs: boolean;
  } | null {
    if (this.lastResultValue === null) return null;
    return {
      result: this.lastResultValue,
      thresholds: this.manager.thresholds,
      summary: this.summary,
      pods: this.pods.filter(isActive),
      refusedPods: this.refusedPods,
      dedicatedImageFs: this.dedicatedImageFs,
      splitContainerFs: this.splitContainerFs,
    };
  }

  step(step: ReplayStep): ReplayOutputLine {
    // Taint timers due before this step fire first, each at its own time.
    this.clock.advanceTo(step.timeMs);
    const previousNode = this.node;
    if (step.summary !== undefined) this.summary = step.summary;
    if (step.pods !== undefined) {
      this.pods = step.pods;
      this.refusedPods = step.refusedPods ?? [];
    }
    if (step.node !== undefined) this.node = step.node;
    if (step.dedicatedImageFs !== undefined) this.dedicatedImageFs = step.dedicatedImageFs;
    if (step.splitContainerFs !== undefined) this.splitContainerFs = step.splitContainerFs;
    this.lastTimeMs = step.timeMs;
    this.updateTaints(previousNode, step);
    const result = this.manager.synchronize({
      nowMs: step.timeMs,
      summary: this.summary,
      pods: this.pods.filter(isActive),
      dedicatedImageFs: this.dedicatedImageFs,
      splitContainerFs: this.splitContainerFs,
    });
    this.lastResultValue = result;
    // Immediate taint deletions queued by this step run at this step's time.
    this.clock.advanceTo(step.timeMs);
    const events = this.taintEvents;
    this.taintEvents = [];
    const decided = outputLine(step.timeMs, result, events);
    // Lines without refusals stay as they were: the key is there only when a step's pods had some.
    const line = step.pods !== undefined && this.refusedPods.length > 0 ? { ...decided, refusedPods: this.refusedPods } : decided;
    const guarded = this.guard(result, step.timeMs);
    this.lastStormGuardLine = guarded;
    const outcomes = this.followUp(step, result, guarded?.heldBack === undefined);
    const withOutcomes = outcomes.length === 0 ? line : { ...line, outcomes: outcomes.map((o) => ({ ...outcomeJson(o), message: describeOutcome(o, this.retriggerWindowMs) })) };
    return guarded === null ? withOutcomes : { ...withOutcomes, evictions: guarded.heldBack === undefined ? line.evictions : [], stormGuard: guarded };
  }

  // The outcomes of the evictions decided so far, from the recording: a pod is gone at the first
  // step whose pods no longer list it; the signal is judged on every step's observations. A pod is
  // taken to be removed as the agent's defaults remove it (hard memory: ended locally; other hard:
  // deleted; soft: the Eviction API), at its decision's time.
  private followUp(step: ReplayStep, result: SynchronizeResult, admitted: boolean): EvictionOutcome[] {
    const tracker = this.outcomeTracker;
    if (step.pods !== undefined) {
      const listed = new Set(this.pods.filter(isActive).map((p) => p.metadata.uid ?? podKey(p)));
      for (const uid of this.evictedUids) {
        if (listed.has(uid)) continue;
        tracker.podGone(uid, step.timeMs);
        this.evictedUids.delete(uid);
      }
    }
    const known = tracker.observed(result.observations, result.thresholdsMetIgnoringGrace.map((m) => m.threshold), step.timeMs);
    const threshold = result.reclaim?.threshold;
    if (!admitted || threshold === undefined) return known;
    for (const eviction of result.evictions) {
      if (eviction.reason.kind !== 'threshold') continue;
      const observed = result.observations.get(eviction.reason.signal);
      if (observed === undefined) continue;
      const uid = eviction.pod.metadata.uid ?? podKey(eviction.pod);
      const action: OutcomeAction = !eviction.reason.hard ? 'eviction-api' : isMemorySignal(eviction.reason.signal) ? 'local-termination' : 'delete';
      tracker.evicted({ pod: podKey(eviction.pod), uid, threshold, action, notifiedAtMs: null, decidedAtMs: step.timeMs, actedAtMs: step.timeMs, availableAtDecision: observed.available, capacity: observed.capacity });
      this.evictedUids.add(uid);
    }
    return known;
  }

  // The storm guard over the step's decision, as the agent applies it: a soft eviction past the
  // budget is held back; what goes ahead is counted, by owner (found by the names: a recording
  // holds no ReplicaSets).
  private guard(result: SynchronizeResult, nowMs: number): ReplayStormGuardLine | null {
    const first = result.evictions[0];
    if (this.stormSettings === null || first === undefined) return null;
    this.stormGuard ??= new StormGuard(this.stormSettings, this.node?.metadata.name ?? '(unnamed)');
    const toGuarded = (eviction: Eviction) => ({
      pod: podKey(eviction.pod),
      uid: eviction.pod.metadata.uid ?? podKey(eviction.pod),
      signal: eviction.reason.kind === 'threshold' ? eviction.reason.signal : eviction.reason.limit,
      resource: eviction.reason.kind === 'threshold' ? signalToResource[eviction.reason.signal] : ('ephemeral-storage' as const),
      hard: eviction.reason.kind === 'local-storage' || eviction.reason.hard,
      owner: ownerByName(eviction.pod),
    });
    const decision = this.stormGuard.admit(toGuarded(first), nowMs);
    if (!decision.admit) return { heldBack: { pod: decision.pod, signal: decision.signal, message: decision.message } };
    const storms = this.stormGuard.record((first.reason.kind === 'local-storage' ? result.evictions : [first]).map(toGuarded), nowMs);
    return storms.length === 0 ? null : { ownerStorms: storms.map((storm) => ({ owner: ownerKey(storm.owner), count: storm.count, message: storm.message })) };
  }

  // Feeds the step's node and pod changes to the taint handler as informer events would.
  private updateTaints(previousNode: Node | null, step: ReplayStep): void {
    const nodeName = this.node?.metadata.name ?? previousNode?.metadata.name;
    if (nodeName === undefined) return;
    const created = this.taintHandler === null;
    if (this.taintHandler === null) {
      this.taintHandler = new TaintHandler({
        nodeName,
        clock: this.clock,
        options: this.taintOptions,
        actions: { deletePod: () => {}, emit: (event) => this.taintEvents.push(event) },
        listPods: () => this.taintPods,
        getPod: (namespace, name) => this.taintPods.find((p) => p.metadata.namespace === namespace && p.metadata.name === name) ?? null,
        getNode: () => this.node,
      });
    }
    const handler = this.taintHandler;
    const nodeQueued = step.node !== undefined || created ? handler.nodeUpdated(created ? null : previousNode, this.node) : false;
    // A handler created now has not seen the pods of earlier steps yet.
    if (step.pods !== undefined || created) {
      const before = new Map(this.taintPods.map((p) => [p.metadata.uid, p]));
      const after = boundTo(this.pods, nodeName);
      this.taintPods = after;
      const afterUids = new Set(after.map((p) => p.metadata.uid));
      for (const [uid, pod] of before) if (!afterUids.has(uid)) handler.podUpdated(pod, null);
      // A step that changes the node's NoExecute taints judges every current pod in the node
      // pass; feeding the same pods' adds at the same instant would only judge them twice.
      if (!nodeQueued) for (const pod of after) handler.podUpdated(before.get(pod.metadata.uid) ?? null, pod);
    }
    handler.processPending();
  }
}
