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

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { parseExposition } from '../monitoring/metrics-capture.js';
import { promtoolTests } from '../monitoring/rule-tests.js';
import { readmeInstallCommands, runCommands } from '../deploy/readme-commands.js';
import { agentImage } from './harness/agent-image.js';
import { findClusterBinaries, findKubectl, findRealNodeBinaries, REPO_ROOT } from './harness/binaries.js';
import { Cluster } from './harness/cluster.js';
import { K8S_NAMESPACE } from './harness/containerd.js';
import { DeployedAgent, type AgentLogLine } from './harness/deployed-agent.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { createNamespace, createPod, listEvents, nodeCondition, offendingUsageBytes, type PodLike } from './harness/objects.js';
import { nodeImages, type RealNode } from './harness/real-node.js';
import { realPod, startRealNodeScenario } from './harness/real-node-scenario.js';
import { metricValue } from './harness/metric-value.js';
import { eventsBySource, expectKubeletDidNotEvict, expectUntouched } from './harness/scenario-checks.js';
import { e2eSuite, type TestContext } from './harness/suite.js';
import { cgroupProcs, resume, sandboxView, type SandboxView } from './harness/sandbox-view.js';
import { sleep, waitFor } from './harness/wait.js';

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
  kubeletsOnLoopback: true,
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
        evictionPressureTransitionPeriod: '5s',
        housekeepingInterval: '1s',
        // The node keeps its directories where the defaults look (/var/lib/kubelet, ...), but its
        // kubelet's cgroup root is its own.
        observe: { podCgroupRoot: node.podCgroupRoot, diskUsageInterval: '1s' },
        notifier: { mode: 'memcg-v1' },
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

// helm upgrade of settings the agent reloads: the ConfigMap changes, the pod does not roll, and the
// agent says it reloaded (the kubelet refreshes the pod's ConfigMap volume at its next sync).
async function upgradeInPlace(context: Context, agent: DeployedAgent, args: readonly string[]): Promise<void> {
  const applied = async (): Promise<number> => metricValue((await agent.httpGet(8080, '/metrics')).body, 'kube_eviction_agent_config_reloads_total', { result: 'applied' });
  const reloads = await applied();
  mustRun(context, 'helm', ['upgrade', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--reuse-values', ...args, '--wait', '--timeout', '2m']);
  await waitFor(async () => (await applied()) > reloads, { what: 'the agent to apply the reloaded configuration (config_reloads_total{result="applied"})', timeoutMs: 90_000, intervalMs: 500, detail: () => agent.logTail(10) });
  const now = await agentPod(context);
  expect([now.pod.metadata.uid, now.pod.status?.containerStatuses?.[0]?.restartCount]).toEqual([agent.pod.metadata.uid, 0]);
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
  // The API server reaches the kubelet: the agent's log through `kubectl logs`, as an operator reads it.
  expect(mustRun(context, 'kubectl', ['-n', RELEASE_NAMESPACE, 'logs', agent.name, '--tail=200'])).toContain('"msg":"starting"');
  console.log(`README install to the agent's pod Ready: ${readyMs} ms (pod created to Ready, as the API server recorded it: ${agent.startToReadyMs()} ms)`);
}, 300_000);

// The real-node scenario helpers take the node as their fixture.
function onNode(context: Context): TestContext<RealNode> {
  return { ...context, fixture: context.fixture.realNode };
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
  const staticName = scenario.runStaticPod('static-hold', ['hold', '500']);
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
  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  const evicted = agentEvents.filter((e) => e.reason === 'Evicted');
  expect(evicted.map((e) => e.involvedObject.name)).toEqual(['leaky-fast']);
  expect(evicted[0]).toMatchObject({ type: 'Warning', source: { component: 'kube-eviction-agent', host: NODE }, reportingInstance: NODE, metadata: { annotations: { starved_resource: 'memory', offending_containers: 'main' } } });
  await expectKubeletDidNotEvict(context.admin, scenario, ['leaky-fast']);
  // The static pod used more memory over its request than the leak did when it went; both stayed.
  const leakBytes = offendingUsageBytes(evicted[0]);
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
  const { agent: agentEvents } = await eventsBySource(context.admin, scenario.namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name)).toEqual(['leaky-slow']);
  await expectKubeletDidNotEvict(context.admin, scenario, ['leaky-slow']);
  expectUntouched(scenario, ['ballast']);
  console.log(`containerized agent, 40 MiB/s leak: created -> deleted ${deletedAtMs - startMs} ms`);
}, 240_000);

