// Progress and time left, printed as the benchmark goes (a full run takes a while). Each part
// declares an estimate of its duration up front; while a part runs, its own pace (time per
// completed step) replaces the estimate, and the later parts' estimates are added on.

import { fmtDuration } from './stats.js';

export interface PartPlan {
  readonly name: string;
  readonly estimatedMs: number;
}

export class Progress {
  private readonly startedMs = Date.now();
  private partIndex = -1;
  private partStartedMs = Date.now();
  private lastPrintMs = 0;

  constructor(
    private readonly plans: readonly PartPlan[],
    private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  ) {}

  startPart(name: string): void {
    this.partIndex = this.plans.findIndex((p) => p.name === name);
    this.partStartedMs = Date.now();
    this.lastPrintMs = 0;
    this.write(`\n== ${name} (${this.partIndex + 1}/${this.plans.length}), estimated ${fmtDuration(this.plans[this.partIndex]?.estimatedMs ?? 0)}; total elapsed ${fmtDuration(Date.now() - this.startedMs)}`);
  }

  /** Reports `done` of `total` steps of the current part; prints at most every 2 s unless `force`. */
  step(done: number, total: number, detail: string, force = false): void {
    const nowMs = Date.now();
    if (!force && nowMs - this.lastPrintMs < 2000 && done < total) return;
    this.lastPrintMs = nowMs;
    const elapsedPartMs = nowMs - this.partStartedMs;
    const partLeftMs = done > 0 ? (elapsedPartMs / done) * (total - done) : (this.plans[this.partIndex]?.estimatedMs ?? 0);
    const laterMs = this.plans.slice(this.partIndex + 1).reduce((sum, p) => sum + p.estimatedMs, 0);
    const pct = total > 0 ? ((100 * done) / total).toFixed(0) : '0';
    this.write(`  [${done}/${total} ${pct}%] ${detail} | elapsed ${fmtDuration(nowMs - this.startedMs)}, ETA ${fmtDuration(partLeftMs + laterMs)}`);
  }

  note(line: string): void {
    this.write(`  ${line}`);
  }
}
