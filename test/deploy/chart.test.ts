// The Helm chart (deploy/chart): its values cover every setting of the configuration (generated
// from the defaults table, and named when one is missing), the configuration they make is the
// agent's own defaults plus the deployment's choices, and, with the real helm: `helm lint`,
// `helm template` with the default and every non-default value set (valid objects, a valid
// configuration, the host mounts the configuration reads), deploy/daemonset.yaml as the chart's
// rendering, and invalid values refused at `helm template` as check-config refuses them.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Writable } from 'node:stream';
import { parse } from 'yaml';
import { chartConfig, chartSettings, renderSchema, renderValues, SCHEMA_PATH, VALUES_PATH } from '../../scripts/chart-values.js';
import { checkConfig } from '../../src/cli/check-config.js';
import { restartOnlyChanges } from '../../src/daemon/restart-only.js';
import { defaultAgentSettings } from '../../src/config/defaults.js';
import { parseConfigText } from '../../src/config/load.js';
import { INVALID_VALUES } from './chart-invalid-values.js';
import { CHART_DIR, HELM_SKIP_REASON, helm, parseObjects, renderChart, VALUE_SETS_DIR, valueSets } from './helm.js';
import { objectProblems } from './kube-schema.js';
import { packageVersion, REPO_ROOT, type KubeObject } from './manifest.js';

const helmTest = HELM_SKIP_REASON === null ? test : test.skip;
// As the downward API sets it in the agent's pod (status.hostIP), for the value sets whose
// observe.kubeletUrl names $(NODE_IP).
process.env.NODE_IP ??= '10.0.0.7';
if (HELM_SKIP_REASON !== null) console.warn(`chart tests with the real helm skipped: ${HELM_SKIP_REASON}`);

// A setting's place in values.yaml: set (`key: value`) or left unset (`# key:`), at its depth.
function listedIn(valuesText: string, path: readonly string[]): boolean {
  const lines = valuesText.split('\n');
  let from = lines.findIndex((l) => l === 'config:');
  for (const [depth, key] of path.entries()) {
    const indent = '  '.repeat(depth + 1);
    const last = depth === path.length - 1;
    const at = lines.findIndex((l, i) => i > from && (l.startsWith(`${indent}${key}:`) || (last && l.startsWith(`${indent}# ${key}:`))));
    if (at < 0) return false;
    from = at;
  }
  return true;
}

