// What the agent was doing, kept for the moment the kernel OOM killer fires: the memory thresholds
// in force and whether the notifier armed them, the last notification, the last pass (its memory
// figures, whether it saw a memory threshold met, and since when), and the last eviction for
// memory. The loop, the notifier and the executor feed it through the agent's hooks; it decides
// nothing.

import type { NotifierMode } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import { podKey, type Pod } from '../api/pod.js';
import { isMemorySignal, type Signal } from '../api/signals.js';
import type { Threshold } from '../api/threshold.js';
import type { SynchronizeResult, ThresholdMet } from '../eviction/types.js';
import type { SyncTrigger } from './eviction-loop.js';
import type { EvictionOutcome, MemoryThresholdNotifier, PodActions } from './ports.js';

/** The last pass, as the kill report quotes it. */
export interface PassActivity {
  readonly atMs: number;
  readonly trigger: string;
  /** memory.available and allocatableMemory.available as observed. */
  readonly available: ReadonlyMap<Signal, bigint>;
  /** Memory thresholds met (grace periods ignored) at that pass. */
  readonly memoryMet: readonly ThresholdMet[];
  /** The pod the pass chose to evict for memory, if any. */
  readonly decided: { readonly pod: string; readonly uid: string | null; readonly signal: Signal; readonly hard: boolean } | null;
}

/** What the agent last did about memory. */
export interface EvictionActivity {
  readonly pod: string;
  readonly uid: string | null;
  readonly atMs: number;
  readonly action: string;
  readonly result: string;
}

/** Everything the kill report says about the agent. */
export interface AgentActivitySnapshot {
  readonly dryRun: boolean;
  readonly notifierMode: NotifierMode;
  /** The memory thresholds in force (memory.available, allocatableMemory.available). */
  readonly memoryThresholds: readonly Threshold[];
  /** What the notifier reports as armed (descriptions), or null when it cannot say. */
  readonly armed: readonly string[] | null;
  readonly lastNotification: { readonly atMs: number; readonly description: string } | null;
  readonly lastPass: PassActivity | null;
  /** Since when the passes have seen a memory threshold met without a break; null when the last pass saw none. */
  readonly memoryMetSinceMs: number | null;
  readonly lastEviction: EvictionActivity | null;
}

export class AgentActivity {
  private lastNotification: AgentActivitySnapshot['lastNotification'] = null;
  private lastPass: PassActivity | null = null;
  private memoryMetSinceMs: number | null = null;
  private lastEviction: EvictionActivity | null = null;

  constructor(
    private readonly source: {
      readonly dryRun: () => boolean;
      readonly notifierMode: NotifierMode;
      readonly thresholds: () => readonly Threshold[];
      readonly armed: () => readonly string[] | null;
    },
  ) {}

  notified(description: string, atMs: number): void {
    this.lastNotification = { atMs, description };
  }

  /** A pass decided (before it is acted on). */
  passDecided(result: SynchronizeResult, trigger: string): void {
    const available = new Map<Signal, bigint>();
    for (const [signal, observation] of result.observations) if (isMemorySignal(signal)) available.set(signal, observation.available);
    const memoryMet = result.thresholdsMetIgnoringGrace.filter((met) => isMemorySignal(met.threshold.signal));
    const first = result.evictions[0];
    const decided =
      first !== undefined && first.reason.kind === 'threshold' && isMemorySignal(first.reason.signal)
        ? { pod: podKey(first.pod), uid: first.pod.metadata.uid ?? null, signal: first.reason.signal, hard: first.reason.hard }
        : null;
    this.lastPass = { atMs: result.nowMs, trigger, available, memoryMet, decided };
    if (memoryMet.length === 0) this.memoryMetSinceMs = null;
    else this.memoryMetSinceMs ??= result.nowMs;
  }

  /** An eviction attempt for memory was made (or held, or dry-run). */
  acted(eviction: EvictionActivity): void {
    this.lastEviction = eviction;
  }

  snapshot(): AgentActivitySnapshot {
    return {
      dryRun: this.source.dryRun(),
      notifierMode: this.source.notifierMode,
      memoryThresholds: this.source.thresholds().filter((t) => isMemorySignal(t.signal) && t.operatorSet !== false),
      armed: this.source.armed(),
      lastNotification: this.lastNotification,
      lastPass: this.lastPass,
      memoryMetSinceMs: this.memoryMetSinceMs,
      lastEviction: this.lastEviction,
    };
  }
}

/**
 * The ports the activity learns from, wrapped: every notification the notifier delivers, every
 * pass's decision (before the caller's own `onDecision`), and every eviction or deletion request
 * for a pod with its outcome. Nothing is changed on the way through.
 */
export function trackActivity<D extends { readonly notifier: MemoryThresholdNotifier; readonly actions: PodActions; readonly clock: Clock; readonly onDecision?: (result: SynchronizeResult, trigger: SyncTrigger) => void }>(
  deps: D,
  activity: AgentActivity,
): D {
  const { notifier, actions, clock } = deps;
  const onDecision = deps.onDecision;
  const acted = (pod: Pod, action: string) => (outcome: EvictionOutcome): EvictionOutcome => {
    activity.acted({ pod: podKey(pod), uid: pod.metadata.uid ?? null, atMs: clock.nowMs(), action, result: outcome.result });
    return outcome;
  };
  return {
    ...deps,
    notifier: {
      mode: notifier.mode,
      start: (onEvent) =>
        notifier.start((event) => {
          activity.notified(event.description, event.atMs);
          onEvent(event);
        }),
      updateThresholds: (summary, thresholds) => notifier.updateThresholds(summary, thresholds),
      setActing: (acting) => notifier.setActing(acting),
      stop: () => notifier.stop(),
    },
    actions: {
      getPod: (namespace, name) => actions.getPod(namespace, name),
      evictPod: async (pod, gracePeriodSeconds) => actions.evictPod(pod, gracePeriodSeconds).then(acted(pod, 'eviction')),
      deletePod: async (pod, options) => actions.deletePod(pod, options).then(acted(pod, 'deletion')),
      addDisruptionTarget: (pod, condition) => actions.addDisruptionTarget(pod, condition),
    },
    onDecision: (result: SynchronizeResult, trigger: SyncTrigger) => {
      activity.passDecided(result, trigger);
      onDecision?.(result, trigger);
    },
  };
}
