import { Backoff, WATCH_BACKOFF, backoffDelayMs, retryWithBackoff } from '../../../src/api/backoff.js';
import { FakeClock } from '../../fakes/fake-clock.js';

const policy = { initialDelayMs: 100, maxDelayMs: 1_000, factor: 2, jitterRatio: 0.5 };

describe('backoffDelayMs doubles from the initial delay, caps, and jitters downwards', () => {
  const cases: { name: string; attempt: number; random: number; delayMs: number }[] = [
    { name: 'first-attempt-no-jitter', attempt: 0, random: 0, delayMs: 100 },
    { name: 'second-attempt-doubles', attempt: 1, random: 0, delayMs: 200 },
    { name: 'fourth-attempt', attempt: 3, random: 0, delayMs: 800 },
    { name: 'capped-at-the-maximum', attempt: 4, random: 0, delayMs: 1_000 },
    { name: 'far-attempt-stays-capped', attempt: 60, random: 0, delayMs: 1_000 },
    { name: 'full-jitter-halves', attempt: 1, random: 1, delayMs: 100 },
    { name: 'jitter-never-exceeds-the-cap', attempt: 10, random: 0.999, delayMs: 500 },
    { name: 'negative-attempt-is-the-first', attempt: -3, random: 0, delayMs: 100 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(backoffDelayMs(tc.attempt, policy, () => tc.random)).toBe(tc.delayMs);
    });
  }

  test('the watch policy reaches its 30 s cap and never goes past it', () => {
    const delays = Array.from({ length: 12 }, (_, attempt) => backoffDelayMs(attempt, WATCH_BACKOFF, () => 0));
    expect(delays.slice(0, 3)).toEqual([800, 1_600, 3_200]);
    expect(Math.max(...delays)).toBe(30_000);
    for (let attempt = 0; attempt < 40; attempt++) expect(backoffDelayMs(attempt, WATCH_BACKOFF)).toBeLessThanOrEqual(30_000);
  });
});

describe('Backoff', () => {
  test('grows with each delay and starts over after reset', () => {
    const backoff = new Backoff(policy, () => 0);
    expect([backoff.nextDelayMs(), backoff.nextDelayMs(), backoff.nextDelayMs()]).toEqual([100, 200, 400]);
    expect(backoff.attempts).toBe(3);
    backoff.reset();
    expect(backoff.nextDelayMs()).toBe(100);
  });
});

describe('retryWithBackoff', () => {
  test('retries while asked, sleeping with backoff on the clock, and returns the final result', async () => {
    const clock = new FakeClock(0);
    const attemptsAtMs: number[] = [];
    const results = ['conflict', 'conflict', 'done'];
    const done = retryWithBackoff(
      async (index) => {
        attemptsAtMs.push(clock.nowMs());
        return results[index] ?? 'done';
      },
      (result) => result === 'conflict',
      { clock, policy, maxAttempts: 5, random: () => 0 },
    );
    await clock.stepAsync(1_000);
    await expect(done).resolves.toBe('done');
    expect(attemptsAtMs).toEqual([0, 100, 300]);
  });

  test('stops after maxAttempts and returns the last result', async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    const done = retryWithBackoff(async () => ++calls, () => true, { clock, policy, maxAttempts: 3, random: () => 0 });
    await clock.stepAsync(5_000);
    await expect(done).resolves.toBe(3);
  });

  test('an aborted signal ends the retries at once', async () => {
    const clock = new FakeClock(0);
    const controller = new AbortController();
    let calls = 0;
    const done = retryWithBackoff(async () => ++calls, () => true, { clock, policy, maxAttempts: 10, signal: controller.signal });
    await clock.stepAsync(0);
    controller.abort();
    await expect(done).resolves.toBe(1);
  });
});
