// Follows every eviction and local termination to its outcome (src/eviction/eviction-outcomes.ts)
// and reports each once known: the metrics, a log line, and one EvictionOutcome Event on the first
// evicted pod and on the Node (Normal when relieved, Warning when not, re-triggered, or with a kernel
// OOM kill meanwhile). It reads nothing of its own: the loop feeds it the evictions it carried out
// and every pass's observations, the watch tells it of pods deleted, the OOM kill reporter of
// kernel OOM kills. Each outcome is reported at its window's end, on a timer of the injected clock.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Signal } from '../api/signals.js';
import { podKey, type Pod } from '../api/pod.js';
import type { Threshold } from '../api/threshold.js';
import { OUTCOME_RESULTS, OutcomeTracker, type EvictionOutcome, type OutcomeAction } from '../eviction/eviction-outcomes.js';
import { describeOutcome, isBadOutcome, outcomeJson } from '../eviction/outcome-message.js';
import type { SignalObservations } from '../eviction/types.js';
import { BackgroundTasks } from './background-tasks.js';
import type { AgentMetrics } from './metrics.js';
import type { ClusterView, EventRecorder } from './ports.js';

export interface OutcomeReporterDeps {
  readonly cluster: ClusterView;
  readonly events: EventRecorder;
  readonly metrics: AgentMetrics;
  readonly logger: Logger;
  /** Whether the agent acts (not in a dry run): a dry run's would-be evictions have no outcome. */
  readonly acting: () => boolean;
  /** Sees each outcome once known (the demo prints it). */
  readonly onOutcome?: (outcome: EvictionOutcome, message: string) => void;
}

/** One eviction the loop carried out, as it knows it. */
export interface CarriedOutEviction {
  readonly pod: Pod;
  readonly threshold: Threshold;
  readonly action: OutcomeAction;
  readonly notifiedAtMs: number | null;
  readonly decidedAtMs: number;
  readonly actedAtMs: number;
  readonly observations: SignalObservations;
}

// Events in flight at most; more are dropped (and logged) rather than queued.
const MAX_PENDING_EVENTS = 16;

export class OutcomeReporter {
  private readonly log: Logger;
  private readonly tracker: OutcomeTracker;
  private readonly pods = new Map<string, Pod>();
  private readonly eventTasks: BackgroundTasks;
  private unsubscribe: (() => void) | null = null;
  private cancelTimer: (() => void) | null = null;
  private timerAtMs: number | null = null;
  private stopped = false;

  constructor(
    private retriggerWindowMs: number,
    private readonly deps: OutcomeReporterDeps,
    private readonly clock: Clock,
  ) {
    this.log = deps.logger.child({ component: 'eviction-outcomes' });
    this.tracker = new OutcomeTracker({ retriggerWindowMs });
    this.eventTasks = new BackgroundTasks('outcome-events', MAX_PENDING_EVENTS, this.log);
  }

  updateSettings(retriggerWindowMs: number): void {
    this.retriggerWindowMs = retriggerWindowMs;
    this.tracker.updateSettings({ retriggerWindowMs });
  }