describe('the chart values', () => {
  const settings = chartSettings();
  const valuesText = readFileSync(VALUES_PATH, 'utf8');

  test('list every setting of the configuration, set or left unset with what that means', () => {
    const missing = settings.filter((s) => !listedIn(valuesText, s.path)).map((s) => `config.${s.path.join('.')}`);
    if (missing.length > 0) throw new Error(`deploy/chart/values.yaml lacks ${missing.join(', ')}: run \`npm run chart\` (scripts/chart-values.ts) and commit the result`);
    expect(settings.length).toBeGreaterThan(50);
  });

  test('values.yaml and values.schema.json are what `npm run chart` writes', () => {
    // Out of date: run `npm run chart`, then scripts/render-manifest.sh (deploy/daemonset.yaml follows).
    expect({ file: 'deploy/chart/values.yaml', text: valuesText }).toEqual({ file: 'deploy/chart/values.yaml', text: renderValues(valuesText, settings) });
    expect({ file: 'deploy/chart/values.schema.json', text: readFileSync(SCHEMA_PATH, 'utf8') }).toEqual({ file: 'deploy/chart/values.schema.json', text: renderSchema(settings) });
  });

  test('make a valid configuration with nothing to warn about: the agent\'s defaults plus the deployment\'s choices', () => {
    const config = chartConfig(settings);
    const loaded = parseConfigText(JSON.stringify({ apiVersion: 'kube-eviction-agent.io/v1alpha1', kind: 'AgentConfiguration', ...config }), 'values.yaml');
    expect(loaded.warnings).toEqual([]);
    const defaults = defaultAgentSettings();
    expect(loaded.agent).toEqual({ ...defaults, observe: { ...defaults.observe, hostRoot: '/host' } });
    expect(loaded.eviction.maxPodGracePeriodSeconds).toBe(30);
    expect(config).toMatchObject({ evictionSoft: { 'memory.available': '300Mi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } });
  });

  test('say, next to each setting the deployment chooses, the agent\'s own default', () => {
    expect(valuesText).toContain('    hostRoot: /host  # agent default: /');
    expect(valuesText).toContain('  evictionMaxPodGracePeriod: 30  # agent default: 0');
  });

  test('the chart and the agent have the package\'s version', () => {
    const chart = parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as { version: string; appVersion: string };
    expect([chart.version, chart.appVersion]).toEqual([packageVersion(), packageVersion()]);
  });
});

function configOf(objects: readonly KubeObject[]): string {
  const configMap = objects.find((o) => o.kind === 'ConfigMap');
  return configMap?.data?.['config.yaml'] as string;
}

describe('helm lint and helm template (real helm)', () => {
  const sets = ['(defaults)', ...valueSets()];
  const args = (set: string): string[] => (set === '(defaults)' ? [] : ['--values', join(VALUE_SETS_DIR, set)]);

  helmTest.each(sets)('helm lint passes with %s', (set) => {
    const run = helm(['lint', '--strict', CHART_DIR, ...args(set)]);
    expect({ status: run.status, output: run.stdout + run.stderr }).toEqual({ status: 0, output: expect.stringContaining('0 chart(s) failed') });
  });

  helmTest.each(sets)('helm template with %s: valid objects, a valid configuration, the host directories it reads mounted', (set) => {
    const objects = renderChart(args(set));
    // The Prometheus Operator's kinds have no model here: test/monitoring checks what they carry.
    const core = objects.filter((o) => !String(o.apiVersion).startsWith('monitoring.coreos.com/'));
    expect(core.flatMap((o) => objectProblems(o).map((p) => `${o.kind}: ${p}`))).toEqual([]);
    const loaded = parseConfigText(configOf(objects), 'config.yaml');
    expect(loaded.warnings.map((w) => w.message)).toEqual(set.startsWith('crio') ? [expect.stringContaining('replaces the default map, so imagefs.inodesFree has no hard threshold')] : []);

    const daemonSet = objects.find((o) => o.kind === 'DaemonSet') as KubeObject;
    const pod = daemonSet.spec.template.spec;
    const container = pod.containers[0];
    const hostPathOf = new Map<string, string>((pod.volumes as KubeObject[]).filter((v) => v.hostPath !== undefined).map((v) => [v.name, v.hostPath.path]));
    const mounted = new Map<string, KubeObject>((container.volumeMounts as KubeObject[]).filter((m) => hostPathOf.has(m.name)).map((m) => [hostPathOf.get(m.name) as string, m]));
    const { observe, nodeLock } = loaded.agent;
    const read = [observe.cgroupRoot, observe.procRoot, observe.kubeletRootDir, observe.imageFsPath, observe.containerFsPath, observe.podLogsDir, ...(observe.source === 'kubelet' && observe.kubeletCaFile !== null ? [observe.kubeletCaFile] : [])];
    expect([...mounted.keys()].sort()).toEqual([...new Set([...read, nodeLock.directory])].sort());
    for (const [hostPath, mount] of mounted) {
      // The node lock's directory is where the agent locks, at its own path; the others are read under hostRoot.
      if (hostPath === nodeLock.directory) {
        expect([mount.mountPath, mount.readOnly ?? false]).toEqual([nodeLock.directory, false]);
        continue;
      }
      expect(mount.mountPath).toBe(`${observe.hostRoot === '/' ? '' : observe.hostRoot}${hostPath}`);
      expect(mount.readOnly ?? false).toBe(hostPath !== observe.cgroupRoot);
    }
    expect(container.ports).toEqual([
      { name: 'http-metrics', containerPort: loaded.agent.server.port, protocol: 'TCP' },
      { name: 'http-probes', containerPort: loaded.agent.server.probePort, protocol: 'TCP' },
    ]);
    for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) expect(probe.httpGet.port).toBe('http-probes');
    // The policy's ports follow the configuration's.
    const policy = objects.find((o) => o.kind === 'NetworkPolicy');
    // (the scrapers', then the helm test pod's rule)
    expect((policy?.spec.ingress as KubeObject[]).flatMap((rule) => (rule.ports as KubeObject[]).map((p) => p.port))).toEqual([loaded.agent.server.port, loaded.agent.server.port]);
    const cmName = objects.find((o) => o.kind === 'ConfigMap')?.metadata.name;
    expect((pod.volumes as KubeObject[]).find((v) => v.name === 'config')?.configMap.name).toBe(cmName);
    const sa = objects.find((o) => o.kind === 'ServiceAccount');
    expect(pod.serviceAccountName).toBe(sa?.metadata.name);
    expect(objects.find((o) => o.kind === 'ClusterRoleBinding')?.subjects).toEqual([{ kind: 'ServiceAccount', name: sa?.metadata.name, namespace: 'kube-eviction-agent' }]);
  });

  // The configuration's observe.source, as the agent reads it from the rendered ConfigMap, decides
  // the one rule that depends on it.
  const sourceRenderings = [...sets.map((set) => ({ name: set, args: args(set) })), { name: '--set config.observe.source=kubelet', args: ['--set', 'config.observe.source=kubelet'] }, { name: '--set config.observe=null', args: ['--set', 'config.observe=null'] }];
  helmTest.each(sourceRenderings)('helm template with $name: the ClusterRole grants nodes/stats get exactly when the configured observe.source is kubelet', ({ args: renderArgs }) => {
    const objects = renderChart(renderArgs);
    const source = parseConfigText(configOf(objects), 'config.yaml').agent.observe.source;
    const rules = (objects.find((o) => o.kind === 'ClusterRole') as KubeObject).rules as KubeObject[];
    const stats = rules.filter((r) => (r.resources as string[]).includes('nodes/stats'));
    expect({ source, stats }).toEqual({ source, stats: source === 'kubelet' ? [{ apiGroups: [''], resources: ['nodes/stats'], verbs: ['get'] }] : [] });
  });

  helmTest('the kubelet source is rendered at least once with the nodes/stats rule, and the defaults without it', () => {
    const statsRule = (renderArgs: string[]): boolean => ((renderChart(renderArgs).find((o) => o.kind === 'ClusterRole') as KubeObject).rules as KubeObject[]).some((r) => (r.resources as string[]).includes('nodes/stats'));
    expect([statsRule([]), statsRule(['--values', join(VALUE_SETS_DIR, 'kubelet-source-values.yaml')])]).toEqual([false, true]);
  });

  helmTest('a value set changes what it names: image, names, labels, taint handling', () => {
    const objects = renderChart(['--values', join(VALUE_SETS_DIR, 'crio-dry-run-values.yaml')]);
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'NetworkPolicy/node-eviction',
      'ServiceAccount/node-eviction-agent',
      'ConfigMap/node-eviction-config',
      'ClusterRole/node-eviction',
      'ClusterRoleBinding/node-eviction',
      'Service/node-eviction-metrics',
      'DaemonSet/node-eviction',
      'FlowSchema/node-eviction',
      'PriorityLevelConfiguration/node-eviction',
      'ValidatingAdmissionPolicy/node-eviction-pods',
      'ValidatingAdmissionPolicy/node-eviction-evictions',
      'ValidatingAdmissionPolicy/node-eviction-node',
      'ValidatingAdmissionPolicy/node-eviction-events',
      'ValidatingAdmissionPolicyBinding/node-eviction-pods',
      'ValidatingAdmissionPolicyBinding/node-eviction-evictions',
      'ValidatingAdmissionPolicyBinding/node-eviction-node',
      'ValidatingAdmissionPolicyBinding/node-eviction-events',
      'Pod/node-eviction-test-agents',
    ]);
    for (const o of objects) expect(o.metadata.labels['example.com/team']).toBe('platform');
    const loaded = parseConfigText(configOf(objects), 'config.yaml');
    expect(loaded.agent.actions).toMatchObject({ dryRun: true, hardEviction: 'eviction-api', localTermination: false, localTerminationGracePeriodMs: 5000 });
    expect(loaded.agent.taintEviction).toMatchObject({ enabled: true, useEvictionApi: true, evictionApiDeadlineMs: 120_000 });
    const kubelet = renderChart(['--values', join(VALUE_SETS_DIR, 'kubelet-source-values.yaml')]);
    expect(kubelet.find((o) => o.kind === 'DaemonSet')?.spec.template.spec.containers[0].image).toBe('registry.example.com/platform/kube-eviction-agent:0.1.0-rc.1');
  });

  helmTest('not privileged by default, with exactly KILL and DAC_READ_SEARCH; the value privileged renders what deploy/patches/privileged.yaml patches in', () => {
    const agentOf = (objects: KubeObject[]): KubeObject => (objects.find((o) => o.kind === 'DaemonSet') as KubeObject).spec.template.spec.containers[0];
    const minimal = agentOf(renderChart());
    expect(minimal.securityContext).toEqual({
      runAsUser: 0,
      runAsNonRoot: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['ALL'], add: ['KILL', 'DAC_READ_SEARCH'] },
    });
    // Lowering its OOM score needs CAP_SYS_RESOURCE: not asked for where it would be refused.
    expect((minimal.args as string[]).some((a) => a.startsWith('--oom-score-adj'))).toBe(false);

    const patch = (parse(readFileSync(join(REPO_ROOT, 'deploy', 'patches', 'privileged.yaml'), 'utf8')) as KubeObject).spec.template.spec.containers[0];
    const patched: Record<string, unknown> = { ...minimal.securityContext, ...patch.securityContext };
    // A strategic merge patch deletes a key set to null.
    for (const [key, value] of Object.entries(patched)) if (value === null) delete patched[key];
    const privileged = agentOf(renderChart(['--values', join(VALUE_SETS_DIR, 'privileged-values.yaml')]));
    expect(privileged.securityContext).toEqual(patched);
    expect(privileged.args).toEqual(patch.args);
  });

  // Out of date: eval "$(bash scripts/build-tools.sh)" && bash scripts/render-manifest.sh
  helmTest('deploy/daemonset.yaml and deploy/node-restriction.yaml are the chart rendered with its defaults (scripts/render-manifest.sh)', () => {
    const run = spawnSync('bash', [join(REPO_ROOT, 'scripts', 'render-manifest.sh'), '--check'], { encoding: 'utf8', env: process.env });
    expect({ status: run.status, diff: run.stdout + run.stderr }).toEqual({ status: 0, diff: expect.stringContaining('are up to date') });
  });

  helmTest('a server port of 0 (no health server for the probes) is refused', () => {
    const run = helm(['template', 'x', CHART_DIR, '--set', 'config.server.port=0']);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toContain("config.server.port: 0 turns off the health and metrics server, which the DaemonSet's probes need");
  });

  const probePortCases: { name: string; set: string[]; says: string }[] = [
    { name: 'a probe port of 0 (no probe listener)', set: ['config.server.probePort=0'], says: "config.server.probePort: 0 turns off the probe listener, which the DaemonSet's probes use" },
    { name: 'the probe port on the server port', set: ['config.server.probePort=8080'], says: 'config.server.probePort: must differ from config.server.port (8080): the probes need a port of their own' },
    { name: 'the server port moved onto the probe port', set: ['config.server.port=8081'], says: 'config.server.probePort: must differ from config.server.port (8081): the probes need a port of their own' },
  ];
  helmTest.each(probePortCases)('$name is refused', ({ set, says }) => {
    const run = helm(['template', 'x', CHART_DIR, ...set.flatMap((v) => ['--set', v])]);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 1, stderr: expect.stringContaining(says) });
  });

});

