// The agent deployed as shipped (root, cgroup v1, real kube-apiserver, controller manager,
// scheduler, kubelet, containerd, CNI bridge and kube-proxy: harness/cluster.ts): its image, built
// here without a container engine (scripts/build-image.sh) and imported into the node's containerd,
// run by the README's own `helm install` of deploy/chart as the DaemonSet's pod, which the
// DaemonSet controller creates and the scheduler binds. The pod runs with the chart's
// securityContext, probes, mounts and resources unchanged (not privileged, two capabilities,
// RuntimeDefault seccomp) and reaches the API server through the `kubernetes` Service with its
// in-cluster configuration. The tests share the one cluster and run in order: install, the node's
// paths and thresholds set by `helm upgrade`, evictions, the node restriction from inside the pod,
// the metrics and alert rules, a refused upgrade, uninstall and cleanup, then `kubectl apply -f
// deploy/`.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { readmeInstallCommands, runCommands } from '../deploy/readme-commands.js';
import { agentImage } from './harness/agent-image.js';
import { findClusterBinaries, findKubectl, findRealNodeBinaries, REPO_ROOT } from './harness/binaries.js';
import { Cluster } from './harness/cluster.js';
import { K8S_NAMESPACE } from './harness/containerd.js';
import { DeployedAgent } from './harness/deployed-agent.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { createNamespace, createPod, listEvents, nodeCondition, type EventLike, type PodLike } from './harness/objects.js';
import { nodeImages, type RealNode } from './harness/real-node.js';
import { podCgroupUids, realPod, startRealNodeScenario, type RealNodeScenario } from './harness/real-node-scenario.js';
import { Recorder } from './harness/recorder.js';
import { e2eSuite, type TestContext } from './harness/suite.js';
import { waitFor } from './harness/wait.js';
import type { KubeObject } from './harness/list-watch.js';

