import type { Toleration } from '../../../src/api/pod.js';
import { getMinTolerationTimeMs, TOLERATE_FOREVER } from '../../../src/taint/min-toleration-time.js';

const seconds = (tolerationSeconds: number | null | undefined): Toleration => ({ operator: 'Exists', ...(tolerationSeconds === undefined ? {} : { tolerationSeconds }) });

describe('getMinTolerationTimeMs follows getMinTolerationTime, in ms', () => {
  const cases: { name: string; used: Toleration[]; expectedMs: number }[] = [
    { name: 'an empty list answers 0, not forever (quirk Q2)', used: [], expectedMs: 0 },
    { name: 'one unset value is forever', used: [seconds(undefined)], expectedMs: TOLERATE_FOREVER },
    { name: 'a null value is forever', used: [seconds(null)], expectedMs: -1 },
    { name: 'several unset values are forever', used: [seconds(undefined), seconds(null)], expectedMs: -1 },
    { name: 'one finite value', used: [seconds(300)], expectedMs: 300_000 },
    { name: 'the smallest finite value wins', used: [seconds(300), seconds(60), seconds(3600)], expectedMs: 60_000 },
    { name: 'unset values are ignored next to finite ones', used: [seconds(undefined), seconds(120)], expectedMs: 120_000 },
    { name: 'zero means now', used: [seconds(0)], expectedMs: 0 },
    { name: 'negative means now', used: [seconds(-5)], expectedMs: 0 },
    { name: 'zero after a finite value still means now', used: [seconds(600), seconds(0)], expectedMs: 0 },
    { name: 'zero next to forever means now', used: [seconds(undefined), seconds(0)], expectedMs: 0 },
    { name: 'one second', used: [seconds(1)], expectedMs: 1000 },
    { name: 'thirty days, beyond setTimeout\'s limit', used: [seconds(30 * 86400)], expectedMs: 2_592_000_000 },
    { name: 'an absurd value is capped at the largest exact ms count, never wrapping', used: [seconds(1e300)], expectedMs: Number.MAX_SAFE_INTEGER },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(getMinTolerationTimeMs(tc.used)).toBe(tc.expectedMs);
    });
  }
});
