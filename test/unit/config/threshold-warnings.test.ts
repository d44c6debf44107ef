// Thresholds one character from what was meant: a percentage within 0.1 % of the whole capacity
// ("100.0%", "100%%", "99.999999999%"), met on every pass though only "100%" disables, is called
// out with its field and line; a zero that is not the disabling "0%" ("0.0%") is a plain warning.
// The meaning stays the kubelet's: the thresholds are compiled as it compiles them.

import { percentageRatio } from '../../../src/api/threshold.js';
import { parseConfigText } from '../../../src/config/load.js';
import { NEAR_WHOLE_RATIO } from '../../../src/config/threshold-warnings.js';

interface Case {
  readonly name: string;
  readonly yaml: string;
  /** [field, line] of each threshold met on (nearly) every pass. */
  readonly nearWhole: readonly (readonly [string, number])[];
  /** [field, line] of each never-met warning. */
  readonly neverMet?: readonly (readonly [string, number])[];
  /** The compiled ratio of memory.available's hard threshold, or null when disabled: the kubelet's meaning. */
  readonly ratio?: number | null;
}

const hard = (value: string): string => `evictionHard:\n  nodefs.available: 10%\n  memory.available: "${value}"\n`;

const cases: Case[] = [
  { name: '100.0%-is-the-whole', yaml: hard('100.0%'), nearWhole: [['evictionHard["memory.available"]', 3]], ratio: 1 },
  { name: '100%%-is-the-whole', yaml: hard('100%%'), nearWhole: [['evictionHard["memory.available"]', 3]], ratio: 1 },
  { name: '99.999999999%-is-float32-100', yaml: hard('99.999999999%'), nearWhole: [['evictionHard["memory.available"]', 3]], ratio: 1 },
  { name: '99.95%-within-0.1%', yaml: hard('99.95%'), nearWhole: [['evictionHard["memory.available"]', 3]], ratio: percentageRatio(99.95) },
  { name: '99.9%-at-the-bound', yaml: hard('99.9%'), nearWhole: [['evictionHard["memory.available"]', 3]], ratio: percentageRatio(99.9) },
  { name: '99.89%-below-the-bound', yaml: hard('99.89%'), nearWhole: [], ratio: percentageRatio(99.89) },
  { name: 'exact-100%-disables', yaml: hard('100%'), nearWhole: [], ratio: null },
  { name: 'exact-0%-disables', yaml: hard('0%'), nearWhole: [], ratio: null },
  { name: '0.0%-is-kept-and-never-met', yaml: hard('0.0%'), nearWhole: [], neverMet: [['evictionHard["memory.available"]', 3]], ratio: 0 },
  { name: '0%%-is-kept-and-never-met', yaml: hard('0%%'), nearWhole: [], neverMet: [['evictionHard["memory.available"]', 3]], ratio: 0 },
  { name: 'a-quantity-cannot-be-judged-without-capacity', yaml: hard('7Ei'), nearWhole: [] },
  {
    name: 'soft-thresholds-too',
    yaml: 'evictionSoft:\n  imagefs.available: "100.00%"\nevictionSoftGracePeriod:\n  imagefs.available: 1m\n',
    nearWhole: [['evictionSoft["imagefs.available"]', 2]],
  },
  {
    // The allocatable copy is not named again: the entry it copies is.
    name: 'one-entry-copied-to-allocatable-is-named-once',
    yaml: 'enforceNodeAllocatable: [pods]\nevictionHard:\n  memory.available: "100.0%"\n',
    nearWhole: [['evictionHard["memory.available"]', 3]],
  },
  { name: 'the-defaults-are-fine', yaml: '', nearWhole: [] },
];

describe('thresholds met on (nearly) every pass', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const cfg = parseConfigText(tc.yaml, 'test.yaml');
      expect(cfg.nearWholeThresholds.map((t) => [t.field, t.line])).toEqual(tc.nearWhole);
      const neverMet = cfg.warnings.filter((w) => /never met/.test(w.message));
      expect(neverMet.map((w) => [w.field, w.line])).toEqual(tc.neverMet ?? []);
      if (tc.ratio !== undefined) {
        const memory = cfg.eviction.thresholds.find((t) => t.signal === 'memory.available' && t.gracePeriodMs === 0);
        expect(memory === undefined ? null : memory.value.kind === 'percentage' ? memory.value.ratio : NaN).toBe(tc.ratio);
      }
    });
  }

  test('the message says what the value means and what disables a threshold', () => {
    const [whole] = parseConfigText(hard('100.0%'), 'test.yaml').nearWholeThresholds;
    expect(whole).toEqual({
      field: 'evictionHard["memory.available"]',
      value: '100.0%',
      line: 3,
      signal: 'memory.available',
      message:
        '"100.0%" is the whole capacity: the threshold is met on (nearly) every pass, so pods are evicted for memory.available continuously. ' +
        'Only the exact "100%" disables a threshold; the kubelet reads this value as a number, and so does the agent',
    });
    const [near] = parseConfigText(hard('99.95%'), 'test.yaml').nearWholeThresholds;
    expect(near?.message).toMatch(/^"99\.95%" is within 0\.1% of the whole capacity: /);
  });

  test('the bound is 99.9 % as the kubelet holds it (float32)', () => {
    expect(NEAR_WHOLE_RATIO).toBe(Math.fround(Math.fround(99.9) / 100));
  });

  test('they are not among the ordinary warnings', () => {
    expect(parseConfigText(hard('100.0%'), 'test.yaml').warnings.filter((w) => w.field === 'evictionHard["memory.available"]')).toEqual([]);
  });
});