const MiB = 1024 * 1024;
const NODE = 'deployed-node';
const OTHER_NODE = 'deployed-other-node';
const RELEASE = 'kube-eviction-agent';
const RELEASE_NAMESPACE = 'kube-eviction-agent';
const AGENT_SELECTOR = `app.kubernetes.io/name=kube-eviction-agent,app.kubernetes.io/instance=${RELEASE}`;
const KUBEPODS_LIMIT_BYTES = 1536n * BigInt(MiB);
const MEMORY_CONDITION = 'kube-eviction-agent.io/MemoryPressure';
// The kubelet's own thresholds sit below the agent's: if both see pressure, the agent acts first.
const KUBELET_EVICTION_HARD = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const AGENT_EVICTION_HARD = { 'memory.available': '400Mi', 'nodefs.available': '40%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
// The image the README's command names (image.repository, the chart's appVersion as the tag): the
// image built here is tagged so in the node's containerd, so the command runs as written.
const README_IMAGE = 'registry.example.com/kube-eviction-agent:0.1.0';

const binaries = findRealNodeBinaries();
const clusterBinaries = findClusterBinaries();
const images = nodeImages();
const helmBin = process.env.KEA_HELM_BIN;
const kubectlBin = findKubectl();
const image = await agentImage();
const suite = e2eSuite<Cluster>({
  nodeNames: [NODE],
  needsCgroupV1: true,
  emptyCluster: true,
  serviceAccountAdmission: true,
  skipReasons: [
    ...(binaries.ok ? [] : [binaries.reason]),
    ...(clusterBinaries.ok ? [] : [clusterBinaries.reason]),
    ...(images.ok ? [] : [images.reason]),
    ...(image.ok ? [] : [image.reason]),
    ...(helmBin === undefined || helmBin === '' ? ['KEA_HELM_BIN is not set: run eval "$(bash scripts/build-tools.sh)"'] : []),
    ...(kubectlBin === null ? ['kubectl is not built: run eval "$(bash scripts/e2e-env.sh)"'] : []),
  ],
  fixture: {
    start: async ({ plane }) => {
      if (!binaries.ok || !clusterBinaries.ok || !images.ok || !image.ok) throw new Error('unreachable: the suite skips without binaries or images');
      const cluster = await Cluster.start({
        plane,
        binaries: binaries.binaries,
        clusterBinaries: clusterBinaries.binaries,
        nodeName: NODE,
        imagesTar: images.binaries,
        extraImages: [image.binaries.archive],
        kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES,
        rootDirSizeBytes: 256n * BigInt(MiB),
        evictionHard: KUBELET_EVICTION_HARD,
        podPidsLimit: 1024,
      });
      await cluster.realNode.containerd?.ctr(['-n', K8S_NAMESPACE, 'images', 'tag', '--force', image.binaries.ref, README_IMAGE]);
      return cluster;
    },
    stop: (cluster) => cluster.stop(),
    diagnostics: (cluster) => `cluster:\n${cluster.diagnostics()}`,
  },
});

type Context = TestContext<Cluster>;

// helm and kubectl as an operator runs them: a kubeconfig with the administrator's credentials, a
// helm home of the test's own.
const operatorDir = mkdtempSync(join(tmpdir(), 'kea-e2e-operator-'));
afterAll(() => rmSync(operatorDir, { recursive: true, force: true }));

function operator(context: Context): { kubeconfig: string; run(program: 'helm' | 'kubectl', args: readonly string[]): { status: number | null; stdout: string; stderr: string } } {
  const kubeconfig = join(operatorDir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml({ server: context.plane.url, caPem: context.plane.caPem, token: context.plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
  return {
    kubeconfig,
    run(program, args) {
      const bin = program === 'helm' ? helmBin : kubectlBin;
      const env = { PATH: process.env.PATH, KUBECONFIG: kubeconfig, HOME: operatorDir, HELM_CACHE_HOME: join(operatorDir, 'cache'), HELM_CONFIG_HOME: join(operatorDir, 'config'), HELM_DATA_HOME: join(operatorDir, 'data') };
      const done = spawnSync(bin as string, args, { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 180_000 });
      return { status: done.status, stdout: done.stdout, stderr: done.stderr };
    },
  };
}

function mustRun(context: Context, program: 'helm' | 'kubectl', args: readonly string[]): string {
  const done = operator(context).run(program, args);
  if (done.status !== 0) throw new Error(`${program} ${args.join(' ')} exited ${done.status}:\n${done.stderr}\n${done.stdout}`);
  return done.stdout;
}

// What an operator sets for this node: its kubelet's cgroup root (not the default), the
// thresholds, and fast passes so the test does not wait on the defaults' minutes.
function nodeValues(cluster: Cluster, extraConfig: Readonly<Record<string, unknown>> = {}): string {
  const node = cluster.realNode;
  const file = join(operatorDir, `values-${Date.now()}.yaml`);
  writeFileSync(
    file,
    stringify({
      config: {
        evictionHard: AGENT_EVICTION_HARD,
        evictionSoft: null,
        evictionSoftGracePeriod: null,
        evictionPressureTransitionPeriod: '5s',
        housekeepingInterval: '1s',
        // The node keeps its directories where the defaults look (/var/lib/kubelet, ...), but its
        // kubelet's cgroup root is its own.
        observe: { podCgroupRoot: node.podCgroupRoot, diskUsageInterval: '1s' },
        notifier: { mode: 'memcg-v1' },
        logLevel: 'debug',
        ...extraConfig,
      },
    }),
  );
  return file;
}

async function agentPod(context: Context, timeoutMs = 120_000): Promise<DeployedAgent> {
  return DeployedAgent.waitReady(context.admin, context.fixture.realNode, RELEASE_NAMESPACE, AGENT_SELECTOR, timeoutMs);
}

// The DaemonSet's pod after a rollout: Ready, and not the one given.
async function nextAgentPod(context: Context, previous: DeployedAgent): Promise<DeployedAgent> {
  return waitFor(async () => {
    const agent = await agentPod(context);
    return agent.pod.metadata.uid === previous.pod.metadata.uid ? undefined : agent;
  }, { what: 'the rolled-out agent pod Ready', timeoutMs: 120_000, intervalMs: 500 });
}

const state: { agent: DeployedAgent | null } = { agent: null };
function currentAgent(): DeployedAgent {
  if (state.agent === null) throw new Error('the agent is not installed (an earlier test failed)');
  return state.agent;
}

function capabilityNames(hex: string): string[] {
  const names = ['CHOWN', 'DAC_OVERRIDE', 'DAC_READ_SEARCH', 'FOWNER', 'FSETID', 'KILL', 'SETGID', 'SETUID', 'SETPCAP', 'LINUX_IMMUTABLE', 'NET_BIND_SERVICE', 'NET_BROADCAST', 'NET_ADMIN', 'NET_RAW', 'IPC_LOCK', 'IPC_OWNER', 'SYS_MODULE', 'SYS_RAWIO', 'SYS_CHROOT', 'SYS_PTRACE', 'SYS_PACCT', 'SYS_ADMIN', 'SYS_BOOT', 'SYS_NICE', 'SYS_RESOURCE'];
  const bits = BigInt(`0x${hex}`);
  const held: string[] = [];
  for (let bit = 0n; bit < 64n; bit++) if ((bits >> bit) & 1n) held.push(names[Number(bit)] ?? `cap${bit}`);
  return held;
}

suite.test("the README's install commands, run verbatim, end with the agent's pod Ready on the real node, not privileged, with only the chart's two capabilities", async (context) => {
  const commands = readmeInstallCommands();
  expect(commands.map((c) => c.argv[0])).toContain('helm');
  const startMs = Date.now();
  const runs = runCommands(commands, { kubeconfig: operator(context).kubeconfig, binaries: { helm: helmBin as string, kubectl: kubectlBin as string }, helmHome: operatorDir });
  expect(runs.map((r) => [r.command, r.status, r.status === 0 ? '' : r.stderr])).toEqual(commands.map((c) => [c.text, 0, '']));
  const agent = await agentPod(context, 180_000);
  state.agent = agent;
  const readyMs = Date.now() - startMs;
  expect(agent.pod.spec.nodeName).toBe(NODE);
  // The chart's securityContext, as the API server stored it.
  const container = agent.pod.spec.containers.find((c) => c.name === 'agent');
  expect(container?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'], add: ['KILL', 'DAC_READ_SEARCH'] } });
  expect(container?.securityContext?.privileged).not.toBe(true);
  // And as the kernel enforces it on the agent's own process.
  const status = readFileSync(`/proc/${await agent.hostPid()}/status`, 'utf8');
  const field = (name: string): string => new RegExp(`^${name}:\\s*(\\S+)`, 'm').exec(status)?.[1] ?? '';
  expect(readFileSync(`/proc/${await agent.hostPid()}/cmdline`, 'utf8').split('\0')).toEqual(expect.arrayContaining(['/app/dist/src/main.js', 'run']));
  expect(capabilityNames(field('CapEff'))).toEqual(['DAC_READ_SEARCH', 'KILL']);
  expect(field('NoNewPrivs')).toBe('1');
  // 2: a seccomp filter (the runtime's default profile).
  expect(field('Seccomp')).toBe('2');
  console.log(`README install to the agent's pod Ready: ${readyMs} ms (pod created to Ready, as the API server recorded it: ${agent.startToReadyMs()} ms)`);
}, 300_000);

// The real-node scenario helpers take the node as their fixture.
function onNode(context: Context): TestContext<RealNode> {
  return { ...context, fixture: context.fixture.realNode };
}

function terminating(pod: PodLike): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

function expectUntouched(scenario: RealNodeScenario, names: readonly string[]): void {
  for (const name of names) {
    const latest = scenario.pods.latest(name);
    expect([name, latest?.status?.phase]).toEqual([name, 'Running']);
    expect([name, scenario.pods.versions(name).some((v) => terminating(v.object))]).toEqual([name, false]);
  }
}

// What the kubelet and the agent each said about the pods of a namespace.
async function eventsBySource(context: Context, namespace: string): Promise<{ kubelet: EventLike[]; agent: EventLike[] }> {
  const events = await listEvents(context.admin, namespace);
  return { kubelet: events.filter((e) => e.source?.component === 'kubelet'), agent: events.filter((e) => e.source?.component === 'kube-eviction-agent') };
}

// One metric's value in a /metrics text (the sum over the label sets that include `labels`).
function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (match[2] ?? '').includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}

suite.test("helm upgrade with the node's cgroup root and the agent's thresholds rolls the pod; the agent in its container evicts a fast leak before the kernel OOM killer and the kubelet, passing over a static pod and a system-node-critical pod that use more memory", async (context) => {
  const previous = currentAgent();
  const node = context.fixture.realNode;
  mustRun(context, 'helm', ['upgrade', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--reuse-values', '--values', nodeValues(context.fixture), '--wait', '--timeout', '2m']);
  const agent = await nextAgentPod(context, previous);
  state.agent = agent;
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  const scenario = await startRealNodeScenario(onNode(context), 'leak-fast');
  const { namespace, pods } = scenario;
  const staticName = `static-hold-${NODE}`;
  node.writeStaticPod('static-hold.yaml', realPod('static-hold', NODE, { namespace, args: ['hold', '500'] }));
  context.defer(async () => {
    node.removeStaticPod('static-hold.yaml');
    const uid = pods.versions(staticName)[0]?.object.metadata.annotations?.['kubernetes.io/config.mirror'];
    await waitFor(() => uid === undefined || !podCgroupUids(node).includes(uid), { what: 'the static pod removed by the kubelet', timeoutMs: 60_000, intervalMs: 200 });
  });
  await scenario.runPods([{ name: 'critical', options: { args: ['hold', '300'], requests: { memory: '16Mi' }, priorityClassName: 'system-node-critical' } }]);
  await pods.waitFor(staticName, (p) => p.status?.phase === 'Running', 'mirror pod Running', 60_000);
  await waitFor(async () => (await nodeCondition(context.admin, NODE, MEMORY_CONDITION))?.status === 'False', { what: `${MEMORY_CONDITION} False before the leak`, timeoutMs: 30_000 });
  const metricsBefore = (await agent.httpGet(8080, '/metrics')).body;

  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  await createPod(context.admin, namespace, realPod('leaky-fast', NODE, { args: ['leak', '400', '0', '1600'], requests: { memory: '16Mi' } }));
  const deletedAtMs = await pods.waitDeleted('leaky-fast', 90_000);

  // The kernel OOM killer never had to act, and kubepods never reached its limit.
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  // The agent, in its container, ended the pod's processes on the node, then deleted it.
  expect(agent.findLog('ended pod processes locally', { pod: `${namespace}/leaky-fast` })).toHaveLength(1);
  const { kubelet, agent: agentEvents } = await eventsBySource(context, namespace);
  const evicted = agentEvents.filter((e) => e.reason === 'Evicted');
  expect(evicted.map((e) => e.involvedObject.name)).toEqual(['leaky-fast']);
  expect(evicted[0]).toMatchObject({ type: 'Warning', source: { component: 'kube-eviction-agent', host: NODE }, reportingInstance: NODE, metadata: { annotations: { starved_resource: 'memory', offending_containers: 'main' } } });
  expect(kubelet.filter((e) => e.reason === 'Evicted')).toEqual([]);
  // The static pod used more memory over its request than the leak did when it went; both stayed.
  const leakBytes = Number(evicted[0]?.metadata.annotations?.offending_containers_usage?.replace(/Ki$/, '')) * 1024;
  expect(leakBytes).toBeGreaterThan(0);
  expect(leakBytes).toBeLessThan(500 * MiB);
  expectUntouched(scenario, ['critical', staticName]);
  // The notification's reaction, as the agent measured it in its container.
  const metricsAfter = (await agent.httpGet(8080, '/metrics')).body;
  const reactions = metricValue(metricsAfter, 'kube_eviction_agent_notification_to_eviction_seconds_count') - metricValue(metricsBefore, 'kube_eviction_agent_notification_to_eviction_seconds_count');
  const reactionSeconds = metricValue(metricsAfter, 'kube_eviction_agent_notification_to_eviction_seconds_sum') - metricValue(metricsBefore, 'kube_eviction_agent_notification_to_eviction_seconds_sum');
  expect(reactions).toBeGreaterThanOrEqual(1);
  const rssBytes = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${await agent.hostPid()}/status`, 'utf8'))?.[1]) * 1024;
  console.log(
    `containerized agent, 400 MiB/s leak: created -> deleted ${deletedAtMs - startMs} ms; notification -> eviction ${((reactionSeconds / reactions) * 1000).toFixed(1)} ms (mean of ${reactions}); ` +
      `agent RSS ${(rssBytes / MiB).toFixed(1)} MiB; kubepods peak ${(node.kubepodsMaxUsageBytes() / MiB).toFixed(0)} MiB of ${Number(KUBEPODS_LIMIT_BYTES) / MiB}`,
  );
}, 300_000);

suite.test('a slow leak (40 MiB/s) is evicted by the agent in its container before the kernel OOM killer and the kubelet', async (context) => {
  const agent = currentAgent();
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  const node = context.fixture.realNode;
  const scenario = await startRealNodeScenario(onNode(context), 'leak-slow');
  await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
  await waitFor(async () => (await nodeCondition(context.admin, NODE, MEMORY_CONDITION))?.status === 'False', { what: `${MEMORY_CONDITION} False before the leak`, timeoutMs: 30_000 });
  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  await createPod(context.admin, scenario.namespace, realPod('leaky-slow', NODE, { args: ['leak', '40', '150', '1600'], requests: { memory: '16Mi' } }));
  const deletedAtMs = await scenario.pods.waitDeleted('leaky-slow', 120_000);
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  const { kubelet, agent: agentEvents } = await eventsBySource(context, scenario.namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name)).toEqual(['leaky-slow']);
  expect(kubelet.filter((e) => e.reason === 'Evicted')).toEqual([]);
  expectUntouched(scenario, ['ballast']);
  console.log(`containerized agent, 40 MiB/s leak: created -> deleted ${deletedAtMs - startMs} ms`);
}, 240_000);
