// `promtool test rules` input generated from a real /metrics capture: each alert has a scenario
// that fires it and one that must not, written as what happens (a counter's values, a gauge's,
// observations of a histogram); the series themselves (metric names, their real label sets, a
// histogram's real buckets) are taken from the capture, and a scenario naming a metric the agent
// does not export, or a label its samples do not have, is refused.

import { stringify } from 'yaml';
import { familyOf, type MetricsCapture } from './metrics-capture.js';

/** The scrape target's labels, as the chart's ServiceMonitor gives them. */
export const TARGET = { instance: '10.0.0.7:8080', job: 'kube-eviction-agent', node: 'node-a' } as const;

type Labels = Readonly<Record<string, string>>;

/** What the scenarios take from a /metrics scrape: the families' types and the samples (the demo's or a deployed agent's). */
export type Scrape = Pick<MetricsCapture, 'types' | 'samples'>;

/** A counter or gauge: its values, one a minute, in promtool's notation (`0+1x30`). */
interface PlainSeries {
  readonly metric: string;
  readonly labels?: Labels;
  readonly values: string;
}

/** A histogram observed `perMinute` times a minute at `seconds`, for `minutes`. */
interface HistogramSeries {
  readonly histogram: string;
  readonly labels?: Labels;
  readonly seconds: number;
  readonly perMinute: number;
  readonly minutes: number;
}

/** A series of another exporter (kube-state-metrics), with its own labels: the agent's capture has none of it. */
interface ExternalSeries {
  readonly external: string;
  readonly labels: Labels;
  readonly values: string;
}

type SeriesSpec = PlainSeries | HistogramSeries | ExternalSeries;

/** The kube-state-metrics series the rules read (a missing agent has no series of its own), with the labels it gives them. */
export const KUBE_STATE_METRICS: Readonly<Record<string, readonly string[]>> = {
  kube_daemonset_status_desired_number_scheduled: ['namespace', 'daemonset'],
  kube_daemonset_status_number_available: ['namespace', 'daemonset'],
};
const KSM_TARGET = { job: 'kube-state-metrics', instance: '10.0.0.9:8080' } as const;
const AGENTS = { namespace: 'kube-eviction-agent', daemonset: 'kube-eviction-agent' } as const;

interface Case {
  readonly series: readonly SeriesSpec[];
  readonly evalTime: string;
}

export interface Scenario {
  readonly alert: string;
  /** The labels the alert carries besides the target's and its severity. */
  readonly alertLabels?: Labels;
  /** The alert's labels besides its severity, when they are not an agent target's (instance, node). */
  readonly ownLabels?: Labels;
  readonly severity: string;
  readonly fires: Case;
  readonly quiet: Case;
}

const EVICTIONS = 'kube_eviction_agent_evictions_total';

