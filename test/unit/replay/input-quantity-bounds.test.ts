// A recording's quantities are bounded as apimachinery bounds a quantity (at most 2^63-1, 64
// digits, an int32 exponent) and refused before anything is computed: before the bound, a limit of
// 1e400000000 held the replay (and `explain --replay`) for 32 s and ended in a bare
// "Maximum BigInt size exceeded". The refusal names the line and the field.

import { ReplayInputError } from '../../../src/errors.js';
import { parseReplayLine } from '../../../src/replay/input.js';

const T0 = '2026-11-01T12:00:00Z';
const pod = (spec: Record<string, unknown>) => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'a' }], ...spec } });

// What the line says of its one pod: the refusal, whether the line is refused or the pod alone is.
function refusal(spec: Record<string, unknown>): string | null {
  try {
    const step = parseReplayLine(JSON.stringify({ time: T0, pods: [pod(spec)] }), 7, null);
    return (step as { refusedPods?: readonly { reason: string }[] }).refusedPods?.[0]?.reason ?? null;
  } catch (err) {
    if (err instanceof ReplayInputError) return err.message;
    throw err;
  }
}

const cases: { name: string; spec: Record<string, unknown>; refused: RegExp | null }[] = [
  {
    name: 'a limit with an exponent of 4e8',
    spec: { containers: [{ name: 'a', resources: { limits: { memory: '1e400000000' } } }] },
    refused: /^line 7: pods\[0\]\.spec\.containers\[0\]\.resources\.limits\.memory: invalid quantity "1e400000000": quantity too large: at most 9223372036854775807 \(2\^63-1/,
  },
  { name: 'a request of 8Ei (2^63)', spec: { containers: [{ name: 'a', resources: { requests: { memory: '8Ei' } } }] }, refused: /^line 7: pods\[0\]\.spec\.containers\[0\]\.resources\.requests\.memory: invalid quantity "8Ei": quantity too large/ },
  { name: 'a request of 2^63-1', spec: { containers: [{ name: 'a', resources: { requests: { memory: '9223372036854775807' } } }] }, refused: null },
  { name: 'an overhead with an exponent of 1e8', spec: { overhead: { memory: '1e100000000' } }, refused: /^line 7: pods\[0\]\.spec\.overhead\.memory: invalid quantity "1e100000000": quantity too large/ },
  {
    name: 'an emptyDir sizeLimit of 81 digits',
    spec: { volumes: [{ name: 'scratch', emptyDir: { sizeLimit: `1${'0'.repeat(80)}` } }] },
    refused: /^line 7: pods\[0\]\.spec\.volumes\[0\]\.emptyDir\.sizeLimit: invalid quantity "10+": quantities may have at most 64 digits$/,
  },
  { name: 'an emptyDir sizeLimit within bounds', spec: { volumes: [{ name: 'scratch', emptyDir: { sizeLimit: '1Gi' } }] }, refused: null },
];

describe('replay input: quantities beyond 2^63-1 are refused with the line and the field', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const found = refusal(tc.spec);
      if (tc.refused === null) expect(found).toBeNull();
      else expect(found).toMatch(tc.refused);
    });
  }
});
