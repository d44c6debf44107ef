// Loads a configuration file: reads it, parses the YAML, works out which of the accepted documents
// it is (an AgentConfiguration, a kubelet's own KubeletConfiguration, or a bare document treated as
// an AgentConfiguration), and compiles it into LoadedConfig. Every problem in the file is
// reported at once in one ConfigError; nothing is half-applied.

import { readFile } from 'node:fs/promises';
import { Document, isMap, LineCounter, parseAllDocuments, visit, type Node } from 'yaml';
import { ConfigError, errorMessage, type ConfigProblem } from '../errors.js';
import { AGENT_FIELDS, isAgentField, readAgentSettings } from './agent-settings.js';
import { ConfigReader, type MapEntry } from './config-reader.js';
import { didYouMean } from './did-you-mean.js';
import { DRY_RUN_THRESHOLDS_FIELD, splitDryRunThresholds } from './dry-run-thresholds.js';
import { EVICTION_FIELDS, isEvictionField, readEvictionSettings } from './eviction-settings.js';
import type { ConfigKind, LoadedConfig } from './types.js';

export const AGENT_API_VERSION = 'kube-eviction-agent.io/v1alpha1';
export const KUBELET_API_VERSION = 'kubelet.config.k8s.io/v1beta1';

const apiVersionOfKind: Readonly<Record<ConfigKind, string>> = {
  AgentConfiguration: AGENT_API_VERSION,
  KubeletConfiguration: KUBELET_API_VERSION,
};

/** Reads and loads a configuration file; throws ConfigError (EVA_ERR_CONFIG_READ when unreadable). */
export async function loadConfigFile(path: string): Promise<LoadedConfig> {
  return (await readConfigFile(path)).config;
}

/** Reads and loads a configuration file, keeping its text (hot reload compares against it). */
export async function readConfigFile(path: string): Promise<{ config: LoadedConfig; text: string }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError([{ field: '', value: path, message: `Cannot read ${path}: ${errorMessage(err)}` }], 'EVA_ERR_CONFIG_READ', { cause: err });
  }
  return { config: parseConfigText(text, path), text };
}

/**
 * Loads configuration text. `sourceName` (a path, or `<stdin>`) is used in YAML syntax errors.
 * An empty document gives the defaults. Throws ConfigError with every problem found:
 * EVA_ERR_CONFIG_YAML for a YAML error (with its line), EVA_ERR_CONFIG_INVALID otherwise.
 */
export function parseConfigText(text: string, sourceName: string): LoadedConfig {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: true });

  const syntaxProblems: ConfigProblem[] = [];
  for (const doc of docs) {
    for (const err of doc.errors) {
      const { line, col } = lineCounter.linePos(err.pos[0]);
      syntaxProblems.push({ field: '', value: undefined, message: `${sourceName}:${line}:${col}: ${err.message}`, line });
    }
  }
  if (syntaxProblems.length > 0) throw new ConfigError(syntaxProblems, 'EVA_ERR_CONFIG_YAML');
  if (docs.length > 1) {
    const offset = docs[1]?.range[0] ?? 0;
    const { line, col } = lineCounter.linePos(offset);
    throw new ConfigError(
      [{ field: '', value: undefined, message: `${sourceName}:${line}:${col}: a configuration file holds one YAML document, this one holds ${docs.length}`, line }],
      'EVA_ERR_CONFIG_YAML',
    );
  }

  const doc = docs[0] as Document | undefined;
  const reader = new ConfigReader(doc ?? new Document(), lineCounter);
  if (doc !== undefined) {
    for (const warning of doc.warnings) {
      const { line, col } = lineCounter.linePos(warning.pos[0]);
      reader.warnings.push({ field: '', value: undefined, message: `${sourceName}:${line}:${col}: ${warning.message}`, line });
    }
    visit(doc, {
      Alias: (_key, alias) => {
        if (alias.resolve(doc) === undefined) reader.problem('', alias as Node, `${sourceName}: unknown alias *${alias.source}`, `*${alias.source}`);
      },
    });
  }

  const root = doc?.contents ?? null;
  const resolvedRoot = reader.resolve(root);
  if (resolvedRoot !== null && !isMap(resolvedRoot)) {
    reader.problem('', root, `${sourceName}: the document must be a map of configuration fields, not ${Array.isArray(reader.rawValue(root)) ? 'a list' : 'a single value'}`);
    throw new ConfigError(reader.problems);
  }
  const entries = reader.entries(root, '') ?? [];

  const kind = documentKind(reader, entries);
  if (kind === null) throw new ConfigError(reader.problems);

  const evictionEntries: MapEntry[] = [];
  const agentEntries: MapEntry[] = [];
  let dryRunEntry: MapEntry | undefined;
  for (const entry of entries) {
    if (entry.key === 'apiVersion' || entry.key === 'kind') continue;
    if (isEvictionField(entry.key)) evictionEntries.push(entry);
    else if (kind === 'AgentConfiguration' && isAgentField(entry.key)) agentEntries.push(entry);
    else if (kind === 'AgentConfiguration' && entry.key === DRY_RUN_THRESHOLDS_FIELD) dryRunEntry = entry;
    else if (kind === 'AgentConfiguration') reader.unknownField(entry, ['apiVersion', 'kind', ...EVICTION_FIELDS, ...AGENT_FIELDS, DRY_RUN_THRESHOLDS_FIELD]);
    else ignoredKubeletField(reader, entry);
  }

  const agent = readAgentSettings(reader, agentEntries);
  const settings = readEvictionSettings(reader, evictionEntries, agent.housekeepingIntervalMs);
  const split = splitDryRunThresholds(reader, dryRunEntry, settings.eviction.thresholds, settings.thresholdSources);
  if (reader.problems.length > 0) throw new ConfigError(inFileOrder(reader.problems));
  // Without dry-run thresholds the compiled configuration is what it was before the section existed.
  const eviction = { ...settings.eviction, thresholds: split.thresholds, ...(split.dryRunThresholds.length === 0 ? {} : { dryRunThresholds: split.dryRunThresholds }) };
  return {
    kind,
    eviction,
    thresholdSources: split.thresholdSources,
    dryRunThresholdSources: split.dryRunThresholdSources,
    agent,
    warnings: inFileOrder(reader.warnings),
    nearWholeThresholds: settings.nearWholeThresholds,
  };
}

