// The cgroup v2 fast check: between passes, reads each watched cgroup's memory and reports every
// memory threshold whose met/unmet state changed, in either direction, as the memcg v1 threshold
// does on the kernel's side. Each check reads memory.current through a kept-open descriptor; only
// when the usage itself is past a crossing can the working set be, and only then is memory.stat
// read for the exact working set (src/notifier/cgroup-v2-memory.ts). It then schedules the next
// check after the time the worst-case allocation rate needs to reach the nearest crossing
// (fast-check-schedule.ts): every few milliseconds close to a threshold, seldom far from all of
// them, never with nothing to check against (a pass's new figures start it again). Reads are
// synchronous (cgroupfs never waits on a disk), so a check is one turn of the event loop and checks
// never overlap.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { errorMessage } from '../errors.js';
import type { CgroupMemoryReader, CgroupMemoryReading } from './cgroup-v2-memory.js';
import { distanceToNearestCrossingBytes, nextCheckDelayMs, type FastCheckTiming } from './fast-check-schedule.js';
import { workingSetMeetsThreshold, type MemorySignal, type MemoryThresholdFigures } from '../api/memory-thresholds.js';

export interface WorkingSetFastCheckOptions {
  readonly timing: FastCheckTiming;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The reader of a signal's cgroup (memory.available: the node cgroup; allocatable: kubepods). */
  readonly readerFor: (signal: MemorySignal) => CgroupMemoryReader;
  /** A threshold's met state changed (a threshold starts unmet). */
  readonly onCrossing: (description: string, met: boolean, workingSetBytes: bigint) => void;
  /** Logs a problem once while it persists; `null` says it is over. */
  readonly problem: (key: string, problem: string | null) => void;
}

/** What one check found. */
export interface FastCheckOutcome {
  /** When the next check is due. */
  readonly nextDelayMs: number;
  /** The signals whose memory.stat was read (their usage was past a crossing). */
  readonly statRead: readonly MemorySignal[];
}

export class WorkingSetFastCheck {
  private readonly options: WorkingSetFastCheckOptions;
  private figures: ReadonlyMap<string, MemoryThresholdFigures> = new Map();
  private readonly met = new Map<string, boolean>();
  /** Signals a kernel wake-up covers: they do not shorten the interval (see setKernelWatched). */
  private readonly kernelWatched = new Set<MemorySignal>();
  private cancelTimer: (() => void) | null = null;
  private dueAtMs: number | null = null;
  private started = false;
  private stopped = false;
  /** Checks run so far, and those that read memory.stat (for logs and tests). */
  checks = 0;
  statReads = 0;

  constructor(options: WorkingSetFastCheckOptions) {
    this.options = options;
  }

