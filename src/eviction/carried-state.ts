// The part of the engine's state one agent hands to the next on the same node (a standby taking
// over the node lock): when each threshold was first met and when each pressure condition was
// last seen. Carried over, a takeover neither restarts a soft threshold's grace period nor ends a
// pressure condition's transition period early. Thresholds travel under a key of their own (the
// fields `thresholdEquals` compares), so a state written by an agent with other thresholds applies
// only to the thresholds both have.

import { NODE_CONDITIONS, type NodeConditionType } from '../api/signals.js';
import type { Threshold } from '../api/threshold.js';

export interface CarriedEngineState {
  readonly thresholdsFirstObservedAt: readonly { readonly key: string; readonly observedAtMs: number }[];
  readonly nodeConditionsLastObservedAt: readonly { readonly condition: NodeConditionType; readonly observedAtMs: number }[];
}

/** The identity of a threshold as `thresholdEquals` sees it, as one string. */
export function thresholdKey(threshold: Threshold): string {
  const value = threshold.value.kind === 'quantity' ? `q${threshold.value.quantity.nanos.toString()}` : `p${threshold.value.ratio}`;
  return `${threshold.signal}/${threshold.gracePeriodMs}/${threshold.operatorSet ?? true}/${value}`;
}

const MAX_ENTRIES = 256;
const MAX_KEY_CHARS = 256;

function isInstant(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

/**
 * A carried state read back from a file another process wrote: every entry checked, anything
 * malformed dropped (a state that cannot be trusted is not carried at all). Null when unusable.
 */
export function parseCarriedEngineState(value: unknown): CarriedEngineState | null {
  if (typeof value !== 'object' || value === null) return null;
  const { thresholdsFirstObservedAt: thresholds, nodeConditionsLastObservedAt: conditions } = value as Record<string, unknown>;
  if (!Array.isArray(thresholds) || !Array.isArray(conditions) || thresholds.length > MAX_ENTRIES || conditions.length > MAX_ENTRIES) return null;
  const t: { key: string; observedAtMs: number }[] = [];
  for (const entry of thresholds as unknown[]) {
    const { key, observedAtMs } = (entry ?? {}) as Record<string, unknown>;
    if (typeof key !== 'string' || key.length > MAX_KEY_CHARS || !isInstant(observedAtMs)) return null;
    t.push({ key, observedAtMs });
  }
  const c: { condition: NodeConditionType; observedAtMs: number }[] = [];
  for (const entry of conditions as unknown[]) {
    const { condition, observedAtMs } = (entry ?? {}) as Record<string, unknown>;
    if (!(NODE_CONDITIONS as readonly unknown[]).includes(condition) || !isInstant(observedAtMs)) return null;
    c.push({ condition: condition as NodeConditionType, observedAtMs });
  }
  return { thresholdsFirstObservedAt: t, nodeConditionsLastObservedAt: c };
}
