// Parses a kernel pressure file (`<cgroup>/memory.pressure`, `io.pressure`, /proc/pressure/*):
//
//   some avg10=0.12 avg60=0.05 avg300=0.01 total=123456
//   full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// The averages are percentages of wall time with two decimals (kernel/sched/psi.c psi_show), the
// total is microseconds. A file of any other shape is refused rather than half read: a reading
// that might be wrong is worse than none.

import type { PressureFile, PsiAverages } from '../api/psi.js';

// Two short lines; anything much longer is not a pressure file.
const MAX_PRESSURE_FILE_CHARS = 512;
const LINE = /^(some|full) avg10=(\d{1,3}\.\d{2}) avg60=(\d{1,3}\.\d{2}) avg300=(\d{1,3}\.\d{2}) total=(\d{1,20})$/;

/** The file's two lines, or why it is not a pressure file. */
export function parsePressureFile(text: string): { readonly ok: true; readonly value: PressureFile } | { readonly ok: false; readonly reason: string } {
  if (text.length > MAX_PRESSURE_FILE_CHARS) return { ok: false, reason: `longer than ${MAX_PRESSURE_FILE_CHARS} characters` };
  const lines: Partial<Record<'some' | 'full', PsiAverages>> = {};
  for (const raw of text.split('\n')) {
    if (raw === '') continue;
    const match = LINE.exec(raw);
    if (match === null) return { ok: false, reason: `not a pressure line: ${JSON.stringify(raw.slice(0, 80))}` };
    const name = match[1] as 'some' | 'full';
    if (lines[name] !== undefined) return { ok: false, reason: `two "${name}" lines` };
    const averages = [match[2], match[3], match[4]].map(Number) as [number, number, number];
    if (averages.some((p) => p > 100)) return { ok: false, reason: `an average above 100%: ${JSON.stringify(raw)}` };
    lines[name] = { avg10Percent: averages[0], avg60Percent: averages[1], avg300Percent: averages[2], totalUs: BigInt(match[5] as string) };
  }
  if (lines.some === undefined) return { ok: false, reason: 'no "some" line' };
  return { ok: true, value: { some: lines.some, full: lines.full ?? null } };
}
