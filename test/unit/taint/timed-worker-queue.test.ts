import { jest } from '@jest/globals';
import { systemClock } from '../../../src/api/clock.js';
import { TimedWorkerQueue } from '../../../src/taint/timed-worker-queue.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';

const T0_MS = Date.UTC(2026, 0, 1);

function setup(work?: (key: string, fireAtMs: number) => Promise<void> | void) {
  const clock = new FakeClock(T0_MS);
  const runs: { key: string; fireAtMs: number; atMs: number }[] = [];
  const errors: { key: string; error: unknown }[] = [];
  const queue = new TimedWorkerQueue(
    clock,
    (key, fireAtMs) => {
      runs.push({ key, fireAtMs, atMs: clock.nowMs() });
      return work?.(key, fireAtMs);
    },
    (key, error) => errors.push({ key, error }),
  );
  return { clock, queue, runs, errors };
}

describe('TimedWorkerQueue timing', () => {
  test('work fires at fireAt, not a millisecond earlier', () => {
    const { clock, queue, runs } = setup();
    expect(queue.addWork('ns/a', T0_MS, T0_MS + 5000)).toBe(true);
    clock.step(4999);
    expect(runs).toEqual([]);
    clock.step(1);
    expect(runs).toEqual([{ key: 'ns/a', fireAtMs: T0_MS + 5000, atMs: T0_MS + 5000 }]);
  });

  test('the delay is fireAt - createdAt, not measured against the clock', () => {
    const { clock, queue, runs } = setup();
    clock.step(10_000);
    // createdAt in the past: upstream still waits the full difference from now.
    queue.addWork('ns/a', T0_MS, T0_MS + 5000);
    clock.step(4999);
    expect(runs).toEqual([]);
    clock.step(1);
    expect(runs.map((r) => r.atMs - T0_MS)).toEqual([15_000]);
  });

  const immediate: { name: string; delayMs: number }[] = [
    { name: 'a zero delay', delayMs: 0 },
    { name: 'a negative delay', delayMs: -1000 },
  ];
  for (const tc of immediate) {
    test(`${tc.name} runs at once, through the clock, not inside addWork`, () => {
      const { clock, queue, runs } = setup();
      queue.addWork('ns/a', T0_MS, T0_MS + tc.delayMs);
      expect(runs).toEqual([]);
      expect(queue.getWorker('ns/a')).toBeNull();
      expect(queue.pending()).toEqual([{ key: 'ns/a', createdAtMs: T0_MS, fireAtMs: T0_MS + tc.delayMs, immediate: true }]);
      clock.step(0);
      expect(runs).toEqual([{ key: 'ns/a', fireAtMs: T0_MS + tc.delayMs, atMs: T0_MS }]);
      expect(queue.pending()).toEqual([]);
    });
  }

  test('a 30-day delay fires at 30 days exactly', () => {
    const { clock, queue, runs } = setup();
    const thirtyDaysMs = 30 * 24 * 3600 * 1000;
    queue.addWork('ns/a', T0_MS, T0_MS + thirtyDaysMs);
    clock.step(thirtyDaysMs - 1);
    expect(runs).toEqual([]);
    clock.step(1);
    expect(runs.map((r) => r.atMs - T0_MS)).toEqual([thirtyDaysMs]);
  });

  test('on the system clock a 30-day delay survives setTimeout\'s 24.8-day limit (jest fake timers)', () => {
    jest.useFakeTimers({ now: T0_MS });
    try {
      const runs: number[] = [];
      const queue = new TimedWorkerQueue(systemClock, () => {
        runs.push(Date.now());
      });
      const thirtyDaysMs = 30 * 24 * 3600 * 1000;
      queue.addWork('ns/a', T0_MS, T0_MS + thirtyDaysMs);
      jest.advanceTimersByTime(1000);
      expect(runs).toEqual([]);
      jest.advanceTimersByTime(thirtyDaysMs - 1001);
      expect(runs).toEqual([]);
      jest.advanceTimersByTime(1);
      expect(runs).toEqual([T0_MS + thirtyDaysMs]);
    } finally {
      jest.useRealTimers();
    }
  });
});

