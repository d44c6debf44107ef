// Degradation bookkeeping: every reason a stat is missing is collected for the observation that
// hit it (Observation.problems), remembered as the latest set (problems()), and logged once per
// distinct reason, so a node with an unreadable file logs one line, not one every ten seconds.

import type { Logger } from '../api/logger.js';

// Reasons carry pod names, so the remembered set grows with pod churn; past this size it is
// forgotten and a reason that persists is logged once more.
const MAX_REMEMBERED_REASONS = 10_000;

export class ProblemLog {
  private readonly logged = new Set<string>();
  private latest: readonly string[] = [];
  private current: string[] = [];
  private currentSet = new Set<string>();

  constructor(private readonly logger: Logger) {}

  /** Starts collecting the problems of one observation. */
  begin(): void {
    this.current = [];
    this.currentSet = new Set();
  }

  /** Records one reason (a short sentence); logs it the first time it is ever seen. */
  report(reason: string, fields?: Record<string, unknown>): void {
    if (this.currentSet.has(reason)) return;
    this.currentSet.add(reason);
    this.current.push(reason);
    if (this.logged.has(reason)) return;
    if (this.logged.size >= MAX_REMEMBERED_REASONS) this.logged.clear();
    this.logged.add(reason);
    this.logger.warn('Observation degraded', { reason, ...fields });
  }

  /** How many problems the observation has so far, for {@link rewind}. */
  mark(): number {
    return this.current.length;
  }

  /** Drops the problems reported since `mark` from the observation (they were logged all the same). */
  rewind(mark: number): void {
    this.current.length = mark;
    this.currentSet = new Set(this.current);
  }

  /** The observation's problems so far. */
  pending(): readonly string[] {
    return [...this.current];
  }

  /** Ends the observation: its problems become the latest set, and are returned. */
  end(): readonly string[] {
    this.latest = Object.freeze([...this.current]);
    return this.latest;
  }

  /** The problems of the latest completed observation. */
  problems(): readonly string[] {
    return this.latest;
  }
}
