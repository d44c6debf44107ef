// The alert rules (deploy/chart/files/prometheus-rules.yaml) and the Grafana dashboard
// (deploy/chart/files/grafana-dashboard.json) against a real /metrics capture taken now from a
// running agent (the demo): every metric and label they query is one the agent exports; with the
// real promtool (KEA_PROMTOOL_BIN) the rules pass `promtool check rules`, each alert fires and
// stays quiet in `promtool test rules` on series generated from the capture, and every dashboard
// query parses; with the real helm the chart's PrometheusRule and dashboard ConfigMap carry them.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { HELM_SKIP_REASON, renderChart, VALUE_SETS_DIR } from '../deploy/helm.js';
import { REPO_ROOT } from '../deploy/manifest.js';
import { captureDemoMetrics, familyOf, type MetricsCapture } from './metrics-capture.js';
import { KUBE_STATE_METRICS, SCENARIOS, promtoolTests } from './rule-tests.js';

const FILES = join(REPO_ROOT, 'deploy', 'chart', 'files');
const RULES_PATH = join(FILES, 'prometheus-rules.yaml');
const DASHBOARD_PATH = join(FILES, 'grafana-dashboard.json');
const PROMTOOL = process.env.KEA_PROMTOOL_BIN ?? null;
const withPromtool = PROMTOOL === null ? test.skip : test;
const withHelm = HELM_SKIP_REASON === null ? test : test.skip;
if (PROMTOOL === null) console.warn('promtool tests skipped: KEA_PROMTOOL_BIN is not set: run eval "$(bash scripts/build-tools.sh)" (CI does)');

interface Rule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
const rulesFile = parse(readFileSync(RULES_PATH, 'utf8')) as { groups: { name: string; rules: Rule[] }[] };
const rules = rulesFile.groups.flatMap((g) => g.rules);

interface Panel {
  title: string;
  targets: { expr: string }[];
}
const dashboard = JSON.parse(readFileSync(DASHBOARD_PATH, 'utf8')) as { panels: Panel[]; templating: { list: { name: string; query?: unknown }[] } };
// Grafana's variables, as a query sees them once Grafana has put them in.
const grafanaExpr = (expr: string): string => expr.replaceAll('$__rate_interval', '1m').replaceAll('$node', '.*');
const dashboardQueries: { where: string; expr: string }[] = [
  ...dashboard.panels.flatMap((p) => p.targets.map((t, i) => ({ where: `panel "${p.title}" query ${i + 1}`, expr: grafanaExpr(t.expr) }))),
  ...dashboard.templating.list.flatMap((v) => {
    const query = (v.query as { query?: string } | undefined)?.query;
    const inner = query === undefined ? null : /^label_values\((.*), *\w+\)$/.exec(query)?.[1];
    return inner === null || inner === undefined ? [] : [{ where: `variable $${v.name}`, expr: inner }];
  }),
];

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** The metrics a PromQL expression selects, and the label names it matches or groups by. */
export function promqlNames(expr: string): { metrics: string[]; labels: string[] } {
  const labels: string[] = [];
  let rest = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  rest = rest.replace(/\{([^}]*)\}/g, (_m, inside: string) => {
    for (const l of inside.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)\s*(?:=~|!~|!=|=)/g)) labels.push(l[1] as string);
    return ' ';
  });
  rest = rest.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_m, _word: string, inside: string) => {
    labels.push(...inside.split(',').map((l) => l.trim()).filter((l) => l !== ''));
    return ' ';
  });
  rest = rest.replace(/\[[^\]]*\]/g, ' ');
  const metrics = [...rest.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter((m) => m[2] === undefined && !PROMQL_WORDS.has((m[1] as string).toLowerCase()) && !/^\d/.test(m[1] as string))
    .map((m) => m[1] as string);
  return { metrics: [...new Set(metrics)], labels: [...new Set(labels)] };
}

