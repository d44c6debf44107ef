// Scenario scripts on the fake clock: what the NoExecute taint logic deletes, cancels and keeps,
// checked against upstream's behaviour (reference taint-eviction.md §1.7, §1.8, §2).

import { flushMicrotasks } from '../fakes/fake-clock.js';
import { DAY_MS, FakeTaintCluster, makePod, MINUTE_MS, noExecute, SECOND_MS, T0_MS, tolerate } from '../fakes/fake-taint-cluster.js';

describe('immediate and delayed deletion', () => {
  test('a pod that does not tolerate a NoExecute taint is deleted at once', () => {
    const cluster = new FakeTaintCluster();
    const pod = makePod('web');
    cluster.setPod(pod);
    cluster.setTaints([noExecute('maintenance')]);
    expect(cluster.timeline()).toEqual([{ pod: 'default/web', action: 'scheduled', atMs: 0, fireAtMs: 0 }]);
    // Started through the clock, as upstream starts a goroutine: not inside the node handling.
    expect(cluster.deletions).toEqual([]);
    cluster.step(0);
    expect(cluster.deletions).toEqual([{ podKey: 'default/web', pod, fireAtMs: T0_MS, atMs: T0_MS }]);
    expect(cluster.events[1]).toEqual({
      type: 'deleted',
      podKey: 'default/web',
      atMs: T0_MS,
      fireAtMs: T0_MS,
      reason: 'TaintManagerEviction',
      message: 'Marking for deletion Pod default/web',
    });
  });

  test('a tolerating pod is deleted at exactly tolerationSeconds, not a millisecond earlier', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('web', [tolerate('node.kubernetes.io/not-ready', 300)]));
    cluster.step(7 * SECOND_MS);
    cluster.setTaints([noExecute('node.kubernetes.io/not-ready')]);
    expect(cluster.timeline()).toEqual([{ pod: 'default/web', action: 'scheduled', atMs: 7000, fireAtMs: 307_000 }]);
    cluster.stepTo(306_999);
    expect(cluster.deletions).toEqual([]);
    cluster.step(1);
    expect(cluster.deleted()).toEqual([{ pod: 'default/web', atMs: 307_000 }]);
    expect(cluster.timeline().at(-1)).toEqual({ pod: 'default/web', action: 'deleted', atMs: 307_000, fireAtMs: 307_000 });
  });

  test('tolerationSeconds 0 and negative mean now', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('zero', [tolerate('k', 0)]));
    cluster.setPod(makePod('negative', [tolerate('k', -10)]));
    cluster.setTaints([noExecute('k')]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([
      { pod: 'default/zero', atMs: 0 },
      { pod: 'default/negative', atMs: 0 },
    ]);
  });

  test('a 30-day toleration fires at 30 days', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('long', [tolerate('k', 30 * 86400)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(30 * DAY_MS - 1);
    expect(cluster.deletions).toEqual([]);
    cluster.step(1);
    expect(cluster.deleted()).toEqual([{ pod: 'default/long', atMs: 30 * DAY_MS }]);
  });

  test('several pods with different tolerations', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('none'));
    cluster.setPod(makePod('minute', [tolerate('k', 60)]));
    cluster.setPod(makePod('hour', [tolerate('k', 3600)]));
    cluster.setPod(makePod('forever', [tolerate('k')]));
    cluster.setPod(makePod('everything', [{ operator: 'Exists' }]));
    cluster.setPod(makePod('wrong-value', [{ key: 'k', operator: 'Equal', value: 'other', effect: 'NoExecute', tolerationSeconds: 60 }]));
    cluster.setPod(makePod('no-schedule-only', [{ key: 'k', operator: 'Exists', effect: 'NoSchedule' }]));
    cluster.setTaints([noExecute('k', 'v')]);
    cluster.stepTo(2 * 3600 * SECOND_MS);
    expect(cluster.deleted()).toEqual([
      { pod: 'default/none', atMs: 0 },
      { pod: 'default/wrong-value', atMs: 0 },
      { pod: 'default/no-schedule-only', atMs: 0 },
      { pod: 'default/minute', atMs: 60_000 },
      { pod: 'default/hour', atMs: 3_600_000 },
    ]);
  });

  test('the first listed matching toleration wins: 60 s, not forever', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60), tolerate('k')]));
    cluster.setPod(makePod('q', [tolerate('k'), tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 60_000 }]);
  });

  test('a pod re-created under the same name after its deletion is evicted again (no tombstone, #107543)', async () => {
    const cluster = new FakeTaintCluster();
    cluster.setTaints([noExecute('k')]);
    cluster.setPod(makePod('p', [], { uid: 'first' }));
    cluster.step(0);
    await flushMicrotasks();
    cluster.removePod('default/p');
    cluster.step(SECOND_MS);
    cluster.setPod(makePod('p', [], { uid: 'second' }));
    cluster.step(0);
    expect(cluster.deletions.map((d) => d.pod?.metadata.uid)).toEqual(['first', 'second']);
  });
});

