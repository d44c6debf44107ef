// The agent's figures as ratios to the C references of the same run: each ratio is the agent's
// figure over the reference's, judged against issue 30's targets, and printed by `npm run bench`
// on its own line as `ratio <what>: <value>× (target ≤ <target>×)`; the reaction section puts the
// reference's figures beside the agent's and judges them by these ratios.

import type { PartResult } from '../../../bench/lib/part.js';
import { distribution, MiB } from '../../../bench/lib/stats.js';
import type { NodeCostData } from '../../../bench/parts/node-cost.js';
import type { OomRaceData, RaceRun } from '../../../bench/parts/oom-race.js';
import type { LatencyScenario, ReactionLatencyData } from '../../../bench/parts/reaction-latency.js';
import { allRatios, ratioLine, ratioMet } from '../../../bench/report/ratios.js';
import { latencySection } from '../../../bench/report/section-latency.js';

const machine = { date: '2026-12-04 22:00 UTC', os: 'Linux', cpu: 'test', cores: 2, memoryBytes: 1, node: 'v20', cgroup: 'v1', loadAverage: 1 } as unknown as PartResult['machine'];
const LINE = /^ratio (?<what>[^:]+): (?<value>\d+(\.\d+)?)× \(target ≤ (?<target>\d+(\.\d+)?)×\)$/;

function scenario(key: LatencyScenario['key'], agentKillMs: number[], referenceKillMs: number[] | null): LatencyScenario {
  const d = distribution(agentKillMs);
  return {
    key,
    label: key,
    pods: key === 'idle-1000' ? 1000 : 110,
    busyProcesses: key === 'busy-110' ? 2 : 0,
    idleProcesses: 98,
    iterations: agentKillMs.length,
    failures: [],
    samples: agentKillMs.map((ms) => ({ toNotified: 0.5, toShortcut: ms, toTermination: ms, toApiRequest: ms + 10, toGone: ms + 5 })),
    stages: { toNotified: distribution(agentKillMs.map(() => 0.5)), toShortcut: d, toTermination: d, toApiRequest: null, toGone: null },
    notifiedToTermination: distribution(agentKillMs.map((ms) => ms - 0.5)),
    shortcutKills: agentKillMs.length,
    loadAverage: 1,
    ...(referenceKillMs === null
      ? {}
      : {
          reference: {
            iterations: referenceKillMs.length,
            failures: [],
            samples: referenceKillMs.map((ms) => ({ toNotified: ms - 0.01, toTermination: ms, toGone: ms + 10 })),
            stages: { toNotified: distribution(referenceKillMs.map((ms) => ms - 0.01)), toTermination: distribution(referenceKillMs), toGone: distribution(referenceKillMs.map((ms) => ms + 10)) },
          },
        }),
  };
}

function raceRun(variant: string, overshootMiB: number | null, outcome: RaceRun['outcome'] = 'evicted'): RaceRun {
  return { variant, rate: 'asap', processes: 1, run: 0, outcome, overshootAtKillBytes: overshootMiB === null ? null : overshootMiB * MiB } as unknown as RaceRun;
}

const result = <T>(part: string, data: T): PartResult => ({ part, machine, revision: null, quick: true, durationMs: 1, skipped: null, error: null, data }) as PartResult;

