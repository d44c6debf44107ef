// Memory pressure end to end (root, cgroup v1, real kube-apiserver): a node cgroup with a memory
// limit stands in for the node, the fake kubelet runs each pod as a real process in its own
// cgroup, one pod leaks, and the agent, running as its ServiceAccount with the real cgroup
// observer, memcg v1 notifier and pod terminator, must evict the right pod through the real API,
// before the kernel OOM killer has to, and report the pressure on the Node.

import type { TestContext } from './harness/suite.js';
import { e2eSuite } from './harness/suite.js';
import { startNodeScenario, type NodeScenario } from './harness/node-scenario.js';
import type { KubeObject } from './harness/list-watch.js';
import { createPdb, createPod, getPdbStatus, listEvents, nodeCondition, offendingUsageBytes, testPod, type PodLike } from './harness/objects.js';
import { Recorder } from './harness/recorder.js';
import { waitFor } from './harness/wait.js';
import { APPROACH_DISTANCE_BYTES } from '../../src/daemon/kill-path-arming.js';

const MiB = 1024 * 1024;
const NODE_LIMIT_BYTES = 1024n * BigInt(MiB);
const CONDITION = 'kube-eviction-agent.io/MemoryPressure';

const suite = e2eSuite({ nodeNames: ['node-hard', 'node-soft', 'node-critical', 'node-annotated'], needsCgroupV1: true });

function mebibytes(bytes: number): number {
  return Math.floor(bytes / MiB);
}

function hasDisruptionTarget(pod: PodLike, reason: string): boolean {
  return pod.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === reason) === true;
}

function terminating(pod: PodLike): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

// The agent's configuration: a hard (and optionally a soft) memory.available threshold, fast
// housekeeping and a short pressure transition period so the test sees the condition go back.
function agentConfig(thresholds: { hardMi: number; softMi?: number; softGracePeriod?: string }): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    `  memory.available: ${thresholds.hardMi}Mi`,
    ...(thresholds.softMi === undefined ? [] : ['evictionSoft:', `  memory.available: ${thresholds.softMi}Mi`, 'evictionSoftGracePeriod:', `  memory.available: ${thresholds.softGracePeriod ?? '2s'}`, 'evictionMaxPodGracePeriod: 5']),
    'evictionPressureTransitionPeriod: 5s',
    'housekeepingInterval: 1s',
    'notifier:',
    '  mode: memcg-v1',
    'actions:',
    '  localTermination: true',
    '  setDisruptionTargetCondition: true',
    'reporting:',
    '  nodeConditions: true',
    '  events: true',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'logLevel: debug',
    '',
  ].join('\n');
}

async function nodeRecorder(context: TestContext, nodeName: string): Promise<Recorder> {
  const recorder = await Recorder.node(context.admin, nodeName);
  context.defer(() => recorder.stop());
  return recorder;
}

