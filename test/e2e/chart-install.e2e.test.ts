// The chart installed with the real helm on the real kube-apiserver (no kubelet: pods are created
// and admitted, never run). First the README's install commands, parsed out of README.md and run as
// written (only $KUBECONFIG and the helm and kubectl binaries are supplied), on an API server where
// nothing of the agent exists: every object of the release is created, the namespace carries the Pod
// Security labels, the deployment guide's `helm upgrade` applies, `helm test` creates its pod, and
// `helm uninstall` removes the release. Then a release with another name, namespace, ServiceAccount,
// condition prefix and taint key: its node restriction refuses that ServiceAccount's forbidden
// writes and admits its allowed ones, with a token bound to a pod on node-a.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CHART_DIR, HELM_BIN, HELM_SKIP_REASON, parseObjects } from '../deploy/helm.js';
import type { KubeObject } from '../deploy/manifest.js';
import { blockAfterHeading, DEPLOYMENT_DOC_PATH, readmeInstallCommands, runCommands, shellCommands, type CommandRun } from '../deploy/readme-commands.js';
import { readFileSync } from 'node:fs';
import { CONTENT_TYPE, type ApiClient, type ApiResponse } from './harness/api-client.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { describeObject, objectPath, type ManifestObject } from './harness/manifest.js';
import { e2eSuite, type TestContext } from './harness/suite.js';
import { waitFor } from './harness/wait.js';

const KUBECTL_BIN = process.env.KEA_KUBECTL_BIN ?? null;
const skipReasons = [HELM_SKIP_REASON, KUBECTL_BIN === null ? 'KEA_KUBECTL_BIN is not set: run eval "$(bash scripts/e2e-env.sh)" (CI does)' : null].filter((r): r is string => r !== null);
const suite = e2eSuite({ nodeNames: ['node-a', 'node-b'], skipReasons });

interface Tools {
  readonly kubeconfig: string;
  readonly helmHome: string;
  run(commands: string[][]): CommandRun[];
}

