// TestAllocatableMemoryPressure: the kubepods cgroup (the `pods` system container) running low
// raises MemoryPressure and evicts by the memory rank, even with the node as a whole well off.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, rankedNames, signalsOf, messages } from './support.js';

test('allocatable memory pressure: evicts on the pods cgroup alone, then holds the condition', () => {
  // What the config parser produces from `memory.available: 1Gi` with enforceNodeAllocatable=[pods].
  const s = new Scenario(
    makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi')), hardThreshold('allocatableMemory.available', quantity('1Gi'))] }),
  );
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;

  s.node = { memory: { available: '4Gi', capacity: '16Gi' }, allocatable: { available: '2Gi', capacity: '12Gi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.observations.get('allocatableMemory.available')).toEqual({ available: 2n * 1024n ** 3n, capacity: 12n * 1024n ** 3n, timeMs: s.clock.nowMs() });

  // The pods cgroup drops under 1Gi while the node has 4Gi available.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '4Gi', capacity: '16Gi' }, allocatable: { available: '900Mi', capacity: '12Gi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['allocatableMemory.available']);
  expect(result.reclaim).toMatchObject({ resource: 'memory', threshold: { signal: 'allocatableMemory.available' } });
  expect(rankedNames(result)).toEqual(MEMORY_RANK);
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(1);
  expect(result.evictions[0]!.message).toBe(
    'The node was low on resource: memory. Threshold quantity: 1Gi, available: 900Mi. ' +
      'Container best-effort-low-priority was using 100Mi, request is 0, has larger consumption of memory. ',
  );

  // Relief: no eviction, the condition stays for the transition period.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '4Gi', capacity: '16Gi' }, allocatable: { available: '2Gi', capacity: '12Gi' } };
  result = s.sync();
  expect(result.evictions).toEqual([]);
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  s.step(4 * MINUTE_MS);
  expect(s.sync().nodeConditions).toEqual([]);
});

test('allocatable memory pressure: with both met, memory.available is acted on first', () => {
  const s = new Scenario(
    makeConfig({ thresholds: [hardThreshold('allocatableMemory.available', quantity('1Gi')), hardThreshold('memory.available', quantity('1Gi'))] }),
  );
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  s.node = { memory: { available: '800Mi' }, allocatable: { available: '900Mi' } };
  const result = s.sync();
  expect(result.reclaim?.threshold.signal).toBe('memory.available');
  expect(result.evictions[0]!.message).toContain('Threshold quantity: 1Gi, available: 800Mi. ');
});

test('allocatable memory pressure: no pods system container, no allocatable observation', () => {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('allocatableMemory.available', quantity('1Gi'))] }));
  s.node = { memory: { available: '100Mi' } };
  const result = s.sync();
  expect(result.observations.has('allocatableMemory.available')).toBe(false);
  expect(result.nodeConditions).toEqual([]);
  expect(messages(result)).toContain('no observation found for eviction signal allocatableMemory.available');
});
