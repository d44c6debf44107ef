// The running agent on fakes and a fake clock: the whole loop from a notification to the
// eviction request, each action path, dry run, re-checks, failures and recovery, reload.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Node, Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../../fakes/fake-node.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { makePod, mirrorAnnotations, STATIC_POD_UID } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

const HARD_AND_SOFT = `
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 5s
evictionMaxPodGracePeriod: 20
`;

// Below the soft threshold long enough for its 5 s grace period: a notification starts the
// clock, and the pass woken when the grace period ends evicts.
async function softPressure(h: Harness): Promise<void> {
  h.setAvailable(800 * Mi);
  h.notifier.fire(h.clock.nowMs(), 'soft memory eviction threshold');
  await flushMicrotasks();
  await h.clock.stepAsync(10_000);
}

interface Harness {
  clock: FakeClock;
  cluster: FakeCluster;
  observer: FakeObserver;
  notifier: FakeNotifier;
  terminator: FakeTerminator;
  agent: RunningAgent;
  pods: Pod[];
  logger: RecordingLogger;
  setAvailable(bytes: number): void;
}

// The pods' UIDs, in the API server's form (the agent refuses any other).
const UID = { leaky: '1eaf0000-0000-4000-8000-000000000001', batch: 'ba7c0000-0000-4000-8000-000000000002', mirror: '3e770000-0000-4000-8000-000000000003' } as const;

// Three pods: `leaky` far over its request, `batch` a little over, `critical` (mirror) biggest.
async function start(configYaml: string, options: { dryRun?: boolean; pods?: Pod[]; reload?: { path: string; text: string }; node?: Node } = {}): Promise<Harness> {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const pods = options.pods ?? [
    makePod({ name: 'leaky', uid: UID.leaky, requests: { memory: '100Mi' }, tgps: 30 }),
    makePod({ name: 'batch', uid: UID.batch, requests: { memory: '100Mi' }, tgps: 30 }),
    makePod({ name: 'mirror', uid: UID.mirror, annotations: mirrorAnnotations() }),
  ];
  const cluster = fakeCluster({ pods, node: options.node ?? testNode('node-a'), clock });
  const observer = new FakeObserver();
  const notifier = new FakeNotifier();
  const terminator = new FakeTerminator();
  const logger = new RecordingLogger();
  const usage: Record<string, { name: string; bytes: number }> = {
    [UID.leaky]: { name: 'leaky', bytes: 3 * Gi },
    [UID.batch]: { name: 'batch', bytes: 200 * Mi },
    // Reported under the static pod's own UID, as the kubelet reports it.
    [STATIC_POD_UID]: { name: 'mirror', bytes: 4 * Gi },
  };
  const setAvailable = (bytes: number): void => {
    observer.summary = memorySummary(8 * Gi, bytes, usage);
  };
  setAvailable(4 * Gi);
  const config = parseConfigText(configYaml, 'test.yaml');
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const agent = await startAgent(
    { config, nodeName: 'node-a', reload: options.reload === undefined ? null : { ...options.reload, parse: (text) => parseConfigText(text, options.reload?.path ?? '') }, dryRun: options.dryRun, serverPort: 0 },
    { cluster: view, actions: cluster.actions, events: cluster.events, nodeReporter: cluster.reporter, observer, notifier, terminator, hostIdentity: TEST_HOST, clock, logger },
  );
  await flushMicrotasks();
  return { clock, cluster, observer, notifier, terminator, agent, pods, logger, setAvailable };
}

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.agent.stop();
  harness = null;
});

async function metric(agent: RunningAgent, name: string): Promise<string> {
  const text = await agent.metrics.registry.metrics();
  return text.split('\n').filter((l) => l.startsWith(name)).join('\n');
}

