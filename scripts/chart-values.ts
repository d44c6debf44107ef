// The Helm chart's `config` value and its JSON schema, generated from the agent's own defaults
// table (src/config/defaults.ts) and validator (src/config/): the generated region of
// deploy/chart/values.yaml lists every setting with its default (or the shipped deployment's
// choice), and deploy/chart/values.schema.json refuses, at `helm template` time, what the validator
// refuses wherever a JSON schema can say it (types, unknown keys, enumerations, integer bounds,
// absolute paths, Go durations). The enumerations and bounds are found by asking the validator
// itself. `npm run chart` rewrites both files; `--check` only compares.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { SIGNALS } from '../src/api/signals.js';
import { AGENT_FIELDS } from '../src/config/agent-settings.js';
import {
  DEFAULT_ENFORCE_NODE_ALLOCATABLE,
  DEFAULT_EVICTION_HARD,
  DEFAULT_KERNEL_MEMCG_NOTIFICATION,
  DEFAULT_LOCAL_STORAGE_CAPACITY_ISOLATION,
  DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS,
  DEFAULT_MERGE_DEFAULT_EVICTION_SETTINGS,
  DEFAULT_PRESSURE_TRANSITION_PERIOD_MS,
  defaultAgentSettings,
} from '../src/config/defaults.js';
import { EVICTION_FIELDS } from '../src/config/eviction-settings.js';
import { formatShortDuration } from '../src/config/go-duration.js';
import { describeDurationBounds, durationBounds } from '../src/config/setting-readers.js';
import { parseConfigText } from '../src/config/load.js';
import { ConfigError } from '../src/errors.js';

// scripts/ in the repository, dist/scripts/ once built.
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', ...(import.meta.url.includes('/dist/scripts/') ? ['..'] : []));
export const CHART_DIR = join(REPO_ROOT, 'deploy', 'chart');
export const VALUES_PATH = join(CHART_DIR, 'values.yaml');
export const SCHEMA_PATH = join(CHART_DIR, 'values.schema.json');
const BEGIN = '# BEGIN GENERATED config';
const END = '# END GENERATED config';

export type JsonSchema = { [key: string]: unknown };

/** One setting of the configuration file, as the chart's `config` value holds it. */
export interface ChartSetting {
  /** The keys as the file spells them: `['observe', 'hostRoot']`. */
  readonly path: readonly string[];
  /** The value written in values.yaml; undefined: left unset (a commented line). */
  readonly value: unknown;
  /** The agent's own default, when the shipped deployment chooses another value. */
  readonly agentDefault?: unknown;
  /** What leaving it unset means. */
  readonly unsetMeaning?: string;
  /** A duration's range, as values.yaml notes it (`between 1s and 10m`). */
  readonly range?: string;
  readonly schema: JsonSchema;
}

// What the shipped deployment (values.yaml, and so deploy/daemonset.yaml) sets differently from
// the agent's defaults, and why (the comment values.yaml carries).
const DEPLOYMENT_CHOICES: Readonly<Record<string, { value: unknown; why: string }>> = {
  evictionHard: {
    value: DEFAULT_EVICTION_HARD,
    why: "The kubelet's own Linux defaults, written out: an evictionHard map replaces the defaults rather than adding to them. The agent reaches the memory threshold within milliseconds of the kernel's notification, before the kubelet's 10 s poll does.",
  },
  evictionSoft: {
    value: { 'memory.available': '300Mi' },
    why: 'A little before the hard threshold, pods are evicted gracefully through the Eviction API (PodDisruptionBudgets honoured, at most evictionMaxPodGracePeriod of termination grace) once the pressure has lasted the grace period.',
  },
  evictionSoftGracePeriod: { value: { 'memory.available': '1m' }, why: '' },
  evictionMaxPodGracePeriod: { value: 30, why: '' },
  'observe.hostRoot': { value: '/host', why: "The DaemonSet mounts the host's directories under /host; every observe path is the host's own and is read through it." },
};

// Settings left unset by default, and what unset means.
const UNSET_MEANING: Readonly<Record<string, string>> = {
  nodeName: "the NODE_NAME environment variable, which the DaemonSet sets to the pod's node",
  'observe.containerFsPath': 'the same as observe.imageFsPath',
  'observe.kubeletCaFile': "the kubelet's self-signed serving certificate, <kubeletRootDir>/pki/kubelet.crt under hostRoot, where found; the system's CAs otherwise",
  'actions.localTerminationGracePeriod': "the engine's grace period for the eviction",
};

