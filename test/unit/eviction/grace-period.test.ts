import { evictionGracePeriodSeconds } from '../../../src/eviction/grace-period.js';
import { makePod } from '../../fixtures/pods.js';

describe('evictionGracePeriodSeconds', () => {
  const cases: { name: string; hard: boolean; maxPodGracePeriodSeconds: number; tgps?: number | null; expected: number }[] = [
    { name: 'hard threshold ignores the configured maximum', hard: true, maxPodGracePeriodSeconds: 60, tgps: 30, expected: 1 },
    { name: 'hard threshold with a pod without TGPS', hard: true, maxPodGracePeriodSeconds: 0, expected: 1 },
    { name: 'soft threshold with the default maximum of 0', hard: false, maxPodGracePeriodSeconds: 0, tgps: 30, expected: 0 },
    { name: 'soft threshold, pod without TGPS, uses the maximum', hard: false, maxPodGracePeriodSeconds: 90, expected: 90 },
    { name: 'soft threshold, pod with null TGPS, uses the maximum', hard: false, maxPodGracePeriodSeconds: 90, tgps: null, expected: 90 },
    { name: 'soft threshold, pod TGPS below the maximum wins', hard: false, maxPodGracePeriodSeconds: 90, tgps: 30, expected: 30 },
    { name: 'soft threshold, maximum below the pod TGPS wins', hard: false, maxPodGracePeriodSeconds: 20, tgps: 30, expected: 20 },
    { name: 'soft threshold, pod TGPS of 0', hard: false, maxPodGracePeriodSeconds: 20, tgps: 0, expected: 0 },
    { name: 'soft threshold, negative maximum passed through (bug #118172 kept)', hard: false, maxPodGracePeriodSeconds: -1, tgps: 30, expected: -1 },
    { name: 'soft threshold, negative maximum and no TGPS', hard: false, maxPodGracePeriodSeconds: -5, expected: -5 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod({ name: 'burstable-soft-evicted', tgps: tc.tgps });
      expect(evictionGracePeriodSeconds(tc.hard, tc.maxPodGracePeriodSeconds, pod)).toBe(tc.expected);
    });
  }
});