function results(): Map<string, PartResult> {
  // Agent 2, 3, 4, 5 ms against a reference of 0.5 and 1 ms (nearest-rank percentiles): median 3 / 0.5, p99 5 / 1.
  const latency: ReactionLatencyData = { scenarios: [scenario('idle-110', [2, 3, 4, 5], [0.5, 0.5, 1, 1]), scenario('busy-110', [1, 1], [1, 1])], notifierAlone: null };
  const race = {
    // The OOM killer's run (no kill) and the reference's loss are not overshoots.
    runs: [raceRun('notifier-local', 3), raceRun('notifier-local', 6), raceRun('notifier-local', null, 'oom'), raceRun('reference-c', 2), raceRun('reference-c', 40, 'oom'), raceRun('poll1-local', 100)],
  } as unknown as OomRaceData;
  const cost = {
    points: [
      { pods: 110, observeCpu: distribution([9]), decide: distribution([0.6]), reference: { kind: 'measured', cpuPerPassMs: 8, passMs: distribution([8]), passes: 300, ops: {} } },
      { pods: 1000, observeCpu: distribution([50]), decide: null, reference: { kind: 'skipped', reason: 'no C compiler' } },
    ],
  } as unknown as NodeCostData;
  return new Map([
    ['oom-race', result('oom-race', race)],
    ['reaction-latency', result('reaction-latency', latency)],
    ['node-cost', result('node-cost', cost)],
  ]);
}

test('each ratio is printed on its own line as `ratio <what>: <value>× (target ≤ <target>×)`', () => {
  const lines = allRatios(results()).flatMap((r) => ratioLine(r) ?? []);
  expect(lines).toEqual([
    'ratio OOM race overshoot max: 3.00× (target ≤ 1.5×)',
    'ratio reaction p99 110 pods idle: 5.00× (target ≤ 1.5×)',
    'ratio reaction median 110 pods idle: 6.00× (target ≤ 1.2×)',
    'ratio reaction p99 110 pods busy: 1.00× (target ≤ 1.5×)',
    'ratio reaction median 110 pods busy: 1.00× (target ≤ 1.2×)',
    'ratio pass CPU 110 pods: 1.20× (target ≤ 1.2×)',
  ]);
  for (const line of lines) expect(line).toMatch(LINE);
});

test('a ratio is met at or under its target, and unjudged (and not printed) when either side is missing', () => {
  const ratios = allRatios(results());
  expect(ratios.map((r) => [r.what, ratioMet(r)])).toEqual([
    ['OOM race overshoot max', false],
    ['reaction p99 110 pods idle', false],
    ['reaction median 110 pods idle', false],
    ['reaction p99 110 pods busy', true],
    ['reaction median 110 pods busy', true],
    ['pass CPU 110 pods', true],
  ]);
  const noReference = new Map([['reaction-latency', result('reaction-latency', { scenarios: [scenario('idle-110', [2], [0, 0])], notifierAlone: null })]]);
  const [p99] = allRatios(noReference);
  expect(p99?.value).toBeNull();
  expect(ratioMet(p99 as NonNullable<typeof p99>)).toBeNull();
  expect(ratioLine(p99 as NonNullable<typeof p99>)).toBeNull();
});

test('the reaction section judges by the ratios where the reference ran, with its figures and the previous round beside the agent', () => {
  const latency: ReactionLatencyData = { scenarios: [scenario('idle-110', [2, 3, 4, 5], [0.5, 0.5, 1, 1]), scenario('idle-1000', [3], null)], notifierAlone: null };
  const { headlines, markdown } = latencySection(result('reaction-latency', latency) as PartResult<ReactionLatencyData>);
  expect(headlines[0]?.target).toBe("p99 ≤ 1.5× the reference's, median ≤ 1.2×");
  expect(headlines[0]?.result).toMatch(/^p99 5\.00 ms against 1\.00 ms \(×5\.00\), median 3\.00 against 0\.50 ms \(×6\.00\); 4 and 4 reactions/);
  expect(headlines[0]?.result).toContain('previous round p99 14.2, median 2.89 ms');
  expect(headlines[0]?.met).toBe(false);
  expect(headlines[0]?.note).toMatch(/against kernel → the reference's epoll_wait/);
  // A scenario recorded without the reference keeps its absolute target.
  expect(headlines[1]?.target).toBe('p99 < 10 ms');
  expect(markdown).toContain('| agent ÷ reference, local kill issued: median / p99 | ×6.00 / ×5.00 | – |');
  expect(markdown).toContain('| previous round: local termination issued, median / p99 | 2.89 / 14.2 | 7.86 / 29.6 |');
});
