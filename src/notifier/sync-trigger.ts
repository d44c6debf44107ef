// Coalesces wake-ups into synchronize runs: at most one run at a time, and every trigger that
// arrives while one runs collapses into exactly one more run after it. A burst of threshold events
// (both directions, several thresholds, PSI plus the fast check) therefore costs at most one extra
// pass, and no event is lost: a pass that starts after an event sees the memory after it.

export interface SyncTrigger {
  /** Asks for a run; `reason` is handed to the run that serves it. */
  trigger(reason: string): void;
  /** Resolves once no run is in progress and none is pending. */
  idle(): Promise<void>;
}

/**
 * `run` receives the reasons it serves, in arrival order. It should handle its own errors; one that
 * escapes goes to `onError` and later triggers still run.
 */
export function createSyncTrigger(
  run: (reasons: readonly string[]) => Promise<void>,
  onError: (error: unknown) => void = () => {},
): SyncTrigger {
  let running = false;
  // Reasons for the next run; null when no run is pending.
  let pending: string[] | null = null;
  let idleWaiters: (() => void)[] = [];

  const settleIdle = (): void => {
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const resolve of waiters) resolve();
  };

  const runPending = async (): Promise<void> => {
    while (pending !== null) {
      const reasons = pending;
      pending = null;
      try {
        await run(reasons);
      } catch (error) {
        try {
          onError(error);
        } catch {
          // An error handler that throws must not stop the runs.
        }
      }
    }
    running = false;
    settleIdle();
  };

  return {
    trigger(reason) {
      if (pending !== null) {
        pending.push(reason);
        return;
      }
      pending = [reason];
      if (running) return;
      running = true;
      // Started on a microtask, so triggers in the same turn share the first run.
      queueMicrotask(() => void runPending());
    },
    idle() {
      if (!running) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
  };
}