const GO_DURATION = '^(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$';
const SIGNED_GO_DURATION = '^[-+]?(0|(([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$';
// The signals as properties, not propertyNames: helm reports a propertyNames failure at a wrong path.
const signalMap = (valueSchema: JsonSchema): JsonSchema => ({ type: 'object', additionalProperties: false, properties: Object.fromEntries(SIGNALS.map((s) => [s, valueSchema])) });
// A quantity as the agent's first check reads one (its regular expression, the API machinery's) or
// a percentage: never narrower than what the agent accepts (it checks the rest, ranges included),
// so "lots" or "100Mx" fails at helm template already.
const QUANTITY_OR_PERCENT: JsonSchema = { type: 'string', pattern: '^([+-]?[0-9.]+[eEinumkKMGTP]*[-+]?[0-9]*|.*%)$' };

// The kubelet's eviction fields: their defaults and types (cmd/kubelet's, as src/config reads them).
const EVICTION_FIELD_TABLE: Readonly<Record<(typeof EVICTION_FIELDS)[number], { value: unknown; schema: JsonSchema }>> = {
  evictionHard: { value: DEFAULT_EVICTION_HARD, schema: signalMap(QUANTITY_OR_PERCENT) },
  evictionSoft: { value: {}, schema: signalMap(QUANTITY_OR_PERCENT) },
  evictionSoftGracePeriod: { value: {}, schema: signalMap({ type: 'string', pattern: GO_DURATION }) },
  evictionPressureTransitionPeriod: { value: formatShortDuration(DEFAULT_PRESSURE_TRANSITION_PERIOD_MS), schema: { type: 'string', pattern: SIGNED_GO_DURATION } },
  evictionMaxPodGracePeriod: { value: DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS, schema: { type: 'integer', minimum: -(2 ** 31), maximum: 2 ** 31 - 1 } },
  evictionMinimumReclaim: { value: {}, schema: signalMap(QUANTITY_OR_PERCENT) },
  mergeDefaultEvictionSettings: { value: DEFAULT_MERGE_DEFAULT_EVICTION_SETTINGS, schema: { type: 'boolean' } },
  kernelMemcgNotification: { value: DEFAULT_KERNEL_MEMCG_NOTIFICATION, schema: { type: 'boolean' } },
  enforceNodeAllocatable: { value: DEFAULT_ENFORCE_NODE_ALLOCATABLE, schema: { type: 'array', items: { type: 'string' } } },
  localStorageCapacityIsolation: { value: DEFAULT_LOCAL_STORAGE_CAPACITY_ISOLATION, schema: { type: 'boolean' } },
};


/** The problems the validator reports for one setting set to `value`, by message. */
export function validatorMessages(path: readonly string[], value: unknown): string[] {
  const doc: Record<string, unknown> = {};
  let at = doc;
  path.slice(0, -1).forEach((key) => (at = at[key] = {} as Record<string, unknown>));
  at[path[path.length - 1] as string] = value;
  try {
    parseConfigText(stringify(doc), 'probe');
    return [];
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return err.problems.filter((p) => p.field === path.join('.')).map((p) => p.message);
  }
}

// What the validator says of a wrong string tells what it takes: one of a list, one constant, an
// absolute path, anything not blank.
function stringSchema(path: readonly string[]): JsonSchema {
  const [wrong] = validatorMessages(path, 'kea-probe-value');
  const oneOf = /^must be one of (.*), not "kea-probe-value"/.exec(wrong ?? '');
  if (oneOf !== null) return { type: 'string', enum: [...(oneOf[1] as string).matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]) };
  const only = /^only "((?:[^"\\]|\\.)*)" is supported/.exec(wrong ?? '');
  if (only !== null) return { type: 'string', enum: [only[1]] };
  const schema: JsonSchema = { type: 'string' };
  // An absolute path; one that also takes "" (observe.kubeletTokenFile: no token) says so.
  if (/must be an absolute path/.test(wrong ?? '')) schema.pattern = validatorMessages(path, '').length === 0 ? '^(/|$)' : '^/';
  if (validatorMessages(path, ' ').includes('must not be empty')) schema.pattern = schema.pattern ?? '\\S';
  return schema;
}

function integerSchema(path: readonly string[]): JsonSchema {
  const [wrong] = validatorMessages(path, 1e12);
  const between = /^must be between (-?\d+) and (-?\d+)/.exec(wrong ?? '');
  return between === null ? { type: 'integer' } : { type: 'integer', minimum: Number(between[1]), maximum: Number(between[2]) };
}