// Problems are found field by field; they read best top to bottom. Those without a line keep
// their relative order, after the others.
function inFileOrder(problems: readonly ConfigProblem[]): ConfigProblem[] {
  return [...problems].sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
}

// apiVersion and kind go together; a document with neither is an AgentConfiguration.
function documentKind(reader: ConfigReader, entries: readonly MapEntry[]): ConfigKind | null {
  const apiVersionEntry = entries.find((e) => e.key === 'apiVersion');
  const kindEntry = entries.find((e) => e.key === 'kind');
  const apiVersion = reader.string(apiVersionEntry?.valueNode ?? null, 'apiVersion');
  const kind = reader.string(kindEntry?.valueNode ?? null, 'kind');
  if (reader.problems.length > 0) return null;
  if (apiVersion === undefined && kind === undefined) return 'AgentConfiguration';

  const expected = `expected kind AgentConfiguration with apiVersion ${AGENT_API_VERSION}, or kind KubeletConfiguration with apiVersion ${KUBELET_API_VERSION}`;
  if (kind === undefined) {
    reader.problem('kind', apiVersionEntry?.keyNode ?? null, `is required with apiVersion; ${expected}`, undefined);
    return null;
  }
  if (kind !== 'AgentConfiguration' && kind !== 'KubeletConfiguration') {
    reader.problem('kind', kindEntry?.valueNode ?? null, `unsupported kind ${JSON.stringify(kind)}; ${expected}`);
    return null;
  }
  if (apiVersion === undefined) {
    reader.problem('apiVersion', kindEntry?.keyNode ?? null, `is required with kind ${kind}: ${apiVersionOfKind[kind]}`, undefined);
    return null;
  }
  if (apiVersion !== apiVersionOfKind[kind]) {
    reader.problem('apiVersion', apiVersionEntry?.valueNode ?? null, `unsupported apiVersion ${JSON.stringify(apiVersion)} for kind ${kind}: expected ${apiVersionOfKind[kind]}`);
    return null;
  }
  return kind;
}

// A kubelet file carries everything the kubelet needs; the agent takes the eviction fields and
// says what it left out, pointing out a probable typo of an eviction field.
function ignoredKubeletField(reader: ConfigReader, entry: MapEntry): void {
  const suggestion = didYouMean(entry.key, EVICTION_FIELDS);
  const message =
    suggestion === null
      ? 'ignored: only the eviction settings of a KubeletConfiguration are read'
      : `ignored: not a kubelet eviction setting; did you mean ${suggestion}?`;
  reader.warning(entry.field, entry.keyNode, message, reader.rawValue(entry.valueNode));
}