suite.test("with the API server paused, the agent in its container ends the leaking pod's containers locally and spares its sandbox; once the API server resumes the pod is deleted once, with one Evicted Event", async (context) => {
  const agent = currentAgent();
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  const node = context.fixture.realNode;
  const scenario = await startRealNodeScenario(onNode(context), 'api-paused');
  const { namespace, pods } = scenario;
  const name = 'leaky-paused';
  await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
  await waitFor(async () => (await nodeCondition(context.admin, NODE, MEMORY_CONDITION))?.status === 'False', { what: `${MEMORY_CONDITION} False before the leak`, timeoutMs: 30_000 });
  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  // Slow enough (about 10 s to the agent's threshold) that the API server is paused well before.
  const [created] = await scenario.runPods([{ name, options: { args: ['leak', '40', '150', '1600'], requests: { memory: '16Mi' } } }]);
  const running = pods.latest(name) as PodLike;
  const podCgroup = join(node.kubepodsMemoryPath, 'burstable', `pod${created?.metadata.uid ?? ''}`);
  const before = await sandboxView(node, running, podCgroup);
  expect(before.task).toEqual({ pid: before.pid, status: 'RUNNING' });
  const apiServerPid = context.plane.apiServerPid as number;
  const kubeletLogFrom = node.kubeletLogSize();
  let pausedAtMs = 0;
  let endedAtMs = 0;
  let resumedAtMs = 0;
  let after: SandboxView;
  let kubeletLog: string;
  process.kill(apiServerPid, 'SIGSTOP');
  try {
    pausedAtMs = Date.now();
    await waitFor(() => agent.findLog('ended pod processes locally', { pod: `${namespace}/${name}` }).length > 0, { what: 'the local kill with the API server paused', timeoutMs: 60_000, intervalMs: 100 });
    endedAtMs = Date.now();
    await sleep(12_000);
    after = await sandboxView(node, running, podCgroup);
    kubeletLog = node.kubeletLog(kubeletLogFrom);
  } finally {
    resume(apiServerPid);
    resumedAtMs = Date.now();
  }
  // The sandbox outlived the kill, and the kubelet never found it gone.
  expect(after).toEqual(before);
  expect(kubeletLog.split('\n').filter((l) => l.includes('No ready sandbox for pod') && l.includes(name))).toEqual([]);
  const deletedAtMs = await pods.waitDeleted(name, 90_000);
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  expect(agent.findLog('ended pod processes locally', { pod: `${namespace}/${name}` })).toHaveLength(1);
  expect(agent.findLog('evicted pod', { pod: `${namespace}/${name}` })).toHaveLength(1);
  const evicted = await waitFor(async () => {
    const found = (await eventsBySource(context.admin, namespace)).agent.filter((e) => e.reason === 'Evicted');
    return found.length > 0 ? found : undefined;
  }, { what: "the agent's Evicted Event", timeoutMs: 30_000, intervalMs: 500 });
  await sleep(2_000);
  expect((await eventsBySource(context.admin, namespace)).agent.filter((e) => e.reason === 'Evicted')).toHaveLength(1);
  expect(evicted.map((e) => e.involvedObject.name)).toEqual([name]);
  expectUntouched(scenario, ['ballast']);
  expect(cgroupProcs(podCgroup)).toEqual([]);
  console.log(`containerized agent, API server paused ${resumedAtMs - pausedAtMs} ms: local kill ${endedAtMs - pausedAtMs} ms after the pause; sandbox unchanged; deleted ${deletedAtMs - resumedAtMs} ms after the resume`);
}, 240_000);

