// `check-config`'s report of the feature gates in force: every gate that changes a decision, its
// value and where it came from (the file, AllAlpha/AllBeta, or the kubelet's default at its stage),
// then the other gates the file sets, which the kubelet accepts but no eviction decision consults.

import { DECISION_GATES, DECISION_GATE_DEFAULTS, KUBELET_VERSION_FOLLOWED } from '../api/feature-gates.js';
import type { EvictionConfig } from '../api/eviction-config.js';
import { KUBELET_FEATURE_GATES } from './kubelet-feature-gates.js';

function origin(name: string, set: Readonly<Record<string, boolean>>): string {
  const stage = (KUBELET_FEATURE_GATES[name]?.preRelease ?? '').toLowerCase();
  if (Object.hasOwn(set, name)) return 'set in the file';
  if (stage === 'alpha' && Object.hasOwn(set, 'AllAlpha')) return 'AllAlpha';
  if (stage === 'beta' && Object.hasOwn(set, 'AllBeta')) return 'AllBeta';
  return `default (${stage})`;
}

/** The feature gate section of `check-config`'s report. */
export function formatFeatureGates(eviction: EvictionConfig): string {
  const gates = eviction.featureGates ?? DECISION_GATE_DEFAULTS;
  const set = eviction.featureGatesSet ?? {};
  const width = Math.max(...DECISION_GATES.map((name) => name.length));
  const rows = DECISION_GATES.map((name) => `  ${name.padEnd(width)}  ${String(gates[name]).padEnd(5)}  ${origin(name, set)}`);
  const others = Object.keys(set)
    .filter((name) => !(DECISION_GATES as readonly string[]).includes(name))
    .sort()
    .map((name) => `${name}=${String(set[name])}`);
  const otherLine = others.length === 0 ? '' : `\n  also set (the kubelet's, consulted by no eviction decision): ${others.join(', ')}`;
  return `feature gates that change a decision (kubelet ${KUBELET_VERSION_FOLLOWED}):\n${rows.join('\n')}${otherLine}\n`;
}
