// A memory notification's shortcut kills before the full pass runs, so the pass after it may see the
// memory already freed. The pressure the kill answered must still be reported as the kubelet
// reports it after the pass that evicts: the condition through the transition period, then cleared.

import { makeSummary, MINUTE_MS, Scenario, hardThreshold, makeConfig, quantity } from './support.js';
import { memoryPressurePods } from './memory-pods.js';

function newScenario(): Scenario {
  const scenario = new Scenario(makeConfig({ pressureTransitionPeriodMs: 5 * MINUTE_MS, thresholds: [hardThreshold('memory.available', quantity('1Gi'))] }));
  const { pods, podStats } = memoryPressurePods();
  scenario.pods = pods;
  scenario.podStats = podStats;
  return scenario;
}

test('the pressure a shortcut kill answered is reported through the transition period, then cleared', () => {
  const s = newScenario();
  s.node = { memory: { available: '2Gi' } };
  expect(s.sync().nodeConditions).toEqual([]);

  // The notification: 500Mi available on fresh figures; the shortcut acts and commits the pressure.
  s.step(1000);
  const pressure = s.manager.hardMemoryPressure(makeSummary({ memory: { available: '500Mi' } }, s.podStats, s.clock.nowMs()));
  expect(pressure).not.toBeNull();
  if (pressure === null) return;
  s.manager.commitHardMemoryPressure(pressure, s.clock.nowMs());
  expect(s.manager.nodeConditions).toEqual(['MemoryPressure']);

  // The full pass right after the kill sees the memory freed: the condition stays, nothing more is evicted.
  s.step(10);
  s.node = { memory: { available: '3Gi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.evictions).toEqual([]);

  // Strictly within the transition period it stays; once it has passed it is cleared.
  s.step(5 * MINUTE_MS - 11);
  expect(s.sync().nodeConditions).toEqual(['MemoryPressure']);
  s.step(1);
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);
});

test('without the commit (the shortcut not acting) a pass that sees no pressure reports none', () => {
  const s = newScenario();
  s.node = { memory: { available: '3Gi' } };
  expect(s.manager.hardMemoryPressure(makeSummary({ memory: { available: '3Gi' } }, s.podStats, s.clock.nowMs()))).toBeNull();
  expect(s.sync().nodeConditions).toEqual([]);
});
