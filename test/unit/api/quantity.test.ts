import { formatQuantity, parseQuantity, quantityFromInteger, compareQuantity, QuantityParseError } from '../../../src/api/quantity.js';

describe('parseQuantity and formatQuantity round-trip to the canonical form', () => {
  const cases: [string, string][] = [
    ['100Mi', '100Mi'],
    ['1Gi', '1Gi'],
    ['1024Mi', '1Gi'],
    ['1.5Gi', '1536Mi'],
    ['0.5Gi', '512Mi'],
    ['1200', '1200'],
    ['1000', '1k'],
    ['1G', '1G'],
    ['500M', '500M'],
    ['1.5', '1500m'],
    ['250m', '250m'],
    ['1e3', '1e3'],
    ['100', '100'],
    ['1023Ki', '1023Ki'],
    ['1Ki', '1Ki'],
  ];
  for (const [raw, canonical] of cases) {
    test(`${raw} prints as ${canonical}`, () => {
      expect(formatQuantity(parseQuantity(raw))).toBe(canonical);
    });
  }
});

describe('parseQuantity rejects malformed strings', () => {
  for (const raw of ['', 'foo', '1K', '10Mb', '1.2.3', 'Mi', '--1']) {
    test(`rejects ${JSON.stringify(raw)}`, () => {
      expect(() => parseQuantity(raw)).toThrow();
    });
  }
});

describe('integer quantities print like the kubelet prints observations', () => {
  test('binary bytes that are not a whole number of Ki print in plain bytes', () => {
    expect(formatQuantity(quantityFromInteger(10737418400n))).toBe('10737418400');
  });
  test('decimal counts print with SI suffixes', () => {
    expect(formatQuantity(quantityFromInteger(1200n, 'DecimalSI'))).toBe('1200');
    expect(formatQuantity(quantityFromInteger(50000n, 'DecimalSI'))).toBe('50k');
  });
  test('small binary values print in decimal', () => {
    expect(formatQuantity(quantityFromInteger(1000n))).toBe('1k');
  });
  test('comparison is exact', () => {
    expect(compareQuantity(parseQuantity('1Gi'), parseQuantity('1073741824'))).toBe(0);
    expect(compareQuantity(parseQuantity('1Gi'), parseQuantity('1073741825'))).toBe(-1);
  });
});

describe('parseQuantity errors use apimachinery\'s wording', () => {
  test('a string outside the quantity grammar is a format error', () => {
    expect(() => parseQuantity('100MB')).toThrow(/quantities must match the regular expression/);
    expect(() => parseQuantity('12%345')).toThrow(/quantities must match the regular expression/);
  });
  test('a grammatical string with an unknown suffix is a suffix error', () => {
    expect(() => parseQuantity('1K')).toThrow(/unable to parse quantity's suffix/);
  });
});

describe('parseQuantity remembers what it parsed', () => {
  test('a repeated string gives the same exact value, frozen, and a bad one throws every time', () => {
    const first = parseQuantity('1536Mi');
    expect(parseQuantity('1536Mi')).toEqual({ nanos: 1536n * 1024n * 1024n * 1_000_000_000n, format: 'BinarySI' });
    expect(Object.isFrozen(first)).toBe(true);
    for (let i = 0; i < 2; i++) expect(() => parseQuantity('12Qi')).toThrow(QuantityParseError);
  });

  test('past its limit it forgets in bulk and keeps parsing right', () => {
    for (let i = 0; i < 10_000; i++) expect(parseQuantity(`${i}Ki`).nanos).toBe(BigInt(i) * 1024n * 1_000_000_000n);
    expect(parseQuantity('0.5Gi')).toEqual({ nanos: 512n * 1024n * 1024n * 1_000_000_000n, format: 'BinarySI' });
  });
});

describe('parseQuantity is bounded as apimachinery bounds a quantity: at most 2^63-1, refused cheaply', () => {
  // Each case is refused (or parsed) without computing a power of ten the size of its exponent:
  // before the bound, 1e100000000 took 13 s and 1e400000000 ran out of BigInt after 32 s.
  const cases: { name: string; raw: string; nanos?: bigint; refused?: RegExp }[] = [
    { name: 'exponent-1e8', raw: '1e100000000', refused: /^quantity too large: at most 9223372036854775807 \(2\^63-1/ },
    { name: 'exponent-4e8', raw: '1e400000000', refused: /^quantity too large/ },
    { name: 'exponent-beyond-int32', raw: '1e99999999999', refused: /^unable to parse quantity's suffix$/ },
    { name: 'negative-exponent-beyond-int32', raw: '1e-99999999999', refused: /^unable to parse quantity's suffix$/ },
    { name: 'int64-max', raw: '9223372036854775807', nanos: 9223372036854775807n * 1_000_000_000n },
    { name: 'int64-max-plus-one', raw: '9223372036854775808', refused: /^quantity too large/ },
    { name: 'int64-max-and-a-half', raw: '9223372036854775807.5', refused: /^quantity too large/ },
    { name: 'negative-int64-max', raw: '-9223372036854775807', nanos: -9223372036854775807n * 1_000_000_000n },
    { name: 'negative-beyond', raw: '-1e100000000', refused: /^quantity too large/ },
    { name: '7Ei', raw: '7Ei', nanos: 7n * (1n << 60n) * 1_000_000_000n },
    { name: '8191Pi-just-below-2^63', raw: '8191Pi', nanos: 8191n * (1n << 50n) * 1_000_000_000n },
    { name: '8Ei-is-2^63', raw: '8Ei', refused: /^quantity too large/ },
    { name: 'many-digits-with-Ei', raw: '9999999999999999999Ei', refused: /^quantity too large/ },
    { name: '9E', raw: '9E', nanos: 9n * 10n ** 27n },
    { name: '10E', raw: '10E', refused: /^quantity too large/ },
    { name: 'zero-with-huge-exponent', raw: '0e2000000000', nanos: 0n },
    { name: 'tiny-rounds-up-to-a-nano', raw: '1e-400000000', nanos: 1n },
    { name: 'tiny-binary-rounds-up-to-a-nano', raw: `0.${'0'.repeat(40)}1Ki`, nanos: 1n },
    { name: 'sixty-four-digits', raw: `0.${'0'.repeat(62)}1`, nanos: 1n },
    { name: 'sixty-five-digits', raw: `${'0'.repeat(64)}1`, refused: /^quantities may have at most 64 digits$/ },
    { name: 'a-million-digits', raw: '1'.repeat(1_000_000), refused: /^quantities may have at most 64 digits$/ },
    { name: 'a-million-digit-fraction', raw: `0.${'5'.repeat(1_000_000)}`, refused: /^quantities may have at most 64 digits$/ },
    { name: 'a-million-digit-exponent', raw: `1e${'9'.repeat(1_000_000)}`, refused: /^unable to parse quantity's suffix$/ },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      if (tc.refused === undefined) {
        expect(parseQuantity(tc.raw).nanos).toBe(tc.nanos);
        return;
      }
      let caught: unknown;
      try {
        parseQuantity(tc.raw);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(QuantityParseError);
      expect((caught as Error).message).toMatch(tc.refused);
    });
  }
});
