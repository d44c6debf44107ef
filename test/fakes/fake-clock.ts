// A deterministic clock for scenario tests: time moves only when the test calls step(), and due
// timers fire in time order as it passes them.

import type { Clock } from '../../src/api/clock.js';

interface Timer {
  readonly id: number;
  readonly dueMs: number;
  readonly fn: () => void;
}

export class FakeClock implements Clock {
  private currentMs: number;
  private timers: Timer[] = [];
  private nextId = 0;

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  after(ms: number, fn: () => void): () => void {
    const timer = { id: this.nextId++, dueMs: this.currentMs + Math.max(0, ms), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const cancel = this.after(ms, resolve);
      signal?.addEventListener('abort', () => {
        cancel();
        resolve();
      }, { once: true });
    });
  }

  /** Moves time forward by `ms`, firing each due timer at its own time, in order. */
  step(ms: number): void {
    const targetMs = this.currentMs + ms;
    for (;;) {
      const due = this.timers.filter((t) => t.dueMs <= targetMs).sort((a, b) => a.dueMs - b.dueMs || a.id - b.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.currentMs = Math.max(this.currentMs, due.dueMs);
      due.fn();
    }
    this.currentMs = targetMs;
  }

  /** Like step(), letting promise callbacks run after each timer (for async loops). */
  async stepAsync(ms: number): Promise<void> {
    const targetMs = this.currentMs + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.timers.filter((t) => t.dueMs <= targetMs).sort((a, b) => a.dueMs - b.dueMs || a.id - b.id)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.currentMs = Math.max(this.currentMs, due.dueMs);
      due.fn();
    }
    this.currentMs = targetMs;
    await flushMicrotasks();
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}

/** Lets queued promise callbacks run (several turns, for chains of awaits). */
export async function flushMicrotasks(turns = 20): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}
