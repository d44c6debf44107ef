// TestPIDPressure: PIDs running low raise PIDPressure; pods rank by priority, then by process
// count (most first); a soft threshold waits for its grace period, a hard one does not.

import { makePod, makePodStats } from '../../fixtures/pods.js';
import { DEFAULT_PRIORITY, HIGH_PRIORITY, LOW_PRIORITY, MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, rankedNames, signalsOf, softThreshold } from './support.js';

const podsToMake = [
  { name: 'high-priority-high-usage', priority: HIGH_PRIORITY, processCount: 900 },
  { name: 'default-priority-low-usage', priority: DEFAULT_PRIORITY, processCount: 100 },
  { name: 'default-priority-medium-usage', priority: DEFAULT_PRIORITY, processCount: 400 },
  { name: 'low-priority-high-usage', priority: LOW_PRIORITY, processCount: 600 },
  { name: 'low-priority-low-usage', priority: LOW_PRIORITY, processCount: 50 },
];
const PID_RANK = ['low-priority-high-usage', 'low-priority-low-usage', 'default-priority-medium-usage', 'default-priority-low-usage', 'high-priority-high-usage'];

test('pid pressure: soft then hard, rank by priority then process count', () => {
  const s = new Scenario(
    makeConfig({
      maxPodGracePeriodSeconds: 5,
      thresholds: [hardThreshold('pid.available', quantity('1200')), softThreshold('pid.available', quantity('1500'), 2 * MINUTE_MS)],
    }),
  );
  s.pods = podsToMake.map((p) => makePod({ name: p.name, priority: p.priority }));
  s.podStats = s.pods.map((pod, i) => makePodStats(pod, { processCount: podsToMake[i]!.processCount }));

  s.node = { pid: { maxpid: 5000, curproc: 3000 } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.observations.get('pid.available')).toMatchObject({ available: 2000n, capacity: 5000n });

  // Soft: 1400 available < 1500.
  s.step(MINUTE_MS);
  s.node = { pid: { maxpid: 5000, curproc: 3600 } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['PIDPressure']);
  expect(result.evictions).toEqual([]);

  s.step(2 * MINUTE_MS);
  result = s.sync();
  expect(rankedNames(result)).toEqual(PID_RANK);
  expect(result.ranking.map((r) => r.usage)).toEqual([600n, 50n, 400n, 100n, 900n]);
  expect(evictedNames(result)).toEqual(['low-priority-high-usage']);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(5);
  expect(result.evictions[0]!.message).toBe('The node was low on resource: pids. Threshold quantity: 1500, available: 1400. ');
  // PIDs are never attributed to containers; a pod with stats still gets the (empty) annotations.
  expect(result.evictions[0]!.annotations).toEqual({ offending_containers: '', offending_containers_usage: '', starved_resource: 'pids' });

  // Relief.
  s.step(20 * MINUTE_MS);
  s.node = { pid: { maxpid: 5000, curproc: 1000 } };
  result = s.sync();
  expect(result.nodeConditions).toEqual([]);

  // Hard: 1100 available < 1200, evicted at once with grace 1.
  s.step(MINUTE_MS);
  s.node = { pid: { maxpid: 5000, curproc: 3900 } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['PIDPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['pid.available']);
  expect(evictedNames(result)).toEqual(['low-priority-high-usage']);
  expect(result.evictions[0]!.gracePeriodSeconds).toBe(1);
  expect(result.evictions[0]!.message).toBe('The node was low on resource: pids. Threshold quantity: 1200, available: 1100. ');

  // Relief, then the transition period.
  s.step(MINUTE_MS);
  s.node = { pid: { maxpid: 5000, curproc: 1000 } };
  result = s.sync();
  expect(result.nodeConditions).toEqual(['PIDPressure']);
  expect(result.evictions).toEqual([]);
  s.step(4 * MINUTE_MS);
  expect(s.sync().nodeConditions).toEqual([]);
});
