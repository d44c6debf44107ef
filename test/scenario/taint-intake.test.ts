// Scenario scripts for the intake side of the taint logic: which informer events are ignored,
// how queued work is de-duplicated and ordered, and the order of the node handling's steps
// (reference taint-eviction.md §1.3 to §1.6).

import { FakeTaintCluster, makeNode, makePod, MINUTE_MS, noExecute, noSchedule, SECOND_MS, T0_MS, tolerate } from '../fakes/fake-taint-cluster.js';
import type { Node } from '../../src/api/pod.js';

describe('ignored updates', () => {
  const tainted = makeNode([noExecute('k', 'v', '2026-01-01T00:00:00Z'), noSchedule('s')]);
  const nodeCases: { name: string; next: Node; queued: boolean }[] = [
    { name: 'a label change', next: { ...tainted, metadata: { ...tainted.metadata, labels: { zone: 'b' } } }, queued: false },
    { name: 'a status change', next: { ...tainted, status: { conditions: [{ type: 'Ready', status: 'False' }] } }, queued: false },
    { name: 'a NoSchedule taint added', next: makeNode([noExecute('k', 'v', '2026-01-01T00:00:00Z'), noSchedule('s'), noSchedule('t')]), queued: false },
    { name: 'a PreferNoSchedule taint removed from between NoExecute ones', next: makeNode([noSchedule('s'), noExecute('k', 'v', '2026-01-01T00:00:00Z')]), queued: false },
    { name: 'timeAdded as a Date for the same instant', next: makeNode([{ key: 'k', value: 'v', effect: 'NoExecute', timeAdded: new Date('2026-01-01T00:00:00Z') }]), queued: false },
    { name: 'a NoExecute taint value change', next: makeNode([noExecute('k', 'w', '2026-01-01T00:00:00Z')]), queued: true },
    { name: 'a NoExecute timeAdded change', next: makeNode([noExecute('k', 'v', '2026-01-01T00:00:05Z')]), queued: true },
    { name: 'a NoExecute taint added', next: makeNode([noExecute('k', 'v', '2026-01-01T00:00:00Z'), noExecute('j')]), queued: true },
    { name: 'NoExecute taints reordered', next: makeNode([noExecute('j'), noExecute('k', 'v', '2026-01-01T00:00:00Z')]), queued: true },
  ];
  for (const tc of nodeCases) {
    test(`node update: ${tc.name} ${tc.queued ? 'is handled' : 'is ignored'}`, () => {
      const cluster = new FakeTaintCluster();
      const base = tc.name === 'NoExecute taints reordered' ? makeNode([noExecute('k', 'v', '2026-01-01T00:00:00Z'), noExecute('j')]) : tainted;
      cluster.setNode(base);
      const callsBefore = cluster.getNodeCalls;
      expect(cluster.setNode(tc.next)).toBe(tc.queued);
      expect(cluster.getNodeCalls - callsBefore).toBe(tc.queued ? 1 : 0);
    });
  }

  test('node adds and deletes are never filtered', () => {
    const cluster = new FakeTaintCluster();
    expect(cluster.setNode(makeNode([]))).toBe(true);
    expect(cluster.setNode(null)).toBe(true);
  });

  test('an ignored node update does not re-judge pods, even if the cache holds newer taints', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p'));
    cluster.setNode(makeNode([], { labels: { a: '1' } }));
    // The cache moves on (a NoExecute taint appears) but the event pair only differs in labels.
    const old = makeNode([], { labels: { a: '1' } });
    cluster.node = makeNode([noExecute('k')], { labels: { a: '2' } });
    expect(cluster.handler.nodeUpdated(old, makeNode([], { labels: { a: '2' } }))).toBe(false);
    cluster.handler.processPending();
    cluster.step(MINUTE_MS);
    expect(cluster.deletions).toEqual([]);
  });

  const pod = makePod('p', [tolerate('k', 60)]);
  const podCases: { name: string; next: typeof pod; queued: boolean }[] = [
    { name: 'a status change', next: { ...pod, status: { phase: 'Failed' } }, queued: false },
    { name: 'a label change', next: { ...pod, metadata: { ...pod.metadata, labels: { a: 'b' } } }, queued: false },
    { name: 'a deletionTimestamp set', next: { ...pod, metadata: { ...pod.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' } }, queued: false },
    { name: 'tolerationSeconds changed', next: makePod('p', [tolerate('k', 120)]), queued: true },
    { name: 'a toleration added', next: makePod('p', [tolerate('k', 60), tolerate('j')]), queued: true },
    { name: 'nodeName changed', next: makePod('p', [tolerate('k', 60)], { nodeName: 'node-b' }), queued: true },
  ];
  for (const tc of podCases) {
    test(`pod update: ${tc.name} ${tc.queued ? 'is handled' : 'is ignored'}`, () => {
      const cluster = new FakeTaintCluster();
      cluster.setPod(pod);
      expect(cluster.handler.podUpdated(pod, tc.next)).toBe(tc.queued);
      expect(cluster.handler.processPending()).toBe(tc.queued ? 1 : 0);
    });
  }

  test('a pod event ignored by the filter does not re-judge the pod', () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    const tolerant = makePod('p', [tolerate('k')]);
    cluster.setPod(tolerant);
    // The cache now holds a pod without tolerations, but the event pair shows only a label change.
    cluster.pods.set('default/p', makePod('p', []));
    expect(cluster.handler.podUpdated(tolerant, { ...tolerant, metadata: { ...tolerant.metadata, labels: { x: 'y' } } })).toBe(false);
    cluster.handler.processPending();
    cluster.step(MINUTE_MS);
    expect(cluster.deletions).toEqual([]);
  });

  test('events for another node are ignored', () => {
    const cluster = new FakeTaintCluster();
    expect(cluster.handler.nodeUpdated(null, makeNode([noExecute('k')], { name: 'node-b' }))).toBe(false);
  });
});

describe('the pod path', () => {
  test('an unscheduled pod, or a pod on another node, is dropped', () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    expect(cluster.setPod(makePod('pending', [], { nodeName: '' }))).toBe(true);
    expect(cluster.setPod(makePod('elsewhere', [], { nodeName: 'node-b' }))).toBe(true);
    cluster.step(MINUTE_MS);
    expect(cluster.deletions).toEqual([]);
  });

  test('a stale item whose nodeName no longer matches the cached pod is dropped', () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    // The event said "unscheduled", but the cache already shows the pod bound here: the item is stale
    // and the newer bind event (which carries this node) is the one that judges it.
    const unscheduled = makePod('p', [], { nodeName: '' });
    cluster.pods.set('default/p', makePod('p'));
    cluster.handler.podUpdated(null, unscheduled);
    cluster.handler.processPending();
    cluster.step(0);
    expect(cluster.deletions).toEqual([]);
    cluster.handler.podUpdated(unscheduled, makePod('p'));
    cluster.handler.processPending();
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 0 }]);
  });

  test('a pod added to an untainted node is not judged; the taint arriving later judges it', () => {
    const cluster = new FakeTaintCluster();
    cluster.setNode(makeNode([]));
    cluster.setPod(makePod('p', [tolerate('k', 30)]));
    expect(cluster.events).toEqual([]);
    cluster.step(MINUTE_MS);
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS + 30 * SECOND_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 90_000 }]);
  });

  test('a pod added to a tainted node is judged by its own event', () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    cluster.step(10 * SECOND_MS);
    cluster.setPod(makePod('p', [tolerate('k', 30)]));
    cluster.stepTo(40 * SECOND_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 40_000 }]);
  });
});

