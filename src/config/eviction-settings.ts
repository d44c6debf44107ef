// The kubelet's eviction fields of a configuration document, read with the kubelet's types,
// defaulted the way the kubelet defaults them (cmd/kubelet loadConfigFile and
// SetDefaults_KubeletConfiguration), validated as ValidateKubeletConfiguration validates
// enforceNodeAllocatable, and compiled by parseThresholdConfig into the engine's EvictionConfig.
// The same fields, spelt the same way, are read from an AgentConfiguration and a KubeletConfiguration.

import type { Node } from 'yaml';
import type { EvictionConfig } from '../api/eviction-config.js';
import type { ConfigProblem } from '../errors.js';
import type { ConfigReader, MapEntry } from './config-reader.js';
import {
  DEFAULT_ENFORCE_NODE_ALLOCATABLE,
  DEFAULT_KERNEL_MEMCG_NOTIFICATION,
  DEFAULT_LOCAL_STORAGE_CAPACITY_ISOLATION,
  DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS,
  DEFAULT_MERGE_DEFAULT_EVICTION_SETTINGS,
  effectiveEvictionHard,
  effectivePressureTransitionPeriodMs,
} from './defaults.js';
import { readFeatureGates } from './feature-gates.js';
import { parseThresholdConfig, signalField } from './threshold-parse.js';
import { thresholdWarnings } from './threshold-warnings.js';
import type { NearWholeThreshold, ThresholdSource } from './types.js';

/** The KubeletConfiguration fields this agent reads; every other kubelet field is ignored. */
export const EVICTION_FIELDS = [
  'evictionHard',
  'evictionSoft',
  'evictionSoftGracePeriod',
  'evictionPressureTransitionPeriod',
  'evictionMaxPodGracePeriod',
  'evictionMinimumReclaim',
  'mergeDefaultEvictionSettings',
  'kernelMemcgNotification',
  'enforceNodeAllocatable',
  'localStorageCapacityIsolation',
] as const;

/**
 * The kubelet's `featureGates`, read from both documents beside the eviction fields: the gates
 * that change a decision (src/config/feature-gates.ts). Not an eviction setting of its own, so the
 * tables of eviction defaults (the chart's among them) do not list it.
 */
export const FEATURE_GATES_FIELD = 'featureGates';

export type EvictionField = (typeof EVICTION_FIELDS)[number] | typeof FEATURE_GATES_FIELD;

export function isEvictionField(key: string): key is EvictionField {
  return key === FEATURE_GATES_FIELD || (EVICTION_FIELDS as readonly string[]).includes(key);
}

// The kubelet's enforceNodeAllocatable keys (pkg/kubelet/types/constants.go).
const ENFORCE_NODE_ALLOCATABLE_OPTIONS = ['pods', 'system-reserved', 'system-reserved-compressible', 'kube-reserved', 'kube-reserved-compressible', 'none'];

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;

export interface EvictionSettings {
  readonly eviction: EvictionConfig;
  readonly thresholdSources: ThresholdSource[];
  /** Percentage thresholds within 0.1 % of the whole capacity: met on (nearly) every pass. */
  readonly nearWholeThresholds: NearWholeThreshold[];
}

/**
 * Reads the eviction fields among `entries` (other keys are the caller's). Problems and warnings
 * go to `reader`; the result is meaningful only when the reader has no problems.
 */
