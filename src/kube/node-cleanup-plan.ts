// What `cleanup` takes off one Node: exactly the agent's own condition types (its prefix followed by
// MemoryPressure, DiskPressure or PIDPressure) and its own NoSchedule pressure taint, nothing else.
// Everyone else's conditions and taints are kept as they were read, in their order, so the
// write that follows (guarded by the resourceVersion) changes nothing but what the agent put there.

import type { Node, Taint } from '../api/pod.js';
import { NODE_CONDITIONS } from '../api/signals.js';
import { KUBELET_CONDITION_TYPES, type NodeConditionWire } from './node-conditions.js';

/** What the agent puts on a Node, from its compiled settings. */
export interface AgentNodeMarks {
  /** `reporting.conditionTypePrefix`, such as `kube-eviction-agent.io/`. */
  readonly conditionTypePrefix: string;
  /** `reporting.taint.key` (always a NoSchedule taint). */
  readonly taintKey: string;
}

export interface NodeCleanupPlan {
  /** The agent's condition types the Node carries (any status), in the Node's order. */
  readonly removeConditions: readonly string[];
  /** The conditions to write back: every other one, as read. */
  readonly keepConditions: readonly NodeConditionWire[];
  /** The agent's taints the Node carries (`key:NoSchedule`). */
  readonly removeTaints: readonly string[];
  /** The taints to write back: every other one, as read. */
  readonly keepTaints: readonly Taint[];
}

/** The condition types the agent writes under `prefix`; never one the kubelet owns. */
export function agentConditionTypes(prefix: string): string[] {
  return NODE_CONDITIONS.map((condition) => `${prefix}${condition}`).filter((type) => !KUBELET_CONDITION_TYPES.has(type));
}

export function nodeCleanupPlan(node: Node, marks: AgentNodeMarks): NodeCleanupPlan {
  const types = new Set(agentConditionTypes(marks.conditionTypePrefix));
  const conditions = (node.status?.conditions ?? []) as NodeConditionWire[];
  const taints = node.spec?.taints ?? [];
  const isAgentTaint = (t: Taint): boolean => t.key === marks.taintKey && t.effect === 'NoSchedule';
  return {
    removeConditions: conditions.filter((c) => types.has(c.type)).map((c) => c.type),
    keepConditions: conditions.filter((c) => !types.has(c.type)),
    removeTaints: taints.filter(isAgentTaint).map((t) => `${t.key}:${t.effect}`),
    keepTaints: taints.filter((t) => !isAgentTaint(t)),
  };
}

/** True when the Node carries nothing of the agent's. */
export function nothingToClean(plan: NodeCleanupPlan): boolean {
  return plan.removeConditions.length === 0 && plan.removeTaints.length === 0;
}
