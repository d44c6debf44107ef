// Disabled thresholds. The config parser drops "0%" and "100%" outright; what reaches the engine
// as a zero percentage ("0.0%") or a synthesized threshold without an operator can never be met,
// and a configuration with no thresholds and no local-storage isolation does nothing at all.

import { memoryPressurePods } from './memory-pods.js';
import { Scenario, hardThreshold, makeConfig, percent, softThreshold, messages } from './support.js';

test('a zero percentage is never met, even with nothing available', () => {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('nodefs.available', percent(0)), softThreshold('nodefs.inodesFree', percent(0.0), 1000)] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  s.node = { nodefs: { available: 0, capacity: '100Gi', inodesFree: 0, inodes: 1_000_000 } };
  const result = s.sync();
  expect(result.observations.get('nodefs.available')?.available).toBe(0n);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(result.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);
});

test('a synthesized containerfs threshold without a source is never met', () => {
  // Only a soft nodefs threshold: the hard containerfs.available is synthesized from nothing.
  const s = new Scenario(makeConfig({ thresholds: [softThreshold('nodefs.available', percent(10), 60_000)] }));
  s.node = { nodefs: { available: '100Gi', capacity: '100Gi' }, containerfs: { available: 0, capacity: '100Gi' } };
  const result = s.sync();
  const synthesized = s.manager.thresholds.filter((t) => t.signal === 'containerfs.available');
  expect(synthesized.map((t) => [t.gracePeriodMs, t.operatorSet])).toEqual([
    [0, false],
    [60_000, undefined],
  ]);
  // The soft copy is met on the empty containerfs; the never-met hard one is not.
  expect(result.thresholdsMetIgnoringGrace.map((t) => [t.threshold.signal, t.threshold.gracePeriodMs])).toEqual([['containerfs.available', 60_000]]);
});

test('no thresholds and no local storage isolation: nothing to do', () => {
  const s = new Scenario(makeConfig({ thresholds: [], localStorageCapacityIsolation: false }));
  s.node = { memory: { available: 0 } };
  const result = s.sync();
  expect(result.observations.size).toBe(0);
  expect(result.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(messages(result)).toEqual([]);
  // Not even the layout is fitted.
  expect(s.manager.thresholds).toEqual([]);
});
