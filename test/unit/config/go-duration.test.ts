// Go duration syntax: the cases of Go's own time.ParseDuration tests, the error wording, and
// Duration.String() for the effective-settings report.

import { formatGoDuration, GoDurationError, parseGoDuration, parseGoDurationNanos } from '../../../src/config/go-duration.js';

const NS = 1n;
const US = 1_000n;
const MS = 1_000_000n;
const S = 1_000_000_000n;
const M = 60n * S;
const H = 60n * M;

describe('parseGoDurationNanos accepts what Go accepts, to the nanosecond', () => {
  const cases: { name: string; text: string; nanos: bigint }[] = [
    { name: 'bare-zero', text: '0', nanos: 0n },
    { name: 'seconds', text: '5s', nanos: 5n * S },
    { name: 'many-seconds', text: '1478s', nanos: 1478n * S },
    { name: 'negative', text: '-5s', nanos: -5n * S },
    { name: 'explicit-plus', text: '+5s', nanos: 5n * S },
    { name: 'negative-zero', text: '-0', nanos: 0n },
    { name: 'plus-zero', text: '+0', nanos: 0n },
    { name: 'decimal-zero-fraction', text: '5.0s', nanos: 5n * S },
    { name: 'decimal-fraction', text: '5.6s', nanos: 5n * S + 600n * MS },
    { name: 'trailing-dot', text: '5.s', nanos: 5n * S },
    { name: 'leading-dot', text: '.5s', nanos: 500n * MS },
    { name: 'fraction-with-zeros', text: '1.004s', nanos: 1n * S + 4n * MS },
    { name: 'long-fraction', text: '100.00100s', nanos: 100n * S + 1n * MS },
    { name: 'nanoseconds', text: '10ns', nanos: 10n * NS },
    { name: 'microseconds-us', text: '11us', nanos: 11n * US },
    { name: 'microseconds-micro-sign', text: '12\u00b5s', nanos: 12n * US },
    { name: 'microseconds-greek-mu', text: '12\u03bcs', nanos: 12n * US },
    { name: 'milliseconds', text: '13ms', nanos: 13n * MS },
    { name: 'minutes', text: '15m', nanos: 15n * M },
    { name: 'hours', text: '16h', nanos: 16n * H },
    { name: 'fractional-hours', text: '1.5h', nanos: 90n * M },
    { name: 'compound', text: '3h30m', nanos: 3n * H + 30n * M },
    { name: 'compound-any-order', text: '10.5s4m', nanos: 4n * M + 10n * S + 500n * MS },
    { name: 'negative-compound', text: '-2m3.4s', nanos: -(2n * M + 3n * S + 400n * MS) },
    { name: 'every-unit', text: '1h2m3s4ms5us6ns', nanos: H + 2n * M + 3n * S + 4n * MS + 5n * US + 6n * NS },
    { name: 'kubelet-style', text: '1m30s', nanos: 90n * S },
    { name: 'float64-fraction-truncation', text: '0.3333333333333333333h', nanos: 20n * M },
    { name: 'exact-large-nanos', text: '9007199254740993ns', nanos: 9007199254740993n },
    { name: 'max-int64', text: '9223372036854775807ns', nanos: 9223372036854775807n },
    { name: 'max-int64-fraction', text: '9223372036854775.807us', nanos: 9223372036854775807n },
    { name: 'max-int64-compound', text: '9223372036s854ms775us807ns', nanos: 9223372036854775807n },
    { name: 'min-int64', text: '-9223372036854775808ns', nanos: -9223372036854775808n },
    { name: 'min-int64-compound', text: '-2562047h47m16.854775808s', nanos: -9223372036854775808n },
    { name: 'many-fraction-zeros', text: '0.100000000000000000000h', nanos: 6n * M },
    { name: 'long-fraction-hours', text: '0.830103483285477580700h', nanos: 49n * M + 48n * S + 372539827n },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(parseGoDurationNanos(tc.text)).toBe(tc.nanos);
    });
  }
});

