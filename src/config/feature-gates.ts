// The `featureGates` map of a KubeletConfiguration (or of the agent's own configuration), validated
// as the pinned kubelet validates it (component-base featuregate `SetFromMap`: an unknown gate, a
// locked gate set away from its default, and an enabled gate whose dependency is off are errors;
// setting a GA or deprecated gate is a warning; `AllAlpha`/`AllBeta` set every alpha/beta gate not
// named explicitly), and compiled into the decision gates the engine and observers consult.

import type { Node } from 'yaml';
import { DECISION_GATES, KUBELET_VERSION_FOLLOWED, type DecisionFeatureGates, type DecisionGate } from '../api/feature-gates.js';
import type { ConfigReader } from './config-reader.js';
import { KUBELET_FEATURE_GATES, type KubeletGateSpec } from './kubelet-feature-gates.js';

export interface FeatureGateSettings {
  /** Every decision gate, as the kubelet would have it with this map. */
  readonly gates: DecisionFeatureGates;
  /** The gates the file set, by name, as written (AllAlpha/AllBeta included). */
  readonly explicit: Readonly<Record<string, boolean>>;
}

const ALL_ALPHA = 'AllAlpha';
const ALL_BETA = 'AllBeta';

function knownGate(name: string): KubeletGateSpec | undefined {
  return Object.hasOwn(KUBELET_FEATURE_GATES, name) ? KUBELET_FEATURE_GATES[name] : undefined;
}

/** The kubelet's `featureEnabled`: set explicitly (directly or by AllAlpha/AllBeta), else the default. */
export function gateEnabled(name: string, explicit: Readonly<Record<string, boolean>>): boolean {
  if (Object.hasOwn(explicit, name)) return explicit[name] as boolean;
  const spec = knownGate(name);
  if (spec === undefined) throw new Error(`feature ${JSON.stringify(name)} is not registered in the kubelet's feature gates`);
  // setUnsetAlphaGates / setUnsetBetaGates: the toggles reach every gate at that stage not set by name.
  if (name === ALL_ALPHA || name === ALL_BETA) return spec.default;
  if (spec.preRelease === 'ALPHA' && Object.hasOwn(explicit, ALL_ALPHA)) return explicit[ALL_ALPHA] as boolean;
  if (spec.preRelease === 'BETA' && Object.hasOwn(explicit, ALL_BETA)) return explicit[ALL_BETA] as boolean;
  return spec.default;
}

function decisionGates(explicit: Readonly<Record<string, boolean>>): DecisionFeatureGates {
  return Object.fromEntries(DECISION_GATES.map((name) => [name, gateEnabled(name, explicit)])) as Record<DecisionGate, boolean>;
}

/** Reads `featureGates` (absent: the defaults); problems and warnings go to `reader`. */
export function readFeatureGates(reader: ConfigReader, node: Node | null): FeatureGateSettings {
  const entries = reader.entries(node, 'featureGates', (key) => `featureGates[${JSON.stringify(key)}]`);
  const explicit: Record<string, boolean> = Object.create(null) as Record<string, boolean>;
  let valid = true;
  for (const entry of entries ?? []) {
    const value = reader.boolean(entry.valueNode, entry.field);
    if (value === undefined) {
      if (reader.isAbsent(entry.valueNode)) reader.problem(entry.field, entry.valueNode ?? entry.keyNode, 'must be true or false, not null', null);
      valid = false;
      continue;
    }
    const spec = knownGate(entry.key);
    if (spec === undefined) {
      reader.problem(entry.field, entry.keyNode, `unrecognized feature gate: ${entry.key}`, entry.key);
      valid = false;
      continue;
    }
    if (spec.preRelease === 'PRE-ALPHA') {
      reader.problem(entry.field, entry.keyNode, `cannot set feature gate ${entry.key} to ${String(value)}, feature is PreAlpha at emulated version ${KUBELET_VERSION_FOLLOWED.replace(/^v(\d+\.\d+).*$/, '$1')}`, value);
      valid = false;
      continue;
    }
    if (spec.locked && value !== spec.default) {
      reader.problem(entry.field, entry.valueNode, `cannot set feature gate ${entry.key} to ${String(value)}, feature is locked to ${String(spec.default)}`, value);
      valid = false;
      continue;
    }
    if (spec.preRelease === 'DEPRECATED') reader.warning(entry.field, entry.keyNode, 'setting deprecated feature gate. It will be removed in a future release.', entry.key);
    else if (spec.preRelease === 'GA') reader.warning(entry.field, entry.keyNode, 'setting GA feature gate. It will be removed in a future release.', entry.key);
    explicit[entry.key] = value;
  }
  // As SetFromMap: dependencies are checked only once every gate was set without error.
  if (valid) {
    for (const name of Object.keys(KUBELET_FEATURE_GATES).sort()) {
      const dependsOn = KUBELET_FEATURE_GATES[name]?.dependsOn ?? [];
      if (dependsOn.length === 0 || !gateEnabled(name, explicit)) continue;
      const disabled = dependsOn.filter((dependency) => !gateEnabled(dependency, explicit));
      if (disabled.length > 0) {
        reader.problem('featureGates', node, `${name} is enabled, but depends on features that are disabled: [${disabled.join(' ')}]`, Object.fromEntries(disabled.map((d) => [d, false])));
      }
    }
  }
  return { gates: decisionGates(explicit), explicit: { ...explicit } };
}
