// When a memcg threshold is re-armed: unchanged values never, changed values after more than 10 s
// (strictly, as the kubelet) or at once after a crossing.

import { rearmDecision, type ArmedThresholdState } from '../../../src/api/rearm-policy.js';

describe('rearmDecision', () => {
  const armed: ArmedThresholdState = { memcgThresholdBytes: 1000n, armedAtMs: 50_000, crossedSinceArmed: false };
  const cases: { name: string; armed: ArmedThresholdState | null; bytes: bigint; nowMs: number; expected: string }[] = [
    { name: 'nothing-armed-arms', armed: null, bytes: 1000n, nowMs: 0, expected: 'arm' },
    { name: 'same-value-is-never-rearmed', armed, bytes: 1000n, nowMs: 500_000, expected: 'unchanged' },
    { name: 'same-value-after-a-crossing-is-not-rearmed', armed: { ...armed, crossedSinceArmed: true }, bytes: 1000n, nowMs: 50_001, expected: 'unchanged' },
    { name: 'changed-within-10s-waits', armed, bytes: 1001n, nowMs: 55_000, expected: 'too-soon' },
    { name: 'changed-at-exactly-10s-waits-kubelet-strict', armed, bytes: 1001n, nowMs: 60_000, expected: 'too-soon' },
    { name: 'changed-after-10s-rearms', armed, bytes: 1001n, nowMs: 60_001, expected: 'rearm' },
    { name: 'changed-after-a-crossing-rearms-at-once', armed: { ...armed, crossedSinceArmed: true }, bytes: 999n, nowMs: 50_001, expected: 'rearm' },
  ];
  for (const tc of cases) test(tc.name, () => expect(rearmDecision(tc.armed, tc.bytes, tc.nowMs)).toBe(tc.expected));
});