function conditionStatus(node: KubeObject | undefined): string | undefined {
  const conditions = (node?.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions;
  return conditions?.find((c) => c.type === CONDITION)?.status;
}

function expectNoRefusals(scenario: { log: { refusals(): unknown[] } }): void {
  expect(scenario.log.refusals()).toEqual([]);
}

function describeMemory(scenario: NodeScenario, names: readonly string[]): string {
  const node = scenario.node?.memory();
  const pods = names.map((name) => `${name}=${mebibytes(scenario.kubelet.podMemory(scenario.namespace, name)?.workingSetBytes ?? 0)}Mi`);
  return `node available ${mebibytes(node?.availableBytes ?? 0)}Mi; ${pods.join(' ')}`;
}

suite.test('a leaking pod is evicted under hard memory pressure before the OOM killer fires: DisruptionTarget, Evicted Event, node condition True then False (root, cgroup v1, real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-hard', namespace: 'hard-pressure', memoryLimitBytes: NODE_LIMIT_BYTES });
  const { namespace, kubelet, pods } = scenario;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'quiet-a', options: { memoryBytes: 24 * MiB } },
    { name: 'quiet-b', options: { memoryBytes: 24 * MiB } },
    { name: 'leaky', options: { memoryBytes: 16 * MiB } },
  ]);
  context.addDiagnostics(() => describeMemory(scenario, ['quiet-a', 'quiet-b', 'leaky']));
  // The threshold sits 150 MiB below what is available now: the leak must cross it, and would
  // reach the node's limit (and the OOM killer) about 4 s later at its pace if nothing acted.
  const availableBytes = node.memory().availableBytes;
  const hardMi = mebibytes(availableBytes) - 150;
  const nodeView = await nodeRecorder(context, scenario.nodeName);
  const agent = await scenario.startAgent(agentConfig({ hardMi }));
  await waitFor(async () => (await nodeCondition(context.admin, scenario.nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} False at start`, timeoutMs: 15_000 });
  // Ready: its watches synced against the real API server and the node observed.
  const readyz = await fetch(`http://127.0.0.1:${agent.agent.opsPort}/readyz`);
  expect([readyz.status, await readyz.text()]).toEqual([200, expect.any(String)]);

  node.resetMaxUsage();
  kubelet.leak(namespace, 'leaky', { targetBytes: availableBytes + 100 * MiB, stepBytes: 8 * MiB, intervalMs: 50 });
  await pods.waitDeleted('leaky', 30_000);

  // The right pod, and only it.
  for (const quiet of ['quiet-a', 'quiet-b']) {
    expect(pods.latest(quiet)).toBeDefined();
    expect(pods.versions(quiet).some((v) => terminating(v.object))).toBe(false);
    expect(kubelet.pod(namespace, quiet)?.workload?.running).toBe(true);
  }
  // The kernel OOM killer never had to act, and the node never reached its limit.
  expect(node.oomKills()).toBe(0);
  expect(node.maxUsageBytes()).toBeLessThan(Number(NODE_LIMIT_BYTES));
  // The kubelet's DisruptionTarget condition was set before the pod was deleted.
  const disrupted = pods.first('leaky', (pod) => hasDisruptionTarget(pod, 'TerminationByKubelet'));
  expect(disrupted).toBeDefined();
  expect(disrupted?.object.status?.conditions?.find((c) => c.type === 'DisruptionTarget')?.message).toMatch(/^The node was low on resource: memory\./);
  // A hard eviction: the kubelet's immediate grace period of 1 s.
  expect(pods.first('leaky', terminating)?.object.metadata.deletionGracePeriodSeconds).toBe(1);
  // Its processes were ended on the node by the agent, from the pod's cgroup.
  const leakyUid = pods.versions('leaky')[0]?.object.metadata.uid;
  expect(agent.log.find('ended pod processes locally', { pod: `${namespace}/leaky` })).toHaveLength(1);
  // The kernel notification reached the agent (memcg v1 eventfd threshold).
  expect(await agent.metric('kube_eviction_agent_notifier_events_total')).toBeGreaterThan(0);

  // The Evicted Event, accepted by the API server, as the kubelet records it.
  const evicted = await waitFor(async () => (await listEvents(context.admin, namespace, 'Evicted')).find((e) => e.involvedObject.name === 'leaky'), { what: 'the Evicted event', timeoutMs: 10_000 });
  expect(evicted).toMatchObject({
    type: 'Warning',
    involvedObject: { kind: 'Pod', namespace, name: 'leaky', uid: leakyUid },
    source: { component: 'kube-eviction-agent', host: scenario.nodeName },
    metadata: { annotations: { starved_resource: 'memory', offending_containers: 'main' } },
  });
  // Figures print as the kubelet's Quantity.String() does: in the largest binary unit that is
  // exact, so a page-multiple figure can come out in Mi (about one read in 256).
  const binaryQuantity = '\\d+(?:Ki|Mi|Gi)';
  expect(evicted.message).toMatch(new RegExp(`^The node was low on resource: memory\\. Threshold quantity: ${hardMi}Mi, available: ${binaryQuantity}\\. Container main was using ${binaryQuantity}, request is 16Mi, has larger consumption of memory\\. `));
  // The leak's usage: fresh when the memory shortcut or a pass acted (the node grew 150 MiB to the
  // threshold, nearly all of it the leak's); when the kill path's thread acted, the figures it was
  // last armed with, at the latest at its approach point, 64 MiB before the crossing.
  const byKillPath = agent.log.find("kill path: ended the first-ranked pod's processes", { pod: `${namespace}/leaky` }).length > 0;
  const leakAtLeastBytes = 150 * MiB - (byKillPath ? Number(APPROACH_DISTANCE_BYTES) : 0);
  expect(offendingUsageBytes(evicted)).toBeGreaterThan(leakAtLeastBytes);
  const nodeEvents = await listEvents(context.admin, 'default', 'EvictionThresholdMet');
  expect(nodeEvents.find((e) => e.involvedObject.name === scenario.nodeName)).toMatchObject({ type: 'Warning', message: 'Attempting to reclaim memory', involvedObject: { kind: 'Node' } });

  // The node condition: True while under pressure, False once the transition period (5 s) passed.
  const trueAt = await nodeView.waitFor(scenario.nodeName, (n) => conditionStatus(n) === 'True', `${CONDITION} True`, 10_000);
  const falseAt = await waitFor(() => nodeView.versions(scenario.nodeName).find((v) => v.atMs > trueAt.atMs && conditionStatus(v.object) === 'False'), {
    what: `${CONDITION} back to False`,
    timeoutMs: 20_000,
  });
  expect(falseAt.atMs - trueAt.atMs).toBeGreaterThanOrEqual(4_500);
  expect((await nodeCondition(context.admin, scenario.nodeName, CONDITION))?.reason).toBe('AgentHasSufficientMemory');
  expect(await agent.metric('kube_eviction_agent_evictions_total', { action: 'delete', result: 'accepted' })).toBe(1);
  expectNoRefusals(agent);
}, 120_000);