// What the capture says of one query: metrics it does not export, labels none of its samples have.
// `node`, `instance` and `job` are the scrape's target labels, not the agent's; `le` is a bucket's.
function unexported(capture: MetricsCapture, expr: string): string[] {
  const names = promqlNames(expr);
  // kube-state-metrics series (the missing-agent alert) are checked against the labels it gives them.
  const external = names.metrics.filter((m) => Object.hasOwn(KUBE_STATE_METRICS, m));
  const metrics = names.metrics.filter((m) => !external.includes(m));
  const externalLabels = new Set(external.flatMap((m) => KUBE_STATE_METRICS[m] ?? []));
  const labels = names.labels.filter((l) => !externalLabels.has(l));
  const problems: string[] = [];
  if (external.length > 0 && metrics.length > 0) problems.push(`mixes the agent's metrics with kube-state-metrics' ${external.join(', ')}`);
  for (const l of names.labels) if (external.length > 0 && !externalLabels.has(l)) problems.push(`label ${l} is not one kube-state-metrics gives ${external.join(', ')}`);
  const families = metrics.map((m) => ({ metric: m, family: familyOf(m, capture.types) }));
  for (const { metric, family } of families) if (!capture.types.has(family)) problems.push(`metric ${metric} is not exported`);
  const targetLabels = new Set(['node', 'instance', 'job', 'le', 'namespace', 'pod']);
  for (const label of labels.filter((l) => !targetLabels.has(l))) {
    const sampled = capture.samples.filter((s) => families.some((f) => familyOf(s.name, capture.types) === f.family));
    if (sampled.length > 0 && !sampled.some((s) => Object.hasOwn(s.labels, label))) problems.push(`label ${label} is on no sample of ${metrics.join(', ')}`);
  }
  return problems;
}

function promtool(args: readonly string[]): { status: number | null; output: string } {
  const run = spawnSync(PROMTOOL as string, args, { encoding: 'utf8', timeout: 120_000 });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

let capture: MetricsCapture;
const dir = mkdtempSync(join(tmpdir(), 'kea-monitoring-'));

beforeAll(async () => {
  capture = await captureDemoMetrics();
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the /metrics capture', () => {
  test('comes from an agent that evicted the demo\'s leaking pod', () => {
    expect(capture.demo.evicted.length).toBeGreaterThan(0);
    expect(capture.samples.filter((s) => s.name === 'kube_eviction_agent_evictions_total' && s.labels.result === 'accepted').length).toBeGreaterThan(0);
  });
});

describe('the alert rules', () => {
  test('cover failed and blocked evictions, readiness, observation, latency, kernel OOM kills, repeated re-triggers, reloads, storms, API errors and a missing agent, each with a severity, a summary and a description', () => {
    expect(rules.map((r) => r.alert)).toEqual([
      'KubeEvictionAgentEvictionFailed',
      'KubeEvictionAgentEvictionsBlocked',
      'KubeEvictionAgentNotReady',
      'KubeEvictionAgentObservationProblems',
      'KubeEvictionAgentSlowReaction',
      'KubeEvictionAgentKernelOomKills',
      'KubeEvictionAgentRepeatedRetriggers',
      'KubeEvictionAgentConfigReloadFailed',
      'KubeEvictionAgentEvictionStorm',
      'KubeEvictionAgentApiErrors',
      'KubeEvictionAgentMissing',
    ]);
    for (const rule of rules) expect([rule.alert, Object.keys(rule.labels ?? {}), Object.keys(rule.annotations ?? {}).sort()]).toEqual([rule.alert, ['severity'], ['description', 'summary']]);
  });

  test.each(rules.map((r) => [r.alert, r.expr]))('%s queries only metrics and labels the agent exports', (_alert, expr) => {
    expect(promqlNames(expr).metrics.length).toBeGreaterThan(0);
    expect(unexported(capture, expr)).toEqual([]);
  });

  test('every alert has a scenario that fires it and one that does not', () => {
    expect(SCENARIOS.map((s) => s.alert).sort()).toEqual(rules.map((r) => r.alert).sort());
    for (const s of SCENARIOS) expect(s.severity).toBe(rules.find((r) => r.alert === s.alert)?.labels?.severity);
  });

  withPromtool('pass promtool check rules', () => {
    const run = promtool(['check', 'rules', RULES_PATH]);
    expect(run).toEqual({ status: 0, output: expect.stringContaining(`SUCCESS: ${rules.length} rules found`) });
  });

  withPromtool('fire and stay quiet as each scenario says (promtool test rules, series shaped like the capture)', () => {
    // The annotations are templates promtool check rules has parsed; the tests compare the alerts' labels.
    const bare = { groups: rulesFile.groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...rule }) => rule) })) };
    writeFileSync(join(dir, 'rules.yaml'), stringify(bare));
    writeFileSync(join(dir, 'tests.yaml'), promtoolTests(capture, 'rules.yaml'));
    const run = promtool(['test', 'rules', join(dir, 'tests.yaml')]);
    expect(run).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
    const tests = (parse(readFileSync(join(dir, 'tests.yaml'), 'utf8')) as { tests: { alert_rule_test: { exp_alerts: unknown[] }[] }[] }).tests;
    expect(tests.filter((t) => t.alert_rule_test[0]?.exp_alerts.length === 1)).toHaveLength(rules.length);
    expect(tests.filter((t) => t.alert_rule_test[0]?.exp_alerts.length === 0)).toHaveLength(rules.length);
  });

  test('a scenario naming a metric the agent does not export is refused', () => {
    const renamed: MetricsCapture = { ...capture, types: new Map([...capture.types].filter(([name]) => name !== 'kube_eviction_agent_ready')) };
    expect(() => promtoolTests(renamed, 'rules.yaml')).toThrow('scenario names kube_eviction_agent_ready, which the agent\'s /metrics does not export');
  });

  withHelm('the chart\'s PrometheusRule carries them as they are', () => {
    const objects = renderChart(['--values', join(VALUE_SETS_DIR, 'monitoring-values.yaml')]);
    expect(objects.find((o) => o.kind === 'PrometheusRule')?.spec).toEqual(rulesFile);
    const monitor = objects.find((o) => o.kind === 'ServiceMonitor');
    expect(monitor?.spec.endpoints[0].relabelings).toEqual([{ sourceLabels: ['__meta_kubernetes_pod_node_name'], targetLabel: 'node' }]);
    expect(monitor?.metadata.labels.release).toBe('prometheus');
    // With other names, the missing-agent alert selects the release's own DaemonSet.
    const renamed = renderChart(['--values', join(VALUE_SETS_DIR, 'monitoring-values.yaml'), '--set', 'fullnameOverride=node-eviction']).find((o) => o.kind === 'PrometheusRule');
    const missing = (renamed?.spec as typeof rulesFile).groups.flatMap((g) => g.rules).find((r) => r.alert === 'KubeEvictionAgentMissing');
    expect(missing?.expr).toContain('kube_daemonset_status_number_available{namespace="kube-eviction-agent", daemonset="node-eviction"}');
    expect(missing?.expr).not.toContain('daemonset="kube-eviction-agent"');
  });
});

