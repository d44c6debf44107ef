// The API server restarts under a running agent (root, cgroup v1, real kube-apiserver): the
// apiserver is killed and started again on the same port with the same etcd, as during a control
// plane upgrade. The agent's watches must recover on their own, and the agent must go on acting:
// a pod created after the restart reaches its pod view, and when it leaks it is evicted through
// the restarted API server, with the node condition written there too.

import { e2eSuite } from './harness/suite.js';
import { startNodeScenario } from './harness/node-scenario.js';
import { createPod, listEvents, nodeCondition, testPod } from './harness/objects.js';
import { sleep, waitFor } from './harness/wait.js';

const MiB = 1024 * 1024;
const CONDITION = 'kube-eviction-agent.io/MemoryPressure';

const suite = e2eSuite({ nodeNames: ['node-restart'], needsCgroupV1: true });

suite.test('after a kube-apiserver restart the agent recovers its watches, sees a new pod and evicts it under memory pressure (root, cgroup v1, real kube-apiserver)', async (context) => {
  const { admin, plane } = context;
  const scenario = await startNodeScenario(context, { nodeName: 'node-restart', namespace: 'restart', memoryLimitBytes: 1024n * BigInt(MiB) });
  const { namespace, kubelet, pods, nodeName } = scenario;
  const node = scenario.node!;
  await scenario.runPods([{ name: 'quiet', options: { memoryBytes: 24 * MiB } }]);
  // Room for the pod created later (Node's own ~45 MiB and 16 MiB), then 150 MiB of leak.
  const hardMi = Math.floor(node.memory().availableBytes / MiB) - 60 - 150;
  const agent = await scenario.startAgent(`
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: ${hardMi}Mi
evictionPressureTransitionPeriod: 5s
housekeepingInterval: 1s
notifier:
  mode: memcg-v1
server:
  address: 127.0.0.1
  port: 0
logLevel: debug
`);
  await waitFor(async () => (await nodeCondition(admin, nodeName, CONDITION))?.status === 'False', { what: `${CONDITION} False at start`, timeoutMs: 15_000 });
  expect(agent.cluster.pods().map((p) => p.metadata.name)).toEqual(['quiet']);

  const oldPid = plane.apiServerPid;
  await plane.stopApiServer();
  // Down for a moment: the agent's watches fail and retry, the loop goes on observing.
  await sleep(1_500);
  await plane.startApiServer();
  expect(plane.apiServerPid).not.toBe(oldPid);
  const restartedAtMs = Date.now();
  // The watches did fail: the restart was seen.
  expect(agent.log.find('watch failed; restarting').length + agent.log.find('watch ended by the server').length).toBeGreaterThan(0);

  // A pod created after the restart appears in the agent's own view (its pod watch is back).
  await createPod(admin, namespace, testPod('leaky', { nodeName, memoryBytes: 16 * MiB }));
  await kubelet.waitRunning(namespace, 'leaky');
  const seenAt = await waitFor(() => (agent.cluster.pods().some((p) => p.metadata.name === 'leaky' && p.status?.phase === 'Running') ? Date.now() : undefined), {
    what: 'the new pod in the agent\'s pod view',
    timeoutMs: 45_000,
    detail: () => agent.log.tail(30),
  });
  console.log(`a pod created after the restart reached the agent's pod view ${seenAt - restartedAtMs} ms after the apiserver was ready again`);

  // And the agent still acts through the restarted API server.
  const availableBytes = node.memory().availableBytes;
  kubelet.leak(namespace, 'leaky', { targetBytes: availableBytes + 100 * MiB, stepBytes: 8 * MiB, intervalMs: 50 });
  await pods.waitDeleted('leaky', 30_000);
  expect(pods.latest('quiet')).toBeDefined();
  expect((await listEvents(admin, namespace, 'Evicted')).map((e) => e.involvedObject.name)).toEqual(['leaky']);
  await waitFor(async () => (await nodeCondition(admin, nodeName, CONDITION))?.status === 'True', { what: `${CONDITION} True after the restart`, timeoutMs: 10_000 });
  expect(node.oomKills()).toBe(0);
  // While it starts, before /readyz, an apiserver answers 403 until its RBAC caches are filled:
  // only refusals after that would be a missing right.
  expect(agent.log.refusals().filter((e) => e.atMs >= restartedAtMs)).toEqual([]);
}, 150_000);