// The range itself is beyond a JSON schema of strings: the description says it, and the agent
// refuses a value outside it at start (and keeps its running configuration on a reload).
function durationSchema(path: readonly string[]): JsonSchema {
  const bounds = durationBounds(path.join('.'));
  return { type: 'string', pattern: GO_DURATION, ...(bounds.minMs > 0 ? { not: { pattern: '^[0.nuµμmsh]*$' } } : {}), description: `A Go duration ${describeDurationBounds(bounds)}.` };
}

/** Bytes as the shortest binary quantity that says them (`4Gi`). */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [['Ti', 1024 ** 4], ['Gi', 1024 ** 3], ['Mi', 1024 ** 2], ['Ki', 1024]] as const) {
    if (bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return String(bytes);
}

// A Kubernetes quantity above zero, as SettingReaders.bytes takes it.
const QUANTITY = '^([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][0-9]+|[KMGTPE]i|[kMGTPE])?$';
const RATE_SUFFIX = 'BytesPerSecond';
const PERCENT_SUFFIX = 'Percent';

// The agent's own settings, walked out of its defaults: `fooMs` is the duration `foo`, and
// `fooBytesPerSecond` the quantity (per second) `fooRate`.
function agentSettings(path: readonly string[], value: unknown, out: ChartSetting[]): void {
  const name = path[path.length - 1] as string;
  const durationKey = name.endsWith('Ms') && (typeof value === 'number' || value === null);
  const rateKey = name.endsWith(RATE_SUFFIX) && typeof value === 'number';
  if (rateKey) {
    const ratePath = [...path.slice(0, -1), `${name.slice(0, -RATE_SUFFIX.length)}Rate`];
    out.push(settingOf(ratePath, formatBytes(value), { type: 'string', pattern: QUANTITY, not: { pattern: '^[0.]*([eE][0-9]+|[KMGTPE]i|[kMGTPE])?$' } }));
    return;
  }
  const keyPath = durationKey ? [...path.slice(0, -1), name.slice(0, -2)] : path;
  // `fooPercent` is the number `foo` (PSI thresholds: a percentage of time, as the kernel's averages).
  if (name.endsWith(PERCENT_SUFFIX) && typeof value === 'number') {
    out.push(settingOf([...path.slice(0, -1), name.slice(0, -PERCENT_SUFFIX.length)], value, { type: 'number', exclusiveMinimum: 0, maximum: 100 }));
    return;
  }
  const dotted = keyPath.join('.');
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) agentSettings([...keyPath, key], child, out);
    return;
  }
  const schema: JsonSchema = durationKey
    ? durationSchema(keyPath)
    : typeof value === 'boolean'
      ? { type: 'boolean' }
      : typeof value === 'number'
        ? integerSchema(keyPath)
        : Array.isArray(value)
          ? { type: 'array', items: { type: 'string' } }
          : stringSchema(keyPath);
  const written = durationKey && typeof value === 'number' ? formatShortDuration(value) : value;
  const setting = settingOf(keyPath, written, schema, value === null || Object.hasOwn(UNSET_MEANING, dotted));
  out.push(durationKey ? { ...setting, range: describeDurationBounds(durationBounds(dotted)) } : setting);
}

function settingOf(path: readonly string[], agentDefault: unknown, schema: JsonSchema, unset = false): ChartSetting {
  const dotted = path.join('.');
  const choice = DEPLOYMENT_CHOICES[dotted];
  if (unset) return { path, value: undefined, unsetMeaning: UNSET_MEANING[dotted] ?? 'unset', schema };
  if (choice === undefined || JSON.stringify(choice.value) === JSON.stringify(agentDefault)) return { path, value: agentDefault, schema };
  return { path, value: choice.value, agentDefault, schema };
}

/** Every setting of an AgentConfiguration, in the order values.yaml lists them. */
export function chartSettings(): ChartSetting[] {
  const out: ChartSetting[] = [];
  for (const field of EVICTION_FIELDS) {
    const entry = EVICTION_FIELD_TABLE[field];
    if (entry === undefined) throw new Error(`scripts/chart-values.ts: no default and type for the kubelet field ${field} (EVICTION_FIELD_TABLE)`);
    out.push(settingOf([field], entry.value, entry.schema));
  }
  const defaults = defaultAgentSettings() as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(defaults)) agentSettings([key], value, out);
  const tops = new Set(out.map((s) => s.path[0] as string));
  const missing = [...EVICTION_FIELDS, ...AGENT_FIELDS].filter((f) => !tops.has(f));
  const extra = [...tops].filter((f) => !([...EVICTION_FIELDS, ...AGENT_FIELDS] as string[]).includes(f));
  if (missing.length > 0 || extra.length > 0) {
    throw new Error(`scripts/chart-values.ts: the defaults table and the validator's fields disagree: no default for ${missing.join(', ') || 'none'}; not a field: ${extra.join(', ') || 'none'}`);
  }
  return out;
}