describe('cancellation', () => {
  test('removing every NoExecute taint cancels every pending eviction on the node, with upstream\'s event', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('a', [tolerate('k', 300)]));
    cluster.setPod(makePod('b', [tolerate('k', 600)]));
    cluster.setPod(makePod('c', [tolerate('k')]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(100 * SECOND_MS);
    cluster.setTaints([]);
    expect(cluster.timeline()).toEqual([
      { pod: 'default/a', action: 'scheduled', atMs: 0, fireAtMs: 300_000 },
      { pod: 'default/b', action: 'scheduled', atMs: 0, fireAtMs: 600_000 },
      { pod: 'default/a', action: 'cancelled', atMs: 100_000 },
      { pod: 'default/b', action: 'cancelled', atMs: 100_000 },
    ]);
    expect(cluster.events[2]).toEqual({ type: 'cancelled', podKey: 'default/a', atMs: T0_MS + 100_000, reason: 'TaintManagerEviction', message: 'Cancelling deletion of Pod default/a' });
    cluster.stepTo(DAY_MS);
    expect(cluster.deletions).toEqual([]);
    expect(cluster.handler.noExecuteTaints()).toBeNull();
  });

  test('a deleted pod cancels its own eviction only', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('a', [tolerate('k', 300)]));
    cluster.setPod(makePod('b', [tolerate('k', 300)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS);
    cluster.removePod('default/a');
    expect(cluster.timeline().slice(2)).toEqual([{ pod: 'default/a', action: 'cancelled', atMs: MINUTE_MS }]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/b', atMs: 300_000 }]);
  });

  test('no cancel event when nothing was pending, or only an immediate deletion was', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('tolerant', [tolerate('k')]));
    cluster.setPod(makePod('doomed'));
    cluster.setTaints([noExecute('k')]);
    // The immediate deletion has not started yet; removing the taints drops it silently and it still runs.
    cluster.setTaints([]);
    cluster.removePod('default/tolerant');
    expect(cluster.timeline()).toEqual([{ pod: 'default/doomed', action: 'scheduled', atMs: 0, fireAtMs: 0 }]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/doomed', atMs: 0 }]);
  });

  test('tolerating the remaining taints forever cancels the timer (#93722)', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 60), tolerate('b')]));
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    cluster.stepTo(10 * SECOND_MS);
    cluster.setTaints([noExecute('b')]);
    expect(cluster.timeline()).toEqual([
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 60_000 },
      { pod: 'default/p', action: 'cancelled', atMs: 10_000 },
    ]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deletions).toEqual([]);
  });

  test('node deletion drops the taint state but does not cancel timers (upstream)', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 300)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS);
    cluster.setNode(null);
    expect(cluster.handler.noExecuteTaints()).toBeNull();
    // A pod event now finds no taint state and changes nothing.
    cluster.setPod(makePod('late'));
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 300_000 }]);
    expect(cluster.timeline().filter((e) => e.action === 'cancelled')).toEqual([]);
  });
});