describe('the NetworkPolicy values (real helm)', () => {
  const policyOf = (args: string[]): KubeObject | undefined => renderChart(args).find((o) => o.kind === 'NetworkPolicy');
  const SCRAPERS = [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } } }];
  const NODES = [{ ipBlock: { cidr: '10.0.0.0/16' } }];
  const TEST_POD = [{ podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'kube-eviction-agent', 'app.kubernetes.io/component': 'test' } } }];
  const testPodTo = (port: number): KubeObject => ({ ports: [{ port, protocol: 'TCP' }], from: TEST_POD });
  const cases: { name: string; set: string[]; ingress: KubeObject[] | null }[] = [
    { name: "by default: the scrapers and the release's helm test pod to the metrics port, no one but the node to the probe port", set: [], ingress: [{ ports: [{ port: 8080, protocol: 'TCP' }], from: SCRAPERS }, testPodTo(8080)] },
    {
      name: 'probesFrom: a rule for the probe port, for a CNI that does not admit the node on its own',
      set: ['networkPolicy.probesFrom[0].ipBlock.cidr=10.0.0.0/16'],
      ingress: [
        { ports: [{ port: 8080, protocol: 'TCP' }], from: SCRAPERS },
        { ports: [{ port: 8081, protocol: 'TCP' }], from: NODES },
        testPodTo(8080),
      ],
    },
    {
      name: 'metricsFrom replaced as a whole, on moved ports',
      set: ['networkPolicy.metricsFrom[0].namespaceSelector.matchLabels.team=observability', 'config.server.port=9102', 'config.server.probePort=9103'],
      ingress: [{ ports: [{ port: 9102, protocol: 'TCP' }], from: [{ namespaceSelector: { matchLabels: { team: 'observability' } } }] }, testPodTo(9102)],
    },
    // An empty list admits no one (a rule without `from` would admit everyone).
    { name: "metricsFrom empty: nothing admitted but the node and the helm test pod", set: ['networkPolicy.metricsFrom=null'], ingress: [testPodTo(8080)] },
    { name: 'enabled false: no NetworkPolicy', set: ['networkPolicy.enabled=false'], ingress: null },
  ];
  helmTest.each(cases)('$name', ({ set, ingress }) => {
    const policy = policyOf(set.flatMap((v) => ['--set', v]));
    if (ingress === null) return expect(policy).toBeUndefined();
    expect(policy?.spec).toEqual({ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'kube-eviction-agent', 'app.kubernetes.io/instance': 'kube-eviction-agent' } }, policyTypes: ['Ingress'], ingress });
    expect(objectProblems(policy as KubeObject)).toEqual([]);
  });

  // A misspelt or empty peer would narrow nothing down: the schema refuses both.
  const refused: { set: string; says: string }[] = [
    { set: 'networkPolicy.metricsFrom[0].podSelecter.matchLabels.app=prometheus', says: "at '/networkPolicy/metricsFrom/0': additional properties 'podSelecter' not allowed" },
    { set: 'networkPolicy.probesFrom[0].ipBlock.except[0]=10.0.0.1/32', says: "at '/networkPolicy/probesFrom/0/ipBlock': missing property 'cidr'" },
  ];
  helmTest.each(refused)('--set $set is refused', ({ set, says }) => {
    const run = helm(['template', 'x', CHART_DIR, '--set', set]);
    expect({ status: run.status, lines: run.stderr.split('\n').map((l) => l.replace(/^- /, '')) }).toEqual({ status: 1, lines: expect.arrayContaining([says]) });
  });
});