// A kubeconfig with the suite's admin credentials, as an operator's would be, and helm's homes in
// a directory of the test's own.
function tools(context: TestContext): Tools {
  const dir = mkdtempSync(join(tmpdir(), 'kea-chart-install-'));
  context.defer(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml({ server: context.plane.url, caPem: context.plane.caPem, token: context.plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
  const options = { kubeconfig, helmHome: dir, binaries: { helm: HELM_BIN as string, kubectl: KUBECTL_BIN as string } };
  return { kubeconfig, helmHome: dir, run: (commands) => runCommands(commands.map((argv) => ({ text: argv.join(' '), argv })), options) };
}

function describeRuns(runs: readonly CommandRun[]): string {
  return runs.map((r) => `$ ${r.command}\n(exit ${String(r.status)})\n${r.stdout}${r.stderr}`).join('\n');
}

function expectSucceeded(runs: readonly CommandRun[], count: number): void {
  expect({ runs: runs.length, failed: runs.filter((r) => r.status !== 0).map((r) => describeRuns([r])) }).toEqual({ runs: count, failed: [] });
}

async function status(api: ApiClient, path: string): Promise<number> {
  return (await api.request('GET', path)).status;
}

// The suite applies the agent's identity (namespace kube-eviction-agent, its ServiceAccount and
// ClusterRole) for other tests; an empty cluster has none of it. Without a namespace controller
// the namespace is finalized by hand once its one object is gone.
async function emptyCluster(context: TestContext): Promise<void> {
  const { admin, identity } = context;
  const ns = identity.namespace;
  await admin.request('DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/${identity.serviceAccount}`);
  await admin.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterroles/${identity.clusterRole}`);
  await admin.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${identity.clusterRole}`);
  await admin.request('DELETE', `/api/v1/namespaces/${ns}`);
  await admin.request('PUT', `/api/v1/namespaces/${ns}/finalize`, { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns }, spec: { finalizers: [] } } });
  await waitFor(async () => (await status(admin, `/api/v1/namespaces/${ns}`)) === 404, { what: `namespace ${ns} gone`, timeoutMs: 30_000 });
  expect(await status(admin, `/apis/rbac.authorization.k8s.io/v1/clusterroles/${identity.clusterRole}`)).toBe(404);
}

suite.test("the README's install commands, as written, install the chart on an empty cluster; the guide's helm upgrade, helm test and helm uninstall work (real helm, real kube-apiserver)", async (context) => {
  const { admin } = context;
  await emptyCluster(context);
  const tool = tools(context);
  const commands = readmeInstallCommands();
  const installed = runCommands(commands, { kubeconfig: tool.kubeconfig, helmHome: tool.helmHome, binaries: { helm: HELM_BIN as string, kubectl: KUBECTL_BIN as string } });
  context.addDiagnostics(() => describeRuns(installed));
  expectSucceeded(installed, commands.length);

  // The namespace the release lives in, labelled for the agent's privileged pod.
  const namespace = await admin.get<{ metadata: { labels: Record<string, string> } }>('/api/v1/namespaces/kube-eviction-agent');
  expect(namespace.metadata.labels).toMatchObject({ 'pod-security.kubernetes.io/enforce': 'privileged', 'pod-security.kubernetes.io/warn': 'privileged', 'pod-security.kubernetes.io/audit': 'privileged' });

  // Every object of the release exists.
  const [manifest] = tool.run([['helm', 'get', 'manifest', 'kube-eviction-agent', '--namespace', 'kube-eviction-agent']]);
  const objects = parseObjects(manifest?.stdout ?? '') as ManifestObject[];
  expect(objects.map((o) => o.kind).sort()).toEqual(
    ['ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'DaemonSet', 'NetworkPolicy', 'Service', 'ServiceAccount', ...Array<string>(4).fill('ValidatingAdmissionPolicy'), ...Array<string>(4).fill('ValidatingAdmissionPolicyBinding')].sort(),
  );
  const missing: string[] = [];
  for (const object of objects) if ((await status(admin, await objectPath(admin, object))) !== 200) missing.push(describeObject(object));
  expect(missing).toEqual([]);
  const daemonSet = await admin.get<KubeObject>('/apis/apps/v1/namespaces/kube-eviction-agent/daemonsets/kube-eviction-agent');
  expect(daemonSet.spec.template.spec.containers[0].image).toBe('registry.example.com/kube-eviction-agent:0.1.0');
  expect(daemonSet.spec.template.spec.nodeSelector).toEqual({ 'kubernetes.io/os': 'linux' });

  // The deployment guide's helm upgrade: its settings reach the ConfigMap, the image is kept.
  const upgrade = shellCommands(blockAfterHeading(readFileSync(DEPLOYMENT_DOC_PATH, 'utf8'), '## The Helm chart').body);
  const upgraded = runCommands(upgrade, { kubeconfig: tool.kubeconfig, helmHome: tool.helmHome, binaries: { helm: HELM_BIN as string } });
  context.addDiagnostics(() => describeRuns(upgraded));
  expectSucceeded(upgraded, upgrade.length);
  const configMap = await admin.get<KubeObject>('/api/v1/namespaces/kube-eviction-agent/configmaps/kube-eviction-agent-config');
  const config = parse(configMap.data['config.yaml'] as string) as KubeObject;
  expect({ mode: config.notifier.mode, soft: config.evictionSoft['memory.available'], dryRun: config.actions.dryRun }).toEqual({ mode: 'psi', soft: '500Mi', dryRun: true });
  const rolled = await admin.get<KubeObject>('/apis/apps/v1/namespaces/kube-eviction-agent/daemonsets/kube-eviction-agent');
  expect(rolled.spec.template.spec.containers[0].image).toBe('registry.example.com/kube-eviction-agent:0.1.0');
  // notifier.mode is read only at start: the pod template changed, so the pods roll.
  expect(rolled.spec.template.metadata.annotations['checksum/restart-only-config']).not.toBe(daemonSet.spec.template.metadata.annotations['checksum/restart-only-config']);

  // helm test creates its pod (admitted in the labelled namespace); no kubelet runs it here, so it
  // cannot pass: it times out waiting.
  const [tested] = tool.run([['helm', 'test', 'kube-eviction-agent', '--namespace', 'kube-eviction-agent', '--timeout', '5s']]);
  expect(tested?.status).not.toBe(0);
  const testPod = await admin.get<KubeObject>('/api/v1/namespaces/kube-eviction-agent/pods/kube-eviction-agent-test-agents');
  expect(testPod.metadata.annotations['helm.sh/hook']).toBe('test');
  expect(testPod.spec.containers[0].command).toEqual(['node', '-e']);

  // helm uninstall removes the release's objects (the namespace is the operator's).
  const uninstalled = tool.run([['helm', 'uninstall', 'kube-eviction-agent', '--namespace', 'kube-eviction-agent', '--wait', '--timeout', '60s']]);
  context.addDiagnostics(() => describeRuns(uninstalled));
  expectSucceeded(uninstalled, 1);
  const left: string[] = [];
  for (const object of objects) if (object.kind !== 'DaemonSet' && (await status(admin, await objectPath(admin, object))) !== 404) left.push(describeObject(object));
  expect(left).toEqual([]);
}, 240_000);

const RELEASE = { name: 'guard', namespace: 'kea-guard', serviceAccount: 'node-guard', prefix: 'guard.example.com/', taintKey: 'taints.example.com/agent-pressure' };

function condition(type: string): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { status: { conditions: [{ type, status: 'False', reason: 'Test', message: 'set by the test', lastHeartbeatTime: now, lastTransitionTime: now }] } };
}

function summary(response: ApiResponse): string {
  const body = response.body as { message?: string } | undefined;
  return `${response.status} ${body?.message ?? response.text.slice(0, 300)}`;
}

suite.test("a release with its own name, namespace, ServiceAccount, condition prefix and taint key: its node restriction refuses that ServiceAccount's forbidden writes and admits its allowed ones (real helm, real kube-apiserver)", async (context) => {
  const { admin, plane } = context;
  const tool = tools(context);
  const installed = tool.run([
    [
      'helm', 'install', RELEASE.name, CHART_DIR, '--namespace', RELEASE.namespace, '--create-namespace',
      '--set', `serviceAccount.name=${RELEASE.serviceAccount}`,
      '--set', `config.reporting.conditionTypePrefix=${RELEASE.prefix}`,
      '--set', `config.reporting.taint.key=${RELEASE.taintKey}`,
    ],
  ]);
  context.addDiagnostics(() => describeRuns(installed));
  expectSucceeded(installed, 1);
  context.defer(() => void tool.run([['helm', 'uninstall', RELEASE.name, '--namespace', RELEASE.namespace]]));

  for (const name of ['node-a', 'node-b']) await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  context.defer(async () => {
    for (const name of ['node-a', 'node-b']) await admin.request('DELETE', `/api/v1/nodes/${name}`);
  });
  // The agent's pod on node-a (created by hand: no DaemonSet controller runs) and the token the
  // kubelet would mount into it, which names node-a.
  const pod = await admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${RELEASE.namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'agent-on-node-a' },
    spec: { serviceAccountName: RELEASE.serviceAccount, nodeName: 'node-a', containers: [{ name: 'agent', image: 'registry.example.com/kube-eviction-agent:0.1.0' }] },
  });
  const token = await admin.create<{ status: { token: string } }>(`/api/v1/namespaces/${RELEASE.namespace}/serviceaccounts/${RELEASE.serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: 'agent-on-node-a', uid: pod.metadata.uid } },
  });
  const agent = plane.client(token.status.token);
  // As the agent taints: read the Node, then patch its taints (the API server's own not-ready taint
  // among them) with that resourceVersion.
  const patchTaints = async (add: Record<string, string>[]): Promise<ApiResponse> => {
    const node = await admin.get<{ metadata: { resourceVersion: string }; spec: { taints?: Record<string, string>[] } }>('/api/v1/nodes/node-a');
    const taints = [...(node.spec.taints ?? []).filter((t) => t.key !== RELEASE.taintKey), ...add];
    return agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints } } });
  };
  const patchStatus = (node: string, type: string): Promise<ApiResponse> => agent.request('PATCH', `/api/v1/nodes/${node}/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: condition(type) });

  // The policies take effect once the API server's admission has loaded them.
  let last = '';
  await waitFor(
    async () => {
      const response = await agent.request('PATCH', '/api/v1/nodes/node-b/status', { query: { dryRun: 'All' }, contentType: CONTENT_TYPE.strategicMergePatch, body: condition(`${RELEASE.prefix}Probe`) });
      last = summary(response);
      return response.status === 403;
    },
    { what: "the release's node restriction to take effect", timeoutMs: 30_000, intervalMs: 250, detail: () => `last answer: ${last}` },
  );

  const cases: { name: string; send: () => Promise<ApiResponse>; status: number; message?: string }[] = [
    { name: "its own condition (the release's prefix) on node-a", send: () => patchStatus('node-a', `${RELEASE.prefix}MemoryPressure`), status: 200 },
    {
      name: 'a condition under the default prefix, which is not this release\'s, on node-a',
      send: () => patchStatus('node-a', 'kube-eviction-agent.io/MemoryPressure'),
      status: 403,
      message: `kube-eviction-agent may write only its own conditions (${RELEASE.prefix}...) in the status of node node-a: this request changes conditions`,
    },
    { name: 'its own condition on node-b', send: () => patchStatus('node-b', `${RELEASE.prefix}MemoryPressure`), status: 403, message: 'kube-eviction-agent on node node-a may change only its own Node, not node node-b' },
    {
      name: 'its own NoSchedule taint (the release\'s taint key, outside the prefix) on node-a',
      send: () => patchTaints([{ key: RELEASE.taintKey, value: 'memory', effect: 'NoSchedule' }]),
      status: 200,
    },
    {
      name: 'a taint of another key on node-a',
      send: () => patchTaints([{ key: 'example.com/dedicated', value: 'batch', effect: 'NoSchedule' }]),
      status: 403,
      message: `kube-eviction-agent may add or remove only its own NoSchedule taints (${RELEASE.prefix}...) on node node-a`,
    },
  ];
  const answers: { name: string; status: number; message?: string }[] = [];
  for (const c of cases) {
    const response = await c.send();
    const body = response.body as { message?: string } | undefined;
    answers.push({ name: c.name, status: response.status, ...(c.message === undefined && response.status === c.status ? {} : { message: body?.message ?? response.text }) });
  }
  expect(answers).toEqual(cases.map((c) => ({ name: c.name, status: c.status, ...(c.message === undefined ? {} : { message: expect.stringContaining(c.message) as unknown as string }) })));

  // An administrator's writes are never evaluated.
  expect((await admin.request('PATCH', '/api/v1/nodes/node-b', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { labels: { 'example.com/pool': 'batch' } } } })).status).toBe(200);
}, 180_000);
