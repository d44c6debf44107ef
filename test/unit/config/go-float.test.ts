// Go's strconv.ParseFloat(s, 32), which the kubelet uses for eviction percentages: syntax, error
// wording, and rounding to float32 directly from the decimal string.

import { GoFloatError, parseGoFloat32 } from '../../../src/config/go-float.js';

describe('parseGoFloat32 rounds to the nearest float32', () => {
  const cases: { name: string; text: string; value: number }[] = [
    { name: 'integer', text: '10', value: 10 },
    { name: 'fraction', text: '10.5', value: 10.5 },
    { name: 'tenth', text: '0.1', value: Math.fround(0.1) },
    { name: 'leading-dot', text: '.5', value: 0.5 },
    { name: 'trailing-dot', text: '5.', value: 5 },
    { name: 'plus-sign', text: '+7', value: 7 },
    { name: 'negative', text: '-15', value: -15 },
    { name: 'exponent', text: '1e1', value: 10 },
    { name: 'negative-exponent', text: '25e-1', value: 2.5 },
    { name: 'hex-float', text: '0x1p-2', value: 0.25 },
    { name: 'hex-float-underscore', text: '0x_1p-2', value: 0.25 },
    { name: 'infinity', text: 'inf', value: Infinity },
    { name: 'negative-infinity', text: '-Infinity', value: -Infinity },
    { name: 'largest-float32', text: '3.4028234663852886e38', value: 3.4028234663852886e38 },
    { name: 'underflow-to-zero', text: '1e-60', value: 0 },
    { name: 'smallest-subnormal', text: '1.401298464324817e-45', value: 2 ** -149 },
    // Just above the midpoint between 1 and the next float32: float64 rounds it onto the midpoint,
    // and rounding that again gives 1, but the correctly rounded float32 is the next one up.
    { name: 'no-double-rounding', text: '1.0000000596046447753906250001', value: 1 + 2 ** -23 },
    { name: 'exact-midpoint-ties-to-even', text: '1.000000059604644775390625', value: 1 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(parseGoFloat32(tc.text)).toBe(tc.value);
    });
  }

  test('nan parses to NaN (the caller refuses it)', () => {
    expect(parseGoFloat32('NaN')).toBeNaN();
  });

  test('no-double-rounding really differs from Math.fround(parseFloat(s))', () => {
    expect(Math.fround(Number.parseFloat('1.0000000596046447753906250001'))).toBe(1);
  });
});

describe('parseGoFloat32 rejects what Go rejects, with Go\'s message', () => {
  const cases: { name: string; text: string; message: string }[] = [
    { name: 'word', text: 'foo', message: 'strconv.ParseFloat: parsing "foo": invalid syntax' },
    { name: 'empty', text: '', message: 'strconv.ParseFloat: parsing "": invalid syntax' },
    { name: 'embedded-percent', text: '12%345', message: 'strconv.ParseFloat: parsing "12%345": invalid syntax' },
    { name: 'two-dots', text: '1.2.3', message: 'strconv.ParseFloat: parsing "1.2.3": invalid syntax' },
    { name: 'underscore-in-decimal', text: '1_0', message: 'strconv.ParseFloat: parsing "1_0": invalid syntax' },
    { name: 'exponent-without-digits', text: '1e', message: 'strconv.ParseFloat: parsing "1e": invalid syntax' },
    { name: 'hex-without-p-exponent', text: '0x10', message: 'strconv.ParseFloat: parsing "0x10": invalid syntax' },
    { name: 'signed-nan', text: '+nan', message: 'strconv.ParseFloat: parsing "+nan": invalid syntax' },
    { name: 'space', text: ' 10', message: 'strconv.ParseFloat: parsing " 10": invalid syntax' },
    { name: 'overflow', text: '1e39', message: 'strconv.ParseFloat: parsing "1e39": value out of range' },
    { name: 'overflow-huge-exponent', text: '1e99999', message: 'strconv.ParseFloat: parsing "1e99999": value out of range' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(() => parseGoFloat32(tc.text)).toThrow(GoFloatError);
      expect(() => parseGoFloat32(tc.text)).toThrow(tc.message);
    });
  }
});
