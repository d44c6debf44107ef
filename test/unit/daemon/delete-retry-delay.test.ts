// The delay before a failed deletion is retried: doubling from 2 s to a minute, and shortened at
// random by up to half, so a fleet's agents that failed together (an API server restart, a storm's
// 429s) do not all come back in the same second.

import { deleteRetryDelayMs } from '../../../src/daemon/eviction-executor.js';

const cases: { name: string; attempts: number; random: number; delayMs: number }[] = [
  { name: 'after the first failure, no jitter', attempts: 1, random: 0, delayMs: 2_000 },
  { name: 'after the first failure, the most jitter', attempts: 1, random: 1, delayMs: 1_000 },
  { name: 'after the second', attempts: 2, random: 0, delayMs: 4_000 },
  { name: 'after the fourth, a quarter of the jitter', attempts: 4, random: 0.25, delayMs: 14_000 },
  { name: 'capped at a minute', attempts: 6, random: 0, delayMs: 60_000 },
  { name: 'capped at a minute however many attempts', attempts: 500, random: 0, delayMs: 60_000 },
  { name: 'a random value out of [0, 1] is clamped', attempts: 2, random: 7, delayMs: 2_000 },
];

for (const tc of cases) {
  test(tc.name, () => {
    expect(deleteRetryDelayMs(tc.attempts, () => tc.random)).toBe(tc.delayMs);
  });
}

test('with Math.random the delays spread over their range', () => {
  const delays = Array.from({ length: 200 }, () => deleteRetryDelayMs(3, Math.random));
  expect(Math.min(...delays)).toBeGreaterThanOrEqual(4_000);
  expect(Math.max(...delays)).toBeLessThanOrEqual(8_000);
  expect(new Set(delays).size).toBeGreaterThan(50);
});
