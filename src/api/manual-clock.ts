// A clock that moves only when its owner says so: the replay sets it to each recorded step's time,
// and tests step it. Timers fire when it is moved past their due time, each at its own time and in
// due order (ties in the order they were set), so a timer due between two steps runs before the
// later one is processed. Nothing here waits for real.

import type { Clock } from './clock.js';

export interface ManualTimer {
  readonly seq: number;
  readonly dueMs: number;
  readonly fn: () => void;
}

export class ManualClock implements Clock {
  private currentMs: number;
  private timers: ManualTimer[] = [];
  private seq = 0;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: ManualTimer = { seq: this.seq++, dueMs: this.currentMs + Math.max(0, ms), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Resolves when the clock is moved `ms` on (a replay's retry waits cost no real time), or at once on abort. */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      const cancel = this.after(ms, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Fires every timer due at or before `targetMs`, in due order, then sets the time to `targetMs` (never back). */
  advanceTo(targetMs: number): void {
    for (let due = this.nextDue(targetMs); due !== undefined; due = this.nextDue(targetMs)) this.fire(due);
    this.currentMs = Math.max(this.currentMs, targetMs);
  }

  /** Timers set and not yet fired or cancelled. */
  pendingTimers(): number {
    return this.timers.length;
  }

  /** The first timer due at or before `targetMs`, if any. */
  protected nextDue(targetMs: number): ManualTimer | undefined {
    let next: ManualTimer | undefined;
    for (const t of this.timers) {
      if (t.dueMs <= targetMs && (next === undefined || t.dueMs < next.dueMs || (t.dueMs === next.dueMs && t.seq < next.seq))) next = t;
    }
    return next;
  }

  /** Takes the timer out, moves the time to its due time, and runs it. */
  protected fire(timer: ManualTimer): void {
    this.timers = this.timers.filter((t) => t !== timer);
    this.currentMs = Math.max(this.currentMs, timer.dueMs);
    timer.fn();
  }
}