describe('invalid values: refused at helm template, as check-config refuses the configuration they make (real helm)', () => {
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
  const dir = mkdtempSync(join(tmpdir(), 'kea-chart-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function checkConfigSays(text: string): Promise<string[]> {
    const file = join(dir, 'config.yaml');
    writeFileSync(file, text);
    let output = '';
    const sink = new Writable({ write: (chunk, _enc, done) => ((output += String(chunk)), done()) });
    expect(await checkConfig(file, sink, sink)).toBe(1);
    return output.split('\n').filter((l) => l.startsWith('  - ')).map((l) => l.slice(4).replace(/ \(line \d+\):/, ':'));
  }

  helmTest.each(INVALID_VALUES)('--set $set', async ({ set, helm: helmSays, checkConfig: checkConfigText }) => {
    const run = helm(['template', 'x', CHART_DIR, '--set', set]);
    if (helmSays === null) expect(run.status).toBe(0);
    else expect({ status: run.status, lines: run.stderr.split('\n').map((l) => l.replace(/^- /, '')) }).toEqual({ status: 1, lines: expect.arrayContaining([helmSays]) });
    // The configuration those values would make, past the schema: what the agent would read.
    const unchecked = helm(['template', 'x', CHART_DIR, '--set', set, '--skip-schema-validation']);
    expect(unchecked.status).toBe(0);
    expect(await checkConfigSays(configOf(parseObjects(unchecked.stdout)))).toEqual([checkConfigText]);
  });

  test('docs/deployment.md gives both wordings of every case, word for word', () => {
    const absent = INVALID_VALUES.flatMap((c) => [`\`--set ${c.set}\``, c.helm === null ? null : `helm: \`${c.helm}\``, `check-config: \`${c.checkConfig}\``]).filter((t) => t !== null && !docs.includes(t));
    expect(absent).toEqual([]);
  });
});

describe('install defaults: node restriction, node selector, image digest, host mounts, rollouts (real helm)', () => {
  const daemonSetOf = (objects: KubeObject[]): KubeObject => objects.find((o) => o.kind === 'DaemonSet') as KubeObject;

  helmTest('the node restriction is bound to the release: its namespace, its ServiceAccount, its condition prefix and taint key', () => {
    const objects = renderChart(['--values', join(VALUE_SETS_DIR, 'crio-dry-run-values.yaml')]);
    const policies = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicy');
    expect(policies.map((p) => p.spec.matchConditions)).toEqual(policies.map(() => [{ name: 'the-agent', expression: "request.userInfo.username == 'system:serviceaccount:kube-eviction-agent:node-eviction-agent'" }]));
    const nodePolicy = policies.find((p) => p.metadata.name === 'node-eviction-node') as KubeObject;
    const variables = Object.fromEntries((nodePolicy.spec.variables as KubeObject[]).map((v) => [v.name, v.expression]));
    expect([variables.prefix, variables.taintKey]).toEqual(["'platform.example.com/'", "'platform.example.com/memory-pressure'"]);
    const bindings = objects.filter((o) => o.kind === 'ValidatingAdmissionPolicyBinding');
    expect(bindings.map((b) => b.spec.policyName).sort()).toEqual(policies.map((p) => p.metadata.name).sort());
  });

  helmTest('the removed namespace.create value is refused before anything reaches the cluster', () => {
    const run = helm(['template', 'x', CHART_DIR, '--set', 'namespace.create=true']);
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 1, stderr: expect.stringContaining("additional properties 'namespace' not allowed") });
  });

  helmTest('nodeRestriction.enabled=false renders no policy; a cluster older than 1.32 is refused with the value to set', () => {
    expect(renderChart(['--set', 'nodeRestriction.enabled=false']).filter((o) => String(o.kind).startsWith('ValidatingAdmissionPolicy'))).toEqual([]);
    const old = helm(['template', 'x', CHART_DIR, '--kube-version', '1.31.0']);
    expect({ status: old.status, stderr: old.stderr }).toEqual({ status: 1, stderr: expect.stringContaining('the node restriction needs Kubernetes 1.32 or later') });
    expect(helm(['template', 'x', CHART_DIR, '--kube-version', '1.31.0', '--set', 'nodeRestriction.enabled=false']).status).toBe(0);
  });

  const selectorCases: { name: string; set: string[]; nodeSelector: Record<string, string> | undefined }[] = [
    { name: 'by default, Linux nodes only', set: [], nodeSelector: { 'kubernetes.io/os': 'linux' } },
    { name: "the operator's selector merged in", set: ['nodeSelector.example\\.com/pool=batch'], nodeSelector: { 'kubernetes.io/os': 'linux', 'example.com/pool': 'batch' } },
    { name: 'the OS entry dropped with null', set: ['nodeSelector.kubernetes\\.io/os=null'], nodeSelector: undefined },
  ];
  helmTest.each(selectorCases)('nodeSelector: $name', ({ set, nodeSelector }) => {
    expect(daemonSetOf(renderChart(set.flatMap((v) => ['--set', v]))).spec.template.spec.nodeSelector).toEqual(nodeSelector);
  });

  helmTest('image.digest wins over the tag; a digest that is not sha256:<64 hex> is refused', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const imageOf = (set: string[]): string => daemonSetOf(renderChart(set.flatMap((v) => ['--set', v]))).spec.template.spec.containers[0].image;
    expect(imageOf(['image.repository=registry.example.com/kea', 'image.tag=1.2.3', `image.digest=${digest}`])).toBe(`registry.example.com/kea@${digest}`);
    expect(imageOf(['image.repository=registry.example.com/kea', 'image.tag=1.2.3'])).toBe('registry.example.com/kea:1.2.3');
    const bad = helm(['template', 'x', CHART_DIR, '--set', 'image.digest=latest']);
    expect({ status: bad.status, stderr: bad.stderr }).toEqual({ status: 1, stderr: expect.stringContaining("at '/image/digest'") });
  });

  helmTest('host directories: cgroups and /proc required (type Directory), the others tolerated when absent (type "")', () => {
    for (const set of [[], ['--values', join(VALUE_SETS_DIR, 'crio-dry-run-values.yaml')]]) {
      const volumes = (daemonSetOf(renderChart(set)).spec.template.spec.volumes as KubeObject[]).filter((v) => v.hostPath !== undefined);
      // The node lock's directory is made on first use (it lives in the host's /run, a tmpfs).
      const expected: Record<string, string> = { 'host-node-lock': 'DirectoryOrCreate', 'host-cgroup': 'Directory', 'host-proc': 'Directory', 'host-kubelet': '', 'host-image-fs': '', 'host-pod-logs': '' };
      if (set.length > 0) expected['host-container-fs'] = '';
      // The directories observe.* names (the node lock's directory has a test of its own).
      const types = Object.fromEntries(volumes.filter((v) => Object.hasOwn(expected, v.name) || v.name === 'host-container-fs').map((v) => [v.name, v.hostPath.type]));
      expect(types).toEqual(expected);
    }
  });

  helmTest('rollouts: with surge by default (the new pod stands by, then takes over); maxSurge 0 replaces the old pod first; no lock directory, no mount', () => {
    const strategy = (set: string[]): unknown => daemonSetOf(renderChart(set.flatMap((v) => ['--set', v]))).spec.updateStrategy;
    expect(strategy([])).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } });
    expect(strategy(['maxSurge=0', 'maxUnavailable=10%'])).toEqual({ type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '10%', maxSurge: 0 } });
    const unlocked = daemonSetOf(renderChart(['--set', 'config.nodeLock.directory=']));
    expect((unlocked.spec.template.spec.volumes as KubeObject[]).map((v) => v.name)).not.toContain('host-node-lock');
    const moved = daemonSetOf(renderChart(['--set', 'config.nodeLock.directory=/var/run/kea']));
    expect((moved.spec.template.spec.volumes as KubeObject[]).find((v) => v.name === 'host-node-lock')?.hostPath).toEqual({ path: '/var/run/kea', type: 'DirectoryOrCreate' });
  });

  const checksumOf = (set: string[]): string => daemonSetOf(renderChart(set.flatMap((v) => ['--set', v]))).spec.template.metadata.annotations['checksum/restart-only-config'];
  helmTest('a change to a setting read only at start rolls the pods (the checksum changes); one the agent reloads in place does not', () => {
    const base = checksumOf([]);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    for (const set of ['config.server.port=9100', 'config.observe.imageFsPath=/var/lib/containers', 'config.notifier.mode=psi', 'config.logLevel=debug']) expect({ set, changed: checksumOf([set]) !== base }).toEqual({ set, changed: true });
    for (const set of ['config.evictionHard.memory\\.available=250Mi', 'config.actions.dryRun=true', 'config.reporting.events=false']) expect({ set, changed: checksumOf([set]) !== base }).toEqual({ set, changed: false });
  });

  test("the checksum's sections are exactly those the agent names as requiring a restart", () => {
    const template = readFileSync(join(CHART_DIR, 'templates', 'daemonset.yaml'), 'utf8');
    const picked = /checksum\/restart-only-config: \{\{ pick \(\.Values\.config \| default dict\) ((?:"[A-Za-z]+" ?)+)/.exec(template)?.[1]?.match(/[A-Za-z]+/g);
    const running = parseConfigText('apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\n', 'defaults');
    const restartOnly = Object.keys(running.agent).filter((key) => restartOnlyChanges(running, { ...running, agent: { ...running.agent, [key]: { changed: true } } }).length > 0);
    expect([...(picked ?? [])].sort()).toEqual(restartOnly.sort());
  });
});

