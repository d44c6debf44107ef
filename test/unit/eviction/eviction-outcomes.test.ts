// Eviction outcomes on a fake clock: each scenario steps time, feeds evictions, pods gone and
// observations as the agent's passes would, and asserts the outcome figures.

import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import type { Threshold } from '../../../src/api/threshold.js';
import { OutcomeTracker, type EvictionStarted } from '../../../src/eviction/eviction-outcomes.js';
import { describeOutcome } from '../../../src/eviction/outcome-message.js';
import type { SignalObservations } from '../../../src/eviction/types.js';

const MI = 1024n * 1024n;
const CAPACITY = 4096n * MI;
const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);
const WINDOW_MS = 60_000;

// memory.available < 500Mi, minimum reclaim 100Mi: back at 600Mi.
const HARD: Threshold = { signal: 'memory.available', value: { kind: 'quantity', quantity: parseQuantity('500Mi') }, gracePeriodMs: 0, minReclaim: { kind: 'quantity', quantity: parseQuantity('100Mi') } };

function seen(availableMi: bigint, signal: Signal = 'memory.available'): SignalObservations {
  return new Map([[signal, { available: availableMi * MI, capacity: CAPACITY, timeMs: 0 }]]);
}

function eviction(uid: string, atMs: number, availableMi: bigint, extra: Partial<EvictionStarted> = {}): EvictionStarted {
  return { pod: `default/${uid}`, uid, threshold: HARD, action: 'local-termination', notifiedAtMs: null, decidedAtMs: atMs, actedAtMs: atMs, availableAtDecision: availableMi * MI, capacity: CAPACITY, ...extra };
}

// A pass at `atMs` that sees `availableMi` (the threshold met below 600Mi, with min-reclaim).
function pass(tracker: OutcomeTracker, atMs: number, availableMi: bigint) {
  return tracker.observed(seen(availableMi), availableMi < 500n ? [HARD] : [], atMs);
}