export function readEvictionSettings(reader: ConfigReader, entries: readonly MapEntry[], housekeepingIntervalMs: number): EvictionSettings {
  const node = (field: EvictionField): Node | null => entries.find((e) => e.key === field)?.valueNode ?? null;
  const example = '"100Mi" or "10%"';

  const evictionHardFromFile = reader.stringMap(node('evictionHard'), 'evictionHard', example);
  const evictionSoft = reader.stringMap(node('evictionSoft'), 'evictionSoft', example) ?? {};
  const evictionSoftGracePeriod = reader.stringMap(node('evictionSoftGracePeriod'), 'evictionSoftGracePeriod', '"1m30s"') ?? {};
  const evictionMinimumReclaim = reader.stringMap(node('evictionMinimumReclaim'), 'evictionMinimumReclaim', '"500Mi" or "5%"') ?? {};
  const merge = reader.boolean(node('mergeDefaultEvictionSettings'), 'mergeDefaultEvictionSettings') ?? DEFAULT_MERGE_DEFAULT_EVICTION_SETTINGS;
  const kernelMemcgNotification = reader.boolean(node('kernelMemcgNotification'), 'kernelMemcgNotification') ?? DEFAULT_KERNEL_MEMCG_NOTIFICATION;
  const localStorageCapacityIsolation = reader.boolean(node('localStorageCapacityIsolation'), 'localStorageCapacityIsolation') ?? DEFAULT_LOCAL_STORAGE_CAPACITY_ISOLATION;
  const maxPodGracePeriodSeconds = reader.integer(node('evictionMaxPodGracePeriod'), 'evictionMaxPodGracePeriod', INT32_MIN, INT32_MAX) ?? DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS;

  const transition = reader.duration(node('evictionPressureTransitionPeriod'), 'evictionPressureTransitionPeriod');
  if (transition !== undefined && transition.ms < 0) {
    reader.warning('evictionPressureTransitionPeriod', node('evictionPressureTransitionPeriod'), 'negative: the kubelet accepts it, and pressure conditions then clear as soon as the pressure does');
  }

  const enforceNodeAllocatable = readEnforceNodeAllocatable(reader, node('enforceNodeAllocatable'));
  const featureGates = readFeatureGates(reader, node(FEATURE_GATES_FIELD));

  const hard = effectiveEvictionHard(evictionHardFromFile, merge);
  if (hard.droppedDefaultSignals.length > 0) {
    reader.warning(
      'evictionHard',
      node('evictionHard'),
      `replaces the default map, so ${hard.droppedDefaultSignals.join(', ')} ${hard.droppedDefaultSignals.length === 1 ? 'has' : 'have'} no hard threshold; ` +
        'list them, or set mergeDefaultEvictionSettings: true to keep the defaults',
      evictionHardFromFile,
    );
  }

  const parsed = parseThresholdConfig({
    enforceNodeAllocatable,
    evictionHard: hard.evictionHard,
    evictionSoft,
    evictionSoftGracePeriod,
    evictionMinimumReclaim,
    defaultedHardSignals: hard.defaultedSignals,
    mergedHardSignals: hard.mergedSignals,
  });
  // parseThresholdConfig knows field paths, not lines: find each entry's line in the document.
  const lines = entryLines(reader, ['evictionHard', 'evictionSoft', 'evictionSoftGracePeriod', 'evictionMinimumReclaim'], node);
  const located = (p: ConfigProblem): ConfigProblem => {
    const line = lines.get(p.field);
    return line === undefined ? p : { ...p, line };
  };
  reader.problems.push(...parsed.problems.map(located));
  reader.warnings.push(...parsed.warnings.map(located));
  const suspect = thresholdWarnings(parsed.thresholds, parsed.sources, (field) => lines.get(field));
  reader.warnings.push(...suspect.warnings);

  return {
    eviction: {
      thresholds: parsed.thresholds,
      pressureTransitionPeriodMs: effectivePressureTransitionPeriodMs(transition?.ms),
      maxPodGracePeriodSeconds,
      localStorageCapacityIsolation,
      kernelMemcgNotification,
      housekeepingIntervalMs,
      featureGates: featureGates.gates,
      ...(Object.keys(featureGates.explicit).length === 0 ? {} : { featureGatesSet: featureGates.explicit }),
    },
    thresholdSources: parsed.sources,
    nearWholeThresholds: suspect.nearWhole,
  };
}

// The kubelet's ValidateKubeletConfiguration rules for this field (the reserved-cgroup checks
// concern fields this agent does not read, and are left to the kubelet).
function readEnforceNodeAllocatable(reader: ConfigReader, node: Node | null): readonly string[] {
  const items = reader.stringList(node, 'enforceNodeAllocatable');
  if (items === undefined) return DEFAULT_ENFORCE_NODE_ALLOCATABLE;
  for (const item of items) {
    if (!ENFORCE_NODE_ALLOCATABLE_OPTIONS.includes(item.value)) {
      reader.problem(
        item.field,
        item.node,
        `invalid configuration: option ${JSON.stringify(item.value)} specified for enforceNodeAllocatable (--enforce-node-allocatable). ` +
          `Valid options are ${ENFORCE_NODE_ALLOCATABLE_OPTIONS.map((o) => JSON.stringify(o)).join(', ')}`,
      );
    }
  }
  const values = items.map((item) => item.value);
  if (values.includes('none') && values.length > 1) {
    reader.problem('enforceNodeAllocatable', node, 'invalid configuration: enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements when "none" is specified');
  }
  return values;
}

function entryLines(reader: ConfigReader, maps: readonly EvictionField[], node: (field: EvictionField) => Node | null): Map<string, number> {
  const lines = new Map<string, number>();
  for (const mapName of maps) {
    // Quietly: the map's own type problems were reported when it was read.
    for (const entry of reader.entriesQuietly(node(mapName), (key) => signalField(mapName, key)) ?? []) {
      const line = reader.lineOf(entry.valueNode ?? entry.keyNode);
      if (line !== undefined) lines.set(entry.field, line);
    }
  }
  return lines;
}
