// The grace-reset rule (kubelet `thresholdsFirstObservedAt`): a single pass without a soft
// threshold met forgets when it was first met, so its grace period starts over.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, SECOND_MS, Scenario, evictedNames, makeConfig, quantity, softThreshold } from './support.js';

test('grace reset: one pass not met restarts the grace period', () => {
  const s = new Scenario(makeConfig({ thresholds: [softThreshold('memory.available', quantity('2Gi'), 2 * MINUTE_MS)] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;

  // First met at t0.
  s.node = { memory: { available: '1500Mi' } };
  expect(s.sync().evictions).toEqual([]);

  // t0+1m: not met for one pass (the condition stays, the timer is dropped).
  s.step(MINUTE_MS);
  s.node = { memory: { available: '3Gi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);

  // t0+1m10s: met again; this is the new first observation.
  s.step(10 * SECOND_MS);
  s.node = { memory: { available: '1500Mi' } };
  expect(s.sync().evictions).toEqual([]);

  // t0+2m10s: two minutes after t0, but only one after the reset: nothing.
  s.step(MINUTE_MS);
  result = s.sync();
  expect(result.thresholdsMet).toEqual([]);
  expect(result.evictions).toEqual([]);

  // t0+3m10s: two minutes after the reset: evict.
  s.step(MINUTE_MS);
  result = s.sync();
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
});

test('grace reset: a summary that cannot be read is not a pass without the threshold', () => {
  const s = new Scenario(makeConfig({ thresholds: [softThreshold('memory.available', quantity('2Gi'), 2 * MINUTE_MS)] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  s.node = { memory: { available: '1500Mi' } };
  s.sync();

  s.step(MINUTE_MS);
  s.summaryUnavailable = true;
  const skipped = s.sync();
  expect(skipped.observations.size).toBe(0);
  expect(skipped.evictions).toEqual([]);
  // The state stands: the condition as last committed.
  expect(skipped.nodeConditions).toEqual(['MemoryPressure']);

  s.step(MINUTE_MS);
  s.summaryUnavailable = false;
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
});
