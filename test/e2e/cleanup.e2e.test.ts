// An uninstall leaves nothing, against a real kube-apiserver, as the agent's own ServiceAccount:
// the real `run` process, stopped with SIGTERM, leaves its conditions Unknown and takes its taint
// off; `cleanup --dry-run` then changes nothing; `cleanup` removes the agent's conditions and taint
// from every Node and leaves the kubelet's conditions, a foreign condition and a foreign taint as
// they were. Both run as the built command line (dist/src/main.js), as an operator runs them. And
// the uninstall's shell block in docs/deployment.md makes a cleanup pod the API server admits.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeInfoOf, thisHostIdentity } from '../../src/host/host-identity.js';
import { CONTENT_TYPE, type ApiClient } from './harness/api-client.js';
import { findKubectl, REPO_ROOT } from './harness/binaries.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { ManagedProcess } from './harness/managed-process.js';
import { loadManifest } from './harness/manifest.js';
import { e2eSuite } from './harness/suite.js';
import { waitFor } from './harness/wait.js';
import { assertBuilt, CLI, runCliAsync } from '../cli/run-cli.js';

const PREFIX = 'kube-eviction-agent.io/';
const AGENT_TAINT = 'kube-eviction-agent.io/pressure';
const FOREIGN_TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const FOREIGN_CONDITION_TYPE = 'example.com/DiskHealthy';

interface NodeObject {
  metadata: { name: string; resourceVersion: string };
  spec?: { taints?: { key: string; value?: string; effect: string }[] };
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

const suite = e2eSuite({ nodeNames: [] });

function condition(type: string, status: string, reason: string): Record<string, string> {
  const now = `${new Date().toISOString().slice(0, 19)}Z`;
  return { type, status, reason, message: `${reason} (set by the test)`, lastHeartbeatTime: now, lastTransitionTime: now };
}

/** A Node as a kubelet on this machine registers it (this host's identity), plus a foreign condition and taint. */
async function createNode(admin: ApiClient, name: string, extra: { conditions?: object[]; taints?: object[] } = {}): Promise<void> {
  await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } }, spec: { taints: [FOREIGN_TAINT, ...(extra.taints ?? [])] } });
  const resources = { cpu: '2', memory: '8Gi', pods: '110' };
  await admin.patch(
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        capacity: resources,
        allocatable: resources,
        conditions: [condition('Ready', 'True', 'KubeletReady'), condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'), condition(FOREIGN_CONDITION_TYPE, 'True', 'SmartOk'), ...(extra.conditions ?? [])],
        nodeInfo: nodeInfoOf(thisHostIdentity()),
      },
    },
    CONTENT_TYPE.strategicMergePatch,
  );
}

const getNode = (admin: ApiClient, name: string): Promise<NodeObject> => admin.get<NodeObject>(`/api/v1/nodes/${name}`);
const conditionsOf = (node: NodeObject): Record<string, string> => Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c.status]));
// The cleanup command sees none of this process's environment (no KUBECONFIG): only its flags.
const CLEAN_ENV = { PATH: process.env.PATH ?? '' };

const taintsOf = (node: NodeObject): string[] => (node.spec?.taints ?? []).map((t) => `${t.key}:${t.effect}`);