suite.test("disk pressure from a pod filling its emptyDir on the kubelet's small tmpfs root: the agent in its container evicts it before the filesystem fills and before the kubelet", async (context) => {
  const agent = currentAgent();
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  const node = context.fixture.realNode;
  const scenario = await startRealNodeScenario(onNode(context), 'disk-pressure');
  const { namespace } = scenario;
  await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '8'], requests: { memory: '32Mi' }, emptyDir: true } }]);
  let minFreeBytes = Number.POSITIVE_INFINITY;
  const free = (): number => {
    const stats = statfsSync(node.rootDir);
    return stats.bavail * stats.bsize;
  };
  await createPod(context.admin, namespace, realPod('filler', NODE, { args: ['fill', '/scratch/data', '40', '240'], requests: { memory: '32Mi' }, emptyDir: true }));
  await scenario.sampleUntilDeleted('filler', () => {
    minFreeBytes = Math.min(minFreeBytes, free());
  }, 90_000);
  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource])).toEqual([['filler', 'ephemeral-storage']]);
  // Never below the kubelet's own threshold (10%), let alone full.
  expect(minFreeBytes).toBeGreaterThan((256 * MiB) / 10);
  await expectKubeletDidNotEvict(context.admin, scenario, ['filler']);
  expectUntouched(scenario, ['quiet']);
  console.log(`containerized agent, disk pressure: the kubelet root's free space went down to ${(minFreeBytes / MiB).toFixed(1)} MiB of 256 MiB`);
}, 180_000);

// Processes the machine could still start: the kernel's PID limit less every thread there is (what
// the kubelet's pid.available counts).
function availablePids(): number {
  const max = Math.min(Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8')), Number(readFileSync('/proc/sys/kernel/threads-max', 'utf8')));
  const total = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3]?.split('/')[1]);
  return max - total;
}

suite.test('PID pressure from a fork-leaking pod: helm upgrade adds a pid.available threshold, which the agent reloads in place (same pod, no restart); it evicts the pod before it reaches its pids limit, and before the kubelet', async (context) => {
  const agent = currentAgent();
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  const node = context.fixture.realNode;
  // 300 processes below what is available now (the machine is shared).
  const thresholdPids = availablePids() - 300;
  await upgradeInPlace(context, agent, ['--set-string', `config.evictionHard.pid\\.available=${thresholdPids}`]);
  // A threshold that never fires afterwards (the smallest the agent accepts): the machine's own
  // processes move by more than 300 over a run.
  context.defer(() => upgradeInPlace(context, agent, ['--set-string', 'config.evictionHard.pid\\.available=1']));
  const scenario = await startRealNodeScenario(onNode(context), 'pid-pressure');
  const { namespace } = scenario;
  await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '16'], requests: { memory: '32Mi' } } }]);
  const [forker] = await scenario.runPods([{ name: 'forker', options: { args: ['forks', '200', '2000'], requests: { memory: '32Mi' } } }]);
  let maxPids = 0;
  const pidsFile = join('/sys/fs/cgroup/pids', node.cgroups.name, 'kubepods', 'burstable', `pod${forker?.metadata.uid}`, 'pids.current');
  await scenario.sampleUntilDeleted('forker', () => {
    try {
      maxPids = Math.max(maxPids, Number(readFileSync(pidsFile, 'utf8')));
    } catch {
      // Not there yet, or gone.
    }
  }, 90_000);
  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource])).toEqual([['forker', 'pids']]);
  expect(maxPids).toBeGreaterThan(100);
  expect(maxPids).toBeLessThan(1024);
  await expectKubeletDidNotEvict(context.admin, scenario, ['forker']);
  expectUntouched(scenario, ['quiet']);
  console.log(`containerized agent, PID pressure: threshold pid.available ${thresholdPids}; the forker reached ${maxPids} processes (pod limit 1024)`);
}, 300_000);