describe('helm test and NOTES (real helm)', () => {
  helmTest("the test hook reads every ready agent's /metrics through the headless Service, with the agent's own image, as nobody", () => {
    const digest = `sha256:${'cd'.repeat(32)}`;
    const objects = renderChart(['--set', `image.digest=${digest}`, '--set', 'config.server.port=9100', '--set', 'config.server.probePort=9101']);
    const hook = objects.find((o) => o.kind === 'Pod') as KubeObject;
    const service = objects.find((o) => o.kind === 'Service') as KubeObject;
    expect(hook.metadata.annotations['helm.sh/hook']).toBe('test');
    const container = hook.spec.containers[0];
    expect([container.image, container.command]).toEqual([`kube-eviction-agent@${digest}`, ['node', '-e']]);
    const script = container.args[0] as string;
    expect(script).toContain(`const host = "${service.metadata.name}.kube-eviction-agent.svc";`);
    expect(script).toContain('const port = 9100;');
    expect(service.spec).toMatchObject({ clusterIP: 'None', ports: [{ name: 'http-metrics', port: 9100, targetPort: 'http-metrics', protocol: 'TCP' }] });
    // The script is JavaScript node can compile.
    const compiled = spawnSync(process.execPath, ['--check', '-'], { input: script, encoding: 'utf8' });
    expect({ status: compiled.status, stderr: compiled.stderr }).toEqual({ status: 0, stderr: '' });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(hook.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534 });
    expect(objectProblems(hook)).toEqual([]);
  });

  helmTest('NOTES name the checks to run after install: rollout, pods per node, helm test, conditions under the configured prefix', () => {
    const run = helm(['install', 'guard', CHART_DIR, '--dry-run=client', '--namespace', 'kea-guard', '--set', 'config.reporting.conditionTypePrefix=guard.example.com/']);
    expect(run.status).toBe(0);
    const notes = run.stdout.slice(run.stdout.indexOf('NOTES:'));
    for (const line of ['kubectl -n kea-guard rollout status daemonset/guard-kube-eviction-agent', 'kubectl -n kea-guard get daemonset guard-kube-eviction-agent', 'helm test guard --namespace kea-guard --logs', '@.type=="guard.example.com/MemoryPressure"']) expect(notes).toContain(line);
  });
});