describe('parseGoDuration returns milliseconds, fractional below one', () => {
  const cases: { name: string; text: string; ms: number }[] = [
    { name: 'sub-second', text: '300ms', ms: 300 },
    { name: 'seconds', text: '10s', ms: 10_000 },
    { name: 'minutes', text: '5m', ms: 300_000 },
    { name: 'fractional-ms', text: '1500us', ms: 1.5 },
    { name: 'one-nanosecond', text: '1ns', ms: 0.000001 },
    { name: 'negative', text: '-1s', ms: -1000 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(parseGoDuration(tc.text)).toBeCloseTo(tc.ms, 9);
    });
  }
});

describe('parseGoDuration rejects what Go rejects, with Go\'s message', () => {
  const cases: { name: string; text: string; message: string }[] = [
    { name: 'empty', text: '', message: 'time: invalid duration ""' },
    { name: 'no-unit', text: '3', message: 'time: missing unit in duration "3"' },
    { name: 'bare-number-not-zero', text: '30', message: 'time: missing unit in duration "30"' },
    { name: 'sign-only', text: '-', message: 'time: invalid duration "-"' },
    { name: 'unit-only', text: 's', message: 'time: invalid duration "s"' },
    { name: 'dot-only', text: '.', message: 'time: invalid duration "."' },
    { name: 'sign-dot', text: '-.', message: 'time: invalid duration "-."' },
    { name: 'dot-unit', text: '.s', message: 'time: invalid duration ".s"' },
    { name: 'plus-dot-unit', text: '+.s', message: 'time: invalid duration "+.s"' },
    { name: 'days-unknown', text: '1d', message: 'time: unknown unit "d" in duration "1d"' },
    { name: 'upper-case-unit', text: '1S', message: 'time: unknown unit "S" in duration "1S"' },
    { name: 'space-inside', text: '1 s', message: 'time: unknown unit " s" in duration "1 s"' },
    { name: 'overflow', text: '9223372036854775808ns', message: 'time: invalid duration "9223372036854775808ns"' },
    { name: 'overflow-fraction', text: '9223372036854775.808us', message: 'time: invalid duration "9223372036854775.808us"' },
    { name: 'overflow-compound', text: '9223372036854ms775us808ns', message: 'time: invalid duration "9223372036854ms775us808ns"' },
    { name: 'underflow', text: '-9223372036854775809ns', message: 'time: invalid duration "-9223372036854775809ns"' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(() => parseGoDuration(tc.text)).toThrow(GoDurationError);
      expect(() => parseGoDuration(tc.text)).toThrow(tc.message);
    });
  }
});

describe('formatGoDuration prints as Go\'s Duration.String()', () => {
  const cases: { name: string; ms: number; text: string }[] = [
    { name: 'zero', ms: 0, text: '0s' },
    { name: 'nanoseconds', ms: 0.000001, text: '1ns' },
    { name: 'microseconds', ms: 0.0011, text: '1.1\u00b5s' },
    { name: 'milliseconds', ms: 2.2, text: '2.2ms' },
    { name: 'psi-stall', ms: 100, text: '100ms' },
    { name: 'seconds', ms: 10_000, text: '10s' },
    { name: 'fractional-seconds', ms: 3300, text: '3.3s' },
    { name: 'minutes-and-seconds', ms: 245_000, text: '4m5s' },
    { name: 'five-minutes', ms: 300_000, text: '5m0s' },
    { name: 'hours-keep-minutes', ms: 3_600_000, text: '1h0m0s' },
    { name: 'compound', ms: 5 * 3_600_000 + 6 * 60_000 + 7001, text: '5h6m7.001s' },
    { name: 'negative', ms: -90_000, text: '-1m30s' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(formatGoDuration(tc.ms)).toBe(tc.text);
    });
  }
});
