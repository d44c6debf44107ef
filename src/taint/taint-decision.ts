// The per-pod decision of the taint logic with no timer state: given the node's NoExecute taints
// and a pod, delete now, tolerate forever, or delete at a time. `processPodOnNode` applies it to
// the queue (where upstream's rule for an existing timer comes in); a restart rebuild applies it
// to an empty queue.

import type { Pod, Taint, Toleration } from '../api/pod.js';
import { getMinTolerationTimeMs } from './min-toleration-time.js';
import type { TaintOptions } from './taint-options.js';
import { getMatchingTolerations } from './tolerations.js';

export type TaintDecision =
  /** The node has no NoExecute taints: cancel whatever is pending. */
  | { readonly kind: 'untainted' }
  /** `skipTerminatingPods` and the pod is already terminating: change nothing. */
  | { readonly kind: 'terminating' }
  /** Some taint is not tolerated: delete now, replacing any timer. */
  | { readonly kind: 'untolerated' }
  /** Every taint is tolerated without `tolerationSeconds`: cancel whatever is pending. */
  | { readonly kind: 'forever' }
  /** Every taint is tolerated, the shortest for `tolerationMs`: delete at `fireAtMs` (>= now). */
  | { readonly kind: 'timed'; readonly tolerationMs: number; readonly fireAtMs: number };

export function isTerminating(pod: Pod): boolean {
  const deletion = pod.metadata.deletionTimestamp;
  return deletion !== undefined && deletion !== null && deletion !== '';
}

function timeAddedMs(taint: Taint): number | null {
  const added = taint.timeAdded;
  if (added === undefined || added === null || added === '') return null;
  const ms = added instanceof Date ? added.getTime() : Date.parse(added);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * With `countFromTimeAdded`, each taint's period starts at its `timeAdded` (never later than now,
 * so a skewed clock cannot make a pod outlive upstream's deadline) and the earliest deadline wins;
 * taints without `timeAdded` count from now, as upstream. Already past answers now.
 */
function fireAtFromTimeAdded(taints: readonly Taint[], used: readonly Toleration[], nowMs: number): number | null {
  let fireAtMs: number | null = null;
  for (let i = 0; i < taints.length; i++) {
    const seconds = used[i]?.tolerationSeconds;
    if (seconds === undefined || seconds === null) continue;
    const startMs = Math.min(timeAddedMs(taints[i] as Taint) ?? nowMs, nowMs);
    const deadlineMs = Math.min(startMs + Math.max(0, seconds) * 1000, Number.MAX_SAFE_INTEGER);
    if (fireAtMs === null || deadlineMs < fireAtMs) fireAtMs = deadlineMs;
  }
  return fireAtMs === null ? null : Math.max(fireAtMs, nowMs);
}

/** The decision for one pod against the node's NoExecute taints at `nowMs`. */
export function decideTaintEviction(pod: Pod, noExecuteTaints: readonly Taint[], nowMs: number, options: TaintOptions): TaintDecision {
  // Quirk Q2 guarded: upstream falls through here to an immediate deletion.
  if (noExecuteTaints.length === 0) return { kind: 'untainted' };
  if (options.skipTerminatingPods && isTerminating(pod)) return { kind: 'terminating' };
  const { allTolerated, used } = getMatchingTolerations(noExecuteTaints, pod.spec.tolerations, options.comparisonOperators);
  if (!allTolerated) return { kind: 'untolerated' };
  const tolerationMs = getMinTolerationTimeMs(used);
  if (tolerationMs < 0) return { kind: 'forever' };
  if (options.countFromTimeAdded) {
    const fireAtMs = fireAtFromTimeAdded(noExecuteTaints, used, nowMs) ?? nowMs + tolerationMs;
    return { kind: 'timed', tolerationMs, fireAtMs };
  }
  return { kind: 'timed', tolerationMs, fireAtMs: nowMs + tolerationMs };
}
