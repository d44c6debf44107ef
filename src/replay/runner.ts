// Drives the engine over a recording: each step sets the clock to the step's time and runs
// exactly one synchronize on the latest summary and pods, as the kubelet's loop would, and
// renders what was decided as one output line.

import type { EvictionConfig } from '../api/eviction-config.js';
import type { Node, Pod } from '../api/pod.js';
import { podKey } from '../api/pod.js';
import type { Summary } from '../api/summary.js';
import { isHardEvictionThreshold } from '../api/threshold.js';
import { EvictionManager } from '../eviction/manager.js';
import type { Eviction, SynchronizeResult } from '../eviction/types.js';
import { formatRfc3339, type ReplayStep } from './input.js';

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

/** One output line per input step. */
export interface ReplayOutputLine {
  readonly time: string;
  readonly nodeConditions: readonly string[];
  readonly thresholdsMet: readonly ReplayThresholdLine[];
  readonly evictions: readonly ReplayEvictionLine[];
}

// The kubelet's active pods are the node's non-terminal pods.
function isActive(pod: Pod): boolean {
  const phase = pod.status?.phase;
  return phase !== 'Succeeded' && phase !== 'Failed';
}

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

export function outputLine(timeMs: number, result: SynchronizeResult): ReplayOutputLine {
  return {
    time: formatRfc3339(timeMs),
    nodeConditions: [...result.nodeConditions],
    thresholdsMet: result.thresholdsMet.map((met) => ({
      signal: met.threshold.signal,
      hard: isHardEvictionThreshold(met.threshold),
      quantity: met.quantity,
      available: met.available,
    })),
    evictions: result.evictions.map(evictionLine),
  };
}

/** Replays steps through one engine; keeps the latest value of every key a step omits. */
export class ReplayRunner {
  private readonly manager: EvictionManager;
  private summary: Summary | null = null;
  private pods: Pod[] = [];
  private node: Node | null = null;
  private dedicatedImageFs = false;
  private splitContainerFs = false;
  private lastTimeMs: number | null = null;

  constructor(config: EvictionConfig) {
    this.manager = new EvictionManager(config);
  }

  /** The time of the last step, for the next line's "time goes backwards" check. */
  get previousTimeMs(): number | null {
    return this.lastTimeMs;
  }

  /** The latest node object a step carried (taints are handled by the taint replay). */
  get latestNode(): Node | null {
    return this.node;
  }

  step(step: ReplayStep): ReplayOutputLine {
    if (step.summary !== undefined) this.summary = step.summary;
    if (step.pods !== undefined) this.pods = step.pods;
    if (step.node !== undefined) this.node = step.node;
    if (step.dedicatedImageFs !== undefined) this.dedicatedImageFs = step.dedicatedImageFs;
    if (step.splitContainerFs !== undefined) this.splitContainerFs = step.splitContainerFs;
    this.lastTimeMs = step.timeMs;
    const result = this.manager.synchronize({
      nowMs: step.timeMs,
      summary: this.summary,
      pods: this.pods.filter(isActive),
      dedicatedImageFs: this.dedicatedImageFs,
      splitContainerFs: this.splitContainerFs,
    });
    return outputLine(step.timeMs, result);
  }
}
