// The `dryRunThresholds` section of an AgentConfiguration: which of the configured thresholds
// are evaluated, ranked and reported but never acted on. It names entries of the kubelet's own
// maps (`evictionHard`, `evictionSoft`) by signal instead of changing those maps, so a
// KubeletConfiguration's thresholds keep their kubelet meaning and a threshold moves between
// dry-run and live by editing one list, never its value. An entry that names no threshold in
// force is an error: a dry run that silently watches nothing is the mistake this guards against.

import type { Node } from 'yaml';
import { isSignal } from '../api/signals.js';
import type { Threshold } from '../api/threshold.js';
import type { ConfigReader, MapEntry } from './config-reader.js';
import { signalField } from './threshold-parse.js';
import type { ThresholdSource } from './types.js';

export const DRY_RUN_THRESHOLDS_FIELD = 'dryRunThresholds';

/** The maps a dry-run entry may name; the allocatable copy of a hard memory.available threshold follows its source. */
type DryRunMap = 'evictionHard' | 'evictionSoft';

export interface SplitThresholds {
  readonly thresholds: Threshold[];
  readonly thresholdSources: ThresholdSource[];
  readonly dryRunThresholds: Threshold[];
  readonly dryRunThresholdSources: ThresholdSource[];
}

/**
 * Splits the compiled thresholds into live and dry-run ones by the section's entries. Problems go
 * to `reader`; with none (or no section), every threshold stays live.
 */
export function splitDryRunThresholds(
  reader: ConfigReader,
  entry: MapEntry | undefined,
  thresholds: readonly Threshold[],
  sources: readonly ThresholdSource[],
): SplitThresholds {
  const dryRunFields = new Set<string>();
  if (entry !== undefined) {
    reader.section(entry.valueNode, entry.field, {
      evictionHard: (e) => readMapList(reader, e, 'evictionHard', sources, dryRunFields),
      evictionSoft: (e) => readMapList(reader, e, 'evictionSoft', sources, dryRunFields),
    });
  }
  const split: SplitThresholds = { thresholds: [], thresholdSources: [], dryRunThresholds: [], dryRunThresholdSources: [] };
  thresholds.forEach((threshold, i) => {
    const source = sources[i];
    if (source === undefined) return;
    // A copy's field is the entry it copies, so the allocatable copy goes with its source.
    const dryRun = dryRunFields.has(source.field);
    (dryRun ? split.dryRunThresholds : split.thresholds).push(threshold);
    (dryRun ? split.dryRunThresholdSources : split.thresholdSources).push(source);
  });
  return split;
}

function readMapList(reader: ConfigReader, entry: MapEntry, mapName: DryRunMap, sources: readonly ThresholdSource[], out: Set<string>): void {
  const items = reader.stringList(entry.valueNode, entry.field);
  if (items === undefined) return;
  const seen = new Set<string>();
  for (const item of items) {
    const node: Node | null = item.node;
    if (!isSignal(item.value)) {
      reader.problem(item.field, node, `unsupported eviction signal ${item.value}`);
      continue;
    }
    if (seen.has(item.value)) {
      reader.problem(item.field, node, `${item.value} is listed twice`);
      continue;
    }
    seen.add(item.value);
    const field = signalField(mapName, item.value);
    if (!sources.some((s) => s.field === field && s.origin !== 'allocatable-copy')) {
      reader.problem(
        item.field,
        node,
        `names no configured threshold: no ${field} is in force (it is not in ${mapName}${mapName === 'evictionHard' ? ' nor among its defaults' : ''}, or is turned off with "0%" or "100%")`,
      );
      continue;
    }
    out.add(field);
  }
}