  start(): void {
    if (this.unsubscribe !== null) return;
    // A pod's object deleted is the API path's "pod gone"; the loop tells of cgroups found empty.
    this.unsubscribe = this.deps.cluster.onPodChange((oldPod, newPod) => {
      const uid = oldPod?.metadata.uid;
      if (newPod === null && uid !== undefined && this.pods.has(uid)) this.tracker.podGone(uid, this.clock.nowMs());
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.cancelTimer?.();
    this.cancelTimer = null;
    await this.eventTasks.settled();
  }

  /**
   * The signals the thresholds in force watch: their outcome and re-trigger counters start at 0, so
   * the first one counted is an increase a rule sees (a series that appears at 1 is not one).
   */
  knownSignals(signals: readonly Signal[]): void {
    for (const signal of new Set(signals)) {
      this.deps.metrics.evictionRetriggers.inc({ signal }, 0);
      this.deps.metrics.evictionOutcomeOomKills.inc({ signal }, 0);
      for (const result of OUTCOME_RESULTS) this.deps.metrics.evictionOutcomes.inc({ signal, result }, 0);
    }
  }

  /** The last outcomes known, newest last, as plain JSON (the ops endpoint's `/outcomes`). */
  recentJson(): Record<string, unknown>[] {
    return this.tracker.recent().map((o) => ({ ...outcomeJson(o), message: describeOutcome(o, this.retriggerWindowMs) }));
  }

  /** Outcomes known so far (tests). */
  recent(): readonly EvictionOutcome[] {
    return this.tracker.recent();
  }

  evicted(carried: CarriedOutEviction): void {
    if (!this.deps.acting()) return;
    const signal = carried.threshold.signal;
    const observed = carried.observations.get(signal);
    if (observed === undefined) return;
    const uid = carried.pod.metadata.uid ?? podKey(carried.pod);
    this.pods.set(uid, carried.pod);
    this.tracker.evicted({
      pod: podKey(carried.pod),
      uid,
      threshold: carried.threshold,
      action: carried.action,
      notifiedAtMs: carried.notifiedAtMs,
      decidedAtMs: carried.decidedAtMs,
      actedAtMs: carried.actedAtMs,
      availableAtDecision: observed.available,
      capacity: observed.capacity,
    });
    this.schedule();
  }

  /** An evicted pod's cgroup seen empty (or its object gone). */
  podGone(uid: string, atMs: number): void {
    this.tracker.podGone(uid, atMs);
  }

  /** A kernel OOM kill of node pressure. */
  kernelOomKill(atMs: number): void {
    this.tracker.kernelOomKill(atMs);
  }

  /** A pass's observations and the thresholds met (grace periods ignored). */
  observed(observations: SignalObservations, thresholdsMet: readonly Threshold[], atMs: number): void {
    this.report(this.tracker.observed(observations, thresholdsMet, atMs));
  }

  /** Reports the outcomes whose window has ended (called at every pass, observing or not). */
  tick(atMs: number): void {
    this.report(this.tracker.tick(atMs));
  }

  // A timer for the next window's end, so an outcome is reported when it is known, not at the next pass.
  private schedule(): void {
    const atMs = this.tracker.nextReportAtMs();
    if (this.stopped || atMs === this.timerAtMs) return;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.timerAtMs = atMs;
    if (atMs === null) return;
    this.cancelTimer = this.clock.after(Math.max(0, atMs - this.clock.nowMs()), () => {
      this.cancelTimer = null;
      this.timerAtMs = null;
      this.tick(this.clock.nowMs());
    });
  }

  private report(outcomes: readonly EvictionOutcome[]): void {
    this.schedule();
    const { metrics, events } = this.deps;
    for (const outcome of outcomes) {
      const { signal } = outcome;
      const message = describeOutcome(outcome, this.retriggerWindowMs);
      metrics.evictionOutcomes.inc({ signal, result: outcome.result });
      metrics.evictionReclaimedRatio.observe({ signal }, Math.max(0, outcome.reclaimedRatio));
      const first = outcome.pods[0];
      if (outcome.timeToReliefMs !== null && first !== undefined) metrics.evictionTimeToRelief.observe({ signal, action: first.action }, outcome.timeToReliefMs / 1000);
      if (outcome.retriggered) metrics.evictionRetriggers.inc({ signal });
      if (outcome.kernelOomKills > 0) metrics.evictionOutcomeOomKills.inc({ signal }, outcome.kernelOomKills);
      const bad = isBadOutcome(outcome);
      const fields = { ...outcomeJson(outcome) };
      if (bad) this.log.warn(message, fields);
      else this.log.info(message, fields);
      const event = { type: bad ? ('Warning' as const) : ('Normal' as const), reason: 'EvictionOutcome', message: message.slice(0, 1024) };
      const pod = first === undefined ? undefined : this.pods.get(first.uid);
      if (pod !== undefined) this.eventTasks.run('EvictionOutcome pod', () => events.podEvent(pod, event));
      this.eventTasks.run('EvictionOutcome node', () => events.nodeEvent(event));
      for (const p of outcome.pods) this.pods.delete(p.uid);
      this.deps.onOutcome?.(outcome, message);
    }
  }
}