suite.test('uninstall: the real run process on SIGTERM leaves its conditions Unknown and no taint; cleanup --dry-run changes nothing; cleanup removes only the agent\'s conditions and taint (real kube-apiserver, as the agent\'s ServiceAccount)', async (context) => {
  const { admin, plane, identity } = context;
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'kea-e2e-cleanup-'));
  context.defer(() => rmSync(dir, { recursive: true, force: true }));
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml({ server: plane.url, caPem: plane.caPem, token: identity.token, user: 'kube-eviction-agent' }), { mode: 0o600 });

  // The node the agent runs on, and one an earlier agent left marked (its conditions and taint).
  await createNode(admin, 'node-run');
  await createNode(admin, 'node-left', {
    conditions: [condition(`${PREFIX}MemoryPressure`, 'True', 'AgentHasInsufficientMemory'), condition(`${PREFIX}DiskPressure`, 'Unknown', 'AgentStopped'), condition(`${PREFIX}PIDPressure`, 'False', 'AgentHasSufficientPID')],
    taints: [{ key: AGENT_TAINT, value: '', effect: 'NoSchedule' }],
  });
  context.defer(async () => {
    for (const name of ['node-run', 'node-left']) await admin.request('DELETE', `/api/v1/nodes/${name}`);
  });
  // Everyone else's taints, per node: the foreign one, and what the API server's admission adds to
  // a new Node (node.kubernetes.io/not-ready, which no node controller here takes off).
  const othersTaints: Record<string, string[]> = {};
  for (const name of ['node-run', 'node-left']) othersTaints[name] = taintsOf(await getNode(admin, name)).filter((t) => t !== `${AGENT_TAINT}:NoSchedule`);
  expect(othersTaints['node-run']).toContain('dedicated:NoSchedule');

  // The real agent, on this host: a hard threshold no machine meets the other side of, so memory
  // pressure holds at once, its conditions are set and its taint goes on.
  const config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    `apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: 1Ti
housekeepingInterval: 1s
notifier:
  mode: disabled
reporting:
  taint:
    enabled: true
server:
  address: 127.0.0.1
  port: 0
oomKills:
  enabled: false
`,
  );
  const agent = ManagedProcess.start('run', process.execPath, [CLI, 'run', '--config', config, '--kubeconfig', kubeconfig, '--node-name', 'node-run', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '' },
    logFile: join(dir, 'run.log'),
    cwd: REPO_ROOT,
  });
  context.defer(async () => {
    await agent.stop('SIGKILL', 1_000);
  });
  context.addDiagnostics(() => `${agent.describeExit()}\n${agent.logTail(40)}`);
  await waitFor(
    async () => {
      if (!agent.running) throw new Error(`the agent exited: ${agent.describeExit()}\n${agent.logTail(40)}`);
      const node = await getNode(admin, 'node-run');
      return conditionsOf(node)[`${PREFIX}MemoryPressure`] === 'True' && taintsOf(node).includes(`${AGENT_TAINT}:NoSchedule`);
    },
    { what: 'the running agent\'s MemoryPressure True and its taint on node-run', timeoutMs: 30_000, detail: () => agent.logTail(20) },
  );

  const stopAtMs = Date.now();
  const exit = await agent.stop('SIGTERM', 5_000);
  const stoppedInMs = Date.now() - stopAtMs;
  expect(exit).toEqual({ code: 0, signal: null });
  expect(stoppedInMs).toBeLessThan(5_000);
  const stopped = await getNode(admin, 'node-run');
  const agentConditions = (stopped.status?.conditions ?? []).filter((c) => c.type.startsWith(PREFIX));
  expect(agentConditions.map((c) => [c.type, c.status, c.reason])).toEqual([
    [`${PREFIX}MemoryPressure`, 'Unknown', 'AgentStopped'],
    [`${PREFIX}DiskPressure`, 'Unknown', 'AgentStopped'],
    [`${PREFIX}PIDPressure`, 'Unknown', 'AgentStopped'],
  ]);
  expect(taintsOf(stopped)).toEqual(othersTaints['node-run']);
  console.log(`SIGTERM: the agent exited 0 in ${stoppedInMs} ms, its conditions Unknown (AgentStopped) and its taint off`);

  // cleanup --dry-run: says what would go on both nodes, and nothing changes.
  const before = await Promise.all(['node-run', 'node-left'].map((name) => getNode(admin, name)));
  const dryRun = await runCliAsync(['cleanup', '--all-nodes', '--dry-run', '--kubeconfig', kubeconfig], CLEAN_ENV);
  expect(dryRun.status).toBe(0);
  expect(dryRun.stdout.trim().split('\n').sort()).toEqual([
    `node-left: would remove conditions ${PREFIX}MemoryPressure, ${PREFIX}DiskPressure, ${PREFIX}PIDPressure; taint ${AGENT_TAINT}:NoSchedule (dry run: nothing changed)`,
    `node-run: would remove conditions ${PREFIX}MemoryPressure, ${PREFIX}DiskPressure, ${PREFIX}PIDPressure (dry run: nothing changed)`,
  ]);
  const afterDryRun = await Promise.all(['node-run', 'node-left'].map((name) => getNode(admin, name)));
  expect(afterDryRun.map((n) => n.metadata.resourceVersion)).toEqual(before.map((n) => n.metadata.resourceVersion));

  // cleanup: only the foreign conditions and taint remain, everything else of theirs as it was.
  const cleanup = await runCliAsync(['cleanup', '--all-nodes', '--kubeconfig', kubeconfig], CLEAN_ENV);
  expect(cleanup.stderr).toMatch(/cleanup: 2 node\(s\): 2 cleaned, 0 already clean, 0 gone, 0 failed/);
  expect(cleanup.status).toBe(0);
  for (const [index, name] of ['node-run', 'node-left'].entries()) {
    const node = await getNode(admin, name);
    expect(conditionsOf(node)).toEqual({ Ready: 'True', MemoryPressure: 'False', [FOREIGN_CONDITION_TYPE]: 'True' });
    expect(taintsOf(node)).toEqual(othersTaints[name]);
    const foreign = (c: { type: string }): boolean => !c.type.startsWith(PREFIX);
    expect(node.status?.conditions).toEqual(before[index]?.status?.conditions?.filter(foreign));
  }
  // Again: nothing left to remove.
  const again = await runCliAsync(['cleanup', '--all-nodes', '--kubeconfig', kubeconfig], CLEAN_ENV);
  expect(again).toMatchObject({ status: 0 });
  expect(again.stdout.trim().split('\n').sort()).toEqual(["node-left: nothing of the agent's on it", "node-run: nothing of the agent's on it"]);
}, 120_000);

