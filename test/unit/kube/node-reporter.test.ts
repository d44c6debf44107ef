// NodeReporter over the stand-in: the agent's own conditions (the kubelet's are never touched) and
// its taint (everyone else's are never lost, even when they change in between).

import { FakeClock } from '../../fakes/fake-clock.js';
import type { Node } from '../../../src/api/pod.js';
import type { NodeReporter } from '../../../src/daemon/ports.js';
import { node, NODE_NAME, startHarness, waitFor, type Harness } from './harness.js';

const TYPE = 'kube-eviction-agent.io/MemoryPressure';
const T0 = Date.UTC(2026, 0, 1, 0, 0, 0);
const iso = (ms: number): string => `${new Date(ms).toISOString().slice(0, 19)}Z`;
const TAINT = { key: 'kube-eviction-agent.io/memory-pressure', value: 'true', effect: 'NoSchedule' as const };
const OTHER_TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };

type Condition = { type: string; status: string; reason?: string; message?: string; lastHeartbeatTime?: string; lastTransitionTime?: string };

let h: Harness;
let clock: FakeClock;
let reporter: NodeReporter;

function conditions(): Condition[] {
  return (h.standIn.node(NODE_NAME)?.status?.conditions ?? []) as Condition[];
}

function agentCondition(): Condition | undefined {
  return conditions().find((c) => c.type === TYPE);
}

afterEach(async () => {
  await h.close();
});

