// Node pressure conditions from met thresholds, and the pressure transition period that keeps a
// condition set for a while after its last observation (so a node does not flap in and out of
// pressure, and admission keeps refusing pods until the pressure has stayed away).

import { NODE_CONDITIONS, signalToNodeCondition, type NodeConditionType } from '../api/signals.js';
import type { Threshold } from '../api/threshold.js';

/** When each node condition was last observed (kubelet `nodeConditionsObservedAt`). */
export type NodeConditionsObservedAt = ReadonlyMap<NodeConditionType, number>;

/**
 * The conditions the met thresholds raise (kubelet `nodeConditions`), de-duplicated, in
 * NODE_CONDITIONS order. Grace periods play no part: a soft threshold raises its condition at once.
 */
export function nodeConditions(thresholds: readonly Threshold[]): NodeConditionType[] {
  const raised = new Set(thresholds.map((t) => signalToNodeCondition[t.signal]));
  return NODE_CONDITIONS.filter((condition) => raised.has(condition));
}

/**
 * The last time each condition was observed (kubelet `nodeConditionsLastObservedAt`): conditions
 * seen now get `nowMs`, the others keep their time. Entries are never deleted.
 */
export function nodeConditionsLastObservedAt(
  conditions: readonly NodeConditionType[],
  lastObservedAt: NodeConditionsObservedAt,
  nowMs: number,
): NodeConditionsObservedAt {
  const results = new Map(lastObservedAt);
  for (const condition of conditions) results.set(condition, nowMs);
  return results;
}

/**
 * The conditions observed within the transition period (kubelet `nodeConditionsObservedSince`):
 * `now - lastObserved < period`, strictly, so a condition clears exactly when the period has
 * passed. NODE_CONDITIONS order.
 */
export function nodeConditionsObservedSince(observedAt: NodeConditionsObservedAt, periodMs: number, nowMs: number): NodeConditionType[] {
  return NODE_CONDITIONS.filter((condition) => {
    const lastObservedMs = observedAt.get(condition);
    return lastObservedMs !== undefined && nowMs - lastObservedMs < periodMs;
  });
}

/** Whether the condition is in the list (kubelet `hasNodeCondition`). */
export function hasNodeCondition(conditions: readonly NodeConditionType[], condition: NodeConditionType): boolean {
  return conditions.includes(condition);
}
