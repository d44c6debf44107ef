// The manager's state across passes and reloads: a pass without a summary changes nothing, and
// `updateConfig` keeps the state of thresholds that still exist (when first met, min-reclaim
// memory) while conditions and their last-seen times carry over whole.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, softThreshold, messages } from './support.js';

function newScenario(thresholds = [softThreshold('memory.available', quantity('2Gi'), 2 * MINUTE_MS)]): Scenario {
  const s = new Scenario(makeConfig({ thresholds }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

test('hot reload: an unchanged threshold keeps its grace timer', () => {
  const s = newScenario();
  s.node = { memory: { available: '1500Mi' } };
  s.sync();
  s.step(MINUTE_MS);
  // Same soft threshold, plus a new hard one that is not met.
  s.manager.updateConfig(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi')), softThreshold('memory.available', quantity('2Gi'), 2 * MINUTE_MS)] }));
  expect(s.sync().evictions).toEqual([]);
  s.step(MINUTE_MS);
  // Two minutes after it was first met, before the reload.
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
});

test('hot reload: a changed grace period is a new threshold, whose timer starts over', () => {
  const s = newScenario();
  s.node = { memory: { available: '1500Mi' } };
  s.sync();
  s.step(MINUTE_MS);
  s.manager.updateConfig(makeConfig({ thresholds: [softThreshold('memory.available', quantity('2Gi'), 90_000)] }));
  expect(s.sync().evictions).toEqual([]);
  s.step(MINUTE_MS);
  // 2 minutes since first met, but only 1 minute since the new threshold was.
  expect(s.sync().evictions).toEqual([]);
  s.step(30_000);
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
});

test('hot reload: a new min-reclaim applies to the threshold already being reclaimed', () => {
  const s = newScenario([hardThreshold('memory.available', quantity('1Gi'), quantity('500Mi'))]);
  s.node = { memory: { available: '500Mi' } };
  expect(evictedNames(s.sync())).toEqual([MEMORY_RANK[0]]);
  s.manager.updateConfig(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'), quantity('100Mi'))] }));
  s.step(MINUTE_MS);
  // 1.2Gi: above 1Gi + 100Mi, so resolved (the old 500Mi would have evicted again).
  s.node = { memory: { available: '1.2Gi' } };
  const result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);
});

test('hot reload: a removed threshold is forgotten, its condition runs out its transition period', () => {
  const s = newScenario([hardThreshold('memory.available', quantity('1Gi'), quantity('500Mi'))]);
  s.node = { memory: { available: '500Mi' } };
  s.sync();
  s.manager.updateConfig(makeConfig({ thresholds: [hardThreshold('pid.available', quantity('100'))], pressureTransitionPeriodMs: 2 * MINUTE_MS }));
  expect(s.manager.nodeConditions).toEqual(['MemoryPressure']);
  s.step(MINUTE_MS);
  let result = s.sync();
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  // The new, shorter transition period counts from the last pass that saw the pressure.
  s.step(MINUTE_MS);
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);
});

test('no summary: nothing decided, nothing forgotten', () => {
  const s = newScenario([hardThreshold('memory.available', quantity('1Gi'))]);
  s.node = { memory: { available: '500Mi' } };
  expect(s.sync().nodeConditions).toEqual(['MemoryPressure']);
  // Well past the transition period, but no pass has run: the conditions stand as committed.
  s.step(10 * MINUTE_MS);
  s.summaryUnavailable = true;
  const result = s.sync();
  expect(result).toEqual({
    nowMs: s.clock.nowMs(),
    observations: new Map(),
    nodeConditions: ['MemoryPressure'],
    thresholdsMet: [],
    thresholdsMetIgnoringGrace: [],
    reclaim: null,
    ranking: [],
    evictions: [],
    fallbacks: [],
    notes: [],
    nextGracePeriodEndMs: null,
  });
  expect(s.manager.nodeConditions).toEqual(['MemoryPressure']);
});

test('missing observations are noted every pass', () => {
  const s = newScenario([hardThreshold('memory.available', quantity('1Gi')), hardThreshold('imagefs.available', quantity('1Gi'))]);
  s.node = { memory: { available: '4Gi' } };
  expect(messages(s.sync())).toEqual(['no observation found for eviction signal imagefs.available']);
  s.step(10_000);
  expect(messages(s.sync())).toEqual(['no observation found for eviction signal imagefs.available']);
});
