// The PSI node conditions' state machine, pure: one condition per resource (memory, I/O of the pods'
// cgroup), stepped by each reading of the kernel's averages and an explicit time. It follows
// KEP-5394's rule for when pressure is high (avg10 and avg60 both at or over their thresholds) and
// adds hold durations on both edges, so neither a burst nor a lull flips a condition:
//
// - a reading is `over` when avg10 >= avg10Threshold and avg60 >= avg60Threshold; `under` when
//   avg10 < avg10Threshold and avg60 < avg60Threshold; `between` otherwise (KEP-5394's "trending
//   lower" while avg60 is still high, or a burst avg60 has not caught up with);
// - False (or Unknown) becomes True once every reading for `setHoldDurationMs` was over;
// - True becomes False once every reading for `clearHoldDurationMs` was under;
// - Unknown (the start, or after an unreadable file) becomes False once every reading for
//   `setHoldDurationMs` was not over: the pressure cannot have been high for the hold;
// - an unreadable file makes the condition Unknown and starts every hold over.
// A hold counts from the first reading of its run: runs of readings, not timers, so a pass that
// comes late never shortens a hold, and a clock that steps back counts as no time.

import type { PsiAverages, PsiLine, PsiResource } from '../api/psi.js';

export type PsiStatus = 'True' | 'False' | 'Unknown';
export type PsiVerdict = 'over' | 'under' | 'between';

export interface PsiThresholds {
  readonly avg10ThresholdPercent: number;
  readonly avg60ThresholdPercent: number;
}

export interface PsiTrackerSettings {
  readonly line: PsiLine;
  readonly setHoldDurationMs: number;
  readonly clearHoldDurationMs: number;
  /** The resources tracked, with their thresholds; a resource left out has no condition. */
  readonly resources: Partial<Readonly<Record<PsiResource, PsiThresholds>>>;
}

/** One resource's reading: its `line` averages, or why the file could not be read. */
export type PsiReading = { readonly ok: true; readonly averages: PsiAverages } | { readonly ok: false; readonly reason: string };

export interface PsiConditionState {
  readonly status: PsiStatus;
  /** The first of the current run of over readings, else null. */
  readonly overSinceMs: number | null;
  /** The first of the current run of readings that were not over, else null. */
  readonly notOverSinceMs: number | null;
  /** The first of the current run of under readings, else null. */
  readonly underSinceMs: number | null;
  /** When the status last changed (null: not since the start). */
  readonly transitionAtMs: number | null;
}

export type PsiTransition = 'set' | 'cleared' | 'unknown' | null;

/** One resource after a step: its state, what the reading was, and whether the status changed. */
export interface PsiConditionStep {
  readonly resource: PsiResource;
  readonly state: PsiConditionState;
  readonly reading: PsiReading;
  readonly verdict: PsiVerdict | null;
  readonly transition: PsiTransition;
}

export const UNKNOWN_STATE: PsiConditionState = Object.freeze({ status: 'Unknown', overSinceMs: null, notOverSinceMs: null, underSinceMs: null, transitionAtMs: null });

/** Over, under or between the two thresholds (KEP-5394 compares with >=). */
export function classifyPressure(averages: PsiAverages, thresholds: PsiThresholds): PsiVerdict {
  const high10 = averages.avg10Percent >= thresholds.avg10ThresholdPercent;
  const high60 = averages.avg60Percent >= thresholds.avg60ThresholdPercent;
  if (high10 && high60) return 'over';
  if (!high10 && !high60) return 'under';
  return 'between';
}

const heldFor = (sinceMs: number | null, nowMs: number, holdMs: number): boolean => sinceMs !== null && Math.max(0, nowMs - sinceMs) >= holdMs;

