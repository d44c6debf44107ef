// Which parts of the configuration a reload cannot change in a running agent: what the node side
// (observer, kernel notifier, OOM kill watcher, terminator, host identity), the operations endpoint and the logger
// were built from at start. A reload applies everything else and names these fields as requiring
// a restart, so "reloaded" never claims a change that is not in force.

import type { AgentSettings } from '../api/agent-settings.js';
import type { LoadedConfig } from '../config/types.js';

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
  return out;
}

/** `next` with the restart-only sections as they are in force: what the agent runs with after the reload. */
export function inForce(running: LoadedConfig, next: LoadedConfig): LoadedConfig {
  const kept: Partial<Record<(typeof RESTART_ONLY_SECTIONS)[number], unknown>> = {};
  for (const section of RESTART_ONLY_SECTIONS) kept[section] = running.agent[section];
  return { ...next, agent: { ...next.agent, ...kept } as AgentSettings };
}