describe('the dashboard', () => {
  test('shows signals, thresholds, evictions, pressure conditions, latency and the agent\'s footprint', () => {
    const all = dashboardQueries.map((q) => q.expr).join('\n');
    for (const metric of [
      'kube_eviction_agent_signal_available',
      'kube_eviction_agent_threshold_met',
      'kube_eviction_agent_evictions_total',
      'kube_eviction_agent_node_condition',
      'kube_eviction_agent_notification_to_eviction_seconds_bucket',
      'kube_eviction_agent_process_resident_memory_bytes',
      'kube_eviction_agent_process_cpu_seconds_total',
      'kube_eviction_agent_kernel_oom_kills_total',
    ]) {
      expect(all).toContain(metric);
    }
  });

  test.each(dashboardQueries.map((q) => [q.where, q.expr]))('%s queries only metrics and labels the agent exports', (_where, expr) => {
    expect(promqlNames(expr).metrics.length).toBeGreaterThan(0);
    expect(unexported(capture, expr)).toEqual([]);
  });

  test('a renamed metric is caught', () => {
    expect(unexported(capture, 'sum(kube_eviction_agent_evictions_count{signal="x"})')).toEqual(['metric kube_eviction_agent_evictions_count is not exported']);
    expect(unexported(capture, 'sum by (reason) (kube_eviction_agent_evictions_total)')).toEqual(['label reason is on no sample of kube_eviction_agent_evictions_total']);
  });

  withPromtool('every query parses as PromQL (promtool check rules, each as a recording rule)', () => {
    const recording = { groups: [{ name: 'dashboard', rules: dashboardQueries.map((q, i) => ({ record: `dashboard:query_${i}`, expr: q.expr })) }] };
    writeFileSync(join(dir, 'dashboard-queries.yaml'), stringify(recording));
    expect(promtool(['check', 'rules', join(dir, 'dashboard-queries.yaml')])).toEqual({ status: 0, output: expect.stringContaining(`SUCCESS: ${dashboardQueries.length} rules found`) });
  });

  withHelm('the chart\'s dashboard ConfigMap carries it as it is, labelled for Grafana\'s sidecar', () => {
    const objects = renderChart(['--values', join(VALUE_SETS_DIR, 'monitoring-values.yaml')]);
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && String(o.metadata.name).endsWith('-dashboard'));
    expect(configMap?.metadata.labels.grafana_dashboard).toBe('1');
    expect(JSON.parse(configMap?.data['kube-eviction-agent.json'] as string)).toEqual(dashboard);
  });
});
