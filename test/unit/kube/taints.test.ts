import type { Taint } from '../../../src/api/pod.js';
import { withTaint } from '../../../src/kube/taints.js';

const OURS = { key: 'kube-eviction-agent.io/memory-pressure', value: 'true', effect: 'NoSchedule' };
const OTHER: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const SAME_KEY_OTHER_EFFECT: Taint = { key: OURS.key, value: 'true', effect: 'NoExecute', timeAdded: '2026-01-01T00:00:00Z' };

describe('withTaint adds or removes one taint and keeps everyone else\'s', () => {
  const cases: { name: string; taints: Taint[]; present: boolean; expected: Taint[] | null }[] = [
    { name: 'add-to-empty', taints: [], present: true, expected: [OURS] },
    { name: 'add-after-others-keeps-their-order', taints: [OTHER, SAME_KEY_OTHER_EFFECT], present: true, expected: [OTHER, SAME_KEY_OTHER_EFFECT, OURS] },
    { name: 'add-when-present-is-a-no-op', taints: [OTHER, OURS], present: true, expected: null },
    { name: 'add-with-another-value-replaces-in-place', taints: [{ ...OURS, value: 'old' }, OTHER], present: true, expected: [OURS, OTHER] },
    { name: 'remove-only-ours', taints: [OTHER, OURS, SAME_KEY_OTHER_EFFECT], present: false, expected: [OTHER, SAME_KEY_OTHER_EFFECT] },
    { name: 'remove-when-absent-is-a-no-op', taints: [OTHER, SAME_KEY_OTHER_EFFECT], present: false, expected: null },
    { name: 'remove-the-last-leaves-an-empty-list', taints: [OURS], present: false, expected: [] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const before = JSON.stringify(tc.taints);
      expect(withTaint(tc.taints, OURS, tc.present)).toEqual(tc.expected);
      expect(JSON.stringify(tc.taints)).toBe(before);
    });
  }
});
