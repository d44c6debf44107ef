// The replay's virtual clock: time is whatever the recording says. Timers (taint evictions)
// registered with it fire when the replay advances past their due time, each at its own time
// and in order, so a deletion due between two steps happens before the later step is processed.

import type { Clock } from '../api/clock.js';

interface Timer {
  readonly seq: number;
  readonly dueMs: number;
  readonly fn: () => void;
}

export class ReplayClock implements Clock {
  private currentMs: number;
  private timers: Timer[] = [];
  private seq = 0;

  constructor(startMs = 0) {
    this.currentMs = startMs;
  }

  nowMs(): number {
    return this.currentMs;
  }

  after(ms: number, fn: () => void): () => void {
    const timer: Timer = { seq: this.seq++, dueMs: this.currentMs + Math.max(0, ms), fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** A replay never waits: sleeping is advancing the virtual time by that much (for retries). */
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      this.after(ms, resolve);
    });
  }

  /** Fires every timer due at or before `targetMs`, in due order, then sets the time to `targetMs`. */
  advanceTo(targetMs: number): void {
    for (;;) {
      let next: Timer | undefined;
      for (const t of this.timers) {
        if (t.dueMs <= targetMs && (next === undefined || t.dueMs < next.dueMs || (t.dueMs === next.dueMs && t.seq < next.seq))) next = t;
      }
      if (next === undefined) break;
      const due = next;
      this.timers = this.timers.filter((t) => t !== due);
      this.currentMs = Math.max(this.currentMs, due.dueMs);
      due.fn();
    }
    this.currentMs = Math.max(this.currentMs, targetMs);
  }
}