suite.test("with the agent in dry-run (helm upgrade, reloaded in place), a container OOM-killed by the kernel at its own limit is attributed to its pod and container from the cgroups alone (the pod has no /dev/kmsg), counted, and, in a dry run, written as no Event", async (context) => {
  const agent = currentAgent();
  context.addDiagnostics(() => `agent log (last lines):\n${agent.logTail(40)}`);
  await upgradeInPlace(context, agent, ['--set', 'config.actions.dryRun=true']);
  context.defer(() => upgradeInPlace(context, agent, ['--set', 'config.actions.dryRun=false']));
  const node = context.fixture.realNode;
  const scenario = await startRealNodeScenario(onNode(context), 'oom-dry-run');
  const { namespace, pods } = scenario;
  const killsBefore = metricValue((await agent.httpGet(8080, '/metrics')).body, 'kube_eviction_agent_kernel_oom_kills_total', { kind: 'container-limit' });
  const startMs = Date.now();
  // 8 MiB/s to its 64 MiB limit: the agent has watched the container's cgroup for seconds when the kernel kills.
  await createPod(context.admin, namespace, realPod('limited', NODE, { args: ['leak', '8', '0', '256'], requests: { memory: '16Mi' }, limits: { memory: '64Mi' } }));
  await pods.waitFor('limited', (p) => p.metadata.uid !== undefined, 'created', 30_000);
  await waitFor(() => node.oomWatch.since(startMs).length > 0 || undefined, { what: "the kernel OOM killer in the pod's cgroup", timeoutMs: 60_000 });
  const line = await waitFor(() => agent.findLog('kernel OOM kill', { pod: `${namespace}/limited` })[0], { what: "the agent's kernel OOM kill line", timeoutMs: 30_000, intervalMs: 250 });
  // The container's own cgroup at its limit, found through its memory.oom_control eventfd: without
  // CAP_SYSLOG and /dev/kmsg (the DaemonSet grants neither) the victim's PID and name are unknown.
  expect(line).toMatchObject({ kind: 'container-limit', container: 'main', source: 'oom-control', pid: null, process: null });
  expect(String(line.oomCgroup)).toContain(`/kubepods/burstable/pod${pods.latest('limited')?.metadata.uid ?? ''}/`);
  await waitFor(async () => metricValue((await agent.httpGet(8080, '/metrics')).body, 'kube_eviction_agent_kernel_oom_kills_total', { kind: 'container-limit' }) > killsBefore, { what: 'kernel_oom_kills_total{kind="container-limit"} to count the kill', timeoutMs: 20_000, intervalMs: 500 });
  // A dry run writes nothing to the API: no OOMKilledByKernel Event, no eviction.
  expect(await listEvents(context.admin, namespace, 'OOMKilledByKernel')).toEqual([]);
  expect((await eventsBySource(context.admin, namespace)).agent).toEqual([]);
  console.log(`containerized agent (dry-run), kernel OOM kill: ${JSON.stringify({ kind: line.kind, container: line.container, source: line.source, detectionMs: line.detectionMs })}`);
}, 300_000);

suite.test('helm upgrade to a new image during a slow leak rolls the agent with surge: the new pod starts as a standby, takes over the node lock when the old one exits, and the leak is evicted once, before the kernel OOM killer and the kubelet', async (context) => {
  const previous = currentAgent();
  const node = context.fixture.realNode;
  // The same image under a new tag: the pod template changes, as with any release.
  await node.containerd?.ctr(['-n', K8S_NAMESPACE, 'images', 'tag', '--force', README_IMAGE, `${README_IMAGE.replace(/:[^:]+$/, '')}:0.1.1`]);
  const scenario = await startRealNodeScenario(onNode(context), 'leak-upgrade');
  const { namespace, pods } = scenario;
  await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
  await waitFor(async () => (await nodeCondition(context.admin, NODE, MEMORY_CONDITION))?.status === 'False', { what: `${MEMORY_CONDITION} False before the leak`, timeoutMs: 30_000 });
  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  // About 10 s to the threshold: the rollout (a new pod Ready, then the old one stopped) overlaps it.
  await createPod(context.admin, namespace, realPod('leaky-upgrade', NODE, { args: ['leak', '40', '150', '1600'], requests: { memory: '16Mi' } }));
  // The old pod's log goes with the pod: kept as it was last read.
  let oldLog = previous.log();
  let watching = true;
  const keeping = (async () => {
    while (watching) {
      const now = previous.log();
      if (now.length >= oldLog.length) oldLog = now;
      await sleep(200);
    }
  })();
  mustRun(context, 'helm', ['upgrade', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--reuse-values', '--set', 'image.tag=0.1.1', '--wait', '--timeout', '2m']);
  const upgradedAtMs = Date.now();
  const deletedAtMs = await pods.waitDeleted('leaky-upgrade', 120_000);
  watching = false;
  await keeping;
  const agent = await nextAgentPod(context, previous);
  state.agent = agent;
  expect(agent.pod.spec.containers[0]).toMatchObject({ image: `${README_IMAGE.replace(/:[^:]+$/, '')}:0.1.1` });
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name)).toEqual(['leaky-upgrade']);
  await expectKubeletDidNotEvict(context.admin, scenario, ['leaky-upgrade']);
  // Exactly one of the two agents ended the leak.
  const ended = (lines: readonly AgentLogLine[]): boolean => lines.some((l) => l.msg === 'ended pod processes locally' && l.pod === `${namespace}/leaky-upgrade`);
  const endedBy = [
    ...(ended(oldLog) ? [previous.name] : []),
    ...(ended(agent.log()) ? [agent.name] : []),
  ];
  expect(endedBy).toHaveLength(1);
  // The new pod stood by while the old one held the lock, then took it over.
  const newLog = agent.log().map((l) => l.msg);
  expect(newLog).toContain('standing by: another agent of this release holds the node lock');
  expect(newLog.indexOf('node lock acquired: this agent acts on the node')).toBeGreaterThan(newLog.indexOf('standing by: another agent of this release holds the node lock'));
  expectUntouched(scenario, ['ballast']);
  console.log(`helm upgrade (surge) during a 40 MiB/s leak: upgrade returned ${upgradedAtMs - startMs} ms after the leak started; leak deleted after ${deletedAtMs - startMs} ms by ${endedBy[0] === agent.name ? 'the new pod' : 'the old pod'}`);
}, 300_000);

