import type { Taint, Toleration } from '../../../src/api/pod.js';
import { taintsEqual, tolerationsEqual } from '../../../src/taint/semantic-equal.js';

// The object without `key`: an absent field, as decoded JSON has it.
function omit<T extends object, K extends keyof T>(value: T, key: K): Omit<T, K> {
  const { [key]: _omitted, ...rest } = value;
  return rest;
}

describe('taintsEqual is Semantic.DeepEqual on ordered NoExecute lists', () => {
  const a: Taint = { key: 'a', value: 'x', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' };
  const b: Taint = { key: 'b', effect: 'NoExecute' };
  const cases: { name: string; left: Taint[] | null | undefined; right: Taint[] | null | undefined; equal: boolean }[] = [
    { name: 'nil and empty are equal', left: undefined, right: [], equal: true },
    { name: 'null and undefined are equal', left: null, right: undefined, equal: true },
    { name: 'identical lists', left: [a, b], right: [{ ...a }, { ...b }], equal: true },
    { name: 'order matters', left: [a, b], right: [b, a], equal: false },
    { name: 'a value change', left: [a], right: [{ ...a, value: 'y' }], equal: false },
    { name: 'an absent value equals an empty one', left: [b], right: [{ ...b, value: '' }], equal: true },
    { name: 'an effect change', left: [b], right: [{ ...b, effect: 'NoSchedule' }], equal: false },
    { name: 'a timeAdded change', left: [a], right: [{ ...a, timeAdded: '2026-01-01T00:00:01Z' }], equal: false },
    { name: 'timeAdded set versus unset', left: [a], right: [omit(a, 'timeAdded')], equal: false },
    { name: 'timeAdded null versus absent', left: [b], right: [{ ...b, timeAdded: null }], equal: true },
    { name: 'the same instant as a Date and as a string', left: [a], right: [{ ...a, timeAdded: new Date('2026-01-01T00:00:00Z') }], equal: true },
    { name: 'the same instant in another zone', left: [a], right: [{ ...a, timeAdded: '2026-01-01T01:00:00+01:00' }], equal: true },
    { name: 'a taint added', left: [a], right: [a, b], equal: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(taintsEqual(tc.left, tc.right)).toBe(tc.equal);
      expect(taintsEqual(tc.right, tc.left)).toBe(tc.equal);
    });
  }
});

describe('tolerationsEqual is Semantic.DeepEqual on ordered tolerations', () => {
  const t: Toleration = { key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 };
  const cases: { name: string; left: Toleration[] | undefined; right: Toleration[] | undefined; equal: boolean }[] = [
    { name: 'nil and empty are equal', left: undefined, right: [], equal: true },
    { name: 'identical', left: [t], right: [{ ...t }], equal: true },
    { name: 'tolerationSeconds changed', left: [t], right: [{ ...t, tolerationSeconds: 600 }], equal: false },
    { name: 'tolerationSeconds unset versus 0', left: [omit(t, 'tolerationSeconds')], right: [{ ...t, tolerationSeconds: 0 }], equal: false },
    { name: 'tolerationSeconds null versus absent', left: [{ ...t, tolerationSeconds: null }], right: [{ key: 'k', operator: 'Exists', effect: 'NoExecute' }], equal: true },
    { name: 'an absent operator equals an empty one', left: [{ key: 'k' }], right: [{ key: 'k', operator: '' }], equal: true },
    { name: 'an absent operator is not Equal (no defaulting)', left: [{ key: 'k' }], right: [{ key: 'k', operator: 'Equal' }], equal: false },
    { name: 'order matters', left: [t, { key: 'z' }], right: [{ key: 'z' }, t], equal: false },
    { name: 'a toleration added', left: [t], right: [t, { key: 'z' }], equal: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(tolerationsEqual(tc.left, tc.right)).toBe(tc.equal);
    });
  }
});