describe('work ordering', () => {
  test('node work is drained before pod work, whatever order the events came in', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 300)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS);
    // First the pod loses its toleration, then the node loses its taint; both wait in the queues.
    cluster.setPod(makePod('p', [tolerate('other', 300)]), false);
    cluster.setTaints([]);
    // Node first: the untainted node cancels the timer and the pod item then finds no taints.
    // Pod first would have deleted the pod at once.
    cluster.stepTo(MINUTE_MS * 60);
    expect(cluster.deletions).toEqual([]);
    expect(cluster.timeline().map((e) => e.action)).toEqual(['scheduled', 'cancelled']);
  });

  test('node work queued while pod items wait is taken before the next pod item', () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    const order: string[] = [];
    const tolerant = makePod('a', [tolerate('k')]);
    cluster.pods.set('default/a', tolerant);
    cluster.pods.set('default/b', makePod('b'));
    cluster.handler.podUpdated(null, tolerant);
    cluster.handler.podUpdated(null, makePod('b'));
    // The first pod item's handling delivers a node event (an informer callback arriving meanwhile).
    const original = cluster.handler.handlePodUpdate.bind(cluster.handler);
    cluster.handler.handlePodUpdate = (item) => {
      order.push(`pod ${item.name}`);
      original(item);
      if (item.name === 'a') {
        cluster.node = makeNode([]);
        cluster.handler.nodeUpdated(makeNode([noExecute('k')]), cluster.node);
      }
    };
    const originalNode = cluster.handler.handleNodeUpdate.bind(cluster.handler);
    cluster.handler.handleNodeUpdate = () => {
      order.push('node');
      originalNode();
    };
    expect(cluster.handler.processPending()).toBe(3);
    expect(order).toEqual(['pod a', 'node', 'pod b']);
    cluster.step(MINUTE_MS);
    // b was judged after the taint was gone.
    expect(cluster.deletions).toEqual([]);
  });

  test('the taint state is stored before the node\'s pods are listed', () => {
    const seen: unknown[] = [];
    const cluster = new FakeTaintCluster({}, { listPods: (c) => seen.push(c.handler.noExecuteTaints()) });
    cluster.setPod(makePod('p'));
    cluster.setTaints([noExecute('k'), noSchedule('s')]);
    cluster.setTaints([]);
    expect(seen).toEqual([[noExecute('k')], null]);
  });

  test('bursts collapse: one node item and one item per pod', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setNode(makeNode([noExecute('a')]), false);
    cluster.setNode(makeNode([noExecute('b')]), false);
    cluster.setNode(makeNode([noExecute('k')]), false);
    cluster.setPod(makePod('p', [tolerate('k', 61)]), false);
    cluster.setPod(makePod('p', [tolerate('k', 62)]), false);
    expect(cluster.handler.processPending()).toBe(2);
    expect(cluster.getNodeCalls).toBe(1);
    // Both items read the latest cache (62 s); the pod item, handled in the same millisecond as the
    // node item, replaces the timer under upstream's strict comparison.
    expect(cluster.timeline()).toEqual([
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 62_000 },
      { pod: 'default/p', action: 'cancelled', atMs: 0 },
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 62_000 },
    ]);
    expect(cluster.handler.noExecuteTaints()).toEqual([noExecute('k')]);
  });

  test('processPending called again from inside an action does nothing (no re-entry)', () => {
    const cluster = new FakeTaintCluster();
    let inner = -1;
    cluster.setPod(makePod('p'));
    cluster.handler.nodeUpdated(null, makeNode([noExecute('k')]));
    cluster.node = makeNode([noExecute('k')]);
    const emitted = cluster.events;
    const originalPush = emitted.push.bind(emitted);
    emitted.push = (...items) => {
      inner = cluster.handler.processPending();
      return originalPush(...items);
    };
    expect(cluster.handler.processPending()).toBe(1);
    expect(inner).toBe(0);
  });

  test('the pod passed to deletePod is the latest cached one', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    const relabelled = makePod('p', [tolerate('k', 60)], { labels: { v: '2' } });
    cluster.setPod(relabelled);
    cluster.step(MINUTE_MS);
    expect(cluster.deletions).toEqual([{ podKey: 'default/p', pod: relabelled, fireAtMs: T0_MS + MINUTE_MS, atMs: T0_MS + MINUTE_MS }]);
  });

  test('a timer for a pod the cache no longer has still fires, with a null pod (the API call decides)', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    cluster.pods.delete('default/p');
    cluster.step(MINUTE_MS);
    expect(cluster.deletions.map((d) => [d.podKey, d.pod])).toEqual([['default/p', null]]);
  });
});
