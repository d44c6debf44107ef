// The PSI conditions' hysteresis, pure: the over/under/between rule as a table (KEP-5394's >= on
// both averages), then scenario scripts on a fake time: set only after the hold, a dip that starts
// the hold over, clear only after the clear hold, flapping input that never flips the condition,
// an unreadable file, a restart that adopts the Node's True, a reload, a clock that steps back.

import type { PsiAverages } from '../../../src/api/psi.js';
import { classifyPressure, PsiConditionTracker, stepPsiCondition, UNKNOWN_STATE, type PsiReading, type PsiStatus, type PsiTrackerSettings } from '../../../src/pressure/psi-conditions.js';

const averages = (avg10Percent: number, avg60Percent: number): PsiAverages => ({ avg10Percent, avg60Percent, avg300Percent: 0, totalUs: 0n });
const read = (avg10: number, avg60: number): PsiReading => ({ ok: true, averages: averages(avg10, avg60) });
const unreadable: PsiReading = { ok: false, reason: 'cannot read /sys/fs/cgroup/kubepods/memory.pressure: ENOENT' };

const SETTINGS: PsiTrackerSettings = {
  line: 'full',
  setHoldDurationMs: 10_000,
  clearHoldDurationMs: 30_000,
  resources: { memory: { avg10ThresholdPercent: 10, avg60ThresholdPercent: 5 } },
};

describe('classifyPressure', () => {
  const thresholds = { avg10ThresholdPercent: 10, avg60ThresholdPercent: 5 };
  test.each([
    ['both at the thresholds: over (>=, as KEP-5394)', 10, 5, 'over'],
    ['both over', 40, 20, 'over'],
    ['avg10 just under', 9.99, 20, 'between'],
    ['avg60 just under (a burst avg60 has not caught up with)', 50, 4.99, 'between'],
    ['avg60 still high, avg10 low (KEP-5394\'s "trending lower")', 1, 8, 'between'],
    ['both under', 9.99, 4.99, 'under'],
    ['idle', 0, 0, 'under'],
  ])('%s', (_name, avg10, avg60, verdict) => {
    expect(classifyPressure(averages(avg10, avg60), thresholds)).toBe(verdict);
  });
});

describe('stepPsiCondition', () => {
  const thresholds = { avg10ThresholdPercent: 10, avg60ThresholdPercent: 5 };
  const holds = { setHoldDurationMs: 0, clearHoldDurationMs: 0 };
  test.each<[string, PsiStatus, PsiReading, PsiStatus, string | null]>([
    ['no hold: False to True on one over reading', 'False', read(20, 10), 'True', 'set'],
    ['no hold: True to False on one under reading', 'True', read(1, 1), 'False', 'cleared'],
    ['between keeps True', 'True', read(1, 10), 'True', null],
    ['between keeps False', 'False', read(20, 1), 'False', null],
    ['Unknown to False on a reading that is not over', 'Unknown', read(20, 1), 'False', null],
    ['Unknown to True on an over reading', 'Unknown', read(20, 10), 'True', 'set'],
    ['unreadable makes True Unknown', 'True', unreadable, 'Unknown', 'unknown'],
    ['unreadable keeps Unknown, with no transition', 'Unknown', unreadable, 'Unknown', null],
  ])('%s', (_name, from, reading, to, transition) => {
    const step = stepPsiCondition({ ...UNKNOWN_STATE, status: from }, reading, thresholds, holds, 1000);
    expect([step.state.status, step.transition]).toEqual([to, transition]);
  });
});

// Steps `tracker` through `script`: [seconds since start, avg10, avg60] (or 'x' for unreadable); returns the status after each.
function run(tracker: PsiConditionTracker, script: readonly (readonly [number, number, number] | readonly [number, 'x'])[], startMs = 0): string[] {
  return script.map((entry) => {
    const [seconds] = entry;
    const reading = entry[1] === 'x' ? unreadable : read(entry[1], entry[2] as number);
    const [step] = tracker.observe({ memory: reading }, startMs + seconds * 1000);
    return `${seconds}s:${step?.state.status}${step?.transition === null ? '' : `(${step?.transition})`}`;
  });
}

