// Pending evictions keyed by `namespace/name`, each firing at its own time: upstream's
// `TimedWorkerQueue` on the injected clock. The queue only times work; what the work does is the
// caller's. Timers go through `Clock.after`, which chains past setTimeout's 24.8-day limit.

import type { Clock } from '../api/clock.js';

/** The work run when an entry fires; a rejection is reported, never retried here. */
export type WorkFunc = (key: string, fireAtMs: number) => Promise<void> | void;

/** Receives what a work run threw or rejected with (upstream logs "timed worker failed"). */
export type WorkErrorHandler = (key: string, error: unknown) => void;

/** A scheduled entry as upstream's `TimedWorker` exposes it. */
export interface TimedWorker {
  readonly createdAtMs: number;
  readonly fireAtMs: number;
}

/** One entry of `pending()`. */
export interface PendingWork extends TimedWorker {
  readonly key: string;
  /** True for work that started at once and has not finished (upstream's nil worker). */
  readonly immediate: boolean;
}

interface Entry extends TimedWorker {
  /** Stops the timer; null for immediate work, which cannot be recalled once started. */
  readonly stopTimer: (() => void) | null;
  /** Identity, so a finished run removes its own entry and never a replacement under the same key. */
  readonly token: object;
}

export class TimedWorkerQueue {
  private readonly workers = new Map<string, Entry>();
  /** Immediate runs not yet started, recalled only by stop(). */
  private readonly immediateRuns = new Set<() => void>();
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly work: WorkFunc,
    private readonly onError: WorkErrorHandler = () => {},
  ) {}

  /**
   * Upstream `AddWork`: a no-op (answering false) when any entry exists for the key, including
   * immediate work still running. The delay is `fireAtMs - createdAtMs`, not measured against the
   * clock; a non-positive delay starts the work at once. "At once" means through the clock at
   * zero delay rather than inside this call, as upstream starts a goroutine: the caller's
   * decision pass finishes before any deletion starts, and the work is never re-entered from it.
   */
  addWork(key: string, createdAtMs: number, fireAtMs: number): boolean {
    if (this.stopped || this.workers.has(key)) return false;
    const token = {};
    const delayMs = fireAtMs - createdAtMs;
    if (delayMs <= 0) {
      this.workers.set(key, { createdAtMs, fireAtMs, stopTimer: null, token });
      const recall = this.clock.after(0, () => {
        this.immediateRuns.delete(recall);
        this.run(key, token, fireAtMs);
      });
      this.immediateRuns.add(recall);
      return true;
    }
    const stopTimer = this.clock.after(delayMs, () => this.run(key, token, fireAtMs));
    this.workers.set(key, { createdAtMs, fireAtMs, stopTimer, token });
    return true;
  }

  /**
   * Upstream `CancelWork`: removes the entry and answers true only when a timer was stopped.
   * Immediate work is removed silently (false) and still runs, as upstream's goroutine does. An
   * entry whose timer has fired and whose run is still in progress also answers true, as upstream.
   */
  cancelWork(key: string): boolean {
    const entry = this.workers.get(key);
    if (entry === undefined) return false;
    this.workers.delete(key);
    if (entry.stopTimer === null) return false;
    entry.stopTimer();
    return true;
  }

  /** Upstream `GetWorkerUnsafe`: null both when absent and while immediate work runs. */
  getWorker(key: string): TimedWorker | null {
    const entry = this.workers.get(key);
    if (entry === undefined || entry.stopTimer === null) return null;
    return { createdAtMs: entry.createdAtMs, fireAtMs: entry.fireAtMs };
  }

  /** Every entry, earliest fire time first (ties by key), for reports and tests. */
  pending(): PendingWork[] {
    return [...this.workers]
      .map(([key, entry]) => ({ key, createdAtMs: entry.createdAtMs, fireAtMs: entry.fireAtMs, immediate: entry.stopTimer === null }))
      .sort((a, b) => a.fireAtMs - b.fireAtMs || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** Stops every timer and every immediate run not yet started; later adds are refused. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const entry of this.workers.values()) entry.stopTimer?.();
    this.workers.clear();
    for (const recall of this.immediateRuns) recall();
    this.immediateRuns.clear();
  }

  private run(key: string, token: object, fireAtMs: number): void {
    if (this.stopped) return;
    // Current upstream removes the entry when the run ends, success or not (the older tombstone
    // blocked re-adding the same name, issue #107543); the token keeps a stale run from removing
    // an entry added after it was cancelled.
    const finish = (): void => {
      if (this.workers.get(key)?.token === token) this.workers.delete(key);
    };
    const fail = (error: unknown): void => {
      this.onError(key, error);
      finish();
    };
    let result: Promise<void> | void;
    try {
      result = this.work(key, fireAtMs);
    } catch (error) {
      fail(error);
      return;
    }
    if (isThenable(result)) result.then(finish, fail);
    else finish();
  }
}

function isThenable(value: unknown): value is PromiseLike<void> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
