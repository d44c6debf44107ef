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
