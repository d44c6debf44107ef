// The hand-written cluster fakes the run loop's tests rely on: they must answer like the adapters
// (gone for a missing or replaced pod, blocked for a budget, failures only when injected) and keep
// the shared state consistent.

import type { Pod } from '../../../src/api/pod.js';
import { KubeApiError } from '../../../src/errors.js';
import { fakeCluster } from '../../fakes/fake-cluster.js';

function pod(name: string, uid = `uid-${name}`): Pod {
  return { metadata: { name, namespace: 'default', uid }, spec: { nodeName: 'node-a', containers: [{ name: 'app' }], terminationGracePeriodSeconds: 30 } };
}

describe('FakeClusterView', () => {
  test('changes reach listeners as (old, new), and unsubscribing stops them', () => {
    const { view } = fakeCluster({ pods: [pod('a')] });
    const seen: string[] = [];
    const unsubscribe = view.onPodChange((o, n) => seen.push(`${o?.metadata.name ?? '-'}>${n?.metadata.name ?? '-'}`));
    view.upsertPod(pod('b'));
    view.updatePod('default', 'a', (p) => {
      p.metadata.labels = { x: 'y' };
    });
    view.removePod('default', 'b');
    unsubscribe();
    view.removePod('default', 'a');
    expect(seen).toEqual(['->b', 'a>a', 'b>-']);
    expect(view.pods()).toEqual([]);
  });
});

describe('FakePodActions answers like the API server by default', () => {
  const cases: { name: string; run: (c: ReturnType<typeof fakeCluster>) => Promise<unknown>; outcome: unknown }[] = [
    { name: 'evict-accepted', run: (c) => c.actions.evictPod(pod('a'), 1), outcome: { result: 'accepted' } },
    { name: 'evict-missing-is-gone', run: (c) => c.actions.evictPod(pod('missing'), 1), outcome: { result: 'gone', message: 'pods "missing" not found' } },
    { name: 'evict-replaced-is-gone', run: (c) => c.actions.evictPod(pod('a', 'old-uid'), 1), outcome: { result: 'gone', message: 'Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: old-uid, UID in object meta: uid-a' } },
    { name: 'delete-replaced-is-gone', run: (c) => c.actions.deletePod(pod('a', 'old-uid'), { gracePeriodSeconds: null }), outcome: { result: 'gone', message: 'Operation cannot be fulfilled on pods "a": Precondition failed: UID in precondition: old-uid, UID in object meta: uid-a' } },
    {
      name: 'blocked-pod',
      run: (c) => {
        c.actions.block('default', 'a');
        return c.actions.evictPod(pod('a'), 1);
      },
      outcome: { result: 'blocked', message: "Cannot evict pod as it would violate the pod's disruption budget." },
    },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const cluster = fakeCluster({ pods: [pod('a')] });
      await expect(tc.run(cluster)).resolves.toEqual(tc.outcome);
    });
  }

  test('an accepted eviction marks the pod terminating in the view, with the grace period', async () => {
    const cluster = fakeCluster({ pods: [pod('a')], clock: { nowMs: () => Date.UTC(2026, 0, 1) } });
    await cluster.actions.evictPod(pod('a'), 5);
    expect(cluster.view.findPod('default', 'a')?.metadata.deletionTimestamp).toBe('2026-01-01T00:00:05Z');
    const removing = fakeCluster({ pods: [pod('a')], onAccepted: 'remove' });
    await removing.actions.deletePod(pod('a'), { gracePeriodSeconds: 0 });
    expect(removing.view.pods()).toEqual([]);
  });

  test('addDisruptionTarget upserts the condition on the view\'s pod', async () => {
    const cluster = fakeCluster({ pods: [pod('a')] });
    await cluster.actions.addDisruptionTarget(pod('a'), { reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' });
    expect(cluster.view.findPod('default', 'a')?.status?.conditions).toMatchObject([{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager' }]);
  });

  test('injected outcomes are used in order, then the defaults return; every call is recorded', async () => {
    const cluster = fakeCluster({ pods: [pod('a')] });
    cluster.actions.injectError('evictPod', { result: 'failed', status: 500, message: 'boom' }, 2);
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await cluster.actions.evictPod(pod('a'), 1)).result);
    expect(results).toEqual(['failed', 'failed', 'accepted']);
    expect(cluster.actions.callsOf('evictPod').map((c) => c.gracePeriodSeconds)).toEqual([1, 1, 1]);
  });

  test('getPod can be made to throw as the adapter does when the API server is unreachable', async () => {
    const cluster = fakeCluster({ pods: [pod('a')] });
    cluster.actions.injectError('getPod', new KubeApiError(0, 'connect ECONNREFUSED'));
    await expect(cluster.actions.getPod('default', 'a')).rejects.toBeInstanceOf(KubeApiError);
    await expect(cluster.actions.getPod('default', 'a')).resolves.toMatchObject({ metadata: { uid: 'uid-a' } });
    cluster.actions.injectError('getPod', null);
    await expect(cluster.actions.getPod('default', 'a')).resolves.toBeNull();
  });
});

describe('FakeEventRecorder and FakeNodeReporter', () => {
  test('events are kept in order; an injected failure is recorded, never thrown', async () => {
    const cluster = fakeCluster({ pods: [pod('a')] });
    cluster.events.injectError('podEvent');
    await cluster.events.podEvent(pod('a'), { type: 'Warning', reason: 'Evicted', message: 'm', annotations: { starved_resource: 'memory' } });
    await cluster.events.nodeEvent({ type: 'Warning', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory' });
    expect(cluster.events.reasons()).toEqual(['EvictionThresholdMet']);
    expect(cluster.events.failures.map((f) => f.reason)).toEqual(['Evicted']);
  });

  test('the taint lands on the view\'s node; an injected failure changes nothing and answers false', async () => {
    const cluster = fakeCluster({ node: { metadata: { name: 'node-a' }, spec: { taints: [{ key: 'other', effect: 'NoSchedule' }] } } });
    const taint = { key: 'kea/pressure', value: 'true', effect: 'NoSchedule' as const };
    cluster.reporter.injectError('setTaint');
    await expect(cluster.reporter.setTaint(taint, true)).resolves.toBe(false);
    expect(cluster.view.node()?.spec?.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }]);
    await expect(cluster.reporter.setTaint(taint, true)).resolves.toBe(true);
    expect(cluster.view.node()?.spec?.taints).toEqual([{ key: 'other', effect: 'NoSchedule' }, taint]);
    await cluster.reporter.setConditions([{ type: 'kea/MemoryPressure', status: 'True', reason: 'R', message: 'm' }]);
    expect(cluster.reporter.conditions.get('kea/MemoryPressure')?.status).toBe('True');
    expect(cluster.reporter.calls.map((c) => `${c.method}:${String(c.result)}`)).toEqual(['setTaint:false', 'setTaint:true', 'setConditions:true']);
  });
});