suite.test('a soft eviction refused by a PodDisruptionBudget (429) moves on to the next candidate, through the Eviction API (root, cgroup v1, real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-soft', namespace: 'soft-pressure', memoryLimitBytes: NODE_LIMIT_BYTES });
  const { namespace, kubelet, pods } = scenario;
  const { admin } = context;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'guarded', options: { memoryBytes: 16 * MiB } },
    { name: 'next', options: { memoryBytes: 16 * MiB } },
    { name: 'quiet', options: { memoryBytes: 16 * MiB } },
  ]);
  context.addDiagnostics(() => describeMemory(scenario, ['guarded', 'next', 'quiet']));
  // `guarded` may not be disrupted at all; `next` may lose one pod. The disruption controller does
  // not run here, so the status it would compute is set by hand (observedGeneration included).
  await createPdb(admin, namespace, 'guarded', { minAvailable: 1, selector: { matchLabels: { app: 'guarded' } } }, { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 });
  await createPdb(admin, namespace, 'next', { maxUnavailable: 1, selector: { matchLabels: { app: 'next' } } }, { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0, expectedPods: 1 });

  // Soft threshold 250 MiB below what is available now, hard 600 MiB below: growing `guarded` by
  // 180 MiB and `next` by 150 MiB crosses the soft one only; losing `next` alone relieves it.
  const availableMi = mebibytes(node.memory().availableBytes);
  const agent = await scenario.startAgent(agentConfig({ hardMi: availableMi - 600, softMi: availableMi - 250, softGracePeriod: '2s' }));
  await waitFor(async () => (await nodeCondition(admin, scenario.nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} False at start`, timeoutMs: 15_000 });
  await kubelet.workload(namespace, 'guarded').grow(196 * MiB);
  await kubelet.workload(namespace, 'next').grow(166 * MiB);

  await pods.waitDeleted('next', 30_000);
  // Recorded once the Eviction API accepted (it may land just after the pod is gone).
  const evictedEvent = await waitFor(async () => (await listEvents(admin, namespace, 'Evicted')).find((e) => e.involvedObject.name === 'next'), { what: 'the Evicted event', timeoutMs: 10_000 });
  expect(evictedEvent).toMatchObject({ type: 'Warning', metadata: { annotations: { starved_resource: 'memory' } } });
  // The Eviction API was used (the budget's allowance was spent on `next`), with the soft grace period.
  expect(pods.first('next', terminating)?.object.metadata.deletionGracePeriodSeconds).toBe(5);
  const nextBudget = await getPdbStatus(admin, namespace, 'next');
  expect(nextBudget.disruptionsAllowed).toBe(0);
  expect(Object.keys(nextBudget.disruptedPods ?? {})).toEqual(['next']);
  // `guarded` ranked first and was refused by its budget: it stays, and says why.
  const guardedBudget = await getPdbStatus(admin, namespace, 'guarded');
  expect(guardedBudget.disruptionsAllowed).toBe(0);
  expect(guardedBudget.disruptedPods ?? {}).toEqual({});
  const blocked = (await listEvents(admin, namespace, 'EvictionBlocked')).filter((e) => e.involvedObject.name === 'guarded');
  expect(blocked.length).toBeGreaterThanOrEqual(1);
  expect(blocked[0]?.message).toMatch(/Cannot evict pod as it would violate the pod's disruption budget/);
  expect(await agent.metric('kube_eviction_agent_evictions_total', { action: 'eviction-api', result: 'blocked' })).toBeGreaterThanOrEqual(1);
  expect(await agent.metric('kube_eviction_agent_evictions_total', { action: 'eviction-api', result: 'accepted' })).toBe(1);
  const evicted = (await listEvents(admin, namespace, 'Evicted')).map((e) => e.involvedObject.name);
  expect(evicted).toEqual(['next']);
  // A soft eviction does not end processes locally: the fake kubelet did, after the Eviction.
  expect(agent.log.find('ended pod processes locally')).toEqual([]);

  // The pressure is relieved: nothing else goes, and the condition returns to False.
  await waitFor(async () => (await nodeCondition(admin, scenario.nodeName, CONDITION))?.status === 'True', { what: `${CONDITION} True`, timeoutMs: 10_000 });
  await waitFor(async () => (await nodeCondition(admin, scenario.nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} back to False`, timeoutMs: 20_000 });
  for (const name of ['guarded', 'quiet']) {
    expect(pods.latest(name)).toBeDefined();
    expect(pods.versions(name).some((v) => terminating(v.object))).toBe(false);
  }
  expect(node.oomKills()).toBe(0);
  expectNoRefusals(agent);
}, 120_000);

