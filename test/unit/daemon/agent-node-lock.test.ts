// Two agents on one node (one fake cluster, one fake clock, a real flock in a temporary lock
// directory): only the holder of the node lock evicts, the standby decides the same and is refused;
// when the holder stops, the standby acts within a poll interval on what it has computed, waits for
// the pod the holder evicted instead of evicting a second one for the same shortage, and then acts
// on what pressure remains. /readyz and the node conditions say who holds the lock.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeLockFile } from '../../../src/act/node-lock-file.js';
import type { Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../../fakes/fake-node.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { makePod } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const CONFIG = `
evictionHard:
  memory.available: 500Mi
actions:
  localTermination: true
`;
const UID = { leaky: '1eaf0000-0000-4000-8000-000000000001', batch: 'ba7c0000-0000-4000-8000-000000000002' } as const;
const USAGE = { [UID.leaky]: { name: 'leaky', bytes: 3 * Gi }, [UID.batch]: { name: 'batch', bytes: 2 * Gi } };

interface NodeAgent {
  readonly agent: RunningAgent;
  readonly observer: FakeObserver;
  readonly notifier: FakeNotifier;
  readonly terminator: FakeTerminator;
  readonly logger: RecordingLogger;
}

let lockDir: string;
let running: NodeAgent[] = [];
beforeEach(() => {
  lockDir = mkdtempSync(join(tmpdir(), 'kea-agent-lock-'));
});
afterEach(async () => {
  for (const a of running) await a.agent.stop();
  running = [];
  rmSync(lockDir, { recursive: true, force: true });
});

async function startOnNode(clock: FakeClock, cluster: FakeCluster, name: string, availableBytes: number, configYaml = CONFIG): Promise<NodeAgent> {
  const observer = new FakeObserver();
  observer.summary = memorySummary(8 * Gi, availableBytes, USAGE);
  const notifier = new FakeNotifier();
  const terminator = new FakeTerminator();
  const logger = new RecordingLogger();
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const self = { pid: name === 'a' ? 1001 : 1002, pod: `kube-system/kea-${name}`, release: 'kea', image: 'kea:1', startedAtMs: clock.nowMs() };
  const agent = await startAgent(
    { config: parseConfigText(configYaml, 'test.yaml'), nodeName: 'node-a', reload: null, serverPort: 0 },
    { cluster: view, actions: cluster.actions, events: cluster.events, nodeReporter: cluster.reporter, observer, notifier, terminator, hostIdentity: TEST_HOST, clock, logger, nodeLock: { lock: createNodeLockFile(lockDir), self } },
  );
  await flushMicrotasks();
  const started = { agent, observer, notifier, terminator, logger };
  running.push(started);
  return started;
}

function pods(): Pod[] {
  return [makePod({ name: 'leaky', uid: UID.leaky, requests: { memory: '100Mi' }, tgps: 30 }), makePod({ name: 'batch', uid: UID.batch, requests: { memory: '100Mi' }, tgps: 30 })];
}

async function readyz(agent: RunningAgent): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${agent.opsPort}/readyz`);
  return `${response.status} ${await response.text()}`;
}

async function lockState(agent: RunningAgent): Promise<string> {
  const values = (await agent.metrics.registry.getSingleMetric('kube_eviction_agent_node_lock_state')?.get())?.values ?? [];
  return values.find((v) => v.value === 1)?.labels.state as string;
}

test('only the lock holder evicts; the standby decides the same, is refused, and says so', async () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const cluster = fakeCluster({ pods: pods(), node: testNode('node-a'), clock });
  const a = await startOnNode(clock, cluster, 'a', 4 * Gi);
  const b = await startOnNode(clock, cluster, 'b', 4 * Gi);
  expect([await lockState(a.agent), await lockState(b.agent)]).toEqual(['active', 'standby']);
  for (const x of [a, b]) {
    x.observer.summary = memorySummary(8 * Gi, 300 * Mi, USAGE);
    x.notifier.fire(clock.nowMs());
  }
  await clock.stepAsync(100);
  expect(a.terminator.calls).toEqual([{ uid: UID.leaky, gracePeriodMs: 1000 }]);
  expect(b.terminator.calls).toEqual([]);
  expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  // The standby made the same decision, and was refused.
  expect(b.logger.lines.filter((l) => l.msg === 'eviction attempt' && l.fields.result === 'refused').map((l) => l.fields.pod)).toContain('default/leaky');
  // Both ready; the standby says it stands by, and which agent acts.
  expect(await readyz(a.agent)).toBe(`200 ok: acting: this agent holds the node lock in ${lockDir}\n`);
  expect(await readyz(b.agent)).toBe(`200 ok: standby: the node lock in ${lockDir} is held by pod kube-system/kea-a (release kea, image kea:1, pid 1001)\n`);
  // The conditions name the holder.
  await clock.stepAsync(100);
  const condition = cluster.reporter.conditions.get('kube-eviction-agent.io/MemoryPressure');
  expect(condition?.message).toContain('(node lock holder: pod kube-system/kea-a (release kea, image kea:1, pid 1001))');
  // A Normal Event: one release's two pods.
  expect(cluster.events.events.filter((e) => e.reason === 'AgentStandby')).toHaveLength(1);
});

test('the holder stops: the standby takes over within a poll interval, waits for the pod already evicted, then acts on the pressure left', async () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const cluster = fakeCluster({ pods: pods(), node: testNode('node-a'), clock });
  const a = await startOnNode(clock, cluster, 'a', 4 * Gi);
  const b = await startOnNode(clock, cluster, 'b', 4 * Gi);
  await clock.stepAsync(1000);
  for (const x of [a, b]) {
    x.observer.summary = memorySummary(8 * Gi, 300 * Mi, USAGE);
    x.notifier.fire(clock.nowMs());
  }
  await clock.stepAsync(100);
  expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  // The holder goes (an upgrade's old pod); the pressure is still there (leaky is terminating).
  const stopping = a.agent.stop();
  await clock.stepAsync(50);
  await stopping;
  running = running.filter((x) => x !== a);
  expect(await lockState(b.agent)).toBe('active');
  const takeover = b.logger.lines.find((l) => l.msg === 'node lock acquired: this agent acts on the node');
  expect(takeover?.fields).toMatchObject({ previousHolder: 'pod kube-system/kea-a (release kea, image kea:1, pid 1001)', carriedOver: true, inheritedEvictions: ['default/leaky'] });
  // The standby's first pass came at once, and did not evict a second pod for the same shortage.
  await clock.stepAsync(2000);
  expect(b.terminator.calls).toEqual([]);
  expect(b.logger.lines.some((l) => l.msg === 'eviction attempt' && String(l.fields.message).startsWith('waiting for default/leaky, evicted by the previous lock holder'))).toBe(true);
  // leaky is gone; the node is still short: now batch goes.
  cluster.view.removePod('default', 'leaky');
  b.observer.summary = memorySummary(8 * Gi, 300 * Mi, { [UID.batch]: USAGE[UID.batch] });
  await clock.stepAsync(11_000);
  expect(b.terminator.calls).toEqual([{ uid: UID.batch, gracePeriodMs: 1000 }]);
  expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky', 'batch']);
});

test('NoExecute taint handling is the holder\'s alone, and starts on the standby the moment it takes over', async () => {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const node = testNode('node-a');
  // A deleted pod leaves the view at once (the kubelet removed it).
  const cluster = fakeCluster({ pods: [], node: { ...node, spec: { taints: [{ key: 'example.com/broken', value: '', effect: 'NoExecute' }] } }, clock, onAccepted: 'remove' });
  const config = `${CONFIG}taintEviction:\n  enabled: true\n`;
  const a = await startOnNode(clock, cluster, 'a', 4 * Gi, config);
  const b = await startOnNode(clock, cluster, 'b', 4 * Gi, config);
  cluster.view.upsertPod(makePod({ name: 'first', uid: UID.leaky }));
  await clock.stepAsync(1000);
  expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['first']);
  expect(b.logger.lines.some((l) => l.msg.startsWith('not deleting a pod for a NoExecute taint'))).toBe(false);
  const stopping = a.agent.stop();
  await clock.stepAsync(50);
  await stopping;
  running = running.filter((x) => x !== a);
  cluster.view.upsertPod(makePod({ name: 'second', uid: UID.batch }));
  await clock.stepAsync(1000);
  expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['first', 'second']);
});
