// Keeps the verdict on whether the node's pods can be ranked (src/eviction/stats-coverage.ts)
// current, one observation at a time, and makes a refusal visible: one log line and a node Event
// when the verdict changes, and the `pod-stats` readiness check while it lasts. The loop asks it
// which signals not to act on in each pass, and whether the memory shortcut may act at all.

import type { Logger } from '../api/logger.js';
import type { Pod } from '../api/pod.js';
import { isMemorySignal, type Signal } from '../api/signals.js';
import { assessStatsCoverage, type StatsCoverage } from '../eviction/stats-coverage.js';
import type { EventRecorder, Observation } from './ports.js';

const NONE: ReadonlySet<Signal> = new Set();

export class PodStatsGuard {
  private readonly log: Logger;
  private verdict: StatsCoverage | null = null;
  // What was last reported ('seen', or the cause of a refusal), so each change is said once.
  private reported: string | null = null;

  constructor(private readonly deps: { readonly events: EventRecorder; readonly logger: Logger }) {
    this.log = deps.logger.child({ component: 'pod-stats' });
  }

  /**
   * Assesses one observation of `pods` at `nowMs`; returns the signals not to act on in this pass.
   * An observation that did not read the pods' memory (it carried the last reading) leaves the
   * verdict of the last one that did: no decision of its pass ranks pods (EvictionManager.podStatsNeeded).
   */
  assess(observation: Observation, pods: readonly Pod[], nowMs: number): ReadonlySet<Signal> {
    if (observation.podStatsRead?.memory !== false || this.verdict === null) {
      this.verdict = assessStatsCoverage({ summary: observation.summary, pods, nowMs, podCgroupRootProblem: observation.podCgroupRootProblem });
      this.report(this.verdict);
    }
    return this.verdict.blind ? new Set(this.verdict.signals) : NONE;
  }

  /**
   * Whether a pod may be evicted for a memory signal on the latest verdict: not before the first
   * observation has been assessed, nor while the pods cannot be ranked.
   */
  get memoryRankable(): boolean {
    return this.verdict !== null && !(this.verdict.blind && this.verdict.signals.some(isMemorySignal));
  }

  /** The readiness check: null while the pods can be ranked (or nothing has been assessed yet), else why not. */
  refusal(): string | null {
    return this.verdict?.blind === true ? this.verdict.reason : null;
  }

  private report(verdict: StatsCoverage): void {
    const key = verdict.blind ? verdict.cause : 'seen';
    if (key === this.reported) return;
    const wasBlind = this.reported !== null && this.reported !== 'seen';
    this.reported = key;
    if (!verdict.blind) {
      if (!wasBlind) return;
      this.log.info('pod stats found again; evicting for every signal', { expected: verdict.expected, withoutStats: verdict.missing.length });
      void this.deps.events.nodeEvent({ type: 'Normal', reason: 'PodStatsFound', message: 'kube-eviction-agent measures the node\'s pods again: it evicts for memory and PID pressure again' });
      return;
    }
    this.log.error('refusing to evict for signals whose pods cannot be ranked', { reason: verdict.reason, signals: verdict.signals, expected: verdict.expected, withoutStats: verdict.missing.length });
    void this.deps.events.nodeEvent({ type: 'Warning', reason: 'PodStatsMissing', message: `kube-eviction-agent cannot measure the node's pods: ${verdict.reason}`.slice(0, 1024) });
  }
}
