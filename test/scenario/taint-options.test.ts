// Scenario scripts for the switches beyond upstream (skipTerminatingPods, comparisonOperators,
// countFromTimeAdded) and for what a restart rebuilds: each default is upstream's behaviour.

import { FakeTaintCluster, makeNode, makePod, MINUTE_MS, noExecute, SECOND_MS, T0_MS, tolerate } from '../fakes/fake-taint-cluster.js';

const iso = (ms: number): string => new Date(ms).toISOString();

describe('skipTerminatingPods', () => {
  const terminating = (tolerations = [] as ReturnType<typeof tolerate>[]) => makePod('p', tolerations, { deletionTimestamp: iso(T0_MS - SECOND_MS) });

  test('off (upstream): a terminating pod is deleted like any other', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(terminating());
    cluster.setTaints([noExecute('k')]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 0 }]);
  });

  test('on: a terminating pod is left alone', () => {
    const cluster = new FakeTaintCluster({ skipTerminatingPods: true });
    cluster.setPod(terminating());
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS);
    expect(cluster.events).toEqual([]);
    expect(cluster.deletions).toEqual([]);
  });

  test('on: a pod that starts terminating while its timer runs is not deleted when the timer fires', () => {
    const cluster = new FakeTaintCluster({ skipTerminatingPods: true });
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(30 * SECOND_MS);
    // deletionTimestamp alone is not an event the taint logic handles; the check is at fire time.
    cluster.setPod(terminating([tolerate('k', 60)]));
    cluster.stepTo(MINUTE_MS);
    expect(cluster.deletions).toEqual([]);
    expect(cluster.timeline().map((e) => e.action)).toEqual(['scheduled']);
    expect(cluster.handler.pending()).toEqual([]);
  });

  test('off: the same pod is deleted when its timer fires', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(30 * SECOND_MS);
    cluster.setPod(terminating([tolerate('k', 60)]));
    cluster.stepTo(MINUTE_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 60_000 }]);
  });

  test('on: running pods are still deleted', () => {
    const cluster = new FakeTaintCluster({ skipTerminatingPods: true });
    cluster.setPod(makePod('p'));
    cluster.setTaints([noExecute('k')]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 0 }]);
  });
});

describe('comparisonOperators', () => {
  const slo = { key: 'example.com/error-rate', value: '950', effect: 'NoExecute' };
  const tolerations = [{ key: 'example.com/error-rate', operator: 'Lt', value: '1000', effect: 'NoExecute', tolerationSeconds: 120 }];

  test('off (upstream default): a Gt/Lt toleration never matches and the pod is deleted at once', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', tolerations));
    cluster.setTaints([slo]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 0 }]);
  });

  test('on: the Lt toleration matches and its tolerationSeconds applies', () => {
    const cluster = new FakeTaintCluster({ comparisonOperators: true });
    cluster.setPod(makePod('p', tolerations));
    cluster.setTaints([slo]);
    cluster.stepTo(2 * MINUTE_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 120_000 }]);
  });

  test('on: a taint value crossing the threshold deletes at once', () => {
    const cluster = new FakeTaintCluster({ comparisonOperators: true });
    cluster.setPod(makePod('p', tolerations));
    cluster.setTaints([slo]);
    cluster.stepTo(10 * SECOND_MS);
    cluster.setTaints([{ ...slo, value: '1000' }]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 10_000 }]);
  });
});

describe('restart: pending evictions are rebuilt from the node and its pods', () => {
  // A taint added 4 minutes before the agent (re)starts; pods tolerate it for 5 minutes.
  const taintAddedMs = T0_MS - 4 * MINUTE_MS;
  const node = makeNode([noExecute('node.kubernetes.io/not-ready', undefined, iso(taintAddedMs))]);

  function restart(options: { countFromTimeAdded?: boolean }): FakeTaintCluster {
    const cluster = new FakeTaintCluster(options);
    // The informers' initial lists deliver every object as an add; here the pods come first, so
    // they find no taint state and the node add judges them all.
    cluster.setPod(makePod('timed', [tolerate('node.kubernetes.io/not-ready', 300)]));
    cluster.setPod(makePod('untolerated'));
    cluster.setPod(makePod('forever', [tolerate('node.kubernetes.io/not-ready')]));
    cluster.setNode(node);
    return cluster;
  }

  test('by default (upstream, quirk Q3) tolerationSeconds counts again from the restart', () => {
    const cluster = restart({});
    cluster.stepTo(10 * MINUTE_MS);
    expect(cluster.deleted()).toEqual([
      { pod: 'default/untolerated', atMs: 0 },
      { pod: 'default/timed', atMs: 5 * MINUTE_MS },
    ]);
  });

  test('with countFromTimeAdded it counts from the taint\'s timeAdded, so a restart grants no extra time', () => {
    const cluster = restart({ countFromTimeAdded: true });
    cluster.stepTo(10 * MINUTE_MS);
    expect(cluster.deleted()).toEqual([
      { pod: 'default/untolerated', atMs: 0 },
      { pod: 'default/timed', atMs: MINUTE_MS },
    ]);
  });

  test('with countFromTimeAdded a period already over at restart deletes at once', () => {
    const cluster = new FakeTaintCluster({ countFromTimeAdded: true });
    cluster.setPod(makePod('timed', [tolerate('k', 60)]));
    cluster.setNode(makeNode([noExecute('k', undefined, iso(T0_MS - 10 * MINUTE_MS))]));
    expect(cluster.timeline()).toEqual([{ pod: 'default/timed', action: 'scheduled', atMs: 0, fireAtMs: 0 }]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/timed', atMs: 0 }]);
  });

  test('countFromTimeAdded keeps upstream\'s rule for an existing timer', () => {
    const cluster = new FakeTaintCluster({ countFromTimeAdded: true });
    cluster.setPod(makePod('p', [tolerate('a', 600), tolerate('b', 60)]));
    cluster.setTaints([noExecute('a', undefined, iso(T0_MS))]);
    cluster.stepTo(MINUTE_MS);
    cluster.setTaints([noExecute('a', undefined, iso(T0_MS)), noExecute('b', undefined, iso(T0_MS + MINUTE_MS))]);
    cluster.stepTo(DAY);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 10 * MINUTE_MS }]);
  });
});

const DAY = 24 * 60 * MINUTE_MS;
