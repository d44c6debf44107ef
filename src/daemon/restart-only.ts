// Which parts of the configuration a reload cannot change in a running agent: what the node side
// (observer, kernel notifier, OOM kill watcher, terminator, host identity), the operations endpoint and the logger
// were built from at start. A reload applies everything else and names these fields as requiring
// a restart, so "reloaded" never claims a change that is not in force.

import type { AgentSettings } from '../api/agent-settings.js';
import { DECISION_GATE_DEFAULTS, type DecisionGate } from '../api/feature-gates.js';
import type { LoadedConfig } from '../config/types.js';

/**
 * Gates read once at start, by the observer built then (the cgroupfs source subtracts hugepages as
 * the kubelet's summary provider does); the kubelet itself takes a gate change only at restart.
 */
const RESTART_ONLY_GATES = ['HugepageAwareEviction'] as const satisfies readonly DecisionGate[];

/** The sections of `agent` read once at start. */
const RESTART_ONLY_SECTIONS = ['nodeName', 'observe', 'notifier', 'oomKills', 'nodeLock', 'server', 'logLevel'] as const satisfies readonly (keyof AgentSettings)[];

// Every leaf path under `path` where `a` and `b` differ (values from the compiled settings: plain
// data, no cycles).
function differences(path: string, a: unknown, b: unknown, out: string[]): void {
  if (Object.is(a, b)) return;
  const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (isRecord(a) && isRecord(b)) {
    for (const key of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) differences(`${path}.${key}`, a[key], b[key], out);
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) out.push(path);
}

/** The fields (as `observe.source`, `server.port`) that differ between the running and the new configuration and need a restart. */
export function restartOnlyChanges(running: LoadedConfig, next: LoadedConfig): string[] {
  const out: string[] = [];
  for (const section of RESTART_ONLY_SECTIONS) differences(section, running.agent[section], next.agent[section], out);
  for (const gate of RESTART_ONLY_GATES) {
    if (gateOf(running, gate) !== gateOf(next, gate)) out.push(`featureGates.${gate}`);
  }
  return out;
}

function gateOf(config: LoadedConfig, gate: DecisionGate): boolean {
  return (config.eviction.featureGates ?? DECISION_GATE_DEFAULTS)[gate];
}

/** `next` with the restart-only sections as they are in force: what the agent runs with after the reload. */
export function inForce(running: LoadedConfig, next: LoadedConfig): LoadedConfig {
  const kept: Partial<Record<(typeof RESTART_ONLY_SECTIONS)[number], unknown>> = {};
  for (const section of RESTART_ONLY_SECTIONS) kept[section] = running.agent[section];
  const gates = { ...(next.eviction.featureGates ?? DECISION_GATE_DEFAULTS) };
  for (const gate of RESTART_ONLY_GATES) gates[gate] = gateOf(running, gate);
  return { ...next, agent: { ...next.agent, ...kept } as AgentSettings, eviction: { ...next.eviction, featureGates: gates } };
}