/** The `config` value: every setting that values.yaml sets. */
export function chartConfig(settings = chartSettings()): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const s of settings.filter((x) => x.value !== undefined)) {
    let at = config;
    for (const key of s.path.slice(0, -1)) at = (at[key] ??= {}) as Record<string, unknown>;
    at[s.path[s.path.length - 1] as string] = s.value;
  }
  return config;
}

function yamlScalar(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stringify(v).trim()).join(", ")}]`;
  if (value !== null && typeof value === 'object') return Object.keys(value).length === 0 ? '{}' : '';
  return stringify(value).trim();
}

function wrapComment(text: string, indent: string): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && indent.length + 2 + line.length + 1 + word.length > 100) {
      lines.push(`${indent}# ${line}`);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(`${indent}# ${line}`);
  return lines;
}

/** The generated region of values.yaml: `config:` with every setting. */
export function renderConfigRegion(settings = chartSettings()): string {
  const lines = [BEGIN, 'config:'];
  const opened = new Set<string>();
  for (const s of settings) {
    for (let depth = 1; depth < s.path.length; depth++) {
      const section = s.path.slice(0, depth).join('.');
      if (opened.has(section)) continue;
      opened.add(section);
      lines.push(`${'  '.repeat(depth)}${s.path[depth - 1]}:`);
    }
    const indent = '  '.repeat(s.path.length);
    const key = s.path[s.path.length - 1] as string;
    const why = DEPLOYMENT_CHOICES[s.path.join('.')]?.why;
    if (s.value !== undefined && why !== undefined && why !== '') lines.push(...wrapComment(why, indent));
    if (s.value === undefined) {
      lines.push(`${indent}# ${key}:   (unset: ${s.unsetMeaning}${s.range === undefined ? '' : `; ${s.range}`})`);
      continue;
    }
    const notes = [...(s.agentDefault === undefined ? [] : [`agent default: ${yamlScalar(s.agentDefault) || JSON.stringify(s.agentDefault)}`]), ...(s.range === undefined ? [] : [s.range])];
    const note = notes.length === 0 ? '' : `  # ${notes.join('; ')}`;
    const scalar = yamlScalar(s.value);
    if (scalar !== '') {
      lines.push(`${indent}${key}: ${scalar}${note}`);
      continue;
    }
    lines.push(`${indent}${key}:${note}`);
    for (const [k, v] of Object.entries(s.value as Record<string, unknown>)) lines.push(`${indent}  ${k}: ${yamlScalar(v)}`);
  }
  lines.push(END);
  return `${lines.join('\n')}\n`;
}

