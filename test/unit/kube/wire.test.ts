import { rfc3339, toWire } from '../../../src/kube/wire.js';

describe('rfc3339 prints times as the API does', () => {
  const cases = [
    { name: 'whole-seconds-have-no-fraction', ms: Date.UTC(2026, 0, 1, 12, 30, 5), text: '2026-01-01T12:30:05Z' },
    { name: 'fractions-are-dropped-like-metav1-time', ms: Date.UTC(2026, 0, 1, 12, 30, 5, 250), text: '2026-01-01T12:30:05Z' },
  ];
  for (const tc of cases) test(tc.name, () => expect(rfc3339(tc.ms)).toBe(tc.text));
});

describe('toWire turns the client library models back into API JSON', () => {
  test('dates become strings, undefined fields disappear, nesting and arrays are kept', () => {
    const typed = {
      metadata: { name: 'a', creationTimestamp: new Date(Date.UTC(2026, 0, 2)), deletionTimestamp: undefined, labels: { app: 'web' } },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(Date.UTC(2026, 0, 3)) }] },
      spec: { containers: [{ name: 'c', ports: undefined }] },
    };
    expect(toWire(typed)).toEqual({
      metadata: { name: 'a', creationTimestamp: '2026-01-02T00:00:00Z', labels: { app: 'web' } },
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-01-03T00:00:00Z' }] },
      spec: { containers: [{ name: 'c' }] },
    });
    expect(JSON.stringify(toWire(typed))).not.toContain('deletionTimestamp');
  });

  test('a micro-time with a fraction keeps it', () => {
    expect(toWire({ eventTime: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, 5)) })).toEqual({ eventTime: '2026-01-01T00:00:00.005Z' });
  });

  test('an invalid date becomes null rather than a bogus string', () => {
    expect(toWire({ t: new Date(Number.NaN) })).toEqual({ t: null });
  });
});