  /** Starts checking: the first check runs once there are figures to check against. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.scheduleIn(0);
  }

  /** Stops checking; no crossing is reported after this. Idempotent. */
  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    this.dueAtMs = null;
  }

  /** The figures to check against, by threshold description; a check follows at once. */
  setFigures(figures: ReadonlyMap<string, MemoryThresholdFigures>): void {
    this.figures = figures;
    for (const description of [...this.met.keys()]) if (!figures.has(description)) this.met.delete(description);
    // New figures can put a crossing nearer than the check already scheduled.
    if (this.started) this.scheduleIn(0);
  }

  /**
   * Whether a kernel wake-up watches `signal` (the kubepods memory.high wake-up): its distance then
   * no longer shortens the interval, and the longest interval bounds what the wake-up cannot see.
   */
  setKernelWatched(signal: MemorySignal, watched: boolean): void {
    if (watched) this.kernelWatched.add(signal);
    else this.kernelWatched.delete(signal);
  }

  /** Whether a threshold was met at the last check. */
  isMet(description: string): boolean {
    return this.met.get(description) ?? false;
  }

  /** Runs a check now (a kernel wake-up, a test) and reschedules the next from what it found. */
  checkNow(): FastCheckOutcome {
    const outcome = this.check();
    if (this.started && !this.stopped) this.scheduleIn(outcome.nextDelayMs);
    return outcome;
  }

  private check(): FastCheckOutcome {
    this.checks++;
    const bySignal = new Map<MemorySignal, MemoryThresholdFigures[]>();
    for (const figures of this.figures.values()) {
      const list = bySignal.get(figures.target.signal) ?? [];
      list.push(figures);
      bySignal.set(figures.target.signal, list);
    }
    let nearestBytes: bigint | null = null;
    const statRead: MemorySignal[] = [];
    for (const [signal, list] of bySignal) {
      const measured = this.measure(signal, list);
      if (measured === null) continue;
      if (measured.statRead) statRead.push(signal);
      this.report(list, measured.bytes, measured.exact);
      if (this.kernelWatched.has(signal)) continue;
      const distanceBytes = distanceToNearestCrossingBytes(list, measured.bytes);
      if (distanceBytes !== null && (nearestBytes === null || distanceBytes < nearestBytes)) nearestBytes = distanceBytes;
    }
    return { nextDelayMs: nextCheckDelayMs(nearestBytes, this.options.timing), statRead };
  }

  // The working set when it could meet a threshold (exact), else the usage, which bounds it.
  private measure(signal: MemorySignal, list: readonly MemoryThresholdFigures[]): { bytes: bigint; exact: boolean; statRead: boolean } | null {
    const reader = this.options.readerFor(signal);
    const key = `read ${signal}`;
    let usage: CgroupMemoryReading;
    try {
      usage = reader.readUsage();
    } catch (error) {
      this.options.problem(key, `cannot read the usage: ${errorMessage(error)}`);
      return null;
    }
    if (usage.workingSetBytes !== null) {
      this.options.problem(key, null);
      return { bytes: usage.workingSetBytes, exact: true, statRead: false };
    }
    // The working set is at most the usage: a usage that meets no threshold settles it.
    if (!list.some((figures) => workingSetMeetsThreshold(figures, usage.usageBytes))) {
      this.options.problem(key, null);
      return { bytes: usage.usageBytes, exact: false, statRead: false };
    }
    try {
      const workingSetBytes = reader.readWorkingSet(usage);
      this.statReads++;
      this.options.problem(key, null);
      return { bytes: workingSetBytes, exact: true, statRead: true };
    } catch (error) {
      this.options.problem(key, `cannot read the working set: ${errorMessage(error)}`);
      return null;
    }
  }

  private report(list: readonly MemoryThresholdFigures[], bytes: bigint, exact: boolean): void {
    for (const figures of list) {
      if (this.stopped) return;
      const description = figures.target.description;
      // Not exact means the usage meets none of them, so the working set meets none either.
      const met = exact && workingSetMeetsThreshold(figures, bytes);
      if (met === (this.met.get(description) ?? false)) continue;
      this.met.set(description, met);
      this.options.onCrossing(description, met, bytes);
    }
  }

  private scheduleIn(delayMs: number): void {
    if (this.stopped) return;
    // Nothing to check against: no wake-up until a pass brings figures (setFigures).
    if (this.figures.size === 0) {
      this.cancelTimer?.();
      this.cancelTimer = null;
      this.dueAtMs = null;
      return;
    }
    const dueAtMs = this.options.clock.nowMs() + delayMs;
    if (this.cancelTimer !== null && this.dueAtMs !== null && this.dueAtMs <= dueAtMs) return;
    this.cancelTimer?.();
    this.dueAtMs = dueAtMs;
    this.cancelTimer = this.options.clock.after(delayMs, () => {
      this.cancelTimer = null;
      this.dueAtMs = null;
      try {
        this.checkNow();
      } catch (error) {
        // A check that throws must not end the checking.
        this.options.logger.error('the memory fast check failed', { error: errorMessage(error) });
        this.scheduleIn(this.options.timing.maxIntervalMs);
      }
    });
  }
}