// Requests made from inside the agent's container with its own mounted token and CA, to the API
// server through the `kubernetes` Service, as the agent makes them: prints [{status, body}].
const IN_POD_REQUESTS_SOURCE = `
const fs = require('node:fs'); const https = require('node:https');
const dir = '/var/run/secrets/kubernetes.io/serviceaccount';
const token = fs.readFileSync(dir + '/token', 'utf8'); const ca = fs.readFileSync(dir + '/ca.crt');
const host = process.env.KUBERNETES_SERVICE_HOST; const port = process.env.KUBERNETES_SERVICE_PORT;
const send = (c) => new Promise((resolve) => {
  const req = https.request({ host, port, path: c.path, method: c.method, ca, timeout: 10000,
    headers: { authorization: 'Bearer ' + token, 'content-type': c.contentType || 'application/json' } }, (res) => {
    let body = ''; res.setEncoding('utf8'); res.on('data', (d) => { body += d; });
    res.on('end', () => resolve({ status: res.statusCode, body: body.slice(0, 400) }));
  });
  req.on('error', (err) => resolve({ status: 0, body: String(err) }));
  if (c.body !== undefined) req.write(JSON.stringify(c.body));
  req.end();
});
(async () => { const out = []; for (const c of JSON.parse(process.argv[1])) out.push(await send(c)); process.stdout.write(JSON.stringify(out)); })();
`;