describe('the agent on a node under memory pressure', () => {
  test('a kernel notification leads straight to local termination, the DisruptionTarget condition and a DELETE with grace 1', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();

    // The mirror pod ranks first (largest excess, priority 0) but is critical: skipped.
    expect(terminator.calls).toEqual([{ uid: UID.leaky, gracePeriodMs: 1000 }]);
    const deletes = cluster.actions.callsOf('deletePod');
    expect(deletes.map((c) => [c.name, c.gracePeriodSeconds, c.uid])).toEqual([['leaky', 1, UID.leaky]]);
    const condition = cluster.actions.callsOf('addDisruptionTarget')[0];
    expect(condition?.condition?.reason).toBe('TerminationByKubelet');
    const evicted = cluster.events.events.find((e) => e.reason === 'Evicted');
    expect(evicted?.pod?.metadata.name).toBe('leaky');
    expect(evicted?.annotations?.starved_resource).toBe('memory');
    expect(evicted?.message).toMatch(/^The node was low on resource: memory\. Threshold quantity: 500Mi, available: 300Mi\. /);
    expect(cluster.events.events.find((e) => e.object === 'node')).toMatchObject({ reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory', type: 'Warning' });
    expect(await metric(harness.agent, 'kube_eviction_agent_notification_to_eviction_seconds_count')).toMatch(/action="local-termination"\} 1/);
    expect(await metric(harness.agent, 'kube_eviction_agent_evictions_total')).toMatch(/signal="memory.available",action="delete",result="accepted"\} 1/);
  });

  test('the local kill waits for no API request: with the API server silent, the processes are ended at once and the requests follow when it answers', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    // Every request and Event waits until the API server "answers".
    let answer = (): void => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const held = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
      await answered;
      return call(...args);
    };
    const { actions, events } = cluster;
    actions.getPod = held(actions.getPod.bind(actions));
    actions.deletePod = held(actions.deletePod.bind(actions));
    actions.addDisruptionTarget = held(actions.addDisruptionTarget.bind(actions));
    events.nodeEvent = held(events.nodeEvent.bind(events));
    events.podEvent = held(events.podEvent.bind(events));

    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls).toEqual([{ uid: UID.leaky, gracePeriodMs: 1000 }]);
    expect(actions.callsOf('deletePod')).toEqual([]);
    expect(events.events).toEqual([]);

    answer();
    await flushMicrotasks();
    expect(actions.callsOf('deletePod').map((c) => [c.name, c.outcome.result])).toEqual([['leaky', 'accepted']]);
    expect(events.reasons().sort()).toEqual(['Evicted', 'EvictionThresholdMet']);
  });

  test('a soft threshold uses the Eviction API; a PodDisruptionBudget refusal moves on to the next candidate', async () => {
    harness = await start(HARD_AND_SOFT);
    const { cluster, terminator } = harness;
    cluster.actions.block('default', 'leaky');
    await softPressure(harness);

    expect(cluster.actions.callsOf('evictPod').map((c) => [c.name, c.outcome.result, c.gracePeriodSeconds])).toEqual([
      ['leaky', 'blocked', 20],
      ['batch', 'accepted', 20],
    ]);
    expect(cluster.actions.callsOf('deletePod')).toEqual([]);
    expect(terminator.calls).toEqual([]);
    expect(cluster.events.reasons()).toEqual(expect.arrayContaining(['EvictionBlocked', 'Evicted']));
    expect(cluster.events.events.find((e) => e.reason === 'Evicted')?.pod?.metadata.name).toBe('batch');
    expect(await metric(harness.agent, 'kube_eviction_agent_evictions_total')).toMatch(/action="eviction-api",result="blocked"\} 1/);
  });

  test('dry run observes, decides and reports, and changes nothing', async () => {
    harness = await start(HARD_AND_SOFT, { dryRun: true });
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    await clock.stepAsync(30_000);

    expect(cluster.actions.calls).toEqual([]);
    expect(terminator.calls).toEqual([]);
    expect(cluster.events.events).toEqual([]);
    expect(cluster.reporter.calls).toEqual([]);
    expect(await metric(harness.agent, 'kube_eviction_agent_evictions_total')).toMatch(/result="dry-run"/);
    expect(await metric(harness.agent, 'kube_eviction_agent_node_condition')).toMatch(/condition="MemoryPressure"\} 1/);
    // Nor what the kernel does: the notifier is told the agent does not act (no memory.high throttling).
    expect(notifier.acting).toEqual([false]);
  });

  test('a pod that moved to another node since the decision is never acted on', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    cluster.view.updatePod('default', 'leaky', (p) => {
      p.spec.nodeName = 'node-b';
    });
    // The observation still shows it (stats lag the API): the engine may choose it.
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).not.toContain(UID.leaky);
    expect(cluster.actions.calls.filter((c) => c.name === 'leaky' && c.method !== 'getPod')).toEqual([]);
  });

  test('a pod that became critical since the decision is skipped after the API re-check', async () => {
    harness = await start(HARD_AND_SOFT);
    const { cluster } = harness;
    const realGet = cluster.actions.getPod.bind(cluster.actions);
    cluster.actions.getPod = async (ns, name) => {
      const pod = await realGet(ns, name);
      if (pod !== null && name === 'leaky') pod.spec.priority = 2_000_001_000;
      return pod;
    };
    cluster.actions.block('default', 'leaky');
    await softPressure(harness);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['batch']);
  });

  test('after an eviction the agent waits for the pod to go (at most 30 s) before evicting again', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster } = harness;
    await softPressure(harness);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky']);

    // Still terminating: housekeeping passes do not evict another pod.
    await clock.stepAsync(20_000);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky']);

    // The pod goes: the next pass follows within the 1 s poll and evicts the next candidate.
    cluster.view.removePod('default', 'leaky');
    await clock.stepAsync(1_000);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky', 'batch']);
  });

  test('while a soft-evicted pod terminates, a hard threshold escalates at once', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    await softPressure(harness);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky']);

    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    // The terminating pod's processes are ended locally; nothing else is evicted.
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    expect(cluster.actions.callsOf('deletePod')).toEqual([]);
  });

  test('while a soft-evicted pod terminates, a hard crossing without a notification is acted on at the next housekeeping pass', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, terminator, setAvailable } = harness;
    await softPressure(harness);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky']);
    // The notification for the hard crossing is lost (or its pass failed): the housekeeping cadence
    // still runs while the loop waits for leaky, instead of the 30 s cleanup timeout.
    setAvailable(300 * Mi);
    await clock.stepAsync(10_000);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
  });

  test('a pod ended locally that still holds its memory past the escalation timeout is passed over for the next ranked pod, once', async () => {
    // The leak's processes cannot be counted here: they are taken to be there until its grace period
    // (1 s) and 2 s more have passed, so past the grace period and an escalation timeout of 1 s it is stuck.
    harness = await start(`${HARD_AND_SOFT}actions:\n  escalationTimeout: 1s\n`);
    const { clock, cluster, notifier, terminator, setAvailable, agent, logger } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    // Within its grace period and the escalation timeout the leak holds the decision, notifications or not.
    await clock.stepAsync(1_000);
    notifier.fire(clock.nowMs());
    await clock.stepAsync(500);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    // Past them (2 s), still short: the cleanup poll's pass ends the next ranked pod, without a notification.
    await clock.stepAsync(500);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky, UID.batch]);
    expect(logger.find('escalating past a pod that has not freed its resources', { pod: 'default/leaky', kind: 'local' })).toHaveLength(1);
    expect(cluster.events.events.filter((e) => e.reason === 'EvictionEscalated').map((e) => e.type)).toEqual(['Warning']);
    expect(await metric(agent, 'kube_eviction_agent_escalations_total')).toMatch(/signal="memory.available",kind="local"\} 1/);
    // The next pass passes the leak over again without ending anyone twice, nor a third pod.
    notifier.fire(clock.nowMs());
    await clock.stepAsync(500);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky, UID.batch]);
  });

  // A pass whose node figures were read while the pod ended locally still had processes (here:
  // before its grace period and slack ran out) decides on memory the pod may still hold: it never
  // ends a second pod on them, and a pass on figures read after the processes are gone decides.
  async function staleObservationAfterLocalKill(h: Harness, afterKill: { availableBytes: number }): Promise<void> {
    const { clock, notifier, observer, terminator, setAvailable } = h;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    // The next observation reads the node before the kill shows (still short) and the leak's cgroup
    // as it empties (below its request, so batch ranks first); it takes 1.5 s, past the 3 s after
    // which the leak's uncounted processes are taken to be gone.
    const realObserve = observer.observe.bind(observer);
    observer.observe = async (pods) => {
      const observation = await realObserve(pods);
      await clock.sleep(1_500);
      observer.summary = memorySummary(8 * Gi, afterKill.availableBytes, { [UID.leaky]: { name: 'leaky', bytes: 0 }, [UID.batch]: { name: 'batch', bytes: 200 * Mi }, [STATIC_POD_UID]: { name: 'mirror', bytes: 4 * Gi } });
      observer.observe = realObserve;
      return observation;
    };
    observer.summary = memorySummary(8 * Gi, 300 * Mi, { [UID.leaky]: { name: 'leaky', bytes: 10 * Mi }, [UID.batch]: { name: 'batch', bytes: 200 * Mi }, [STATIC_POD_UID]: { name: 'mirror', bytes: 4 * Gi } });
    await clock.stepAsync(2_000);
    notifier.fire(clock.nowMs());
    await clock.stepAsync(1_500);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    expect(h.logger.find('eviction deferred: a pod ended locally still had processes when the node was observed', { pod: 'default/batch' })).toHaveLength(1);
  }

  test('figures read before a locally ended pod\'s processes are gone end no second pod; the pass on fresh figures finds the pressure relieved', async () => {
    harness = await start(HARD_AND_SOFT);
    await staleObservationAfterLocalKill(harness, { availableBytes: 4 * Gi });
    await harness.clock.stepAsync(20_000);
    expect(harness.terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    expect(harness.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  });

  test('figures read before a locally ended pod\'s processes are gone end no second pod; the pass on fresh figures, still short, ends the next at once', async () => {
    harness = await start(HARD_AND_SOFT);
    await staleObservationAfterLocalKill(harness, { availableBytes: 300 * Mi });
    // The re-check follows within the 1 s cleanup poll, on figures read after the processes went.
    await harness.clock.stepAsync(1_000);
    expect(harness.terminator.calls.map((c) => c.uid)).toEqual([UID.leaky, UID.batch]);
  });

  test('a pod ended locally and already gone from the API is still waited for until its processes are gone', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    // Removed from the API at once (as a stand-in kubelet may; the kubelet removes its cgroup first)
    // while its processes may still hold the memory: the next notification's pass ends nobody else.
    cluster.view.removePod('default', 'leaky');
    await clock.stepAsync(500);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    // Still short once they are taken to be gone (3 s): the next pass ends the next pod.
    await clock.stepAsync(3_000);
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky, UID.batch]);
  });

  test('with the API server unreachable, memory is still freed locally and the deletion is retried until it lands', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, terminator, setAvailable } = harness;
    cluster.actions.injectError('deletePod', { result: 'failed', status: 0, message: 'connect ECONNREFUSED' }, 1);
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    expect(cluster.actions.callsOf('deletePod').map((c) => c.outcome.result)).toEqual(['failed']);

    cluster.actions.injectError('deletePod', { result: 'failed', status: 500, message: 'etcdserver: request timed out' }, 1);
    setAvailable(4 * Gi);
    await clock.stepAsync(10_000);
    await clock.stepAsync(10_000);
    const deletes = cluster.actions.callsOf('deletePod');
    expect(deletes.map((c) => c.outcome.result)).toEqual(['failed', 'failed', 'accepted']);
    expect(deletes.every((c) => c.name === 'leaky' && c.uid === UID.leaky)).toBe(true);
    // The deletion that landed on a retry is logged as the eviction, once, after three tries.
    expect(harness.logger.find('evicted pod', { pod: 'default/leaky' }).map((l) => l.fields)).toEqual([expect.objectContaining({ action: 'delete', attempts: 3 })]);
    // The pod was re-checked against the watch before the kill: no read of it went to the API server.
    expect(cluster.actions.callsOf('getPod')).toEqual([]);
  });

  // A request the agent gave up on (its timeout, a connection cut) may still have reached the API
  // server: the watch then shows the pod terminating or gone, and sending it again would only cost
  // the API server a request, N times over in a fleet-wide storm.
  const landed: { name: string; change: (h: Harness) => void; seen: string }[] = [
    { name: 'the watch shows the pod terminating', change: (h) => h.cluster.view.updatePod('default', 'leaky', (p) => void (p.metadata.deletionTimestamp = new Date(h.clock.nowMs()).toISOString())), seen: 'terminating' },
    { name: 'the watch shows the pod gone', change: (h) => h.cluster.view.removePod('default', 'leaky'), seen: 'gone' },
  ];
  for (const tc of landed) {
    test(`a failed deletion that landed after all is not sent again: ${tc.name}`, async () => {
      harness = await start(HARD_AND_SOFT);
      const { clock, cluster, notifier, setAvailable } = harness;
      cluster.actions.injectError('deletePod', { result: 'failed', status: 0, message: 'no answer from the API server within 10000 ms' }, 1);
      setAvailable(300 * Mi);
      notifier.fire(clock.nowMs());
      await flushMicrotasks();
      expect(cluster.actions.callsOf('deletePod').map((c) => c.outcome.result)).toEqual(['failed']);
      tc.change(harness);
      setAvailable(4 * Gi);
      await clock.stepAsync(30_000);
      expect(cluster.actions.callsOf('deletePod')).toHaveLength(1);
      expect(harness.logger.find('a failed deletion landed after all: not retried', { pod: 'default/leaky', seen: tc.seen })).toHaveLength(1);
      expect(await metric(harness.agent, 'kube_eviction_agent_evictions_total')).toMatch(/signal="memory.available",action="delete",result="gone"\} 1/);
    });
  }

  test('a pod ended locally whose deletion failed is not evicted again by a later pass while the deletion is retried', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, setAvailable } = harness;
    cluster.actions.injectError('deletePod', { result: 'failed', status: 0, message: 'connect ECONNREFUSED' }, 2);
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    // Still short, and the pod still the biggest user as the node reports it: every later pass picks it again.
    for (let i = 0; i < 10; i++) {
      await clock.stepAsync(1_000);
      notifier.fire(clock.nowMs());
      await flushMicrotasks();
    }
    await clock.stepAsync(10_000);
    // Its one deletion, retried until it landed, and its one Evicted Event (the pod after it ranks next once it is terminating).
    const deletes = cluster.actions.callsOf('deletePod').filter((c) => c.uid === UID.leaky);
    expect(deletes.map((c) => c.outcome.result)).toEqual(['failed', 'failed', 'accepted']);
    expect(cluster.events.events.filter((e) => e.reason === 'Evicted' && e.pod?.metadata.name === 'leaky')).toHaveLength(1);
    expect(await metric(harness.agent, 'kube_eviction_agent_evictions_total')).toMatch(/action="local-termination",result="skipped"\} [1-9]/);
  });

  test('a 409 on delete (the pod was replaced) is not retried and evicts nobody else in that pass', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, setAvailable } = harness;
    cluster.actions.injectError('deletePod', { result: 'gone', message: 'Precondition failed: UID in precondition' }, 1);
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  });

  test('the node conditions use the agent\'s own types and follow the transition period', async () => {
    harness = await start(`${HARD_AND_SOFT}evictionPressureTransitionPeriod: 30s\n`);
    const { clock, cluster, notifier, setAvailable } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    const conditionsOf = (): Record<string, string> => Object.fromEntries([...cluster.reporter.conditions.values()].map((c) => [c.type, c.status]));
    expect(conditionsOf()).toEqual({
      'kube-eviction-agent.io/MemoryPressure': 'True',
      'kube-eviction-agent.io/DiskPressure': 'False',
      'kube-eviction-agent.io/PIDPressure': 'False',
    });
    setAvailable(4 * Gi);
    cluster.view.removePod('default', 'leaky');
    await clock.stepAsync(20_000);
    expect(conditionsOf()['kube-eviction-agent.io/MemoryPressure']).toBe('True');
    await clock.stepAsync(20_000);
    expect(conditionsOf()['kube-eviction-agent.io/MemoryPressure']).toBe('False');
    // Sent on change only (the heartbeat is minutes away): at start-up, then True, then False.
    expect(cluster.reporter.calls.filter((c) => c.method === 'setConditions').map((c) => (c.method === 'setConditions' ? c.conditions[0]?.status : ''))).toEqual(['False', 'True', 'False']);
  });

  test('the optional pressure taint is added under pressure and removed with the condition', async () => {
    harness = await start(`${HARD_AND_SOFT}evictionPressureTransitionPeriod: 30s\nreporting:\n  taint:\n    enabled: true\n`);
    const { clock, cluster, notifier, setAvailable } = harness;
    setAvailable(300 * Mi);
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(cluster.reporter.hasTaint('kube-eviction-agent.io/pressure')).toBe(true);
    setAvailable(4 * Gi);
    cluster.view.removePod('default', 'leaky');
    await clock.stepAsync(40_000);
    expect(cluster.reporter.hasTaint('kube-eviction-agent.io/pressure')).toBe(false);
  });

  test('an observation failure is logged and the loop keeps going', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, observer, setAvailable } = harness;
    observer.failWith = new Error('EACCES /sys/fs/cgroup/memory/memory.stat');
    await clock.stepAsync(10_000);
    observer.failWith = null;
    setAvailable(300 * Mi);
    await clock.stepAsync(10_000);
    expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  });

  test('housekeeping runs every interval without any notification', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, observer } = harness;
    const before = observer.observedPods.length;
    await clock.stepAsync(30_000);
    expect(observer.observedPods.length - before).toBe(3);
  });

  test('a pass is woken the moment a soft grace period runs out, not at the next housekeeping pass', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, observer, setAvailable } = harness;
    // Between two housekeeping passes (every 10 s): 3 s after the last one.
    await clock.stepAsync(3_000);
    setAvailable(800 * Mi);
    notifier.fire(clock.nowMs(), 'soft memory eviction threshold');
    await flushMicrotasks();
    const passes = observer.observedPods.length;
    // Nothing before the 5 s grace period has run out...
    await clock.stepAsync(4_999);
    expect(cluster.actions.callsOf('evictPod')).toEqual([]);
    expect(observer.observedPods.length).toBe(passes);
    // ...and the eviction at that very moment, 2 s before the next housekeeping pass would come.
    await clock.stepAsync(1);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.name)).toEqual(['leaky']);
    expect(observer.observedPods.length).toBe(passes + 1);
    expect(await metric(harness.agent, 'kube_eviction_agent_syncs_total')).toMatch(/trigger="grace-period"\} 1/);
  });

  test('pressure gone before the grace period ends: the woken pass evicts nothing, and no wake-up follows', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, cluster, notifier, observer, setAvailable } = harness;
    setAvailable(800 * Mi);
    notifier.fire(clock.nowMs(), 'soft memory eviction threshold');
    await flushMicrotasks();
    await clock.stepAsync(2_000);
    setAvailable(4 * Gi);
    const passes = observer.observedPods.length;
    await clock.stepAsync(3_000);
    expect(observer.observedPods.length).toBe(passes + 1);
    expect(cluster.actions.callsOf('evictPod')).toEqual([]);
    // Then housekeeping only: one pass every 10 s.
    await clock.stepAsync(30_000);
    expect(observer.observedPods.length).toBe(passes + 4);
    expect(cluster.actions.callsOf('evictPod')).toEqual([]);
  });

  test('stop() cancels a pending grace-period wake-up', async () => {
    harness = await start(HARD_AND_SOFT);
    const { clock, notifier, observer, setAvailable } = harness;
    setAvailable(800 * Mi);
    notifier.fire(clock.nowMs(), 'soft memory eviction threshold');
    await flushMicrotasks();
    await harness.agent.stop();
    const passes = observer.observedPods.length;
    await clock.stepAsync(10_000);
    expect(observer.observedPods.length).toBe(passes);
    expect(clock.pendingTimers()).toBe(0);
    harness = null;
  });

  test('stop() ends the loop, the notifier and the Event retries promptly', async () => {
    harness = await start(HARD_AND_SOFT);
    const startedMs = Date.now();
    await harness.agent.stop();
    expect(harness.notifier.stopped).toBe(true);
    expect(harness.cluster.events.closed).toBe(true);
    expect(Date.now() - startedMs).toBeLessThan(1000);
    harness = null;
  });
});

