// When the next grace period ends: every pass reports the moment the first soft threshold met and
// not yet acted on runs out, so the loop can wake a pass exactly then (beyond the kubelet, whose
// next pass comes with its periodic loop). The engine stays pure: it only reports the time.

import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { Scenario, evictedNames, hardThreshold, makeConfig, quantity, softThreshold } from './support.js';

const SECOND_MS = 1000;

function newScenario(): Scenario {
  const s = new Scenario(
    makeConfig({
      thresholds: [
        hardThreshold('memory.available', quantity('500Mi')),
        softThreshold('memory.available', quantity('2Gi'), 30 * SECOND_MS),
        softThreshold('memory.available', quantity('1Gi'), 10 * SECOND_MS),
      ],
    }),
  );
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

test('the end of the first grace period still running: from when each threshold was first met', () => {
  const s = newScenario();
  s.node = { memory: { available: '3Gi', capacity: '10Gi' } };
  expect(s.sync().nextGracePeriodEndMs).toBeNull();

  // Below 2Gi at t0: its 30 s grace period ends at t0 + 30 s.
  const t0 = s.clock.nowMs();
  s.node = { memory: { available: '1500Mi', capacity: '10Gi' } };
  expect(s.sync().nextGracePeriodEndMs).toBe(t0 + 30 * SECOND_MS);

  // Below 1Gi 5 s later: its 10 s grace period ends first, at t0 + 15 s.
  s.step(5 * SECOND_MS);
  s.node = { memory: { available: '900Mi', capacity: '10Gi' } };
  let result = s.sync();
  expect(result.nextGracePeriodEndMs).toBe(t0 + 15 * SECOND_MS);
  expect(evictedNames(result)).toEqual([]);

  // A pass exactly then acts on the 1Gi threshold, and reports the 2Gi one's end next.
  s.step(10 * SECOND_MS);
  result = s.sync();
  expect(evictedNames(result)).toEqual([MEMORY_RANK[0]]);
  expect(result.nextGracePeriodEndMs).toBe(t0 + 30 * SECOND_MS);

  // Once every grace period has run out, there is none to wait for.
  s.step(15 * SECOND_MS);
  result = s.sync();
  expect(result.nextGracePeriodEndMs).toBeNull();
});

test('a hard threshold has no grace period to wait for; pressure gone means none either', () => {
  const s = newScenario();
  s.node = { memory: { available: '400Mi', capacity: '10Gi' } };
  const t0 = s.clock.nowMs();
  const result = s.sync();
  expect(evictedNames(result)).toHaveLength(1);
  // The two soft thresholds are met too: the 1Gi one's 10 s run out first.
  expect(result.nextGracePeriodEndMs).toBe(t0 + 10 * SECOND_MS);

  s.step(SECOND_MS);
  s.node = { memory: { available: '3Gi', capacity: '10Gi' } };
  expect(s.sync().nextGracePeriodEndMs).toBeNull();
});

test('a pass without a summary keeps the grace periods running, and reports their end', () => {
  const s = newScenario();
  const t0 = s.clock.nowMs();
  s.node = { memory: { available: '1500Mi', capacity: '10Gi' } };
  s.sync();
  s.step(SECOND_MS);
  s.summaryUnavailable = true;
  expect(s.sync().nextGracePeriodEndMs).toBe(t0 + 30 * SECOND_MS);
});
