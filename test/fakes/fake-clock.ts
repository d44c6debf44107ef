// A deterministic clock for scenario tests: the product's ManualClock (the replay's), stepped by
// the test. `stepAsync` lets promise callbacks run after each timer, for async loops.

import { ManualClock } from '../../src/api/manual-clock.js';

export class FakeClock extends ManualClock {
  constructor(startMs = Date.UTC(2026, 0, 1)) {
    super(startMs);
  }

  /** Moves time forward by `ms`, firing each due timer at its own time, in order. */
  step(ms: number): void {
    this.advanceTo(this.nowMs() + ms);
  }

  /** Like step(), letting promise callbacks run after each timer (for async loops). */
  async stepAsync(ms: number): Promise<void> {
    const targetMs = this.nowMs() + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.nextDue(targetMs);
      if (due === undefined) break;
      this.fire(due);
    }
    this.advanceTo(targetMs);
    await flushMicrotasks();
  }
}

/** Lets queued promise callbacks run (several turns, for chains of awaits). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