describe('OutcomeTracker', () => {
  test('one-pod-relieved: the figures against the need, time to relief, reported a window after relief', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    expect(pass(tracker, T0, 450n)).toEqual([]);
    tracker.evicted(eviction('leak', T0 + 20, 400n, { notifiedAtMs: T0 + 10 }));
    tracker.podGone('leak', T0 + 400);
    expect(pass(tracker, T0 + 500, 550n)).toEqual([]); // freed some, not yet back
    expect(pass(tracker, T0 + 900, 1200n)).toEqual([]); // back: the window runs from here
    expect(tracker.tick(T0 + 900 + WINDOW_MS - 1)).toEqual([]);
    const [outcome] = tracker.tick(T0 + 900 + WINDOW_MS);
    expect(outcome).toMatchObject({
      result: 'relieved',
      crossedAtMs: T0,
      notifiedAtMs: T0 + 10,
      actedAtMs: T0 + 20,
      goneAtMs: T0 + 400,
      relievedAtMs: T0 + 900,
      timeToReliefMs: 880,
      reclaimedAmount: 800n * MI,
      neededAmount: 200n * MI,
      retriggered: false,
      kernelOomKills: 0,
    });
    expect(outcome?.reclaimedRatio).toBe(4);
    expect(tracker.recent()).toHaveLength(1);
    expect(tracker.openSignals).toEqual([]);
  });

  test('what-a-killed-pod-still-held-at-relief-counts: the first figure once it is gone', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('leak', T0, 590n));
    // Back just past the target 10 ms after the kill (the leak stopped), before the pod's memory went.
    pass(tracker, T0 + 10, 610n);
    tracker.podGone('leak', T0 + 120);
    pass(tracker, T0 + 1000, 1500n);
    pass(tracker, T0 + 2000, 3000n); // later frees are not the eviction's
    const [outcome] = tracker.tick(T0 + 10 + WINDOW_MS);
    expect(outcome).toMatchObject({ relievedAtMs: T0 + 10, timeToReliefMs: 10, availableAfter: 1500n * MI, reclaimedAmount: 910n * MI, neededAmount: 10n * MI });
  });

  test('back-at-threshold-is-not-relief: the target is the threshold plus the minimum reclaim', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('a', T0, 400n));
    pass(tracker, T0 + 1000, 599n);
    const [outcome] = tracker.tick(T0 + WINDOW_MS);
    expect(outcome).toMatchObject({ result: 'not-relieved', relievedAtMs: null, timeToReliefMs: null, availableAfter: 599n * MI, reclaimedAmount: 199n * MI, neededAmount: 200n * MI });
    expect(describeOutcome(outcome!, WINDOW_MS)).toContain('not relieved; pod default/a (local-termination) freed 199.0 MiB of the 200.0 MiB needed (ratio 0.99), the signal not back within 60.000 s');
  });

  test('retriggered: the threshold met again within the window after relief', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('a', T0, 400n));
    pass(tracker, T0 + 1000, 900n);
    pass(tracker, T0 + 30_000, 450n);
    const [outcome] = tracker.tick(T0 + 1000 + WINDOW_MS);
    expect(outcome).toMatchObject({ result: 'relieved', retriggered: true, retriggeredAtMs: T0 + 30_000 });
  });

  test('met-again-after-the-window-is-no-retrigger', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: 10_000 });
    tracker.evicted(eviction('a', T0, 400n));
    pass(tracker, T0 + 1000, 900n);
    const [outcome] = pass(tracker, T0 + 11_000, 450n);
    expect(outcome).toMatchObject({ retriggered: false });
  });

  test('eviction-after-relief-closes-the-episode-as-retriggered-and-opens-another', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('a', T0, 400n));
    pass(tracker, T0 + 1000, 900n);
    tracker.evicted(eviction('b', T0 + 5000, 420n));
    const [outcome] = tracker.tick(T0 + 5000);
    expect(outcome).toMatchObject({ result: 'relieved', retriggered: true, retriggeredAtMs: T0 + 5000 });
    expect(outcome?.pods.map((p) => p.uid)).toEqual(['a']);
    expect(tracker.openSignals).toEqual(['memory.available']);
  });

  test('under-eviction: the first pod gone and the signal still short, a second had to go', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('small', T0, 400n));
    tracker.podGone('small', T0 + 300);
    pass(tracker, T0 + 500, 450n);
    tracker.evicted(eviction('big', T0 + 600, 450n));
    tracker.podGone('big', T0 + 900);
    pass(tracker, T0 + 1000, 1000n);
    const [outcome] = tracker.tick(T0 + 1000 + WINDOW_MS);
    expect(outcome).toMatchObject({ result: 'under-eviction', reclaimedAmount: 600n * MI, neededAmount: 200n * MI });
    expect(outcome?.pods.map((p) => [p.uid, p.afterEarlierGone])).toEqual([['small', true], ['big', true]]);
  });

  test('over-eviction: a second pod went while the first was still going, and more was freed than needed', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('first', T0, 400n));
    tracker.evicted(eviction('second', T0 + 200, 400n, { action: 'delete' }));
    tracker.podGone('first', T0 + 300);
    tracker.podGone('second', T0 + 800);
    pass(tracker, T0 + 1000, 2000n);
    const [outcome] = tracker.tick(T0 + 1000 + WINDOW_MS);
    expect(outcome).toMatchObject({ result: 'over-eviction' });
    expect(outcome?.pods.map((p) => [p.uid, p.afterEarlierGone, p.goneAtMs])).toEqual([['first', true, T0 + 300], ['second', false, T0 + 800]]);
  });

  test('the-same-pod-evicted-again-is-one-pod', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.evicted(eviction('a', T0, 400n));
    tracker.evicted(eviction('a', T0 + 1000, 410n));
    pass(tracker, T0 + 2000, 900n);
    const [outcome] = tracker.tick(T0 + 2000 + WINDOW_MS);
    expect(outcome).toMatchObject({ result: 'relieved', actedAtMs: T0 });
    expect(outcome?.pods).toHaveLength(1);
  });

  test('kernel-oom-kills-in-the-window-are-counted; before the action they are not', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    tracker.kernelOomKill(T0 - 1);
    tracker.evicted(eviction('a', T0, 400n));
    tracker.kernelOomKill(T0 + 100);
    pass(tracker, T0 + 1000, 900n);
    const [outcome] = tracker.tick(T0 + 1000 + WINDOW_MS);
    expect(outcome?.kernelOomKills).toBe(1);
    expect(describeOutcome(outcome!, WINDOW_MS)).toContain('1 kernel OOM kill meanwhile');
  });

  test('signals-are-followed-apart: a disk eviction does not join a memory episode', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    const disk: Threshold = { signal: 'nodefs.available', value: { kind: 'quantity', quantity: parseQuantity('1Gi') }, gracePeriodMs: 0, minReclaim: null };
    tracker.evicted(eviction('mem', T0, 400n));
    tracker.evicted({ ...eviction('disk', T0, 512n), threshold: disk });
    tracker.observed(new Map([...seen(900n), ...seen(2048n, 'nodefs.available')]), [], T0 + 1000);
    const outcomes = tracker.tick(T0 + 1000 + WINDOW_MS);
    expect(outcomes.map((o) => [o.signal, o.result, o.neededAmount / MI])).toEqual([['memory.available', 'relieved', 200n], ['nodefs.available', 'relieved', 512n]]);
  });

  test('hard-and-soft-thresholds-of-one-signal-are-followed-apart', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    const soft: Threshold = { ...HARD, value: { kind: 'quantity', quantity: parseQuantity('1Gi') }, gracePeriodMs: 30_000, minReclaim: null };
    tracker.evicted({ ...eviction('soft-victim', T0, 900n, { action: 'eviction-api' }), threshold: soft });
    tracker.evicted(eviction('hard-victim', T0 + 1000, 400n));
    // Back past the hard target, still short of the soft one; the soft threshold still met.
    tracker.observed(seen(800n), [soft], T0 + 2000);
    const outcomes = tracker.tick(T0 + WINDOW_MS + 2000);
    expect(outcomes.map((o) => [o.pods[0]?.uid, o.result, o.retriggered])).toEqual([
      ['soft-victim', 'not-relieved', false],
      ['hard-victim', 'relieved', false],
    ]);
  });

  test('the-message-names-every-figure-and-step', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: WINDOW_MS });
    pass(tracker, T0, 450n);
    tracker.evicted(eviction('leak', T0 + 20, 400n, { notifiedAtMs: T0 + 10, decidedAtMs: T0 + 15 }));
    tracker.podGone('leak', T0 + 400);
    pass(tracker, T0 + 900, 1200n);
    const [outcome] = tracker.tick(T0 + 900 + WINDOW_MS);
    expect(describeOutcome(outcome!, WINDOW_MS)).toBe(
      'Eviction outcome for memory.available (threshold 500.0 MiB, target 600.0 MiB): relieved; pod default/leak (local-termination) freed 800.0 MiB of the 200.0 MiB needed (ratio 4.00), 0.880 s from the first kill to relief; ' +
        'crossed 2026-01-01T12:00:00Z, notified +10 ms, decided +15 ms, acted +20 ms, pod gone +400 ms, back +900 ms; not re-triggered within 60 s; no kernel OOM kill',
    );
  });

  test('recent-keeps-the-last-twenty', () => {
    const tracker = new OutcomeTracker({ retriggerWindowMs: 1000 });
    for (let i = 0; i < 25; i++) {
      tracker.evicted(eviction(`p${i}`, T0 + i * 10_000, 400n));
      tracker.tick(T0 + i * 10_000 + 1000);
    }
    expect(tracker.recent().map((o) => o.pods[0]?.uid)).toEqual(Array.from({ length: 20 }, (_, i) => `p${i + 5}`));
  });
});
