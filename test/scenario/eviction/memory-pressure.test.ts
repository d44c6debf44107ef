// TestMemoryPressure, as the kubelet scripts it: a soft threshold raises MemoryPressure at once
// and evicts only once its grace period has elapsed (with the soft grace period); a hard threshold
// evicts at once with grace 1; when the pressure clears the condition stays until the transition
// period has passed since it was last observed, strictly.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, rankedNames, signalsOf, softThreshold } from './support.js';

function newScenario(): Scenario {
  const scenario = new Scenario(
    makeConfig({
      maxPodGracePeriodSeconds: 5,
      pressureTransitionPeriodMs: 5 * MINUTE_MS,
      thresholds: [hardThreshold('memory.available', quantity('1Gi')), softThreshold('memory.available', quantity('2Gi'), 2 * MINUTE_MS)],
    }),
  );
  const { pods, podStats } = memoryPressurePods();
  scenario.pods = pods;
  scenario.podStats = podStats;
  return scenario;
}

test('memory pressure: soft threshold with grace, then hard, then the transition period', () => {
  const s = newScenario();

  // No pressure with 2Gi available (equality with the soft 2Gi threshold does not trigger).
  s.node = { memory: { available: '2Gi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(result.reclaim).toBeNull();

  // Induce soft threshold: the condition is raised at once, nothing is evicted during the grace period.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '1500Mi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(s.manager.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMetIgnoringGrace)).toEqual(['memory.available(soft)']);
  expect(result.thresholdsMetIgnoringGrace[0]).toMatchObject({ quantity: '2Gi', available: '1500Mi' });
  expect(result.thresholdsMet).toEqual([]);
  expect(result.evictions).toEqual([]);

  // One millisecond short of the 2 minute grace period: still nothing.
  s.step(2 * MINUTE_MS - 1);
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.evictions).toEqual([]);

  // The grace period has elapsed (>=): the right pod goes, with the soft grace period.
  s.step(1);
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available(soft)']);
  expect(result.reclaim?.resource).toBe('memory');
  expect(result.reclaim?.threshold.gracePeriodMs).toBe(2 * MINUTE_MS);
  expect(rankedNames(result)).toEqual(MEMORY_RANK);
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  const soft = result.evictions[0]!;
  expect(soft.gracePeriodSeconds).toBe(5);
  expect(soft.reason).toEqual({ kind: 'threshold', signal: 'memory.available', hard: false });
  const softMessage =
    'The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. ' +
    'Container best-effort-low-priority was using 100Mi, request is 0, has larger consumption of memory. ';
  expect(soft.message).toBe(softMessage);
  expect(soft.annotations).toEqual({ offending_containers: 'best-effort-low-priority', offending_containers_usage: '100Mi', starved_resource: 'memory' });
  expect(soft.condition).toEqual({ type: 'DisruptionTarget', reason: 'TerminationByKubelet', message: softMessage });
  // The rest of the rank, in order, each with its own message, in case the first is refused.
  expect(result.fallbacks.map((f) => f.pod.metadata.name)).toEqual(MEMORY_RANK.slice(1));
  expect(result.fallbacks[0]!.message).toBe(
    'The node was low on resource: memory. Threshold quantity: 2Gi, available: 1500Mi. ' +
      'Container burstable-above-requests was using 400Mi, request is 100Mi, has larger consumption of memory. ',
  );
  expect(result.fallbacks.every((f) => f.gracePeriodSeconds === 5)).toBe(true);

  // Remove memory pressure; 20 minutes later there is none.
  s.step(20 * MINUTE_MS);
  s.node = { memory: { available: '3Gi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);

  // Induce memory pressure past the hard threshold: immediate eviction with grace 1.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '500Mi' } };
  result = s.sync();
  const hardAt = s.clock.nowMs();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  // Both are met; only the hard one's grace has elapsed.
  expect(signalsOf(result.thresholdsMetIgnoringGrace)).toEqual(['memory.available', 'memory.available(soft)']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available']);
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(1);
  expect(result.evictions[0]!.reason).toEqual({ kind: 'threshold', signal: 'memory.available', hard: true });
  expect(result.evictions[0]!.message).toBe(
    'The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ' +
      'Container best-effort-low-priority was using 100Mi, request is 0, has larger consumption of memory. ',
  );

  // Reduce memory pressure: the condition stays during the transition period, nothing is evicted.
  s.step(MINUTE_MS);
  s.node = { memory: { available: '2Gi' } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);

  // One millisecond before the 5 minute transition period (from the last pass that saw pressure) ends.
  s.step(hardAt + 5 * MINUTE_MS - 1 - s.clock.nowMs());
  result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);

  // Exactly the transition period: the condition clears (strict <).
  s.step(1);
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(s.manager.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);
});

test('memory pressure: a soft eviction never asks for more than the pod grace period', () => {
  const s = newScenario();
  s.pods[4]!.spec.terminationGracePeriodSeconds = 3;
  s.node = { memory: { available: '1500Mi' } };
  s.sync();
  s.step(2 * MINUTE_MS);
  const result = s.sync();
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(3);
  // The fallbacks keep the configured maximum.
  expect(result.fallbacks[0]!.gracePeriodSeconds).toBe(5);
});