suite.test("held to its node, as deployed: from inside the agent's pod, with its own token, deleting or evicting another node's pod, patching another Node and recording an Event about another node's pod are refused by the API server; its own Node is not", async (context) => {
  const agent = currentAgent();
  const { admin } = context;
  // A second Node (no kubelet: it never runs anything, and without the kubernetes.io/os label the
  // DaemonSet's nodeSelector leaves it without an agent) and a pod bound to it.
  await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: OTHER_NODE } });
  context.defer(async () => {
    await admin.request('DELETE', `/api/v1/nodes/${OTHER_NODE}`);
  });
  await createNamespace(admin, 'elsewhere');
  await waitFor(async () => (await admin.request('GET', '/api/v1/namespaces/elsewhere/serviceaccounts/default')).status === 200, { what: 'the default ServiceAccount of elsewhere', timeoutMs: 30_000 });
  const other = await createPod(admin, 'elsewhere', realPod('other-pod', OTHER_NODE, { args: ['hold', '8'] }));
  const condition = { type: MEMORY_CONDITION, status: 'True', reason: 'Test', message: 'written from the agent pod', lastTransitionTime: new Date().toISOString(), lastHeartbeatTime: new Date().toISOString() };
  const event = (involved: Record<string, unknown>) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: 'in-pod-', namespace: 'elsewhere' },
    involvedObject: involved,
    reason: 'Evicted',
    message: 'written from the agent pod',
    type: 'Warning',
    source: { component: 'kube-eviction-agent', host: NODE },
    reportingComponent: 'kube-eviction-agent',
    reportingInstance: NODE,
    firstTimestamp: new Date().toISOString(),
    lastTimestamp: new Date().toISOString(),
    count: 1,
  });
  const calls = [
    { what: "delete another node's pod", method: 'DELETE', path: '/api/v1/namespaces/elsewhere/pods/other-pod' },
    { what: "evict another node's pod", method: 'POST', path: '/api/v1/namespaces/elsewhere/pods/other-pod/eviction', body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'other-pod', namespace: 'elsewhere' } } },
    { what: "set a condition on another Node's status", method: 'PATCH', path: `/api/v1/nodes/${OTHER_NODE}/status`, contentType: 'application/strategic-merge-patch+json', body: { status: { conditions: [condition] } } },
    { what: 'taint another Node', method: 'PATCH', path: `/api/v1/nodes/${OTHER_NODE}`, contentType: 'application/merge-patch+json', body: { spec: { taints: [{ key: 'kube-eviction-agent.io/pressure', effect: 'NoSchedule' }] } } },
    { what: "record an Event about another node's pod", method: 'POST', path: '/api/v1/namespaces/elsewhere/events', body: event({ kind: 'Pod', namespace: 'elsewhere', name: 'other-pod', uid: other.metadata.uid }) },
    { what: 'read its own Node', method: 'GET', path: `/api/v1/nodes/${NODE}` },
    { what: "set its own condition on its own Node's status", method: 'PATCH', path: `/api/v1/nodes/${NODE}/status`, contentType: 'application/strategic-merge-patch+json', body: { status: { conditions: [{ ...condition, status: 'False' }] } } },
  ];
  const run = await agent.exec(['node', '-e', IN_POD_REQUESTS_SOURCE, JSON.stringify(calls)]);
  expect([run.code, run.code === 0 ? '' : run.stderr]).toEqual([0, '']);
  const answers = JSON.parse(run.stdout) as { status: number; body: string }[];
  expect(calls.map((c, i) => [c.what, answers[i]?.status])).toEqual([
    ["delete another node's pod", 403],
    ["evict another node's pod", 403],
    ["set a condition on another Node's status", 403],
    ['taint another Node', 403],
    ["record an Event about another node's pod", 403],
    ['read its own Node', 200],
    ["set its own condition on its own Node's status", 200],
  ]);
  // Nothing changed where it was refused.
  expect((await admin.request('GET', '/api/v1/namespaces/elsewhere/pods/other-pod')).status).toBe(200);
  const otherNode = await admin.request<{ spec?: { taints?: unknown[] }; status?: { conditions?: { type: string }[] } }>('GET', `/api/v1/nodes/${OTHER_NODE}`);
  expect(otherNode.body.spec?.taints?.some((t) => (t as { key: string }).key.startsWith('kube-eviction-agent.io/')) ?? false).toBe(false);
  expect(otherNode.body.status?.conditions?.some((c) => c.type === MEMORY_CONDITION) ?? false).toBe(false);
  console.log(`refused from inside the agent's pod: ${calls.slice(0, 5).map((c, i) => `${c.what}: ${answers[i]?.status} ${(answers[i]?.body ?? '').replace(/\s+/g, ' ').slice(0, 160)}`).join('\n')}`);
}, 180_000);