/** values.yaml with its generated region replaced. */
export function renderValues(current = readFileSync(VALUES_PATH, 'utf8'), settings = chartSettings()): string {
  const begin = current.indexOf(BEGIN);
  const end = current.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${VALUES_PATH}: no "${BEGIN}" ... "${END}" region`);
  return current.slice(0, begin) + renderConfigRegion(settings) + current.slice(end + END.length + 1);
}

// A NetworkPolicyPeer: its three fields and nothing else (a misspelt one would admit everyone the
// others do not narrow down).
const LABEL_SELECTOR: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } }, matchExpressions: { type: 'array', items: { type: 'object' } } },
};
const NETWORK_POLICY_PEER: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    namespaceSelector: LABEL_SELECTOR,
    podSelector: LABEL_SELECTOR,
    ipBlock: { type: 'object', additionalProperties: false, required: ['cidr'], properties: { cidr: { type: 'string', minLength: 1 }, except: { type: 'array', items: { type: 'string' } } } },
  },
};

// The chart's own values (everything but `config`), as the templates use them.
const CHART_VALUES_SCHEMA: Readonly<Record<string, JsonSchema>> = {
  global: { type: 'object' },
  image: {
    type: 'object',
    additionalProperties: false,
    properties: {
      repository: { type: 'string', minLength: 1 },
      tag: { type: 'string' },
      // A content digest (repository@sha256:...), which wins over the tag; empty: the tag.
      digest: { type: 'string', pattern: '^(sha256:[0-9a-f]{64})?$' },
      pullPolicy: { enum: ['Always', 'IfNotPresent', 'Never'] },
    },
  },
  imagePullSecrets: { type: 'array' },
  fullnameOverride: { type: 'string' },
  commonLabels: { type: 'object', additionalProperties: { type: 'string' } },
  serviceAccount: { type: 'object', additionalProperties: false, properties: { create: { type: 'boolean' }, name: { type: 'string' }, annotations: { type: 'object' } } },
  rbac: { type: 'object', additionalProperties: false, properties: { create: { type: 'boolean' } } },
  nodeRestriction: { type: 'object', additionalProperties: false, properties: { enabled: { type: 'boolean' } } },
  // templates/flowcontrol.yaml; the bounds are the API server's own for these fields (handSize must
  // also be at most queues, which the API server checks at install).
  flowControl: {
    type: 'object',
    additionalProperties: false,
    properties: {
      enabled: { type: 'boolean' },
      matchingPrecedence: { type: 'integer', minimum: 2, maximum: 10000 },
      priorityLevel: {
        type: 'object',
        additionalProperties: false,
        properties: {
          nominalConcurrencyShares: { type: 'integer', minimum: 0, maximum: 2147483647 },
          lendablePercent: { type: 'integer', minimum: 0, maximum: 100 },
          queues: { type: 'integer', minimum: 1, maximum: 10000000 },
          handSize: { type: 'integer', minimum: 1 },
          queueLengthLimit: { type: 'integer', minimum: 1, maximum: 2147483647 },
        },
      },
    },
  },
  priorityClassName: { type: 'string' },
  tolerations: { type: 'array' },
  nodeSelector: { type: 'object', additionalProperties: { type: 'string' } },
  affinity: { type: 'object' },
  podLabels: { type: 'object', additionalProperties: { type: 'string' } },
  podAnnotations: { type: 'object', additionalProperties: { type: 'string' } },
  maxUnavailable: { type: ['integer', 'string'] },
  maxSurge: { type: ['integer', 'string'] },
  terminationGracePeriodSeconds: { type: 'integer', minimum: 1 },
  oomScoreAdj: { type: ['integer', 'null'], minimum: -1000, maximum: 1000 },
  privileged: { type: 'boolean' },
  maxOldSpaceSizeMiB: { type: 'integer', minimum: 16 },
  extraEnv: { type: 'array' },
  resources: { type: 'object' },
  serviceMonitor: {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, interval: { type: 'string', pattern: GO_DURATION }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  grafanaDashboard: {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, namespace: { type: 'string' }, labels: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  prometheusRule: { type: 'object', additionalProperties: false, properties: { enabled: { type: 'boolean' }, labels: { type: 'object', additionalProperties: { type: 'string' } } } },
  networkPolicy: {
    type: 'object',
    additionalProperties: false,
    properties: { enabled: { type: 'boolean' }, metricsFrom: { type: 'array', items: NETWORK_POLICY_PEER }, probesFrom: { type: 'array', items: NETWORK_POLICY_PEER } },
  },
};

function sectionSchema(settings: readonly ChartSetting[], depth: number): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const groups = new Map<string, ChartSetting[]>();
  for (const s of settings) {
    const key = s.path[depth] as string;
    if (s.path.length === depth + 1) properties[key] = s.schema;
    else groups.set(key, [...(groups.get(key) ?? []), s]);
  }
  for (const [key, group] of groups) properties[key] = sectionSchema(group, depth + 1);
  return { type: 'object', additionalProperties: false, properties };
}

/** values.schema.json: the chart's own values, and `config` as the validator takes it. */
export function renderSchema(settings = chartSettings()): string {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'kube-eviction-agent chart values',
    description: 'Generated by `npm run chart` (scripts/chart-values.ts) from the agent\'s defaults table and validator: do not edit.',
    type: 'object',
    additionalProperties: false,
    properties: { ...CHART_VALUES_SCHEMA, config: sectionSchema(settings, 0) },
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

function main(args: readonly string[]): number {
  const settings = chartSettings();
  const values = renderValues(readFileSync(VALUES_PATH, 'utf8'), settings);
  const schema = renderSchema(settings);
  if (args.includes('--check')) {
    const stale = [
      values === readFileSync(VALUES_PATH, 'utf8') ? null : VALUES_PATH,
      schema === readFileSync(SCHEMA_PATH, 'utf8') ? null : SCHEMA_PATH,
    ].filter((p) => p !== null);
    if (stale.length > 0) console.error(`out of date (run npm run chart): ${stale.join(', ')}`);
    return stale.length === 0 ? 0 : 1;
  }
  writeFileSync(VALUES_PATH, values);
  writeFileSync(SCHEMA_PATH, schema);
  console.log(`wrote ${VALUES_PATH} and ${SCHEMA_PATH} (${settings.length} settings)`);
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) process.exitCode = main(process.argv.slice(2));
