// Min-reclaim hysteresis (kubelet `TestMinReclaim`, reference §4.7): once a threshold has been
// acted on, it stays met until the available amount exceeds threshold + min-reclaim, so eviction
// continues above the bare threshold; clearing it still leaves the condition for the transition period.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, signalsOf, softThreshold } from './support.js';

function newScenario(thresholds = [hardThreshold('memory.available', quantity('1Gi'), quantity('500Mi'))]): Scenario {
  const s = new Scenario(makeConfig({ thresholds }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

test('min-reclaim: the §4.7 worked example, exactly', () => {
  const s = newScenario();

  // 2Gi available: no pressure.
  s.node = { memory: { available: '2Gi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);

  // 500Mi: met, evict.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '500Mi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(1);

  // 1.2Gi: the bare threshold (1Gi) is not met, but 1Gi + 500Mi = 1.5Gi > 1.2Gi: still met, evict again.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1.2Gi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMetIgnoringGrace)).toEqual(['memory.available']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available']);
  // The reported quantity is the threshold's, min-reclaim not included.
  expect(result.thresholdsMet[0]).toMatchObject({ quantity: '1Gi', available: '1288490189' });
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
  expect(result.evictions[0]!.message).toBe(
    'The node was low on resource: memory. Threshold quantity: 1Gi, available: 1288490189. ' +
      'Container best-effort-low-priority was using 100Mi, request is 0, has larger consumption of memory. ',
  );

  // 2Gi: resolved. No eviction, but MemoryPressure is still reported.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '2Gi' } };
  result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.thresholdsMet).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(result.nodeConditions).toEqual(['MemoryPressure']);

  // Once resolved, the hysteresis is gone: 1.2Gi is again above the bare threshold.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1.2Gi' } };
  result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);

  // Five minutes after the last pass that saw pressure, the condition clears.
  s.step(3 * MINUTE_MS);
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);
});

test('min-reclaim: threshold + min-reclaim exactly available resolves (equality never triggers)', () => {
  const s = newScenario();
  s.node = { memory: { available: '500Mi' } };
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1.5Gi' } };
  const result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);
});

test('min-reclaim: only thresholds whose grace period elapsed enter the min-reclaim memory', () => {
  // A soft threshold with min-reclaim that was met but never acted on does not hold on.
  const s = newScenario([softThreshold('memory.available', quantity('1Gi'), 2 * MINUTE_MS, quantity('500Mi'))]);
  s.node = { memory: { available: '500Mi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.evictions).toEqual([]);
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1.2Gi' } };
  result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);

  // Once its grace has elapsed and it was acted on, it does hold on.
  s.node = { memory: { available: '500Mi' } };
  s.step(MINUTE_MS);
  s.sync();
  s.step(2 * MINUTE_MS);
  result = s.sync();
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(0);
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1.2Gi' } };
  result = s.sync();
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available(soft)']);
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
});

test('min-reclaim: a percentage min-reclaim is taken of the observed capacity', () => {
  // 8Gi capacity: 10% in float32 is 858993472 bytes (exact decimals would give 858993459), so
  // 1Gi + 10% = 1932735296 bytes must be available to resolve.
  const s = newScenario([hardThreshold('memory.available', quantity('1Gi'), { kind: 'percentage', ratio: Math.fround(Math.fround(10) / 100) })]);
  s.node = { memory: { available: '500Mi', capacity: '8Gi' } };
  s.sync();
  s.step(MINUTE_MS);
  s.node = { memory: { available: 1_932_735_295, capacity: '8Gi' } };
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
  s.step(MINUTE_MS);
  s.node = { memory: { available: 1_932_735_296, capacity: '8Gi' } };
  expect(s.sync().evictions).toEqual([]);
});