// A static pod's own UID, in the form the kubelet generates (the hex of a 128-bit hash of its manifest).
const STATIC_POD_UID = '0f9e8d7c6b5a49382716a5b4c3d2e1f0';

suite.test('critical pods (system-node-critical priority, a mirror pod) are never evicted even when they use the most memory (root, cgroup v1, real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-critical', namespace: 'critical-pods', memoryLimitBytes: NODE_LIMIT_BYTES });
  const { namespace, kubelet, pods, nodeName } = scenario;
  const { admin, plane } = context;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'node-critical', options: { memoryBytes: 260 * MiB, priorityClassName: 'system-node-critical' } },
    { name: 'leaky', options: { memoryBytes: 16 * MiB } },
  ]);
  // A mirror pod can only be created by its node (NodeRestriction), as the kubelet does for a
  // static pod: with the mirror annotation and its Node as owner.
  const nodeUid = (await admin.get<{ metadata: { uid: string } }>(`/api/v1/nodes/${nodeName}`)).metadata.uid;
  await createPod(
    plane.node(nodeName),
    namespace,
    testPod('static-web', {
      nodeName,
      memoryBytes: 220 * MiB,
      annotations: { 'kubernetes.io/config.mirror': STATIC_POD_UID, 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': STATIC_POD_UID },
      ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeUid, controller: true }],
    }),
  );
  await kubelet.waitRunning(namespace, 'static-web');
  context.addDiagnostics(() => describeMemory(scenario, ['node-critical', 'static-web', 'leaky']));
  // The Priority admission plugin resolved the class.
  expect(pods.latest('node-critical')?.spec.priority).toBe(2000001000);
  expect(pods.latest('static-web')?.spec.priority ?? 0).toBe(0);

  const availableBytes = node.memory().availableBytes;
  const hardMi = mebibytes(availableBytes) - 100;
  const agent = await scenario.startAgent(agentConfig({ hardMi }));
  await waitFor(async () => (await nodeCondition(admin, nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} False at start`, timeoutMs: 15_000 });
  // 80 MiB/s: about 3 s between crossing the threshold and reaching the node's limit.
  kubelet.leak(namespace, 'leaky', { targetBytes: availableBytes + 100 * MiB, stepBytes: 8 * MiB, intervalMs: 100 });
  await pods.waitDeleted('leaky', 30_000);

  // When `leaky` was evicted, both critical pods used more memory than it did.
  const evicted = await waitFor(async () => (await listEvents(admin, namespace, 'Evicted')).find((e) => e.involvedObject.name === 'leaky'), { what: 'the Evicted event', timeoutMs: 10_000 });
  const leakyUsageBytes = offendingUsageBytes(evicted);
  for (const name of ['node-critical', 'static-web']) {
    expect(pods.versions(name).some((v) => terminating(v.object) || hasDisruptionTarget(v.object, 'TerminationByKubelet'))).toBe(false);
    expect(pods.latest(name)).toBeDefined();
    expect(kubelet.pod(namespace, name)?.workload?.running).toBe(true);
    expect(kubelet.podMemory(namespace, name)?.workingSetBytes).toBeGreaterThan(leakyUsageBytes);
  }
  // The mirror pod ranks first (priority 0, the most memory above its request) and is passed over:
  // by the pass, which says so, or by the kill path's thread or the memory shortcut on the
  // notification, which rank only the pods they may evict. Which acts first is a race, and each
  // must pick `leaky`.
  const killPathEnded = "kill path: ended the first-ranked pod's processes";
  const byKillPath = agent.log.find(killPathEnded, { pod: `${namespace}/leaky` }).length;
  const byShortcut = agent.log.find('memory shortcut: evicting', { pod: `${namespace}/leaky` }).length;
  const passedOver = agent.log.find(`cannot evict a critical pod ${namespace}/static-web`).length;
  expect(byKillPath + byShortcut + passedOver).toBeGreaterThanOrEqual(1);
  for (const message of [killPathEnded, 'memory shortcut: evicting']) expect(agent.log.find(message).filter((line) => line.fields.pod !== `${namespace}/leaky`)).toEqual([]);
  expect((await listEvents(admin, namespace, 'Evicted')).map((e) => e.involvedObject.name)).toEqual(['leaky']);
  expect(node.oomKills()).toBe(0);
  expectNoRefusals(agent);
}, 120_000);

// What the kubelet writes on a static pod it reads from a manifest, and overwrites (config.source
// becomes `api`) on a pod it gets from the API server: there, anyone who can create a pod wrote them.
const KUBELET_OWN_ANNOTATIONS = {
  'kubernetes.io/config.source': 'file',
  'kubernetes.io/config.hash': '5e1d0c9b8a7f46e3a2b1c0d9e8f7a6b5',
  'kubernetes.io/config.seen': '2026-11-01T12:00:00.000000000Z',
};

suite.test('a leaking pod that claims to be a static pod (config.source: file, config.hash, config.seen, no mirror annotation) is evicted like any other, by the memory shortcut or the pass, and the executor\'s last check lets it go (root, cgroup v1, real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-annotated', namespace: 'annotated-pods', memoryLimitBytes: NODE_LIMIT_BYTES });
  const { namespace, kubelet, pods, nodeName } = scenario;
  const { admin } = context;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'quiet', options: { memoryBytes: 24 * MiB } },
    { name: 'claims-static', options: { memoryBytes: 16 * MiB, annotations: KUBELET_OWN_ANNOTATIONS } },
  ]);
  context.addDiagnostics(() => describeMemory(scenario, ['quiet', 'claims-static']));
  // The API server keeps what the pod's author wrote: the agent sees the annotations as written.
  expect(pods.latest('claims-static')?.metadata.annotations).toMatchObject(KUBELET_OWN_ANNOTATIONS);
  const availableBytes = node.memory().availableBytes;
  const hardMi = mebibytes(availableBytes) - 150;
  const agent = await scenario.startAgent(agentConfig({ hardMi }));
  await waitFor(async () => (await nodeCondition(admin, nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} False at start`, timeoutMs: 15_000 });

  node.resetMaxUsage();
  kubelet.leak(namespace, 'claims-static', { targetBytes: availableBytes + 100 * MiB, stepBytes: 8 * MiB, intervalMs: 50 });
  await pods.waitDeleted('claims-static', 30_000);

  // It was evicted as the kubelet would have (a hard eviction, its processes ended locally), and nothing else was.
  expect(pods.first('claims-static', (pod) => hasDisruptionTarget(pod, 'TerminationByKubelet'))).toBeDefined();
  expect(pods.first('claims-static', terminating)?.object.metadata.deletionGracePeriodSeconds).toBe(1);
  expect(agent.log.find('ended pod processes locally', { pod: `${namespace}/claims-static` })).toHaveLength(1);
  expect(agent.log.find(`cannot evict a critical pod ${namespace}/claims-static`)).toEqual([]);
  expect(pods.latest('quiet')).toBeDefined();
  expect(pods.versions('quiet').some((v) => terminating(v.object))).toBe(false);
  expect(kubelet.pod(namespace, 'quiet')?.workload?.running).toBe(true);
  const evicted = await waitFor(async () => (await listEvents(admin, namespace, 'Evicted')).find((e) => e.involvedObject.name === 'claims-static'), { what: 'the Evicted event', timeoutMs: 10_000 });
  expect(evicted).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Pod', namespace, name: 'claims-static' }, metadata: { annotations: { starved_resource: 'memory' } } });
  expect((await listEvents(admin, namespace, 'Evicted')).map((e) => e.involvedObject.name)).toEqual(['claims-static']);
  expect(await agent.metric('kube_eviction_agent_evictions_total', { action: 'delete', result: 'accepted' })).toBe(1);
  expect(await agent.metric('kube_eviction_agent_evictions_total', { result: 'skipped' })).toBe(0);
  expect(node.oomKills()).toBe(0);
  expectNoRefusals(agent);
}, 120_000);