describe('setConditions', () => {
  // Time is the point here: the client runs on a fake clock.
  beforeEach(async () => {
    clock = new FakeClock(T0);
    h = await startHarness({ clock });
    h.standIn.setNode(node());
    reporter = h.client.nodeReporter();
  });

  test('adds the agent\'s condition through the status subresource and leaves the kubelet\'s as they were', async () => {
    const kubeletBefore = conditions();
    await expect(reporter.setConditions([{ type: TYPE, status: 'True', reason: 'MemoryPressure', message: 'memory.available < 500Mi' }])).resolves.toBe(true);
    expect(agentCondition()).toEqual({ type: TYPE, status: 'True', reason: 'MemoryPressure', message: 'memory.available < 500Mi', lastHeartbeatTime: iso(T0), lastTransitionTime: iso(T0) });
    expect(conditions().filter((c) => c.type !== TYPE)).toEqual(kubeletBefore);
    const patch = h.standIn.requests().find((r) => r.method === 'PATCH');
    expect(patch).toMatchObject({ path: `/api/v1/nodes/${NODE_NAME}/status`, contentType: 'application/strategic-merge-patch+json', status: 200 });
    expect(((patch?.body as { status: { conditions: Condition[] } }).status.conditions).map((c) => c.type)).toEqual([TYPE]);
  });

  test('the heartbeat moves on every report, the transition time only when the status flips', async () => {
    const set = (status: 'True' | 'False') => reporter.setConditions([{ type: TYPE, status, reason: 'R', message: 'm' }]);
    await set('True');
    clock.step(10_000);
    await set('True');
    expect(agentCondition()).toMatchObject({ lastHeartbeatTime: iso(T0 + 10_000), lastTransitionTime: iso(T0) });
    clock.step(10_000);
    await set('False');
    expect(agentCondition()).toMatchObject({ status: 'False', lastHeartbeatTime: iso(T0 + 20_000), lastTransitionTime: iso(T0 + 20_000) });
    clock.step(10_000);
    await set('False');
    expect(agentCondition()).toMatchObject({ lastHeartbeatTime: iso(T0 + 30_000), lastTransitionTime: iso(T0 + 20_000) });
  });

  // Every condition type the kubelet's status setters own, the agent's own prefix left off.
  for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure', 'Ready', 'NetworkUnavailable']) {
    test(`the kubelet's ${type} is refused: nothing is written, and the answer is false`, async () => {
      const before = h.standIn.node(NODE_NAME);
      await expect(reporter.setConditions([{ type, status: 'True', reason: 'R', message: 'm' }])).resolves.toBe(false);
      expect(h.standIn.node(NODE_NAME)).toEqual(before);
      expect(h.standIn.requests().filter((r) => r.method === 'PATCH')).toEqual([]);
      expect(h.logger.find('refusing to write a condition the kubelet owns', { type })).toHaveLength(1);
    });
  }

  test('mixed with a kubelet type, the agent\'s own condition is still written, and the answer is false', async () => {
    await expect(reporter.setConditions([{ type: 'Ready', status: 'False', reason: 'R', message: 'm' }, { type: TYPE, status: 'True', reason: 'R', message: 'm' }])).resolves.toBe(false);
    expect(agentCondition()?.status).toBe('True');
    expect(conditions().find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  const failures: { name: string; fault: { method: string; pathPattern: string; status: 500 | 503 } }[] = [
    { name: 'the-read-fails', fault: { method: 'GET', pathPattern: `/nodes/${NODE_NAME}`, status: 503 } },
    { name: 'the-patch-fails', fault: { method: 'PATCH', pathPattern: '/status', status: 500 } },
  ];
  for (const tc of failures) {
    test(`false, never thrown, when ${tc.name}`, async () => {
      h.standIn.injectFault(tc.fault);
      await expect(reporter.setConditions([{ type: TYPE, status: 'True', reason: 'R', message: 'm' }])).resolves.toBe(false);
      expect(agentCondition()).toBeUndefined();
    });
  }

  test('false when the node does not exist', async () => {
    h.standIn.deleteNode(NODE_NAME);
    await expect(reporter.setConditions([{ type: TYPE, status: 'True', reason: 'R', message: 'm' }])).resolves.toBe(false);
  });
});

describe('setTaint', () => {
  function taints(): unknown[] {
    return h.standIn.node(NODE_NAME)?.spec?.taints ?? [];
  }
  function patches(): number {
    return h.standIn.requests().filter((r) => r.method === 'PATCH').length;
  }

  // Real time: the conflict retries sleep for a few tens of milliseconds.
  beforeEach(async () => {
    h = await startHarness({ random: () => 1 });
    h.standIn.setNode({ ...node(), spec: { taints: [OTHER_TAINT] } });
    reporter = h.client.nodeReporter();
  });

  test('adds the taint after the others with a resourceVersion-guarded merge patch; adding again sends nothing', async () => {
    await expect(reporter.setTaint(TAINT, true)).resolves.toBe(true);
    expect(taints()).toEqual([OTHER_TAINT, TAINT]);
    const patch = h.standIn.requests().find((r) => r.method === 'PATCH');
    expect(patch).toMatchObject({ path: `/api/v1/nodes/${NODE_NAME}`, contentType: 'application/merge-patch+json' });
    expect((patch?.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toMatch(/^\d+$/);
    await expect(reporter.setTaint(TAINT, true)).resolves.toBe(true);
    expect(patches()).toBe(1);
  });

  test('removes only its own taint; removing again sends nothing', async () => {
    await reporter.setTaint(TAINT, true);
    await expect(reporter.setTaint(TAINT, false)).resolves.toBe(true);
    expect(taints()).toEqual([OTHER_TAINT]);
    await expect(reporter.setTaint(TAINT, false)).resolves.toBe(true);
    expect(patches()).toBe(2);
  });

  test('removing the last taint leaves none', async () => {
    h.standIn.setNode(node());
    await reporter.setTaint(TAINT, true);
    await reporter.setTaint(TAINT, false);
    expect(h.standIn.node(NODE_NAME)?.spec?.taints).toBeUndefined();
  });

  test('a taint another controller adds between the read and the write is kept: the write conflicts and is redone', async () => {
    const racer: Node = { ...node(), spec: { taints: [OTHER_TAINT, { key: 'racer', value: 'x', effect: 'NoExecute' }] } };
    // The PATCH waits; meanwhile the node changes, so its resourceVersion no longer matches.
    h.standIn.injectFault({ method: 'PATCH', pathPattern: `/nodes/${NODE_NAME}`, delayMs: 200 });
    const done = reporter.setTaint(TAINT, true);
    await waitFor('the delayed patch', () => h.standIn.requests().some((r) => r.method === 'PATCH'));
    h.standIn.setNode(racer);
    await expect(done).resolves.toBe(true);
    expect(h.standIn.requests().filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 200]);
    expect(taints()).toEqual([OTHER_TAINT, { key: 'racer', value: 'x', effect: 'NoExecute' }, TAINT]);
  });

  test('conflicts that never end give up after the attempts, answering false', async () => {
    h.standIn.injectFault({ method: 'PATCH', status: 409, count: 50 });
    await expect(reporter.setTaint(TAINT, true)).resolves.toBe(false);
    expect(h.standIn.requests().filter((r) => r.method === 'PATCH')).toHaveLength(5);
    expect(taints()).toEqual([OTHER_TAINT]);
  });

  test('another failure is not retried', async () => {
    h.standIn.injectFault({ method: 'PATCH', status: 500 });
    await expect(reporter.setTaint(TAINT, true)).resolves.toBe(false);
    expect(patches()).toBe(1);
  });
});

// With the client's view watching the Node (as in the running agent), what is on the Node comes
// from the watch: no read before each write. A watched copy that lags is caught by the
// resourceVersion (a conflict, then a read) or, where it says there is nothing to do, by a read.
describe('with the Node watched', () => {
  const reads = (): number => h.standIn.requests().filter((r) => r.method === 'GET' && r.path === `/api/v1/nodes/${NODE_NAME}`).length;
  const taints = (): unknown[] => h.standIn.node(NODE_NAME)?.spec?.taints ?? [];

  beforeEach(async () => {
    clock = new FakeClock(T0);
    h = await startHarness({ clock, random: () => 1 });
    h.standIn.setNode({ ...node(), spec: { taints: [OTHER_TAINT] } });
    reporter = h.client.nodeReporter();
    await h.client.clusterView().start();
    await h.client.clusterView().whenSynced();
  });

  test('conditions: written without a read, their transition time kept from the watched Node', async () => {
    await expect(reporter.setConditions([{ type: TYPE, status: 'True', reason: 'R', message: 'm' }])).resolves.toBe(true);
    await waitFor('the watch to show the condition', () => h.client.clusterView().node()?.status?.conditions?.some((c) => c.type === TYPE) === true);
    clock.step(10_000);
    await expect(reporter.setConditions([{ type: TYPE, status: 'True', reason: 'R', message: 'again' }])).resolves.toBe(true);
    expect(agentCondition()).toMatchObject({ message: 'again', lastHeartbeatTime: iso(T0 + 10_000), lastTransitionTime: iso(T0) });
    expect(reads()).toBe(0);
  });

  test('the taint: added and removed without a read, each write conditional on the watched resourceVersion', async () => {
    await expect(reporter.setTaint(TAINT, true)).resolves.toBe(true);
    expect(taints()).toEqual([OTHER_TAINT, TAINT]);
    await waitFor('the watch to show the taint', () => h.client.clusterView().node()?.spec?.taints?.length === 2);
    await expect(reporter.setTaint(TAINT, false)).resolves.toBe(true);
    expect(taints()).toEqual([OTHER_TAINT]);
    const patches = h.standIn.requests().filter((r) => r.method === 'PATCH');
    expect(patches.map((r) => r.status)).toEqual([200, 200]);
    expect(patches.every((r) => typeof (r.body as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion === 'string')).toBe(true);
    expect(reads()).toBe(0);
  });

  test('a watched copy behind the API server: the write conflicts, the Node is read and the write redone, keeping the taint added meanwhile', async () => {
    // The watch stops delivering; another controller adds a taint.
    await h.client.clusterView().stop();
    const racer = { key: 'racer', value: 'x', effect: 'NoExecute' };
    h.standIn.setNode({ ...node(), spec: { taints: [OTHER_TAINT, racer] } });
    const done = reporter.setTaint(TAINT, true);
    await waitFor('the conflict', () => h.standIn.requests().some((r) => r.method === 'PATCH' && r.status === 409));
    // The conflict's back-off runs on the client's (fake) clock.
    await clock.stepAsync(1_000);
    await expect(done).resolves.toBe(true);
    expect(h.standIn.requests().filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 200]);
    expect(reads()).toBe(1);
    expect(taints()).toEqual([OTHER_TAINT, racer, TAINT]);
  });

  test('"nothing to do" on a watched copy behind the API server is confirmed by a read: a taint the watch does not show yet is still removed', async () => {
    await h.client.clusterView().stop();
    h.standIn.setNode({ ...node(), spec: { taints: [OTHER_TAINT, TAINT] } });
    await expect(reporter.setTaint(TAINT, false)).resolves.toBe(true);
    expect(reads()).toBe(1);
    expect(taints()).toEqual([OTHER_TAINT]);
  });
});