// The documented uninstall, as written in docs/deployment.md: its shell block runs in bash with
// `kubectl` standing for the built kubectl (only its `run`, as a server-side dry run, not attached)
// and `helm` doing nothing, so the quoting, the overrides and the names are what the API server sees.
suite.test('the documented uninstall\'s cleanup pod is admitted by the API server as the agent\'s ServiceAccount with its configuration mounted (kubectl run --dry-run=server, real kube-apiserver)', async ({ plane }) => {
  const kubectl = findKubectl();
  if (kubectl === null) {
    console.log('skipped: no kubectl in the cache (KEA_KUBECTL_BIN unset)');
    return;
  }
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
  const block = [...docs.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((text) => text.includes('run kube-eviction-agent-cleanup'));
  if (block === undefined) throw new Error('docs/deployment.md has no shell block running kube-eviction-agent-cleanup');
  const dir = mkdtempSync(join(tmpdir(), 'kea-e2e-uninstall-'));
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigYaml({ server: plane.url, caPem: plane.caPem, token: plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
    const out = join(dir, 'pod.json');
    const script = `set -euo pipefail
kubectl() {
  case " $* " in *" run "*) ;; *) return 0 ;; esac
  local args=()
  for arg in "$@"; do case "$arg" in --rm|-i) ;; *) args+=("$arg") ;; esac; done
  "$KEA_KUBECTL" --kubeconfig "$KEA_KUBECONFIG" "\${args[@]}" --dry-run=server -o json > "$KEA_OUT"
}
helm() { :; }
${block}`;
    // HOME and the working directory in the scratch directory: kubectl keeps its discovery cache under $HOME/.kube.
    const result = spawnSync('bash', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 60_000, env: { PATH: process.env.PATH ?? '', HOME: dir, KEA_KUBECTL: kubectl, KEA_KUBECONFIG: kubeconfig, KEA_OUT: out } });
    expect(result.status === 0 ? '' : `exit ${result.status}\n${result.stdout}\n${result.stderr}`).toBe('');
    const pod = JSON.parse(readFileSync(out, 'utf8')) as {
      metadata: { namespace: string };
      spec: { serviceAccountName: string; automountServiceAccountToken: boolean; volumes: { name: string; configMap?: { name: string } }[]; containers: { image: string; args: string[]; volumeMounts: { name: string; mountPath: string }[] }[] };
    };
    const manifest = loadManifest();
    const serviceAccount = manifest.find((o) => o.kind === 'ServiceAccount');
    const configMap = manifest.find((o) => o.kind === 'ConfigMap');
    expect(pod.metadata.namespace).toBe(serviceAccount?.metadata.namespace);
    expect(pod.spec.serviceAccountName).toBe(serviceAccount?.metadata.name);
    expect(pod.spec.automountServiceAccountToken).toBe(true);
    expect(pod.spec.volumes.find((v) => v.name === 'config')?.configMap?.name).toBe(configMap?.metadata.name);
    expect(pod.spec.containers).toHaveLength(1);
    expect(pod.spec.containers[0]?.image).toBe('registry.example.com/kube-eviction-agent:0.1.0');
    expect(pod.spec.containers[0]?.args).toEqual(['cleanup', '--all-nodes', '--config', '/etc/kube-eviction-agent/config.yaml']);
    expect(pod.spec.containers[0]?.volumeMounts).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'config', mountPath: '/etc/kube-eviction-agent' })]));
    // The file the DaemonSet's agent reads is the one mounted there.
    expect(readFileSync(join(REPO_ROOT, 'deploy', 'daemonset.yaml'), 'utf8')).toContain('--config=/etc/kube-eviction-agent/config.yaml');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
