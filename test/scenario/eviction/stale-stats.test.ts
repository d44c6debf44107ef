// Stale stats (kubelet `thresholdsUpdatedStats`): a threshold whose signal's stat time has not
// moved since the previous pass is not acted on, so the same data never evicts twice; the
// condition and the reported thresholds are still updated. A stat without a time is always fresh.

import type { Summary } from '../../../src/api/summary.js';
import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { SECOND_MS, Scenario, evictedNames, hardThreshold, makeConfig, makeSummary, quantity, signalsOf } from './support.js';

function newScenario(): Scenario {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi')), hardThreshold('pid.available', quantity('1000'))] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

test('stale stats: equal timestamps mean no eviction, but the condition is raised', () => {
  const s = newScenario();
  const statTimeMs = s.clock.nowMs();
  s.statTimeMs = statTimeMs;
  s.node = { memory: { available: '500Mi' } };
  let result = s.sync();
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);

  // Ten seconds later the stats still carry the same time.
  s.step(10 * SECOND_MS);
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available']);
  expect(result.reclaim).toBeNull();
  expect(result.evictions).toEqual([]);

  // Stats older than the last ones are stale too.
  s.step(10 * SECOND_MS);
  s.statTimeMs = statTimeMs - 1;
  expect(s.sync().evictions).toEqual([]);

  // Fresh stats (later than the last pass's): evict again.
  s.step(10 * SECOND_MS);
  s.statTimeMs = s.clock.nowMs();
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
});

test('stale stats: stats without a time are always fresh', () => {
  const s = newScenario();
  s.statTimeMs = null;
  s.node = { memory: { available: '500Mi' } };
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
  s.step(10 * SECOND_MS);
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
  s.step(10 * SECOND_MS);
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
});

test('stale stats: judged per signal, so a fresh signal is acted on while a stale one waits', () => {
  const s = newScenario();
  const pods = s.pods;
  const summaryAt = (memoryTimeMs: number, pidTimeMs: number): Summary => {
    const summary = makeSummary({ memory: { available: '500Mi' }, pid: { maxpid: 5000, curproc: 4500 } }, s.podStats, memoryTimeMs);
    summary.node.rlimit!.time = new Date(pidTimeMs).toISOString();
    return summary;
  };
  const t0 = s.clock.nowMs();
  let result = s.manager.synchronize({ nowMs: t0, summary: summaryAt(t0, t0), pods, dedicatedImageFs: false, splitContainerFs: false });
  expect(result.reclaim?.threshold.signal).toBe('memory.available');

  // Memory stale, PIDs fresh: the PID threshold is acted on although memory comes first.
  s.step(10 * SECOND_MS);
  result = s.manager.synchronize({ nowMs: s.clock.nowMs(), summary: summaryAt(t0, s.clock.nowMs()), pods, dedicatedImageFs: false, splitContainerFs: false });
  expect(result.nodeConditions).toEqual(['MemoryPressure', 'PIDPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available', 'pid.available']);
  expect(result.reclaim?.threshold.signal).toBe('pid.available');
  expect(result.evictions).toHaveLength(1);
  expect(result.evictions[0]!.message).toBe('The node was low on resource: pids. Threshold quantity: 1k, available: 500. ');
});
