// The injected clock. Every component that waits or reads the time takes one, including the main
// loop's own sleep, so every scenario runs on a fake clock (test/fakes/fake-clock.ts).

export interface Clock {
  /** Milliseconds since the epoch. */
  nowMs(): number;
  /** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Runs `fn` after `ms`; returns a function that cancels it (a no-op once fired). */
  after(ms: number, fn: () => void): () => void;
}

// setTimeout holds at most a 32-bit signed millisecond delay (about 24.8 days); longer waits are
// chained in chunks so a long tolerationSeconds still fires at its time.
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** The real clock. Timers are unref'd so they never keep a stopping process alive. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  sleep(ms, signal) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = systemClock.after(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  },
  after(ms, fn) {
    const dueMs = Date.now() + Math.max(0, ms);
    let timer: NodeJS.Timeout | undefined;
    const arm = (): void => {
      const remainingMs = dueMs - Date.now();
      if (remainingMs <= 0) {
        timer = undefined;
        fn();
        return;
      }
      timer = setTimeout(arm, Math.min(remainingMs, MAX_TIMER_DELAY_MS));
      timer.unref();
    };
    timer = setTimeout(arm, Math.min(Math.max(0, ms), MAX_TIMER_DELAY_MS));
    timer.unref();
    return () => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
    };
  },
};
