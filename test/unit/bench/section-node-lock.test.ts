// The node lock takeover's benchmark section: a headline per variant on its worst run against ten
// poll intervals, a note only when that is missed (how many runs, the p90), and every variant's row.

import type { PartResult } from '../../../bench/lib/part.js';
import type { NodeLockData } from '../../../bench/parts/node-lock.js';
import { nodeLockSection } from '../../../bench/report/section-node-lock.js';
import { distribution } from '../../../bench/lib/stats.js';

const machine = { date: '2026-12-04 16:00 UTC', os: 'Linux', cpu: 'test', cores: 2, memoryBytes: 1, node: 'v20', cgroup: 'v1', loadAverage: 1 } as unknown as PartResult['machine'];

function section(idle: number[], busy: number[]) {
  const data: NodeLockData = {
    pollIntervalMs: 20,
    variants: [
      { label: 'idle machine', takeoverMs: idle, takeover: distribution(idle) },
      { label: 'CPUs saturated by two busy processes', takeoverMs: busy, takeover: distribution(busy) },
    ],
  };
  return nodeLockSection({ part: 'node-lock', machine, quick: false, durationMs: 90_000, skipped: null, error: null, data }, '8. Node lock takeover');
}

test('each variant is judged on its worst run against ten poll intervals; a miss says how many runs and the p90', () => {
  const { headlines, markdown } = section([20, 25, 30], [40, 250, 60, 70]);
  expect(headlines.map((h) => [h.target, h.result, h.met])).toEqual([
    ['< 200 ms', 'max 30.0 ms, median 25.0 ms', true],
    ['< 200 ms', 'max 250 ms, median 60.0 ms', false],
  ]);
  expect(headlines[0]?.note).toBeUndefined();
  expect(headlines[1]?.note).toMatch(/^1 of 4 runs at or over 200 ms \(p90 /);
  expect(markdown).toContain('| idle machine | 3 | 20.0 | 25.0 |');
  expect(markdown).toContain('The worst run here: 250 ms');
});