suite.test("operated as deployed: the pod's /metrics, scraped at its address, carries every series the chart's PrometheusRule reads, and promtool evaluates each alert's firing and quiet scenario on series shaped like it", async (context) => {
  const agent = currentAgent();
  const scraped = await agent.httpGet(8080, '/metrics');
  expect(scraped.status).toBe(200);
  const { types, samples } = parseExposition(scraped.body);
  expect(samples.filter((s) => s.name === 'kube_eviction_agent_ready').map((s) => s.value)).toEqual([1]);
  // The chart's PrometheusRule, as helm renders it.
  const rendered = mustRun(context, 'helm', ['template', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--set', 'prometheusRule.enabled=true', '--show-only', 'templates/prometheusrule.yaml']);
  const rule = parse(rendered) as { spec: { groups: { name: string; rules: { alert: string; annotations?: unknown }[] }[] } };
  const dir = mkdtempSync(join(tmpdir(), 'kea-e2e-rules-'));
  context.defer(() => rmSync(dir, { recursive: true, force: true }));
  const bare = { groups: rule.spec.groups.map((g) => ({ ...g, rules: g.rules.map(({ annotations: _annotations, ...r }) => r) })) };
  writeFileSync(join(dir, 'rules.yaml'), stringify(bare));
  // Refuses a scenario naming a series or label the pod does not serve.
  writeFileSync(join(dir, 'tests.yaml'), promtoolTests({ types, samples }, 'rules.yaml'));
  const promtool = spawnSync(process.env.KEA_PROMTOOL_BIN as string, ['test', 'rules', join(dir, 'tests.yaml')], { encoding: 'utf8', timeout: 120_000 });
  expect({ status: promtool.status, output: `${promtool.stdout}${promtool.stderr}` }).toEqual({ status: 0, output: expect.stringContaining('SUCCESS') });
  expect(rule.spec.groups.flatMap((g) => g.rules).length).toBeGreaterThanOrEqual(10);
}, 120_000);

suite.test('a bad value is refused at helm upgrade by the chart\'s schema, and the running agent keeps its pod and configuration', async (context) => {
  const agent = currentAgent();
  const refused = operator(context).run('helm', ['upgrade', RELEASE, 'deploy/chart', '--namespace', RELEASE_NAMESPACE, '--reuse-values', '--set-string', 'config.evictionHard.memory\\.available=lots']);
  expect(refused.status).not.toBe(0);
  expect(refused.stderr).toMatch(/memory\.available/);
  const history = mustRun(context, 'helm', ['history', RELEASE, '--namespace', RELEASE_NAMESPACE, '--output', 'json']);
  expect((JSON.parse(history) as { status: string }[]).at(-1)?.status).toBe('deployed');
  const now = await agentPod(context);
  expect([now.pod.metadata.uid, now.pod.status?.containerStatuses?.[0]?.restartCount]).toEqual([agent.pod.metadata.uid, 0]);
  expect(agent.findLog('configuration reload rejected; keeping the previous configuration')).toEqual([]);
}, 120_000);

interface NodeLike {
  readonly spec?: { readonly taints?: readonly { readonly key: string; readonly effect: string }[] };
  readonly status?: { readonly conditions?: readonly { readonly type: string; readonly status: string; readonly reason?: string }[] };
}

async function agentMarks(context: Context): Promise<{ conditions: string[]; taints: string[] }> {
  const node = (await context.admin.request<NodeLike>('GET', `/api/v1/nodes/${NODE}`)).body;
  return {
    conditions: (node.status?.conditions ?? []).filter((c) => c.type.startsWith('kube-eviction-agent.io/')).map((c) => `${c.type}=${c.status}/${c.reason ?? ''}`),
    taints: (node.spec?.taints ?? []).filter((t) => t.key.startsWith('kube-eviction-agent.io/')).map((t) => `${t.key}:${t.effect}`),
  };
}

// The agent's processes on the machine (its entry point in their command line).
function agentProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes('/app/dist/src/main.js')) pids.push(Number(entry));
    } catch {
      // Exited.
    }
  }
  return pids;
}

