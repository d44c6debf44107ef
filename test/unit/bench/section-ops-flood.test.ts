// The ops port flood's benchmark section: every run listed, a headline on the worst run's RSS growth
// (whatever its size or start) against the bound CI used to assert, one on the probes, and a note
// only when the agent held more than its limit and the one connection being refused.

import type { PartResult } from '../../../bench/lib/part.js';
import type { OpsFloodData, OpsFloodRun } from '../../../bench/parts/ops-flood.js';
import { opsFloodSection } from '../../../bench/report/section-ops-flood.js';

const machine = { date: '2026-12-04 16:00 UTC', os: 'Linux', cpu: 'test', cores: 2, memoryBytes: 1, node: 'v20', cgroup: 'v1', loadAverage: 1 } as unknown as PartResult['machine'];
const MiB = 1024 * 1024;

function run(connections: number, growthMiB: number, options: { heldMax?: number; probesAnswered?: number } = {}): OpsFloodRun {
  return {
    connections,
    slow: connections / 31,
    floodMs: 20_000,
    opened: connections * 40,
    heldMax: options.heldMax ?? 32,
    rssBeforeBytes: 80 * MiB,
    rssPeakBytes: (80 + growthMiB) * MiB,
    rssAfterBytes: (80 + growthMiB) * MiB,
    probesAnswered: options.probesAnswered ?? 30,
    probesSent: 30,
    probeMs: { count: 30, min: 5, median: 20, p90: 50, p99: 90, max: 100, mean: 25 },
  };
}

function section(image: OpsFloodRun[], plain: OpsFloodRun[]) {
  const data: OpsFloodData = {
    maxConnections: 32,
    probeMaxConnections: 8,
    variants: [
      { label: 'as the image starts it', nodeOptions: ['--max-semi-space-size=2'], rssStartBytes: 73 * MiB, runs: image },
      { label: 'plain node (as the CI test)', nodeOptions: [], rssStartBytes: 84 * MiB, runs: plain },
    ],
  };
  return opsFloodSection({ part: 'ops-flood', machine, quick: false, durationMs: 300_000, skipped: null, error: null, data }, '7. Ops port flood');
}

describe('the ops port flood section', () => {
  const cases: { name: string; image: OpsFloodRun[]; plain: OpsFloodRun[]; growth: { result: string; met: boolean; note?: string }; probes: { result: string; met: boolean } }[] = [
    {
      name: 'the worst run decides, whatever its size or start',
      image: [run(775, 2), run(3100, 1.5)],
      plain: [run(775, 11.6), run(3100, 3)],
      growth: { result: '+11.6 MiB (775 at once, plain node (as the CI test))', met: true },
      probes: { result: '120 of 120', met: true },
    },
    {
      name: 'growth past 48 MiB misses',
      image: [run(775, 2), run(3100, 49)],
      plain: [run(775, 3), run(3100, 3)],
      growth: { result: '+49.0 MiB (3,100 at once, as the image starts it)', met: false },
      probes: { result: '120 of 120', met: true },
    },
    {
      name: 'one over the limit is the connection being refused; two over is noted',
      image: [run(775, 2, { heldMax: 33 }), run(3100, 2, { heldMax: 34 })],
      plain: [run(775, 2), run(3100, 2)],
      growth: { result: '+2.00 MiB (775 at once, as the image starts it)', met: true, note: 'the agent held 34 connections, over its limit of 32 and the one being refused' },
      probes: { result: '120 of 120', met: true },
    },
    {
      name: 'a probe not answered misses',
      image: [run(775, 2), run(3100, 2, { probesAnswered: 29 })],
      plain: [run(775, 2), run(3100, 2)],
      growth: { result: '+2.00 MiB (775 at once, as the image starts it)', met: true },
      probes: { result: '119 of 120', met: false },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const { headlines, markdown } = section(tc.image, tc.plain);
      expect(headlines.map((h) => ({ result: h.result, met: h.met, ...(h.note === undefined ? {} : { note: h.note }) }))).toEqual([tc.growth, tc.probes]);
      // Every run is a row.
      expect(markdown.split('\n').filter((l) => /^\| (as the image|plain node)/.test(l))).toHaveLength(tc.image.length + tc.plain.length);
    });
  }
});