export const SCENARIOS: readonly Scenario[] = [
  {
    alert: 'KubeEvictionAgentMissing',
    severity: 'warning',
    ownLabels: AGENTS,
    // Three nodes, two available agents for 20 minutes.
    fires: {
      series: [
        { external: 'kube_daemonset_status_desired_number_scheduled', labels: AGENTS, values: '3x30' },
        { external: 'kube_daemonset_status_number_available', labels: AGENTS, values: '2x30' },
      ],
      evalTime: '20m',
    },
    // One agent restarting for 5 minutes (a rollout) is not missing; another release's DaemonSet is not this one.
    quiet: {
      series: [
        { external: 'kube_daemonset_status_desired_number_scheduled', labels: AGENTS, values: '3x30' },
        { external: 'kube_daemonset_status_number_available', labels: AGENTS, values: '3x10 2x5 3x15' },
        { external: 'kube_daemonset_status_desired_number_scheduled', labels: { ...AGENTS, daemonset: 'other' }, values: '3x30' },
        { external: 'kube_daemonset_status_number_available', labels: { ...AGENTS, daemonset: 'other' }, values: '0x30' },
      ],
      evalTime: '20m',
    },
  },
  {
    alert: 'KubeEvictionAgentEvictionFailed',
    severity: 'warning',
    alertLabels: { signal: 'memory.available' },
    // The signal is named: the alert carries it, whichever signal the capture's first sample has.
    fires: { series: [{ metric: EVICTIONS, labels: { action: 'delete', result: 'failed', signal: 'memory.available' }, values: '0 0 0 1 1 1 1' }], evalTime: '5m' },
    quiet: { series: [{ metric: EVICTIONS, labels: { action: 'delete', result: 'accepted', signal: 'memory.available' }, values: '0 1 2 3 4 5 6' }], evalTime: '5m' },
  },
  {
    alert: 'KubeEvictionAgentEvictionsBlocked',
    severity: 'warning',
    fires: { series: [{ metric: EVICTIONS, labels: { action: 'eviction-api', result: 'blocked' }, values: '0+1x40' }], evalTime: '30m' },
    // One refusal every five minutes: three in any 15, fewer than five.
    quiet: { series: [{ metric: EVICTIONS, labels: { action: 'eviction-api', result: 'blocked' }, values: '0+0.2x40' }], evalTime: '30m' },
  },
  {
    alert: 'KubeEvictionAgentNotReady',
    severity: 'critical',
    fires: { series: [{ metric: 'kube_eviction_agent_ready', values: '0x20' }], evalTime: '10m' },
    // Ready after three minutes: under the five the alert waits.
    quiet: { series: [{ metric: 'kube_eviction_agent_ready', values: '0 0 0 1x20' }], evalTime: '10m' },
  },
  {
    alert: 'KubeEvictionAgentObservationProblems',
    severity: 'warning',
    fires: { series: [{ metric: 'kube_eviction_agent_observe_problems', values: '1x20' }], evalTime: '15m' },
    quiet: { series: [{ metric: 'kube_eviction_agent_observe_problems', values: '1x5 0x20' }], evalTime: '15m' },
  },
  {
    alert: 'KubeEvictionAgentSlowReaction',
    severity: 'warning',
    fires: { series: [{ histogram: 'kube_eviction_agent_notification_to_eviction_seconds', seconds: 2.5, perMinute: 1, minutes: 60 }], evalTime: '60m' },
    quiet: { series: [{ histogram: 'kube_eviction_agent_notification_to_eviction_seconds', seconds: 0.004, perMinute: 1, minutes: 60 }], evalTime: '60m' },
  },
  {
    alert: 'KubeEvictionAgentKernelOomKills',
    severity: 'warning',
    alertLabels: { kind: 'node' },
    fires: { series: [{ metric: 'kube_eviction_agent_kernel_oom_kills_total', labels: { kind: 'node', agent_state: 'evicting' }, values: '0 0 0 1 1 1' }], evalTime: '5m' },
    // A container over its own limit is not node pressure.
    quiet: { series: [{ metric: 'kube_eviction_agent_kernel_oom_kills_total', labels: { kind: 'container-limit', agent_state: 'not-applicable' }, values: '0 1 2 3 4 5' }], evalTime: '5m' },
  },
  {
    alert: 'KubeEvictionAgentConfigReloadFailed',
    severity: 'warning',
    fires: { series: [{ metric: 'kube_eviction_agent_config_reloads_total', labels: { result: 'rejected' }, values: '0 0 1 1 1' }], evalTime: '4m' },
    quiet: { series: [{ metric: 'kube_eviction_agent_config_reloads_total', labels: { result: 'applied' }, values: '0 1 2 3 4' }], evalTime: '4m' },
  },
  {
    alert: 'KubeEvictionAgentRepeatedRetriggers',
    severity: 'warning',
    alertLabels: { signal: 'memory.available' },
    // One re-trigger every five minutes: six in half an hour.
    fires: { series: [{ metric: 'kube_eviction_agent_eviction_retriggers_total', labels: { signal: 'memory.available' }, values: '0+0.2x40' }], evalTime: '35m' },
    // Two in half an hour: a burst, not a pattern.
    quiet: { series: [{ metric: 'kube_eviction_agent_eviction_retriggers_total', labels: { signal: 'memory.available' }, values: '0x10 1x10 2x20' }], evalTime: '35m' },
  },
  {
    alert: 'KubeEvictionAgentEvictionStorm',
    severity: 'critical',
    fires: { series: [{ metric: EVICTIONS, labels: { action: 'delete', result: 'accepted' }, values: '0+2x20' }], evalTime: '15m' },
    // The same pods' local kills are not counted twice.
    quiet: {
      series: [
        { metric: EVICTIONS, labels: { action: 'local-termination', result: 'accepted' }, values: '0+2x20' },
        { metric: EVICTIONS, labels: { action: 'delete', result: 'accepted' }, values: '0+0.5x20' },
      ],
      evalTime: '15m',
    },
  },
  {
    alert: 'KubeEvictionAgentApiErrors',
    severity: 'warning',
    alertLabels: { operation: 'evict' },
    fires: { series: [{ metric: 'kube_eviction_agent_api_errors_total', labels: { operation: 'evict', status: '500' }, values: '0+2x40' }], evalTime: '30m' },
    quiet: { series: [{ metric: 'kube_eviction_agent_api_errors_total', labels: { operation: 'evict', status: '500' }, values: '0+0.5x40' }], evalTime: '30m' },
  },
];

