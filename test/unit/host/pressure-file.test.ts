// The kernel pressure file parser: both lines of a real file read exactly, and every other shape
// refused with its reason rather than half read.

import { parsePressureFile } from '../../../src/host/pressure-file.js';

describe('parsePressureFile', () => {
  test('a cgroup v2 memory.pressure: both lines, averages in percent and the total in microseconds', () => {
    const parsed = parsePressureFile('some avg10=12.34 avg60=5.06 avg300=1.00 total=123456789\nfull avg10=11.99 avg60=4.50 avg300=0.98 total=120000000\n');
    expect(parsed).toEqual({
      ok: true,
      value: {
        some: { avg10Percent: 12.34, avg60Percent: 5.06, avg300Percent: 1, totalUs: 123456789n },
        full: { avg10Percent: 11.99, avg60Percent: 4.5, avg300Percent: 0.98, totalUs: 120000000n },
      },
    });
  });

  test('an old kernel\'s CPU file has no full line', () => {
    const parsed = parsePressureFile('some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n');
    expect(parsed.ok && parsed.value.full).toBeNull();
  });

  test.each([
    ['empty', '', 'no "some" line'],
    ['full only', 'full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n', 'no "some" line'],
    ['a field missing', 'some avg10=0.00 avg60=0.00 total=0\n', 'not a pressure line'],
    ['a negative average', 'some avg10=-1.00 avg60=0.00 avg300=0.00 total=0\n', 'not a pressure line'],
    ['an average over 100', 'some avg10=100.01 avg60=0.00 avg300=0.00 total=0\n', 'an average above 100%'],
    ['a line twice', 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=0\n', 'two "some" lines'],
    ['memory.stat by mistake', 'anon 4096\nfile 0\n', 'not a pressure line'],
    ['too long', `some avg10=0.00 avg60=0.00 avg300=0.00 total=0\n${'x'.repeat(600)}`, 'longer than 512 characters'],
  ])('refused: %s', (_name, text, reason) => {
    const parsed = parsePressureFile(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });
});
