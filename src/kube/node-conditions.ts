// Which node conditions the agent may write, and what each written condition looks like. The
// kubelet owns Ready and the three pressure conditions: the agent reports under its own types
// (`kube-eviction-agent.io/MemoryPressure`) so the two never overwrite each other. The kubelet's
// rule for time stamps applies: the heartbeat moves on every report, the transition time only when
// the status flips.

import type { AgentNodeCondition } from '../daemon/ports.js';

/** Condition types the kubelet (or the node controller) writes; the agent never touches them. */
export const KUBELET_CONDITION_TYPES: ReadonlySet<string> = new Set(['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure', 'NetworkUnavailable']);

/** A node condition as the API serialises it. */
export interface NodeConditionWire {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string | undefined;
}

/**
 * The conditions to patch in: one per desired condition, with `lastHeartbeatTime = now` and
 * `lastTransitionTime` kept from the current condition unless its status differs (or it is new).
 */
export function conditionsToWrite(current: readonly NodeConditionWire[], desired: readonly AgentNodeCondition[], nowRfc3339: string): NodeConditionWire[] {
  return desired.map((condition) => {
    const existing = current.find((c) => c.type === condition.type);
    const unchanged = existing !== undefined && existing.status === condition.status && existing.lastTransitionTime !== undefined;
    return {
      type: condition.type,
      status: condition.status,
      reason: condition.reason,
      message: condition.message,
      lastHeartbeatTime: nowRfc3339,
      lastTransitionTime: unchanged ? existing.lastTransitionTime : nowRfc3339,
    };
  });
}
