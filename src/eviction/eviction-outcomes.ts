// Eviction outcomes: after every eviction (Eviction API or delete) and every local termination,
// whether it helped. Pure and clock-free: the caller feeds it the evictions it carried out, the
// pods it saw go, every pass's observations, and the kernel OOM kills it found, each with its time,
// and it returns the outcomes that became known. One episode per signal and kind of threshold (hard
// or soft): the first eviction for it opens it, and evictions for the same before the signal is back
// join it (the second pod that had to go). The signal is back when its observed value reaches the threshold plus its
// minimum reclaim (where the kubelet stops counting the threshold as met); the episode then watches
// for a re-trigger for the window, and is reported at its end (or, never back, one window after the
// first action). See docs/eviction-outcomes.md.

import { quantityValue } from '../api/quantity.js';
import type { Signal } from '../api/signals.js';
import { getThresholdQuantity, isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import type { SignalObservations } from './types.js';

/** How a pod was removed. */
export type OutcomeAction = 'local-termination' | 'delete' | 'eviction-api';

/** What the outcome came to: exactly one per episode. */
export type OutcomeResult = 'relieved' | 'not-relieved' | 'under-eviction' | 'over-eviction';

export const OUTCOME_RESULTS: readonly OutcomeResult[] = Object.freeze(['relieved', 'not-relieved', 'under-eviction', 'over-eviction']);

export interface OutcomeSettings {
  /** How long after the signal is back a new crossing counts as a re-trigger, and how long relief is awaited. */
  readonly retriggerWindowMs: number;
}

/** One eviction or local termination the agent carried out. */
export interface EvictionStarted {
  readonly pod: string;
  readonly uid: string;
  readonly threshold: Threshold;
  readonly action: OutcomeAction;
  /** When the kernel notification that woke the deciding pass arrived; null for a periodic pass. */
  readonly notifiedAtMs: number | null;
  readonly decidedAtMs: number;
  /** When the kill was sent or the API call made. */
  readonly actedAtMs: number;
  /** The signal's observed available amount and capacity in the deciding pass (bytes, inodes or PIDs). */
  readonly availableAtDecision: bigint;
  readonly capacity: bigint;
}

/** One pod of an episode. */
export interface OutcomePod {
  readonly pod: string;
  readonly uid: string;
  readonly action: OutcomeAction;
  readonly decidedAtMs: number;
  readonly actedAtMs: number;
  /** When its cgroup was seen empty or its object gone, whichever first; null if not within the window. */
  readonly goneAtMs: number | null;
  /** For a second (or later) pod: whether every pod before it was gone when it was acted on. */
  readonly afterEarlierGone: boolean;
}

/** An eviction's follow-up, once known. Amounts are in the signal's unit (bytes, inodes or PIDs). */
export interface EvictionOutcome {
  readonly signal: Signal;
  readonly threshold: Threshold;
  /** The threshold and the threshold plus minimum reclaim, at the capacity observed at decision. */
  readonly thresholdAmount: bigint;
  readonly targetAmount: bigint;
  readonly result: OutcomeResult;
  /** When the threshold was first seen met in this episode (a pass, or the notification if earlier). */
  readonly crossedAtMs: number;
  readonly notifiedAtMs: number | null;
  readonly decidedAtMs: number;
  readonly actedAtMs: number;
  /** When the first pod was gone. */
  readonly goneAtMs: number | null;
  /** When the signal was first observed back at the threshold plus minimum reclaim; null if never within the window. */
  readonly relievedAtMs: number | null;
  readonly availableAtDecision: bigint;
  /**
   * What the eviction left: the more of the value observed at relief and the first one observed once
   * every pod of the episode was gone (memory a killed pod still held at relief counts); never back,
   * the most observed within the window.
   */
  readonly availableAfter: bigint;
  /** `availableAfter` minus `availableAtDecision`. */
  readonly reclaimedAmount: bigint;
  /** The threshold plus minimum reclaim minus the available amount at decision (the kubelet's reclaim need). */
  readonly neededAmount: bigint;
  /** reclaimed / needed. */
  readonly reclaimedRatio: number;
  /** From the first action to relief; null if never back. */
  readonly timeToReliefMs: number | null;
  /** Whether the threshold was met again within the window after relief. */
  readonly retriggered: boolean;
  readonly retriggeredAtMs: number | null;
  /** Kernel OOM kills of node pressure (not a container's own limit) between the first action and the report. */
  readonly kernelOomKills: number;
  readonly pods: readonly OutcomePod[];
  /** When the outcome was known (the window's end). */
  readonly reportedAtMs: number;
}

interface MutablePod {
  readonly pod: string;
  readonly uid: string;
  readonly action: OutcomeAction;
  readonly decidedAtMs: number;
  readonly actedAtMs: number;
  goneAtMs: number | null;
  readonly afterEarlierGone: boolean;
}

interface Episode {
  readonly first: EvictionStarted;
  readonly crossedAtMs: number;
  readonly thresholdAmount: bigint;
  readonly targetAmount: bigint;
  readonly pods: MutablePod[];
  relievedAtMs: number | null;
  availableAfter: bigint;
  /** The first observation once every pod was gone. */
  availableAfterGone: bigint | null;
  /** The most observed since the first action (the figure when the signal never came back). */
  mostAvailable: bigint;
  retriggeredAtMs: number | null;
  kernelOomKills: number;
}

// The recent outcomes kept for `explain`.
const RECENT_OUTCOMES_KEPT = 20;

function amountOf(value: Threshold['value'], capacity: bigint): bigint {
  return quantityValue(getThresholdQuantity(value, capacity));
}

/** The threshold, and the threshold plus its minimum reclaim, as amounts of `capacity`. */
export function reliefTarget(threshold: Threshold, capacity: bigint): { thresholdAmount: bigint; targetAmount: bigint } {
  const thresholdAmount = amountOf(threshold.value, capacity);
  return { thresholdAmount, targetAmount: thresholdAmount + (threshold.minReclaim === null ? 0n : amountOf(threshold.minReclaim, capacity)) };
}

/** reclaimed / needed, as a plain number; 0 when nothing was needed. */
function ratio(reclaimed: bigint, needed: bigint): number {
  return needed <= 0n ? 0 : Number(reclaimed) / Number(needed);
}

// A signal's hard and soft thresholds are followed apart: each has its own target and its own re-trigger.
type EpisodeKey = `${Signal}/${'hard' | 'soft'}`;

function episodeKey(threshold: Threshold): EpisodeKey {
  return `${threshold.signal}/${isHardEvictionThreshold(threshold) ? 'hard' : 'soft'}`;
}

export class OutcomeTracker {
  private readonly episodes = new Map<EpisodeKey, Episode>();
  /** When each signal's threshold was first seen met in the current run of passes that met it. */
  private readonly metSinceMs = new Map<Signal, number>();
  private readonly recentOutcomes: EvictionOutcome[] = [];
  /** Outcomes closed by `evicted` (a re-trigger), handed out at the next `observed` or `tick`. */
  private readonly pendingReports: EvictionOutcome[] = [];

  constructor(private settings: OutcomeSettings) {}

  updateSettings(settings: OutcomeSettings): void {
    this.settings = settings;
  }

  /** The last outcomes known, newest last. */
  recent(): readonly EvictionOutcome[] {
    return this.recentOutcomes;
  }

  /** When the next episode's window ends (its outcome is then known), or null when none is open. */
  nextReportAtMs(): number | null {
    let next: number | null = null;
    for (const episode of this.episodes.values()) {
      const endMs = this.windowEndMs(episode);
      if (next === null || endMs < next) next = endMs;
    }
    return this.pendingReports.length > 0 ? Math.min(next ?? Infinity, 0) : next;
  }

  /** The signals of the episodes still being followed. */
  get openSignals(): readonly Signal[] {
    return [...this.episodes.values()].map((e) => e.first.threshold.signal);
  }

  /** An eviction or local termination carried out. */
  evicted(started: EvictionStarted): void {
    const signal = started.threshold.signal;
    const key = episodeKey(started.threshold);
    const open = this.episodes.get(key);
    if (open !== undefined && open.relievedAtMs === null) {
      // Still short of the target: a further pod for the same pressure joins the episode.
      if (open.pods.some((p) => p.uid === started.uid)) return;
      const afterEarlierGone = open.pods.every((p) => p.goneAtMs !== null && p.goneAtMs <= started.actedAtMs);
      open.pods.push({ pod: started.pod, uid: started.uid, action: started.action, decidedAtMs: started.decidedAtMs, actedAtMs: started.actedAtMs, goneAtMs: null, afterEarlierGone });
      return;
    }
    // Back once already and pressure again: the episode re-triggered; it is reported now and a new one opens.
    const reported: EvictionOutcome[] = [];
    if (open !== undefined) {
      open.retriggeredAtMs ??= started.decidedAtMs;
      reported.push(this.close(key, open, started.decidedAtMs));
    }
    const since = this.metSinceMs.get(signal);
    const crossedAtMs = Math.min(since ?? started.decidedAtMs, started.notifiedAtMs ?? started.decidedAtMs, started.decidedAtMs);
    this.episodes.set(key, {
      first: started,
      crossedAtMs,
      ...reliefTarget(started.threshold, started.capacity),
      pods: [{ pod: started.pod, uid: started.uid, action: started.action, decidedAtMs: started.decidedAtMs, actedAtMs: started.actedAtMs, goneAtMs: null, afterEarlierGone: true }],
      relievedAtMs: null,
      availableAfter: started.availableAtDecision,
      availableAfterGone: null,
      mostAvailable: started.availableAtDecision,
      retriggeredAtMs: null,
      kernelOomKills: 0,
    });
    this.pendingReports.push(...reported);
  }

  /** A pod of an episode was seen gone: its cgroup empty, or its object deleted. The first sighting counts. */
  podGone(uid: string, nowMs: number): void {
    for (const episode of this.episodes.values()) {
      for (const pod of episode.pods) if (pod.uid === uid && pod.goneAtMs === null && nowMs >= pod.actedAtMs) pod.goneAtMs = nowMs;
    }
  }

  /** A kernel OOM kill of node pressure (the node's or the pods' allocatable, not a container's own limit). */
  kernelOomKill(nowMs: number): void {
    for (const episode of this.episodes.values()) if (nowMs >= episode.first.actedAtMs) episode.kernelOomKills++;
  }

  /**
   * A pass's observations and the thresholds it found met (grace periods ignored), at `nowMs`.
   * Returns the outcomes that became known.
   */
  observed(observations: SignalObservations, thresholdsMet: readonly Threshold[], nowMs: number): EvictionOutcome[] {
    const metSignals = new Set(thresholdsMet.map((t) => t.signal));
    const metKeys = new Set(thresholdsMet.map(episodeKey));
    for (const signal of metSignals) if (!this.metSinceMs.has(signal)) this.metSinceMs.set(signal, nowMs);
    for (const signal of [...this.metSinceMs.keys()]) if (!metSignals.has(signal)) this.metSinceMs.delete(signal);
    for (const [key, episode] of this.episodes) {
      const observed = observations.get(episode.first.threshold.signal);
      // Only what falls within the episode's window counts; past it, the episode is reported below.
      if (observed === undefined || nowMs < episode.first.actedAtMs || nowMs >= this.windowEndMs(episode)) continue;
      if (episode.availableAfterGone === null && episode.pods.every((p) => p.goneAtMs !== null && p.goneAtMs <= nowMs)) episode.availableAfterGone = observed.available;
      if (episode.relievedAtMs === null) {
        if (observed.available > episode.mostAvailable) episode.mostAvailable = observed.available;
        if (observed.available >= episode.targetAmount) {
          episode.relievedAtMs = nowMs;
          episode.availableAfter = observed.available;
        }
      } else if (episode.retriggeredAtMs === null && metKeys.has(key)) {
        episode.retriggeredAtMs = nowMs;
      }
    }
    return this.tick(nowMs);
  }

  /** The outcomes whose window has ended by `nowMs`. */
  tick(nowMs: number): EvictionOutcome[] {
    const reported = this.pendingReports.splice(0);
    for (const [key, episode] of [...this.episodes]) {
      if (nowMs >= this.windowEndMs(episode)) reported.push(this.close(key, episode, nowMs));
    }
    return reported;
  }

  // Relief is awaited for one window after the first action; a re-trigger, for one window after relief.
  private windowEndMs(episode: Episode): number {
    return (episode.relievedAtMs ?? episode.first.actedAtMs) + this.settings.retriggerWindowMs;
  }

  private close(key: EpisodeKey, episode: Episode, nowMs: number): EvictionOutcome {
    this.episodes.delete(key);
    const { first } = episode;
    const signal = first.threshold.signal;
    const relieved = episode.relievedAtMs !== null;
    const afterGone = episode.availableAfterGone;
    const availableAfter = relieved ? (afterGone !== null && afterGone > episode.availableAfter ? afterGone : episode.availableAfter) : episode.mostAvailable;
    const reclaimedAmount = availableAfter - first.availableAtDecision;
    const neededAmount = episode.targetAmount - first.availableAtDecision;
    const outcome: EvictionOutcome = {
      signal,
      threshold: first.threshold,
      thresholdAmount: episode.thresholdAmount,
      targetAmount: episode.targetAmount,
      result: classify(episode, relieved, reclaimedAmount, neededAmount),
      crossedAtMs: episode.crossedAtMs,
      notifiedAtMs: first.notifiedAtMs,
      decidedAtMs: first.decidedAtMs,
      actedAtMs: first.actedAtMs,
      goneAtMs: episode.pods[0]?.goneAtMs ?? null,
      relievedAtMs: episode.relievedAtMs,
      availableAtDecision: first.availableAtDecision,
      availableAfter,
      reclaimedAmount,
      neededAmount,
      reclaimedRatio: ratio(reclaimedAmount, neededAmount),
      timeToReliefMs: episode.relievedAtMs === null ? null : episode.relievedAtMs - first.actedAtMs,
      retriggered: episode.retriggeredAtMs !== null,
      retriggeredAtMs: episode.retriggeredAtMs,
      kernelOomKills: episode.kernelOomKills,
      pods: episode.pods.map((p) => ({ ...p })),
      reportedAtMs: nowMs,
    };
    this.recentOutcomes.push(outcome);
    if (this.recentOutcomes.length > RECENT_OUTCOMES_KEPT) this.recentOutcomes.shift();
    return outcome;
  }
}

// One pod and back: relieved. Never back: not relieved. More than one pod: under-eviction when the
// later pods were needed (acted on once the earlier ones were gone and the signal still short, or
// the whole lot freed no more than needed); over-eviction when a later pod went while an earlier
// one was still going and more was freed than needed (the kubernetes/kubernetes#31362 case).
function classify(episode: Episode, relieved: boolean, reclaimedAmount: bigint, neededAmount: bigint): OutcomeResult {
  if (!relieved) return 'not-relieved';
  if (episode.pods.length === 1) return 'relieved';
  const early = episode.pods.slice(1).some((p) => !p.afterEarlierGone);
  return early && reclaimedAmount > neededAmount ? 'over-eviction' : 'under-eviction';
}