describe('configuration hot reload', () => {
  let dir = '';
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'kea-reload-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test('a valid new file is applied; an invalid one keeps the old configuration and is reported', async () => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, HARD_AND_SOFT);
    harness = await start(HARD_AND_SOFT, { reload: { path, text: HARD_AND_SOFT } });
    const { agent, cluster } = harness;

    writeFileSync(path, HARD_AND_SOFT.replace('500Mi', '700Mi'));
    expect(await agent.reloadNow()).toBe('applied');
    expect(agent.config().eviction.thresholds.find((t) => t.signal === 'memory.available' && t.gracePeriodMs === 0)?.value).toEqual({ kind: 'quantity', quantity: { nanos: 700n * 1024n * 1024n * 1_000_000_000n, format: 'BinarySI' } });

    writeFileSync(path, 'evictionHard:\n  mem.available: 1Gi\n');
    expect(await agent.reloadNow()).toBe('rejected');
    expect(agent.config().eviction.thresholds.some((t) => t.signal === 'memory.available')).toBe(true);
    const event = cluster.events.events.find((e) => e.reason === 'ConfigReloadFailed');
    expect(event?.object).toBe('node');
    expect(event?.message).toMatch(/unsupported eviction signal mem\.available/);
    expect(await metric(agent, 'kube_eviction_agent_config_reloads_total')).toMatch(/result="applied"\} 1[\s\S]*result="rejected"\} 1|result="rejected"\} 1[\s\S]*result="applied"\} 1/);

    // The same bad file is reported once, not on every change notification.
    expect(await agent.reloadNow()).toBe('unchanged');
  });

  test('a dry run turned on and off by a reload reaches the notifier: it changes what the kernel does only while the agent acts', async () => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, HARD_AND_SOFT);
    harness = await start(HARD_AND_SOFT, { reload: { path, text: HARD_AND_SOFT } });
    const { agent, notifier } = harness;
    writeFileSync(path, `${HARD_AND_SOFT}actions:\n  dryRun: true\n`);
    expect(await agent.reloadNow()).toBe('applied');
    writeFileSync(path, HARD_AND_SOFT);
    expect(await agent.reloadNow()).toBe('applied');
    expect(notifier.acting).toEqual([true, false, true]);
  });

  test('fields read only at start are kept and named as requiring a restart (log, metric, Event); the rest is applied', async () => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, HARD_AND_SOFT);
    harness = await start(HARD_AND_SOFT, { reload: { path, text: HARD_AND_SOFT } });
    const { agent, cluster } = harness;
    const before = agent.config().agent;

    writeFileSync(path, `${HARD_AND_SOFT.replace('500Mi', '700Mi')}server:\n  port: 9191\nobserve:\n  source: kubelet\nnotifier:\n  mode: psi\n`);
    expect(await agent.reloadNow()).toBe('requires-restart');
    // The thresholds are in force; the endpoint, the observer and the notifier are as they were.
    expect(agent.config().eviction.thresholds.find((t) => t.signal === 'memory.available' && t.gracePeriodMs === 0)?.value).toMatchObject({ kind: 'quantity', quantity: { nanos: 700n * 1024n * 1024n * 1_000_000_000n } });
    expect([agent.config().agent.server, agent.config().agent.observe, agent.config().agent.notifier]).toEqual([before.server, before.observe, before.notifier]);
    const event = cluster.events.events.find((e) => e.reason === 'ConfigReloadRequiresRestart');
    expect(event).toMatchObject({ object: 'node', type: 'Warning' });
    expect(event?.message).toMatch(/keep their values until the agent restarts: observe\.source, notifier\.mode, server\.port$/);
    expect(await metric(agent, 'kube_eviction_agent_config_reloads_total')).toMatch(/result="requires-restart"\} 1/);
    expect(await metric(agent, 'kube_eviction_agent_config_reloads_total')).not.toMatch(/result="applied"/);

    // Back to the file the agent started with: nothing needs a restart any more.
    writeFileSync(path, HARD_AND_SOFT);
    expect(await agent.reloadNow()).toBe('applied');
  });

  // The node has 4Gi of 8Gi available; nothing is met in force (500Mi hard, 1Gi soft).
  test('a reload whose thresholds would evict on the node as it stands is held back and reported (log, metric, Event), until the file says to apply it', async () => {
    const path = join(dir, 'config.yaml');
    writeFileSync(path, HARD_AND_SOFT);
    harness = await start(HARD_AND_SOFT, { reload: { path, text: HARD_AND_SOFT } });
    const { agent, cluster, clock, logger } = harness;
    const hardMemory = (): unknown => agent.config().eviction.thresholds.find((t) => t.signal === 'memory.available' && t.gracePeriodMs === 0)?.value;
    const before = hardMemory();

    // One character from the disabling "100%": the whole capacity, met on every pass.
    writeFileSync(path, HARD_AND_SOFT.replace('500Mi', '"100.0%"'));
    expect(await agent.reloadNow()).toBe('held');
    expect(hardMemory()).toEqual(before);
    const event = cluster.events.events.find((e) => e.reason === 'ConfigReloadHeld');
    expect(event).toMatchObject({ object: 'node', type: 'Warning' });
    expect(event?.message).toBe(
      `Configuration ${path} held back, previous configuration kept: its thresholds would evict on the node as it stands: memory.available < 8Gi (hard; 4Gi available). ` +
        'To apply it anyway, set configReload.applyThresholdsThatEvictNow: true in it',
    );
    expect(await metric(agent, 'kube_eviction_agent_config_reloads_total')).toMatch(/result="held"\} 1/);
    expect(logger.lines.filter((l) => l.level === 'warn').map((l) => [l.msg, l.fields?.code])).toEqual(
      expect.arrayContaining([
        [expect.stringMatching(/^threshold met on \(nearly\) every pass: evictionHard\["memory\.available"\] \(line 3\): "100\.0%" is the whole capacity/), 'EVA_ERR_THRESHOLD_NEAR_WHOLE'],
        ['configuration reload held back: its thresholds would evict on the node as it stands', 'EVA_ERR_CONFIG_HELD'],
      ]),
    );
    // Reported once, and nothing evicted for it.
    expect(await agent.reloadNow()).toBe('unchanged');
    await clock.stepAsync(10_000);
    expect(cluster.actions.callsOf('deletePod')).toEqual([]);

    // A plain quantity above what is free now is held back too; one below it is applied.
    writeFileSync(path, HARD_AND_SOFT.replace('500Mi', '5Gi'));
    expect(await agent.reloadNow()).toBe('held');
    writeFileSync(path, HARD_AND_SOFT.replace('500Mi', '700Mi'));
    expect(await agent.reloadNow()).toBe('applied');

    // Said in the file, it is applied, and the next pass acts on it.
    writeFileSync(path, `${HARD_AND_SOFT.replace('500Mi', '5Gi')}configReload:\n  applyThresholdsThatEvictNow: true\n`);
    expect(await agent.reloadNow()).toBe('applied');
    expect(hardMemory()).toEqual({ kind: 'quantity', quantity: { nanos: 5n * 1024n ** 3n * 1_000_000_000n, format: 'BinarySI' } });
    await clock.stepAsync(10_000);
    expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
    expect(await metric(agent, 'kube_eviction_agent_config_reloads_total')).toMatch(/result="held"\} 2/);
  });

  test('a threshold met on every pass is warned of at start and kept as a metric while in force', async () => {
    const path = join(dir, 'config.yaml');
    const nearWhole = HARD_AND_SOFT.replace('500Mi', '"99.95%"');
    writeFileSync(path, nearWhole);
    harness = await start(nearWhole, { dryRun: true, reload: { path, text: nearWhole } });
    const { agent, logger } = harness;
    expect(logger.lines.filter((l) => l.fields?.code === 'EVA_ERR_THRESHOLD_NEAR_WHOLE').map((l) => [l.level, l.fields?.field, l.fields?.line])).toEqual([['warn', 'evictionHard["memory.available"]', 3]]);
    expect(await metric(agent, 'kube_eviction_agent_config_thresholds_near_whole')).toMatch(/^kube_eviction_agent_config_thresholds_near_whole\{signal="memory.available",field="evictionHard\[\\"memory.available\\"\]"\} 1$/m);

    // Fixed by a reload: the metric goes with it.
    writeFileSync(path, HARD_AND_SOFT);
    expect(await agent.reloadNow()).toBe('applied');
    expect(await metric(agent, 'kube_eviction_agent_config_thresholds_near_whole{')).toBe('');
  });
});