function seriesName(name: string, labels: Labels): string {
  return `${name}{${Object.entries(labels)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ')}}`;
}

// The labels of the capture's first sample of `family` (its real label set), with `overrides`.
function labelsFrom(capture: Scrape, family: string, sampleName: string, overrides: Labels): Record<string, string> {
  if (!capture.types.has(family)) throw new Error(`scenario names ${family}, which the agent's /metrics does not export`);
  const sample = capture.samples.find((s) => s.name === sampleName && familyOf(s.name, capture.types) === family);
  const base: Record<string, string> = { ...(sample?.labels ?? {}) };
  delete base.le;
  if (sample !== undefined) {
    const unknown = Object.keys(overrides).filter((k) => !Object.hasOwn(base, k));
    if (unknown.length > 0) throw new Error(`scenario gives ${family} the label(s) ${unknown.join(', ')}, which its samples do not have (they have ${Object.keys(base).join(', ') || 'none'})`);
  }
  return { ...base, ...overrides, ...TARGET };
}

function inputSeries(capture: Scrape, spec: SeriesSpec): { series: string; values: string }[] {
  if ('external' in spec) {
    const labels = KUBE_STATE_METRICS[spec.external];
    if (labels === undefined) throw new Error(`scenario names ${spec.external}, which is neither the agent's nor a kube-state-metrics series the rules read`);
    const unknown = Object.keys(spec.labels).filter((k) => !labels.includes(k));
    if (unknown.length > 0) throw new Error(`scenario gives ${spec.external} the label(s) ${unknown.join(', ')}, which kube-state-metrics does not`);
    return [{ series: seriesName(spec.external, { ...spec.labels, ...KSM_TARGET }), values: spec.values }];
  }
  if ('metric' in spec) {
    return [{ series: seriesName(spec.metric, labelsFrom(capture, familyOf(spec.metric, capture.types), spec.metric, spec.labels ?? {})), values: spec.values }];
  }
  const family = spec.histogram;
  if (capture.types.get(family) !== 'histogram') throw new Error(`scenario names the histogram ${family}, which the agent's /metrics does not export as one`);
  const buckets = [...new Set(capture.samples.filter((s) => s.name === `${family}_bucket`).map((s) => s.labels.le as string))];
  if (buckets.length === 0) throw new Error(`the capture has no ${family}_bucket samples to take the buckets from`);
  const labels = labelsFrom(capture, family, `${family}_bucket`, spec.labels ?? {});
  const n = spec.perMinute;
  const rising = (step: number): string => `0+${step}x${spec.minutes}`;
  return [
    ...buckets.map((le) => ({ series: seriesName(`${family}_bucket`, { ...labels, le }), values: rising(le === '+Inf' || spec.seconds <= Number(le) ? n : 0) })),
    { series: seriesName(`${family}_count`, labels), values: rising(n) },
    { series: seriesName(`${family}_sum`, labels), values: rising(n * spec.seconds) },
  ];
}

/** The promtool test file: two tests per scenario, one expecting the alert, one expecting none. */
export function promtoolTests(capture: Scrape, rulesFile: string): string {
  const tests = SCENARIOS.flatMap((s) =>
    (['fires', 'quiet'] as const).map((kind) => ({
      name: `${s.alert} ${kind === 'fires' ? 'fires' : 'stays quiet'}`,
      interval: '1m',
      input_series: s[kind].series.flatMap((spec) => inputSeries(capture, spec)),
      alert_rule_test: [
        {
          eval_time: s[kind].evalTime,
          alertname: s.alert,
          exp_alerts: kind === 'quiet' ? [] : [{ exp_labels: s.ownLabels !== undefined ? { ...s.ownLabels, severity: s.severity } : { ...(s.alertLabels ?? {}), instance: TARGET.instance, node: TARGET.node, severity: s.severity } }],
        },
      ],
    })),
  );
  return stringify({ rule_files: [rulesFile], evaluation_interval: '1m', tests });
}