describe('the kubelet source as shipped (real helm)', () => {
  helmTest("kubelet-source-values.yaml reaches this node's kubelet by the pod's status.hostIP and verifies its certificate against the cluster CA the chart mounts", () => {
    const objects = renderChart(['--values', join(VALUE_SETS_DIR, 'kubelet-source-values.yaml')]);
    const configText = configOf(objects);
    expect(parse(configText).observe).toMatchObject({ source: 'kubelet', kubeletUrl: 'https://$(NODE_IP):10250', kubeletCaFile: '/etc/kubernetes/pki/ca.crt' });
    const { observe } = parseConfigText(configText, 'config.yaml').agent;
    expect({ url: observe.kubeletUrl, insecure: observe.kubeletInsecureSkipVerify }).toEqual({ url: `https://${process.env.NODE_IP ?? ''}:10250`, insecure: false });
    const pod = (objects.find((o) => o.kind === 'DaemonSet') as KubeObject).spec.template.spec;
    expect(pod.hostNetwork).toBeUndefined();
    expect((pod.containers[0].env as KubeObject[]).find((e) => e.name === 'NODE_IP')).toEqual({ name: 'NODE_IP', valueFrom: { fieldRef: { fieldPath: 'status.hostIP' } } });
    expect((pod.volumes as KubeObject[]).find((v) => v.name === 'host-kubelet-ca')?.hostPath).toEqual({ path: '/etc/kubernetes/pki/ca.crt', type: 'File' });
    expect((pod.containers[0].volumeMounts as KubeObject[]).find((m) => m.name === 'host-kubelet-ca')).toEqual({ name: 'host-kubelet-ca', mountPath: '/host/etc/kubernetes/pki/ca.crt', readOnly: true });
  });
});