/** One condition stepped by one reading at `nowMs`. */
export function stepPsiCondition(state: PsiConditionState, reading: PsiReading, thresholds: PsiThresholds, settings: Pick<PsiTrackerSettings, 'setHoldDurationMs' | 'clearHoldDurationMs'>, nowMs: number): { state: PsiConditionState; verdict: PsiVerdict | null; transition: PsiTransition } {
  if (!reading.ok) {
    const transition = state.status === 'Unknown' ? null : 'unknown';
    return { state: { ...UNKNOWN_STATE, transitionAtMs: transition === null ? state.transitionAtMs : nowMs }, verdict: null, transition };
  }
  const verdict = classifyPressure(reading.averages, thresholds);
  const overSinceMs = verdict === 'over' ? (state.overSinceMs ?? nowMs) : null;
  const notOverSinceMs = verdict === 'over' ? null : (state.notOverSinceMs ?? nowMs);
  const underSinceMs = verdict === 'under' ? (state.underSinceMs ?? nowMs) : null;
  let status = state.status;
  if (status !== 'True' && heldFor(overSinceMs, nowMs, settings.setHoldDurationMs)) status = 'True';
  else if (status === 'True' && heldFor(underSinceMs, nowMs, settings.clearHoldDurationMs)) status = 'False';
  else if (status === 'Unknown' && heldFor(notOverSinceMs, nowMs, settings.setHoldDurationMs)) status = 'False';
  const transition: PsiTransition = status === state.status ? null : status === 'True' ? 'set' : state.status === 'True' ? 'cleared' : null;
  const transitionAtMs = status === state.status ? state.transitionAtMs : nowMs;
  return { state: { status, overSinceMs, notOverSinceMs, underSinceMs, transitionAtMs }, verdict, transition };
}

/**
 * The conditions of every tracked resource. A restart or a standby taking over adopts what the
 * Node shows (a True condition stays True until the pressure has been under for the clear hold);
 * a reload keeps each status and starts the holds over under the new thresholds.
 */
export class PsiConditionTracker {
  private settings: PsiTrackerSettings;
  private readonly states = new Map<PsiResource, PsiConditionState>();

  constructor(settings: PsiTrackerSettings) {
    this.settings = settings;
  }

  get tracked(): PsiResource[] {
    return (['memory', 'io'] as const).filter((r) => this.settings.resources[r] !== undefined);
  }

  thresholdsOf(resource: PsiResource): PsiThresholds | undefined {
    return this.settings.resources[resource];
  }

  get line(): PsiLine {
    return this.settings.line;
  }

  state(resource: PsiResource): PsiConditionState {
    return this.states.get(resource) ?? UNKNOWN_STATE;
  }

  /** Takes a status the Node already carries (at start, or on taking over from another agent) as this tracker's. */
  adopt(resource: PsiResource, status: PsiStatus, nowMs: number): void {
    if (this.states.has(resource) || status !== 'True') return;
    this.states.set(resource, { ...UNKNOWN_STATE, status, transitionAtMs: nowMs });
  }

  updateSettings(settings: PsiTrackerSettings): void {
    const changed = JSON.stringify(settings) !== JSON.stringify(this.settings);
    this.settings = settings;
    for (const [resource, state] of this.states) {
      if (settings.resources[resource] === undefined) this.states.delete(resource);
      else if (changed) this.states.set(resource, { ...state, overSinceMs: null, notOverSinceMs: null, underSinceMs: null });
    }
  }

  /** Steps every tracked resource with its reading (a resource without one reads as unreadable). */
  observe(readings: Partial<Readonly<Record<PsiResource, PsiReading>>>, nowMs: number): PsiConditionStep[] {
    return this.tracked.map((resource) => {
      const thresholds = this.settings.resources[resource] as PsiThresholds;
      const reading = readings[resource] ?? { ok: false, reason: 'not read' };
      const step = stepPsiCondition(this.state(resource), reading, thresholds, this.settings, nowMs);
      this.states.set(resource, step.state);
      return { resource, reading, ...step };
    });
  }
}
