// RFC 3339 parsing, including what it remembers between calls: a remembered answer is the
// answer a first parse gives, for valid and invalid strings alike, however they alternate.

import { formatRfc3339, parseRfc3339 } from '../../../src/api/time.js';

const cases = [
  { text: '2026-01-01T00:00:10Z', ms: Date.UTC(2026, 0, 1, 0, 0, 10) },
  { text: '2026-01-01T01:00:10.250+01:00', ms: Date.UTC(2026, 0, 1, 0, 0, 10, 250) },
  { text: '2026-01-01 00:00:10.5z', ms: Date.UTC(2026, 0, 1, 0, 0, 10, 500) },
  { text: '2026-01-01', ms: null },
  { text: '2026-13-01T00:00:00Z', ms: null },
  { text: 'yesterday', ms: null },
];

describe('parseRfc3339', () => {
  test.each(cases)('$text', ({ text, ms }) => {
    expect(parseRfc3339(text)).toBe(ms);
    expect(parseRfc3339(text)).toBe(ms);
  });

  test('alternating and many distinct strings give each its own answer', () => {
    for (let round = 0; round < 3; round++) for (const { text, ms } of cases) expect(parseRfc3339(text)).toBe(ms);
    for (let s = 0; s < 500; s++) {
      const ms = Date.UTC(2026, 0, 1) + s * 1000;
      expect(parseRfc3339(new Date(ms).toISOString())).toBe(ms);
      expect(parseRfc3339(formatRfc3339(ms))).toBe(ms);
    }
  });
});

test('an instant past the year 9999 is written as the last one RFC 3339 can name', () => {
  expect(formatRfc3339(Date.UTC(2026, 0, 1) + Number("9223372036854775807") * 1000)).toBe('9999-12-31T23:59:59.999Z');
  expect(formatRfc3339(Date.UTC(9999, 11, 31, 23, 59, 59))).toBe('9999-12-31T23:59:59Z');
});