describe('PsiConditionTracker scenarios (fake time, one reading every 2 s)', () => {
  test('start: Unknown until the set hold has passed either way; over for the hold sets it, not a reading before', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    expect(run(tracker, [[0, 20, 8], [2, 20, 8], [8, 20, 8], [9.998, 20, 8], [10, 20, 8], [12, 20, 8]])).toEqual(['0s:Unknown', '2s:Unknown', '8s:Unknown', '9.998s:Unknown', '10s:True(set)', '12s:True']);
  });

  test('start on a quiet node: False once the set hold has passed with nothing over', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    expect(run(tracker, [[0, 0, 0], [4, 20, 1], [10, 0, 0]])).toEqual(['0s:Unknown', '4s:Unknown', '10s:False']);
  });

  test('a dip below either threshold starts the set hold over', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    expect(run(tracker, [[0, 0, 0], [10, 0, 0], [12, 30, 9], [18, 30, 9], [20, 9, 9], [22, 30, 9], [30, 30, 9], [32, 30, 9]])).toEqual([
      '0s:Unknown',
      '10s:False',
      '12s:False',
      '18s:False',
      '20s:False',
      '22s:False',
      '30s:False',
      '32s:True(set)',
    ]);
  });

  test('clear: only after every reading for the clear hold was under both; the "trending lower" band holds it', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    const script: [number, number, number][] = [[0, 30, 9], [10, 30, 9], [12, 2, 8], [40, 2, 6], [50, 1, 4], [60, 1, 3], [79.998, 1, 3], [80, 1, 3]];
    expect(run(tracker, script)).toEqual(['0s:Unknown', '10s:True(set)', '12s:True', '40s:True', '50s:True', '60s:True', '79.998s:True', '80s:False(cleared)']);
  });

  test('flapping input around both thresholds never flips the condition either way', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    const quiet: [number, number, number][] = [[0, 0, 0], [10, 0, 0]];
    // Over for 6 s, under for 6 s, for two minutes: never over for 10 s.
    const flaps: [number, number, number][] = Array.from({ length: 60 }, (_, i) => [12 + 2 * i, Math.floor(i / 3) % 2 === 0 ? 40 : 1, Math.floor(i / 3) % 2 === 0 ? 9 : 1]);
    const statuses = run(tracker, [...quiet, ...flaps]);
    expect(statuses.slice(1).every((s) => s.endsWith(':False'))).toBe(true);
    // And once set, flapping the other way (never under for 30 s) never clears it.
    run(tracker, Array.from({ length: 6 }, (_, i) => [140 + 2 * i, 40, 9] as const));
    expect(tracker.state('memory').status).toBe('True');
    const back = run(tracker, Array.from({ length: 60 }, (_, i) => [152 + 2 * i, Math.floor(i / 7) % 2 === 0 ? 1 : 40, Math.floor(i / 7) % 2 === 0 ? 1 : 9] as const));
    expect(back.every((s) => s.endsWith(':True'))).toBe(true);
  });

  test('an unreadable file makes the condition Unknown and starts every hold over', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    expect(run(tracker, [[0, 30, 9], [10, 30, 9], [12, 'x'], [14, 30, 9], [22, 30, 9], [24, 30, 9]])).toEqual(['0s:Unknown', '10s:True(set)', '12s:Unknown(unknown)', '14s:Unknown', '22s:Unknown', '24s:True(set)']);
  });

  test('restart: a True the Node shows is adopted, and clears only after the clear hold under', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    tracker.adopt('memory', 'True', 0);
    expect(run(tracker, [[0, 1, 1], [20, 1, 1], [29.998, 1, 1], [30, 1, 1]])).toEqual(['0s:True', '20s:True', '29.998s:True', '30s:False(cleared)']);
  });

  test('restart: a False or Unknown the Node shows is not adopted (the agent judges afresh)', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    tracker.adopt('memory', 'False', 0);
    expect(tracker.state('memory').status).toBe('Unknown');
  });

  test('reload: the status is kept and the holds start over under the new thresholds', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    run(tracker, [[0, 30, 9], [10, 30, 9], [12, 1, 1], [40, 1, 1]]);
    expect(tracker.state('memory').status).toBe('True');
    tracker.updateSettings({ ...SETTINGS, resources: { memory: { avg10ThresholdPercent: 50, avg60ThresholdPercent: 40 } } });
    // 28 s under already, but the hold starts over at the reload.
    expect(run(tracker, [[42, 1, 1], [70, 1, 1], [72, 1, 1]])).toEqual(['42s:True', '70s:True', '72s:False(cleared)']);
    // Under the new thresholds, 30 / 9 is not over.
    expect(run(tracker, [[80, 30, 9], [100, 30, 9]])).toEqual(['80s:False', '100s:False']);
  });

  test('reload: a resource turned off is no longer tracked, and comes back Unknown', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    run(tracker, [[0, 30, 9], [10, 30, 9]]);
    tracker.updateSettings({ ...SETTINGS, resources: {} });
    expect(tracker.tracked).toEqual([]);
    expect(tracker.observe({ memory: read(30, 9) }, 12_000)).toEqual([]);
    tracker.updateSettings(SETTINGS);
    expect(tracker.state('memory').status).toBe('Unknown');
  });

  test('a clock that steps back counts as no time: no hold is shortened', () => {
    const tracker = new PsiConditionTracker(SETTINGS);
    expect(run(tracker, [[100, 30, 9], [50, 30, 9], [108, 30, 9], [110, 30, 9]])).toEqual(['100s:Unknown', '50s:Unknown', '108s:Unknown', '110s:True(set)']);
  });

  test('the two resources are independent', () => {
    const tracker = new PsiConditionTracker({ ...SETTINGS, resources: { memory: { avg10ThresholdPercent: 10, avg60ThresholdPercent: 5 }, io: { avg10ThresholdPercent: 20, avg60ThresholdPercent: 20 } } });
    tracker.observe({ memory: read(30, 9), io: read(30, 9) }, 0);
    const steps = tracker.observe({ memory: read(30, 9), io: read(30, 9) }, 10_000);
    expect(steps.map((s) => [s.resource, s.state.status, s.verdict])).toEqual([
      ['memory', 'True', 'over'],
      ['io', 'False', 'between'],
    ]);
  });
});