describe('TimedWorkerQueue operations', () => {
  test('adding an existing key is a no-op: the first entry keeps its time', () => {
    const { clock, queue, runs } = setup();
    expect(queue.addWork('ns/a', T0_MS, T0_MS + 5000)).toBe(true);
    expect(queue.addWork('ns/a', T0_MS, T0_MS + 1000)).toBe(false);
    expect(queue.getWorker('ns/a')).toEqual({ createdAtMs: T0_MS, fireAtMs: T0_MS + 5000 });
    clock.step(5000);
    expect(runs.map((r) => r.atMs - T0_MS)).toEqual([5000]);
  });

  test('adding while immediate work is in flight is a no-op too', () => {
    let release: () => void = () => {};
    const { clock, queue, runs } = setup(() => new Promise<void>((resolve) => (release = resolve)));
    queue.addWork('ns/a', T0_MS, T0_MS);
    clock.step(0);
    expect(runs).toHaveLength(1);
    expect(queue.getWorker('ns/a')).toBeNull();
    expect(queue.addWork('ns/a', T0_MS, T0_MS + 1000)).toBe(false);
    release();
  });

  test('cancelling a timer answers true and the work never runs', () => {
    const { clock, queue, runs } = setup();
    queue.addWork('ns/a', T0_MS, T0_MS + 5000);
    expect(queue.cancelWork('ns/a')).toBe(true);
    expect(queue.getWorker('ns/a')).toBeNull();
    clock.step(60_000);
    expect(runs).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
  });

  test('cancelling an absent key answers false', () => {
    const { queue } = setup();
    expect(queue.cancelWork('ns/none')).toBe(false);
  });

  test('cancelling immediate work answers false, removes the entry, and the work still runs (upstream goroutine)', () => {
    const { clock, queue, runs } = setup();
    queue.addWork('ns/a', T0_MS, T0_MS);
    expect(queue.cancelWork('ns/a')).toBe(false);
    expect(queue.pending()).toEqual([]);
    clock.step(0);
    expect(runs).toHaveLength(1);
  });

  test('a timed entry whose run is still in progress is visible and cancellable (answers true), as upstream', async () => {
    let release: () => void = () => {};
    const { clock, queue } = setup(() => new Promise<void>((resolve) => (release = resolve)));
    queue.addWork('ns/a', T0_MS, T0_MS + 1000);
    clock.step(1000);
    expect(queue.getWorker('ns/a')).toEqual({ createdAtMs: T0_MS, fireAtMs: T0_MS + 1000 });
    expect(queue.cancelWork('ns/a')).toBe(true);
    release();
    await flushMicrotasks();
  });

  test('the entry is removed when the run ends, so the same key can be added again (no tombstone, #107543)', async () => {
    let release: () => void = () => {};
    const { clock, queue, runs } = setup(() => new Promise<void>((resolve) => (release = resolve)));
    queue.addWork('ns/a', T0_MS, T0_MS + 1000);
    clock.step(1000);
    expect(queue.pending()).toHaveLength(1);
    release();
    await flushMicrotasks();
    expect(queue.pending()).toEqual([]);
    expect(queue.addWork('ns/a', T0_MS + 1000, T0_MS + 2000)).toBe(true);
    clock.step(1000);
    expect(runs).toHaveLength(2);
  });

  test('a failed run is reported, not retried, and its entry removed', async () => {
    const { clock, queue, runs, errors } = setup(() => Promise.reject(new Error('apiserver down')));
    queue.addWork('ns/a', T0_MS, T0_MS + 1000);
    clock.step(1000);
    await flushMicrotasks();
    expect(errors).toEqual([{ key: 'ns/a', error: new Error('apiserver down') }]);
    expect(queue.pending()).toEqual([]);
    clock.step(3_600_000);
    expect(runs).toHaveLength(1);
  });

  test('a run that throws synchronously is reported and removed', () => {
    const { clock, queue, errors } = setup(() => {
      throw new Error('boom');
    });
    queue.addWork('ns/a', T0_MS, T0_MS);
    clock.step(0);
    expect(errors.map((e) => e.key)).toEqual(['ns/a']);
    expect(queue.pending()).toEqual([]);
  });

  test('a finished run never removes the entry that replaced it (identity token)', async () => {
    const releases: (() => void)[] = [];
    const { clock, queue } = setup(() => new Promise<void>((resolve) => releases.push(resolve)));
    queue.addWork('ns/a', T0_MS, T0_MS);
    clock.step(0);
    // The in-flight entry is dropped silently and a timer added under the same key.
    queue.cancelWork('ns/a');
    expect(queue.addWork('ns/a', T0_MS, T0_MS + 60_000)).toBe(true);
    releases[0]?.();
    await flushMicrotasks();
    expect(queue.getWorker('ns/a')).toEqual({ createdAtMs: T0_MS, fireAtMs: T0_MS + 60_000 });
  });

  test('pending lists every entry, earliest first', () => {
    const { queue } = setup();
    queue.addWork('ns/b', T0_MS, T0_MS + 2000);
    queue.addWork('ns/c', T0_MS, T0_MS + 1000);
    queue.addWork('ns/a', T0_MS, T0_MS + 2000);
    expect(queue.pending().map((p) => p.key)).toEqual(['ns/c', 'ns/a', 'ns/b']);
  });

  test('stop cancels timers and immediate work not yet started, refuses adds, and is idempotent', () => {
    const { clock, queue, runs } = setup();
    queue.addWork('ns/a', T0_MS, T0_MS + 1000);
    queue.addWork('ns/b', T0_MS, T0_MS);
    queue.stop();
    queue.stop();
    expect(queue.addWork('ns/c', T0_MS, T0_MS)).toBe(false);
    clock.step(10_000);
    expect(runs).toEqual([]);
    expect(clock.pendingTimers()).toBe(0);
    expect(queue.pending()).toEqual([]);
  });
});