suite.test("the documented removal, run as written (bash, the real kubectl and helm), leaves no condition or taint of the agent's on the Node and nothing of it on the host", async (context) => {
  const agent = currentAgent();
  const pid = await agent.hostPid();
  const docs = readFileSync(join(REPO_ROOT, 'docs', 'deployment.md'), 'utf8');
  const block = [...docs.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? '').find((text) => text.includes('run kube-eviction-agent-cleanup'));
  if (block === undefined) throw new Error('docs/deployment.md has no shell block running kube-eviction-agent-cleanup');
  expect(block).toContain(`IMAGE=${README_IMAGE}`);
  const { kubeconfig } = operator(context);
  // Only the programs stand for the built binaries with the operator's kubeconfig; the block is as written.
  const script = `set -euo pipefail
kubectl() { "$KEA_KUBECTL" --kubeconfig "$KEA_KUBECONFIG" "$@"; }
helm() { "$KEA_HELM" --kubeconfig "$KEA_KUBECONFIG" "$@"; }
${block}`;
  const env = { PATH: process.env.PATH ?? '', HOME: operatorDir, HELM_CACHE_HOME: join(operatorDir, 'cache'), HELM_CONFIG_HOME: join(operatorDir, 'config'), HELM_DATA_HOME: join(operatorDir, 'data'), KEA_KUBECTL: kubectlBin as string, KEA_HELM: helmBin as string, KEA_KUBECONFIG: kubeconfig };
  const removal = spawnSync('bash', ['-c', script], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 240_000, env });
  expect(removal.status === 0 ? '' : `exit ${removal.status}\n${removal.stdout}\n${removal.stderr}`).toBe('');
  state.agent = null;
  // cleanup's own line for the node, attached to through the API server and the kubelet.
  expect(removal.stdout).toContain(NODE);
  expect(await agentMarks(context)).toEqual({ conditions: [], taints: [] });
  // Nothing of the agent's on the host: no process, and its cgroup v1 threshold registrations went
  // with its eventfds (the kernel drops them when the file is closed).
  expect(agentProcesses()).toEqual([]);
  expect(existsSync(`/proc/${pid}`)).toBe(false);
  const left = mustRun(context, 'kubectl', ['get', 'clusterroles,clusterrolebindings,validatingadmissionpolicies,validatingadmissionpolicybindings', '-o', 'name']);
  expect(left.split('\n').filter((l) => l.includes('kube-eviction-agent'))).toEqual([]);
  expect((await context.admin.request<{ items: unknown[] }>('GET', `/api/v1/namespaces/${RELEASE_NAMESPACE}/pods`)).body.items).toEqual([]);
  console.log(`documented removal: cleanup said ${JSON.stringify(removal.stdout.split('\n').filter((l) => l.includes(NODE)))}`);
}, 300_000);

suite.test('without Helm, `kubectl apply -f deploy/` on the cluster starts the agent\'s pod Ready on the real node with the same securityContext, and its node restriction in force', async (context) => {
  // deploy/daemonset.yaml names the image kube-eviction-agent:0.1.0 (docker.io/library/... in full).
  await context.fixture.realNode.containerd?.ctr(['-n', K8S_NAMESPACE, 'images', 'tag', '--force', README_IMAGE, 'docker.io/library/kube-eviction-agent:0.1.0']);
  mustRun(context, 'kubectl', ['apply', '-f', 'deploy/']);
  context.defer(() => {
    operator(context).run('kubectl', ['delete', '-f', 'deploy/', '--wait', '--ignore-not-found']);
  });
  const agent = await DeployedAgent.waitReady(context.admin, context.fixture.realNode, RELEASE_NAMESPACE, 'app.kubernetes.io/name=kube-eviction-agent', 180_000);
  const container = agent.pod.spec.containers.find((c) => c.name === 'agent');
  expect(container?.securityContext).toMatchObject({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'], add: ['KILL', 'DAC_READ_SEARCH'] } });
  const status = readFileSync(`/proc/${await agent.hostPid()}/status`, 'utf8');
  expect(/^CapEff:\s*(\S+)/m.exec(status)?.[1]).toBe('0000000000000024');
  // The plain file's policies refuse another node's Node to the pod's own token.
  await context.admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: `${OTHER_NODE}-2` } });
  context.defer(async () => {
    await context.admin.request('DELETE', `/api/v1/nodes/${OTHER_NODE}-2`);
  });
  const calls = [{ method: 'PATCH', path: `/api/v1/nodes/${OTHER_NODE}-2`, contentType: 'application/merge-patch+json', body: { spec: { taints: [{ key: 'kube-eviction-agent.io/pressure', effect: 'NoSchedule' }] } } }];
  const run = await agent.exec(['node', '-e', IN_POD_REQUESTS_SOURCE, JSON.stringify(calls)]);
  expect((JSON.parse(run.stdout) as { status: number }[]).map((a) => a.status)).toEqual([403]);
  console.log(`kubectl apply -f deploy/: the agent's pod Ready ${agent.startToReadyMs()} ms after its creation`);
}, 240_000);
