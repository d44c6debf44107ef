import type { Taint, Toleration } from '../../../src/api/pod.js';
import { getMatchingTolerations, getNoExecuteTaints, isDecimalInteger, parseInt64, toleratesTaint } from '../../../src/taint/tolerations.js';

interface MatchCase {
  name: string;
  toleration: Toleration;
  taint: Taint;
  expected: boolean;
  /** The answer with comparison operators on, when it differs from `expected`. */
  withComparison?: boolean;
}

const dedicated: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoExecute' };

describe('toleratesTaint matches as core/v1 ToleratesTaint does', () => {
  const cases: MatchCase[] = [
    { name: 'Equal with the same key, value and effect', toleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoExecute' }, taint: dedicated, expected: true },
    { name: 'an empty operator means Equal', toleration: { key: 'dedicated', value: 'gpu', effect: 'NoExecute' }, taint: dedicated, expected: true },
    { name: 'Equal with another value', toleration: { key: 'dedicated', operator: 'Equal', value: 'cpu', effect: 'NoExecute' }, taint: dedicated, expected: false },
    { name: 'Equal compares values case-sensitively', toleration: { key: 'dedicated', operator: 'Equal', value: 'GPU', effect: 'NoExecute' }, taint: dedicated, expected: false },
    { name: 'Equal with both values empty', toleration: { key: 'k', operator: 'Equal', effect: 'NoExecute' }, taint: { key: 'k', effect: 'NoExecute' }, expected: true },
    { name: 'Equal with an empty value against a valued taint', toleration: { key: 'dedicated', operator: 'Equal', effect: 'NoExecute' }, taint: dedicated, expected: false },
    { name: 'Exists ignores the value', toleration: { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, taint: dedicated, expected: true },
    { name: 'Exists ignores a value the toleration carries', toleration: { key: 'dedicated', operator: 'Exists', value: 'other', effect: 'NoExecute' }, taint: dedicated, expected: true },
    { name: 'another key never matches', toleration: { key: 'other', operator: 'Exists', effect: 'NoExecute' }, taint: dedicated, expected: false },
    { name: 'keys compare case-sensitively', toleration: { key: 'Dedicated', operator: 'Exists' }, taint: dedicated, expected: false },
    { name: 'an empty key with Exists tolerates everything', toleration: { operator: 'Exists' }, taint: dedicated, expected: true },
    { name: 'an empty key with Exists and effect NoExecute tolerates every NoExecute taint', toleration: { operator: 'Exists', effect: 'NoExecute' }, taint: { key: 'x', value: 'y', effect: 'NoExecute' }, expected: true },
    { name: 'an empty key with Exists and effect NoSchedule does not tolerate NoExecute', toleration: { operator: 'Exists', effect: 'NoSchedule' }, taint: dedicated, expected: false },
    { name: 'an empty effect matches every effect', toleration: { key: 'dedicated', operator: 'Equal', value: 'gpu' }, taint: dedicated, expected: true },
    { name: 'a NoSchedule toleration does not tolerate a NoExecute taint', toleration: { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, taint: dedicated, expected: false },
    { name: 'an empty key with Equal matches any key on its value (validation forbids it)', toleration: { operator: 'Equal', value: 'gpu' }, taint: dedicated, expected: true },
    { name: 'an unknown operator never matches', toleration: { key: 'dedicated', operator: 'In', value: 'gpu' }, taint: dedicated, expected: false },
    { name: 'operators are case-sensitive', toleration: { key: 'dedicated', operator: 'exists' }, taint: dedicated, expected: false },
    // Gt / Lt: never match with the gate off.
    { name: 'Gt with a larger taint value', toleration: { key: 'slo', operator: 'Gt', value: '100' }, taint: { key: 'slo', value: '200', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Gt with a smaller taint value', toleration: { key: 'slo', operator: 'Gt', value: '100' }, taint: { key: 'slo', value: '50', effect: 'NoExecute' }, expected: false },
    { name: 'Gt with an equal value', toleration: { key: 'slo', operator: 'Gt', value: '100' }, taint: { key: 'slo', value: '100', effect: 'NoExecute' }, expected: false },
    { name: 'Lt with a smaller taint value', toleration: { key: 'slo', operator: 'Lt', value: '100' }, taint: { key: 'slo', value: '99', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Lt with a larger taint value', toleration: { key: 'slo', operator: 'Lt', value: '100' }, taint: { key: 'slo', value: '101', effect: 'NoExecute' }, expected: false },
    { name: 'Lt with an equal value', toleration: { key: 'slo', operator: 'Lt', value: '100' }, taint: { key: 'slo', value: '100', effect: 'NoExecute' }, expected: false },
    { name: 'Lt with negative numbers', toleration: { key: 'slo', operator: 'Lt', value: '-5' }, taint: { key: 'slo', value: '-10', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Gt with zero against a negative toleration', toleration: { key: 'slo', operator: 'Gt', value: '-1' }, taint: { key: 'slo', value: '0', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Gt compares as numbers, not strings', toleration: { key: 'slo', operator: 'Gt', value: '9' }, taint: { key: 'slo', value: '10', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Gt at the int64 limits', toleration: { key: 'slo', operator: 'Gt', value: '9223372036854775806' }, taint: { key: 'slo', value: '9223372036854775807', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Lt at the int64 minimum', toleration: { key: 'slo', operator: 'Lt', value: '-9223372036854775807' }, taint: { key: 'slo', value: '-9223372036854775808', effect: 'NoExecute' }, expected: false, withComparison: true },
    { name: 'Gt still requires the key', toleration: { key: 'other', operator: 'Gt', value: '1' }, taint: { key: 'slo', value: '2', effect: 'NoExecute' }, expected: false },
    { name: 'Gt still requires the effect', toleration: { key: 'slo', operator: 'Gt', value: '1', effect: 'NoSchedule' }, taint: { key: 'slo', value: '2', effect: 'NoExecute' }, expected: false },
    { name: 'Gt with an empty key matches any key', toleration: { operator: 'Gt', value: '1' }, taint: { key: 'slo', value: '2', effect: 'NoExecute' }, expected: false, withComparison: true },
  ];
  // Strict integers: with the gate on, a value that is not canonical or overflows int64 never matches.
  const strict: [string, string][] = [
    ['"0" is canonical', '0'],
    ['"-0" is refused', '-0'],
    ['"0100" (leading zero) is refused', '0100'],
    ['"+1" is refused', '+1'],
    ['" 1" is refused', ' 1'],
    ['"1 " is refused', '1 '],
    ['"1.5" is refused', '1.5'],
    ['"1e3" is refused', '1e3'],
    ['"" is refused', ''],
    ['"-" is refused', '-'],
    ['"9223372036854775808" overflows int64', '9223372036854775808'],
    ['"-9223372036854775809" overflows int64', '-9223372036854775809'],
  ];
  for (const [label, raw] of strict) {
    const accepted = raw === '0';
    cases.push({ name: `taint value ${label}`, toleration: { key: 'slo', operator: 'Gt', value: '-1' }, taint: { key: 'slo', value: raw, effect: 'NoExecute' }, expected: false, withComparison: accepted });
    cases.push({ name: `toleration value ${label}`, toleration: { key: 'slo', operator: 'Lt', value: raw }, taint: { key: 'slo', value: '-1', effect: 'NoExecute' }, expected: false, withComparison: accepted });
  }

  for (const tc of cases) {
    test(`${tc.name} (comparison operators off)`, () => {
      expect(toleratesTaint(tc.toleration, tc.taint, false)).toBe(tc.expected);
    });
    test(`${tc.name} (comparison operators on)`, () => {
      expect(toleratesTaint(tc.toleration, tc.taint, true)).toBe(tc.withComparison ?? tc.expected);
    });
  }
});

describe('isDecimalInteger and parseInt64 follow content.IsDecimalInteger and ParseInt(s, 10, 64)', () => {
  const cases: { s: string; decimal: boolean; int64: bigint | null }[] = [
    { s: '0', decimal: true, int64: 0n },
    { s: '7', decimal: true, int64: 7n },
    { s: '-7', decimal: true, int64: -7n },
    { s: '100', decimal: true, int64: 100n },
    { s: '-0', decimal: false, int64: null },
    { s: '0100', decimal: false, int64: null },
    { s: '00', decimal: false, int64: null },
    { s: '+1', decimal: false, int64: null },
    { s: ' 1', decimal: false, int64: null },
    { s: '1.5', decimal: false, int64: null },
    { s: '100.5', decimal: false, int64: null },
    { s: '', decimal: false, int64: null },
    { s: '-', decimal: false, int64: null },
    { s: 'abc', decimal: false, int64: null },
    { s: '0x10', decimal: false, int64: null },
    { s: '١٢', decimal: false, int64: null },
    { s: '9223372036854775807', decimal: true, int64: 9223372036854775807n },
    { s: '-9223372036854775808', decimal: true, int64: -9223372036854775808n },
    { s: '9223372036854775808', decimal: true, int64: null },
    { s: '-9223372036854775809', decimal: true, int64: null },
    { s: '99999999999999999999999', decimal: true, int64: null },
  ];
  for (const tc of cases) {
    test(`${JSON.stringify(tc.s)}: decimal ${tc.decimal}, int64 ${tc.int64}`, () => {
      expect(isDecimalInteger(tc.s)).toBe(tc.decimal);
      expect(parseInt64(tc.s)).toBe(tc.int64);
    });
  }
});

describe('getMatchingTolerations follows GetMatchingTolerations', () => {
  const a: Taint = { key: 'a', effect: 'NoExecute' };
  const b: Taint = { key: 'b', value: 'x', effect: 'NoExecute' };
  const cases: { name: string; taints: Taint[]; tolerations: Toleration[] | undefined; allTolerated: boolean; used: Toleration[] }[] = [
    { name: 'no taints: tolerated, nothing used', taints: [], tolerations: [], allTolerated: true, used: [] },
    { name: 'no taints and no tolerations at all', taints: [], tolerations: undefined, allTolerated: true, used: [] },
    { name: 'taints but no tolerations', taints: [a], tolerations: [], allTolerated: false, used: [] },
    { name: 'taints and an absent toleration list', taints: [a], tolerations: undefined, allTolerated: false, used: [] },
    { name: 'one toleration per taint, in taint order', taints: [b, a], tolerations: [{ key: 'a', operator: 'Exists' }, { key: 'b', value: 'x' }], allTolerated: true, used: [{ key: 'b', value: 'x' }, { key: 'a', operator: 'Exists' }] },
    {
      name: 'the first listed matching toleration wins, even if a later one tolerates longer',
      taints: [a],
      tolerations: [{ key: 'a', operator: 'Exists', tolerationSeconds: 60 }, { key: 'a', operator: 'Exists' }],
      allTolerated: true,
      used: [{ key: 'a', operator: 'Exists', tolerationSeconds: 60 }],
    },
    {
      name: 'one toleration used for several taints appears once per taint',
      taints: [a, b],
      tolerations: [{ operator: 'Exists', tolerationSeconds: 30 }],
      allTolerated: true,
      used: [{ operator: 'Exists', tolerationSeconds: 30 }, { operator: 'Exists', tolerationSeconds: 30 }],
    },
    { name: 'one untolerated taint answers false with nothing used', taints: [a, b], tolerations: [{ key: 'a', operator: 'Exists' }], allTolerated: false, used: [] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(getMatchingTolerations(tc.taints, tc.tolerations, false)).toEqual({ allTolerated: tc.allTolerated, used: tc.used });
    });
  }
  test('used holds the pod\'s own toleration objects', () => {
    const toleration: Toleration = { key: 'a', operator: 'Exists' };
    expect(getMatchingTolerations([a], [toleration], false).used[0]).toBe(toleration);
  });
  test('Gt/Lt tolerations count only with comparison operators on', () => {
    const slo: Taint = { key: 'slo', value: '950', effect: 'NoExecute' };
    const tolerations: Toleration[] = [{ key: 'slo', operator: 'Gt', value: '900', tolerationSeconds: 10 }];
    expect(getMatchingTolerations([slo], tolerations, false).allTolerated).toBe(false);
    expect(getMatchingTolerations([slo], tolerations, true)).toEqual({ allTolerated: true, used: tolerations });
  });
});

describe('getNoExecuteTaints', () => {
  test('keeps only NoExecute taints, in order', () => {
    const taints: Taint[] = [
      { key: 'a', effect: 'NoExecute' },
      { key: 'b', effect: 'NoSchedule' },
      { key: 'c', effect: 'PreferNoSchedule' },
      { key: 'd', value: 'v', effect: 'NoExecute' },
    ];
    expect(getNoExecuteTaints(taints)).toEqual([{ key: 'a', effect: 'NoExecute' }, { key: 'd', value: 'v', effect: 'NoExecute' }]);
  });
  test('an absent list is empty', () => {
    expect(getNoExecuteTaints(undefined)).toEqual([]);
    expect(getNoExecuteTaints(null)).toEqual([]);
  });
  test('effects compare case-sensitively', () => {
    expect(getNoExecuteTaints([{ key: 'a', effect: 'noexecute' }])).toEqual([]);
  });
});