describe('the operations endpoint', () => {
  async function get(port: number, path: string): Promise<{ status: number; body: string }> {
    const response = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: response.status, body: await response.text() };
  }

  test('/metrics, /healthz and /readyz answer, with the reasons when not ready', async () => {
    harness = await start(HARD_AND_SOFT);
    const port = harness.agent.opsPort ?? 0;
    const metrics = await get(port, '/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.body).toMatch(/kube_eviction_agent_syncs_total\{trigger="startup"\} 1/);
    expect(metrics.body).toMatch(/kube_eviction_agent_signal_available\{signal="memory.available"\} 4294967296/);
    expect(metrics.body).toMatch(/kube_eviction_agent_process_resident_memory_bytes/);
    expect(await get(port, '/healthz')).toEqual({ status: 200, body: 'ok\n' });
    expect(await get(port, '/readyz')).toEqual({ status: 200, body: 'ok\n' });
    expect((await get(port, '/nothing')).status).toBe(404);

    harness.observer.failWith = new Error('EACCES');
    await harness.clock.stepAsync(10_000);
    const notReady = await get(port, '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatch(/not been observed successfully/);
  });
});

describe('acting only on its own Node', () => {
  const anotherMachine = (extra: Partial<Node> = {}): Node => ({ ...extra, metadata: { name: 'node-a' }, status: { nodeInfo: { bootID: '11111111-2222-4333-8444-555555555555', machineID: TEST_HOST.machineID ?? '' } } });

  test('the Node is another machine: no local kill, no eviction, no condition or taint; acting resumes once the Node is this host', async () => {
    harness = await start(`${HARD_AND_SOFT}reporting:\n  taint:\n    enabled: true\n`, { node: anotherMachine() });
    const { clock, cluster, notifier, terminator, agent, setAvailable } = harness;
    setAvailable(300 * Mi);
    for (let i = 0; i < 3; i++) {
      notifier.fire(clock.nowMs());
      await clock.stepAsync(10_000);
    }
    expect(terminator.calls).toEqual([]);
    expect(cluster.actions.calls.filter((c) => c.method !== 'getPod')).toEqual([]);
    expect(cluster.reporter.calls).toEqual([]);
    expect(agent.readiness.reason()).toMatch(/is another machine: its bootID "11111111-2222-4333-8444-555555555555" is not this host's/);
    expect(cluster.events.reasons()).toEqual(['NodeIdentityMismatch']);
    expect(await metric(agent, 'kube_eviction_agent_evictions_total')).toMatch(/action="none",result="refused"\} [1-9]/);
    expect(await metric(agent, 'kube_eviction_agent_not_ready')).toMatch(/check="node-identity"\} 1/);

    cluster.view.setNode(testNode('node-a'));
    notifier.fire(clock.nowMs());
    await flushMicrotasks();
    expect(terminator.calls.map((c) => c.uid)).toEqual([UID.leaky]);
    expect(cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
    expect(cluster.reporter.hasTaint('kube-eviction-agent.io/pressure')).toBe(true);
    expect(agent.readiness.reason()).toBeNull();
  });

  test('a stop while the Node is another machine leaves that Node alone', async () => {
    harness = await start(HARD_AND_SOFT, { node: anotherMachine({ spec: { taints: [{ key: 'kube-eviction-agent.io/pressure', effect: 'NoSchedule' }] } }) });
    await harness.agent.stop();
    expect(harness.cluster.reporter.calls).toEqual([]);
    harness = null;
  });
});

describe('what the agent put on its Node goes when it stops maintaining it', () => {
  const TAINT = 'kube-eviction-agent.io/pressure';
  const stale = (status = 'True'): Node =>
    testNode('node-a', {
      spec: { taints: [{ key: 'other.example.com/keep', effect: 'NoSchedule' }, { key: TAINT, effect: 'NoSchedule' }] },
      status: { conditions: [{ type: 'Ready', status: 'True' }, { type: 'kube-eviction-agent.io/MemoryPressure', status }, { type: 'kube-eviction-agent.io/DiskPressure', status: 'False' }] },
    });
  const conditionStatuses = (h: Harness): Record<string, string> => Object.fromEntries([...h.cluster.reporter.conditions.values()].map((c) => [c.type, `${c.status} ${c.reason}`]));

  test('on stop: its conditions become Unknown and its taint goes, other taints and conditions stay', async () => {
    harness = await start(`${HARD_AND_SOFT}reporting:\n  taint:\n    enabled: true\n`, { node: stale() });
    const h = harness;
    h.setAvailable(300 * Mi);
    h.notifier.fire(h.clock.nowMs());
    await flushMicrotasks();
    expect(h.cluster.reporter.hasTaint(TAINT)).toBe(true);
    await h.agent.stop();
    harness = null;
    expect(conditionStatuses(h)).toEqual({
      'kube-eviction-agent.io/MemoryPressure': 'Unknown AgentStopped',
      'kube-eviction-agent.io/DiskPressure': 'Unknown AgentStopped',
      'kube-eviction-agent.io/PIDPressure': 'Unknown AgentStopped',
    });
    expect(h.cluster.reporter.taints.map((t) => t.key)).toEqual(['other.example.com/keep']);
  });

  const notMaintaining: { name: string; config: string; dryRun?: boolean; reason: string }[] = [
    { name: 'dry run (flag)', config: `${HARD_AND_SOFT}reporting:\n  taint:\n    enabled: true\n`, dryRun: true, reason: 'AgentDryRun' },
    { name: 'dry run (configuration)', config: `${HARD_AND_SOFT}actions:\n  dryRun: true\n`, reason: 'AgentDryRun' },
    { name: 'node conditions off', config: `${HARD_AND_SOFT}reporting:\n  nodeConditions: false\n  taint:\n    enabled: true\n`, reason: 'AgentConditionsOff' },
  ];
  test.each(notMaintaining)('$name: a stale True left by an earlier run becomes Unknown, the taint goes', async ({ config, dryRun, reason }) => {
    harness = await start(config, { node: stale(), ...(dryRun === undefined ? {} : { dryRun }) });
    const h = harness;
    h.setAvailable(300 * Mi);
    await h.clock.stepAsync(10_000);
    expect(conditionStatuses(h)).toEqual({ 'kube-eviction-agent.io/MemoryPressure': `Unknown ${reason}`, 'kube-eviction-agent.io/DiskPressure': `Unknown ${reason}` });
    expect(h.cluster.reporter.taints.map((t) => t.key)).toEqual(['other.example.com/keep']);
    // Said once: the Node (as watched) shows nothing more to clean.
    const writes = h.cluster.reporter.calls.length;
    await h.clock.stepAsync(60_000);
    expect(h.cluster.reporter.calls.length).toBe(writes);
  });

  test('the taint only: turned off by a reload, it goes at the next pass; conditions stay reported', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-taint-off-'));
    try {
      const path = join(dir, 'config.yaml');
      const on = `${HARD_AND_SOFT}reporting:\n  taint:\n    enabled: true\n`;
      writeFileSync(path, on);
      harness = await start(on, { reload: { path, text: on } });
      const h = harness;
      h.setAvailable(300 * Mi);
      h.notifier.fire(h.clock.nowMs());
      await flushMicrotasks();
      expect(h.cluster.reporter.hasTaint(TAINT)).toBe(true);
      writeFileSync(path, HARD_AND_SOFT);
      expect(await h.agent.reloadNow()).toBe('applied');
      await h.clock.stepAsync(10_000);
      expect(h.cluster.reporter.hasTaint(TAINT)).toBe(false);
      expect(conditionStatuses(h)['kube-eviction-agent.io/MemoryPressure']).toBe('True AgentHasInsufficientMemory');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
