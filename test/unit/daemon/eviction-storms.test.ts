// Eviction storms on a fake clock, through the running agent: a leaking Deployment whose
// replacement pods land back on the node and are evicted again, with and without the guard. The
// per-node budget holds back soft evictions (never hard ones) and says so; the owner is found
// through its ReplicaSet (or by the names) and gets one Warning Event a window; the pressure taint
// stays for the cool-down.

import type { Pod } from '../../../src/api/pod.js';
import { silentLogger } from '../../../src/api/logger.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import type { OwnerLookup } from '../../../src/daemon/ports.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../../fakes/fake-node.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { makePod, mirrorAnnotations, STATIC_POD_UID } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const HASH = '5d8f7c9b4';

// A soft threshold met for good (its grace period elapses once); a hard one far below.
const SOFT = `
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 5s
evictionHard:
  memory.available: 100Mi
reporting:
  taint:
    enabled: true
`;

/** The n-th replica of Deployment default/leaky, as the ReplicaSet controller names it. */
function replica(n: number): Pod {
  const pod = makePod({ name: `leaky-${HASH}-r${n}`, uid: `1eaf0000-0000-4000-8000-${String(n).padStart(12, '0')}`, requests: { memory: '100Mi' } });
  pod.metadata.labels = { app: 'leaky', 'pod-template-hash': HASH };
  pod.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `leaky-${HASH}`, uid: 'uid-rs-leaky', controller: true }];
  return pod;
}

interface Storm {
  clock: FakeClock;
  cluster: FakeCluster;
  observer: FakeObserver;
  agent: RunningAgent;
  /** Schedules replica n onto the node, using 3 GiB (the leak), with 800 MiB available (or `availableBytes`). */
  land(n: number, availableBytes?: number): void;
  evicted(): string[];
  metric(name: string): Promise<string>;
}

let running: RunningAgent | null = null;
afterEach(async () => {
  await running?.stop();
  running = null;
});

async function storm(stormGuard: string, owners?: OwnerLookup): Promise<Storm> {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  // A static pod: critical, never evicted, so only the leak's replicas are candidates.
  const web = makePod({ name: 'web', uid: '3e770000-0000-4000-8000-000000000000', annotations: mirrorAnnotations() });
  // The evicted pod is gone at once, as after a short graceful shutdown.
  const cluster = fakeCluster({ pods: [web], node: testNode('node-a'), clock, onAccepted: 'remove' });
  const observer = new FakeObserver();
  const usage: Record<string, { name: string; bytes: number }> = { [STATIC_POD_UID]: { name: 'web', bytes: 1 * Gi } };
  observer.summary = memorySummary(8 * Gi, 4 * Gi, usage);
  const config = parseConfigText(`${SOFT}${stormGuard}`, 'storm.yaml');
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const agent = await startAgent(
    { config, nodeName: 'node-a', reload: null, serverPort: 0 },
    {
      cluster: view,
      actions: cluster.actions,
      events: cluster.events,
      nodeReporter: cluster.reporter,
      observer,
      notifier: new FakeNotifier(),
      terminator: new FakeTerminator(),
      hostIdentity: TEST_HOST,
      clock,
      logger: silentLogger,
      ...(owners === undefined ? {} : { owners }),
    },
  );
  running = agent;
  await flushMicrotasks();
  return {
    clock,
    cluster,
    observer,
    agent,
    land: (n, availableBytes = 800 * Mi) => {
      const pod = replica(n);
      cluster.view.upsertPod(pod);
      for (const uid of Object.keys(usage)) if (uid !== STATIC_POD_UID) delete usage[uid];
      usage[pod.metadata.uid ?? ''] = { name: pod.metadata.name ?? '', bytes: 3 * Gi };
      observer.summary = memorySummary(8 * Gi, availableBytes, usage);
    },
    evicted: () => [...cluster.actions.callsOf('evictPod'), ...cluster.actions.callsOf('deletePod')].map((c) => c.name),
    metric: async (name) => {
      const text = await agent.metrics.registry.metrics();
      return text.split('\n').filter((l) => l.startsWith(name)).join('\n');
    },
  };
}

// Replicas 1..n land one after another, each given a housekeeping pass (and the grace period first).
async function leak(s: Storm, n: number): Promise<void> {
  for (let i = 1; i <= n; i++) {
    s.land(i);
    await s.clock.stepAsync(i === 1 ? 20_000 : 10_000);
  }
  await flushMicrotasks();
}

const ownerEvents = (s: Storm) => s.cluster.events.events.filter((e) => e.reason === 'EvictionStorm');

