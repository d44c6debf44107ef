// The reaction-latency benchmark's busy node at a lower priority than the agent
// (KEA_BENCH_BUSY_NICE): the setting's bounds, and the page saying which priority was measured; the
// iterations per scenario (KEA_BENCH_LATENCY_ITERATIONS) within their bounds.

import type { PartResult } from '../../../bench/lib/part.js';
import { busyNiceFromEnv, iterationsFor, type LatencyScenario, type ReactionLatencyData } from '../../../bench/parts/reaction-latency.js';
import { latencySection } from '../../../bench/report/section-latency.js';

const machine = { date: '2026-12-03 12:00 UTC', os: 'Linux', cpu: 'test', cores: 2, memoryBytes: 1, node: 'v20', cgroup: 'v1', loadAverage: 1 } as unknown as PartResult['machine'];
const spread = { count: 1, min: 1, median: 2, p90: 3, p99: 4, max: 5, mean: 2 };

function scenario(key: LatencyScenario['key'], busyProcesses: number, busyNice?: number): LatencyScenario {
  return {
    key,
    label: key,
    pods: 110,
    busyProcesses,
    ...(busyNice === undefined ? {} : { busyNice }),
    idleProcesses: 98,
    iterations: 1,
    failures: [],
    samples: [],
    stages: { toNotified: spread, toShortcut: spread, toTermination: spread, toApiRequest: spread, toGone: spread },
    notifiedToTermination: spread,
    shortcutKills: 1,
    loadAverage: 1,
  };
}

function page(busyNice?: number): string {
  const data: ReactionLatencyData = { scenarios: [scenario('idle-110', 0), scenario('busy-110', 2, busyNice)], notifierAlone: null };
  return latencySection({ part: 'reaction-latency', machine, quick: false, durationMs: 1, skipped: null, error: null, data } as PartResult<ReactionLatencyData>).markdown;
}

describe('KEA_BENCH_BUSY_NICE', () => {
  test.each([
    [undefined, 0],
    ['', 0],
    ['0', 0],
    ['10', 10],
    ['19', 19],
  ])('%p runs the busy processes at nice %p', (raw, nice) => {
    expect(busyNiceFromEnv(raw)).toBe(nice);
  });

  test.each(['-5', '20', '1.5', 'ten'])('%p is refused by name', (raw) => {
    expect(() => busyNiceFromEnv(raw)).toThrow(`KEA_BENCH_BUSY_NICE: ${raw} is not a whole number from 0 to 19`);
  });

  test('the page says at which priority the busy processes ran', () => {
    expect(page(10)).toContain("at nice 10, below the agent's 0");
    expect(page(10)).not.toContain("at the agent's own priority");
    expect(page(0)).toContain("at the agent's own priority");
    // Results recorded before the setting existed ran them at the agent's priority.
    expect(page(undefined)).toContain("at the agent's own priority");
  });
});

test('KEA_BENCH_LATENCY_ITERATIONS sets the reactions per scenario within bounds, 200 (10 quick) without it', () => {
  expect(iterationsFor(false, undefined)).toBe(200);
  expect(iterationsFor(true, '')).toBe(10);
  expect(iterationsFor(false, '100')).toBe(100);
  for (const bad of ['0', '-1', '1.5', 'many', '10001']) expect(() => iterationsFor(false, bad)).toThrow(/KEA_BENCH_LATENCY_ITERATIONS/);
});
