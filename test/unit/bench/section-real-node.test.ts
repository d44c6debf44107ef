// The real node's benchmark section: per-rate figures beside the sandbox's (measured, like them,
// from the notification), every run listed, and a headline that a kernel OOM kill or a failed run
// misses.

import type { PartResult } from '../../../bench/lib/part.js';
import type { RealNodeData, RealNodeSample } from '../../../bench/parts/real-node.js';
import { summarizeRealNode } from '../../../bench/parts/real-node.js';
import type { LatencySample, LatencyScenario, ReactionLatencyData } from '../../../bench/parts/reaction-latency.js';
import { realNodeSection } from '../../../bench/report/section-real-node.js';

const machine = { date: '2026-12-02 03:00 UTC', os: 'Linux', cpu: 'test', cores: 2, memoryBytes: 1, node: 'v20', cgroup: 'v1', loadAverage: 1 } as unknown as PartResult['machine'];

function sample(rateMi: number, toLocalTermination: number, oomKills = 0): RealNodeSample {
  return { rateMi, toLocalTermination, toDelete: toLocalTermination + 200, passStart: 1, observe: 2, observedPods: 2, createdToDeletedMs: 5000, oomKills, loadAverage: '1.0 1.0 1.0' };
}

function result(samples: RealNodeSample[], failures: string[] = []): PartResult<RealNodeData> {
  return { part: 'real-node', machine, quick: false, durationMs: 60_000, skipped: null, error: null, data: { versions: 'kubelet v1.37.2', samples, rates: summarizeRealNode(samples), failures } };
}

function scenario(key: LatencyScenario['key'], label: string, pods: number): LatencyScenario {
  return {
    key,
    label,
    pods,
    busyProcesses: 0,
    idleProcesses: 98,
    iterations: 3,
    failures: [],
    // From the crossing; the section subtracts toNotified: 10, 12, 14 ms to termination.
    samples: [10, 12, 14].map((t): LatencySample => ({ toNotified: 1, toShortcut: null, toTermination: t + 1, toApiRequest: t + 3, toGone: t + 20 })),
    stages: { toNotified: null, toShortcut: null, toTermination: null, toApiRequest: null, toGone: null },
    notifiedToTermination: null,
    shortcutKills: 0,
    loadAverage: 1,
  };
}

const sandbox: PartResult<ReactionLatencyData> = {
  part: 'reaction-latency',
  machine,
  quick: false,
  durationMs: 1,
  skipped: null,
  error: null,
  // The 1,000-pod node is not shown beside a 2-pod real node.
  data: { scenarios: [scenario('idle-110', '110 pods, idle machine', 110), scenario('idle-1000', '1000 pods, idle machine', 1000)], notifierAlone: null },
};

test('each rate beside the sandbox, from the notification; every run listed; the headline met with no OOM kill', () => {
  const section = realNodeSection(result([sample(40, 5), sample(400, 20), sample(40, 6), sample(400, 25), sample(40, 7), sample(400, 30)]), '6. Real node', sandbox);
  const row = (label: string): string | undefined => section.markdown.split('\n').find((l) => l.startsWith(`| ${label} |`));
  expect(row('notification → local termination, real node, 40 MiB/s leak')).toBe('| notification → local termination, real node, 40 MiB/s leak | 6.00 | 7.00 | 7.00 | 3 |');
  expect(row('notification → local termination, real node, 400 MiB/s leak')).toMatch(/^\| [^|]+ \| 25\.0 \| 30\.0 \| 30\.0 \| 3 \|$/);
  expect(row('notification → local termination, sandbox (part 2, 110 pods, idle machine, API stand-in)')).toMatch(/^\| [^|]+ \| 12\.0 \| [^|]+ \| 14\.0 \| 3 \|$/);
  expect(row('notification → API DELETE sent, sandbox (part 2, 110 pods, idle machine, API stand-in)')).toMatch(/^\| [^|]+ \| 14\.0 \| [^|]+ \| 16\.0 \| 3 \|$/);
  expect(section.markdown).not.toContain('1000 pods');
  expect(section.markdown.split('\n').filter((l) => /^\| (40|400) \|/.test(l))).toHaveLength(6);
  expect(section.headlines[0]).toMatchObject({ result: '6 of 6 runs', met: true });
  expect(section.headlines[1]?.result).toMatch(/^median .* ms, max 30\.0 ms \(6 runs at 40 and 400 MiB\/s\)$/);
});

test('a run the kernel OOM killer reached, or a failed run, misses the headline; without the sandbox only the real node shows', () => {
  const killed = realNodeSection(result([sample(40, 5), sample(400, 20, 1)]), '6. Real node', undefined);
  expect(killed.headlines[0]).toMatchObject({ result: '1 of 2 runs', met: false });
  expect(killed.markdown).not.toContain('sandbox (part 2');
  const failed = realNodeSection(result([sample(40, 5)], ['400 MiB/s: the pod was not deleted']), '6. Real node', undefined);
  expect(failed.headlines[0]).toMatchObject({ result: '1 of 1 runs, 1 failed', met: false });
  expect(failed.markdown).toContain('1 run(s) failed: 400 MiB/s: the pod was not deleted');
});