describe('a leaking Deployment evicted over and over', () => {
  test('without a budget every replica is evicted, and the Deployment gets one Warning Event a window past the threshold', async () => {
    const s = await storm('', { replicaSetOwner: async () => ({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'leaky', uid: 'uid-deploy-leaky' }) });
    await leak(s, 5);
    expect(s.evicted()).toEqual([1, 2, 3, 4, 5].map((n) => `leaky-${HASH}-r${n}`));
    // The default threshold is 3 in 10 minutes: one Event, at the third, on the Deployment itself.
    const events = ownerEvents(s);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'Warning',
      object: 'other',
      involved: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'leaky', uid: 'uid-deploy-leaky' },
      message: '3 pods of Deployment default/leaky evicted from node node-a for memory in the last 10 minutes',
    });
    expect(await s.metric('kube_eviction_agent_eviction_storms_total')).toMatch(/kind="Deployment"\} 1/);
    expect(s.cluster.events.events.filter((e) => e.reason === 'EvictionHeldBack')).toEqual([]);

    // The storm goes on: reported again once a window has passed since the first report, and once.
    for (let i = 6; i <= 10; i++) {
      s.land(i);
      await s.clock.stepAsync(150_000);
    }
    await flushMicrotasks();
    expect(ownerEvents(s)).toHaveLength(2);
  });

  test('with a budget of 2 soft evictions per 10 minutes the third is held back (Event, metric, attempt), and allowed once the first ages out', async () => {
    const s = await storm('stormGuard:\n  softEvictionBudget:\n    maxEvictions: 2\n    window: 10m\n');
    await leak(s, 3);
    expect(s.evicted()).toEqual([`leaky-${HASH}-r1`, `leaky-${HASH}-r2`]);
    const held = s.cluster.events.events.filter((e) => e.reason === 'EvictionHeldBack');
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ type: 'Warning', object: 'node' });
    expect(held[0]?.message).toMatch(
      new RegExp(`^Soft eviction of default/leaky-${HASH}-r3 for memory\\.available held back: 2 soft evictions from node node-a in the last 10 minutes reached the budget of 2; the next is allowed in \\d+ (seconds|minutes)\\. Hard evictions are not held back\\.$`),
    );
    expect(await s.metric('kube_eviction_agent_soft_evictions_held_total')).toMatch(/signal="memory.available"\} 1/);
    expect(await s.metric('kube_eviction_agent_evictions_total')).toMatch(/signal="memory.available",action="none",result="held"\} 1/);

    // Every later pass holds it too, reported once.
    await s.clock.stepAsync(60_000);
    expect(s.evicted()).toHaveLength(2);
    expect(s.cluster.events.events.filter((e) => e.reason === 'EvictionHeldBack')).toHaveLength(1);

    // Ten minutes after the first eviction it is allowed.
    await s.clock.stepAsync(10 * 60_000);
    await flushMicrotasks();
    expect(s.evicted()).toEqual([1, 2, 3].map((n) => `leaky-${HASH}-r${n}`));
  });

  test('a hard threshold is never held back by the budget', async () => {
    const s = await storm('stormGuard:\n  softEvictionBudget:\n    maxEvictions: 1\n    window: 1h\n');
    await leak(s, 2);
    expect(s.evicted()).toEqual([`leaky-${HASH}-r1`]);
    // The leak gets worse: below the hard threshold, the same pod goes at once.
    s.land(2, 50 * Mi);
    await s.clock.stepAsync(10_000);
    await flushMicrotasks();
    expect(s.evicted()).toEqual([`leaky-${HASH}-r1`, `leaky-${HASH}-r2`]);
    expect(s.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual([`leaky-${HASH}-r2`]);
  });

  test('the ReplicaSet cannot be read: the Deployment is found by the names, and the taint stays for the cool-down', async () => {
    const s = await storm('stormGuard:\n  owners:\n    eventThreshold: 2\n    taintCoolDown: 30m\n', { replicaSetOwner: async () => 'reading ReplicaSet default/leaky-5d8f7c9b4 failed (403): forbidden' });
    await leak(s, 2);
    const events = ownerEvents(s);
    expect(events.map((e) => [e.involved?.kind, e.involved?.name, e.involved?.uid])).toEqual([['Deployment', 'leaky', null]]);
    expect(events[0]?.message).toBe('2 pods of Deployment default/leaky evicted from node node-a for memory in the last 10 minutes; the node keeps its pressure taint for 30 minutes');
    expect(s.cluster.view.node()?.spec?.taints?.map((t) => t.key)).toEqual(['kube-eviction-agent.io/pressure']);

    // Pressure gone: the condition ends after its 5-minute transition period, the taint stays
    // until the cool-down ends, 30 minutes after the storm.
    s.observer.summary = memorySummary(8 * Gi, 4 * Gi, { [STATIC_POD_UID]: { name: 'web', bytes: 1 * Gi } });
    s.cluster.view.removePod('default', `leaky-${HASH}-r2`);
    await s.clock.stepAsync(10 * 60_000);
    expect(s.cluster.view.node()?.status?.conditions?.find((c) => c.type === 'kube-eviction-agent.io/MemoryPressure')?.status).toBe('False');
    expect(s.cluster.view.node()?.spec?.taints?.map((t) => t.key)).toEqual(['kube-eviction-agent.io/pressure']);
    await s.clock.stepAsync(21 * 60_000);
    expect(s.cluster.view.node()?.spec?.taints ?? []).toEqual([]);
  });

  test('owner Events off (eventThreshold 0): evictions go ahead, nothing is reported on the owner', async () => {
    const s = await storm('stormGuard:\n  owners:\n    eventThreshold: 0\n');
    await leak(s, 4);
    expect(s.evicted()).toHaveLength(4);
    expect(ownerEvents(s)).toEqual([]);
  });
});