describe('a pending timer and later changes (upstream keeps it)', () => {
  test('a new untolerated taint replaces the timer with an immediate deletion', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 300)]));
    cluster.setTaints([noExecute('a')]);
    cluster.stepTo(MINUTE_MS);
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    cluster.step(0);
    expect(cluster.timeline()).toEqual([
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 300_000 },
      { pod: 'default/p', action: 'cancelled', atMs: 60_000 },
      { pod: 'default/p', action: 'scheduled', atMs: 60_000, fireAtMs: 60_000 },
      { pod: 'default/p', action: 'deleted', atMs: 60_000, fireAtMs: 60_000 },
    ]);
  });

  test('a new tolerated taint keeps the timer, even when it is tolerated for less', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 300), tolerate('b', 10)]));
    cluster.setTaints([noExecute('a')]);
    cluster.stepTo(MINUTE_MS);
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    cluster.stepTo(299_999);
    expect(cluster.deletions).toEqual([]);
    cluster.step(1);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 300_000 }]);
    expect(cluster.timeline().filter((e) => e.action === 'scheduled')).toHaveLength(1);
  });

  test('a new taint tolerated with tolerationSeconds 0 keeps the timer too', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 300), tolerate('b', 0)]));
    cluster.setTaints([noExecute('a')]);
    cluster.stepTo(MINUTE_MS);
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 300_000 }]);
  });

  test('lengthening the toleration does not postpone the deletion', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(30 * SECOND_MS);
    cluster.setPod(makePod('p', [tolerate('k', 3600)]));
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 60_000 }]);
  });

  test('shortening the toleration does not bring the deletion forward', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 3600)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(30 * SECOND_MS);
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 3_600_000 }]);
  });

  test('a tolerations change to untolerated deletes at once', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 3600)]));
    cluster.setTaints([noExecute('k')]);
    cluster.stepTo(MINUTE_MS);
    cluster.setPod(makePod('p', [tolerate('other', 3600)]));
    cluster.step(0);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 60_000 }]);
  });

  test('Q1: removing the short-tolerated taint leaves the stale short timer in place', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 10), tolerate('b', 3600)]));
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    cluster.stepTo(5 * SECOND_MS);
    cluster.setTaints([noExecute('b')]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 10_000 }]);
  });

  test('re-judged in the same millisecond, the timer is replaced (upstream\'s comparison is strict)', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('a', 300), tolerate('b', 60)]));
    cluster.setTaints([noExecute('a')]);
    cluster.setTaints([noExecute('a'), noExecute('b')]);
    expect(cluster.timeline()).toEqual([
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 300_000 },
      { pod: 'default/p', action: 'cancelled', atMs: 0 },
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 60_000 },
    ]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deleted()).toEqual([{ pod: 'default/p', atMs: 60_000 }]);
  });

  test('Q2 guard: judging a pod against no taints cancels and never deletes', () => {
    const cluster = new FakeTaintCluster();
    const pod = makePod('p', [tolerate('k', 300)]);
    cluster.setPod(pod);
    cluster.setTaints([noExecute('k')]);
    cluster.handler.processPodOnNode(pod, [], T0_MS + 1);
    cluster.stepTo(DAY_MS);
    expect(cluster.deletions).toEqual([]);
    expect(cluster.timeline().map((e) => e.action)).toEqual(['scheduled', 'cancelled']);
  });

  test('while an immediate deletion runs, re-judging adds no second one', () => {
    const cluster = new FakeTaintCluster();
    let release: () => void = () => {};
    cluster.deleteImpl = () => new Promise<void>((resolve) => (release = resolve));
    cluster.setPod(makePod('p', [tolerate('a', 0)]));
    cluster.setTaints([noExecute('a')]);
    cluster.step(0);
    expect(cluster.handler.pending()).toEqual([{ key: 'default/p', createdAtMs: T0_MS, fireAtMs: T0_MS, immediate: true }]);
    cluster.setPod(makePod('p', [tolerate('a', 0), tolerate('b', 5)]));
    cluster.step(0);
    expect(cluster.deletions).toHaveLength(1);
    expect(cluster.timeline().filter((e) => e.action === 'scheduled')).toHaveLength(1);
    release();
  });

  test('an untolerated pod judged again before its deletion starts is deleted twice (upstream; the second DELETE is harmless)', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p'), false);
    // Node item first, then the pod item, in the same pass: the second judgement drops the
    // immediate entry silently (no event) and queues another, as upstream's CancelWork and AddWork do.
    cluster.setTaints([noExecute('k')]);
    cluster.step(0);
    expect(cluster.timeline()).toEqual([
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 0 },
      { pod: 'default/p', action: 'scheduled', atMs: 0, fireAtMs: 0 },
      { pod: 'default/p', action: 'deleted', atMs: 0, fireAtMs: 0 },
      { pod: 'default/p', action: 'deleted', atMs: 0, fireAtMs: 0 },
    ]);
  });

  test('a failed deletion is reported and not retried; a later event re-judges the pod', async () => {
    const cluster = new FakeTaintCluster();
    cluster.deleteImpl = () => Promise.reject(new Error('the server is currently unable to handle the request'));
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setTaints([noExecute('k')]);
    await cluster.clock.stepAsync(MINUTE_MS);
    expect(cluster.failures).toEqual([{ podKey: 'default/p', error: new Error('the server is currently unable to handle the request') }]);
    expect(cluster.handler.pending()).toEqual([]);
    await cluster.clock.stepAsync(DAY_MS);
    expect(cluster.deletions).toHaveLength(1);
    cluster.deleteImpl = null;
    cluster.setTaints([noExecute('k'), noExecute('k2')]);
    cluster.step(0);
    expect(cluster.deleted()).toEqual([
      { pod: 'default/p', atMs: MINUTE_MS },
      { pod: 'default/p', atMs: MINUTE_MS + DAY_MS },
    ]);
  });

  test('stop cancels every timer: nothing is deleted afterwards', () => {
    const cluster = new FakeTaintCluster();
    cluster.setPod(makePod('p', [tolerate('k', 60)]));
    cluster.setPod(makePod('q'));
    cluster.setTaints([noExecute('k')]);
    cluster.handler.stop();
    cluster.handler.stop();
    cluster.setTaints([noExecute('k'), noExecute('j')]);
    cluster.stepTo(DAY_MS);
    expect(cluster.deletions).toEqual([]);
    expect(cluster.clock.pendingTimers()).toBe(0);
  });
});
