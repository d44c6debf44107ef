// The reaction latency section: each stage of a reaction measured from the kernel-side threshold
// crossing (median, p99, max) in three scenarios side by side — 110 pods on an idle machine, the
// same node with two busy processes saturating the CPUs, the node grown to 1,000 pods — the
// notifier alone for comparison, a chart, and the headlines against issue 14's targets (p99 under
// 5 ms to local termination at 110 pods, under 10 ms on a busy node and at 1,000 pods), replaced
// where the C reference killer ran beside the agent by issue 30's ratios to it (p99 ≤ 1.5×, median
// ≤ 1.2×), with the previous round's figures kept for comparison.

import type { PartResult } from '../lib/part.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';
import { LATENCY_BLOCK, type LatencyScenario, type LatencyStage, type ReactionLatencyData, type ScenarioKey } from '../parts/reaction-latency.js';
import { chartCaption, measuredOn, table, type Headline, type Section } from './markdown.js';
import { rangeChart } from './svg.js';
import { fmtRatio, ratioMet, reactionRatios, TARGET_REACTION_MEDIAN_RATIO, TARGET_REACTION_P99_RATIO } from './ratios.js';

/** Round 2's figures (before the reference killer ran beside the agent), kept for comparison: local kill p99 / median, ms. */
export const PREVIOUS_ROUND_MS: Readonly<Partial<Record<ScenarioKey, { readonly p99: number; readonly median: number }>>> = {
  'idle-110': { p99: 14.2, median: 2.89 },
  'busy-110': { p99: 15.2, median: 2.35 },
  'idle-1000': { p99: 29.6, median: 7.86 },
};

/** p99 targets, ms from the crossing to local termination being issued. */
export const LATENCY_TARGETS_P99_MS: Readonly<Record<ScenarioKey, number>> = { 'idle-110': 5, 'busy-110': 10, 'idle-1000': 10, 'busy-1000': 10 };

const WHAT: Readonly<Record<ScenarioKey, string>> = {
  'idle-110': 'kernel event → local termination issued, 110 pods, idle machine',
  'busy-110': 'the same, the CPUs saturated by two busy processes (a busy node)',
  'idle-1000': 'the same, 1,000 pods',
  'busy-1000': 'the same, 1,000 pods, the CPUs saturated',
};

const STAGES: readonly { key: LatencyStage; label: string; short: string }[] = [
  { key: 'toNotified', label: "the agent woken (the kill path's thread, or the notifier's onEvent on the main thread, whichever first)", short: 'woken' },
  { key: 'toTermination', label: 'local termination issued (SIGTERM)', short: 'local kill issued' },
  { key: 'toShortcut', label: 'the eviction noted on the main thread (after the kill)', short: 'eviction noted' },
  { key: 'toApiRequest', label: 'API DELETE sent', short: 'API DELETE sent' },
  { key: 'toGone', label: "pod's processes gone (reaped)", short: 'processes gone' },
];

const COLORS: Readonly<Record<ScenarioKey, string>> = { 'idle-110': '#009E73', 'busy-110': '#D55E00', 'idle-1000': '#0072B2', 'busy-1000': '#CC79A7' };

const cell = (d: Distribution | null | undefined): string => (d === null || d === undefined ? '–' : `${fmt(d.median)} / ${fmt(d.p99)} / ${fmt(d.max)}`);

function referenceHeadline(s: LatencyScenario, loadAverage: number, cores: number): Headline {
  const [p99, median] = reactionRatios({ scenarios: [s], notifierAlone: null });
  const agent = s.stages.toTermination;
  const ref = s.reference?.stages;
  const previous = PREVIOUS_ROUND_MS[s.key];
  const met = p99 === undefined || median === undefined || ratioMet(p99) === null || ratioMet(median) === null ? null : ratioMet(p99) === true && ratioMet(median) === true;
  const times = (r: typeof p99): string => (r?.value === null || r === undefined ? '–' : `×${fmtRatio(r.value)}`);
  return {
    what: `${WHAT[s.key]}, against the C reference killer in the same run`,
    target: `p99 ≤ ${TARGET_REACTION_P99_RATIO}× the reference's, median ≤ ${TARGET_REACTION_MEDIAN_RATIO}×`,
    result:
      agent === null || ref?.toTermination === null || ref === undefined
        ? 'no sample'
        : `p99 ${fmt(agent.p99)} ms against ${fmt(ref.toTermination.p99)} ms (${times(p99)}), median ${fmt(agent.median)} against ${fmt(ref.toTermination.median)} ms (${times(median)}); ${agent.count} and ${ref.toTermination.count} reactions, ${killsBy(s)}${previous === undefined ? '' : `; previous round p99 ${fmt(previous.p99)}, median ${fmt(previous.median)} ms`}`,
    met,
    ...(met === false
      ? {
          note: `kernel → the agent woken p99 ${fmt(s.stages.toNotified?.p99)} ms (median ${fmt(s.stages.toNotified?.median)}) against kernel → the reference's epoll_wait p99 ${fmt(ref?.toNotified?.p99)} ms (median ${fmt(ref?.toNotified?.median)}); wake-up → kill inside the agent p99 ${fmt(s.notifiedToTermination?.p99)} ms (median ${fmt(s.notifiedToTermination?.median)}) against the reference's ${fmt(referenceInside(s)?.p99)} ms (median ${fmt(referenceInside(s)?.median)}); ${killsBy(s)}; load average ${s.loadAverage.toFixed(1)} when the scenario started, ${loadAverage.toFixed(1)} at the part's start, on ${cores} shared cores`,
        }
      : {}),
  };
}

/** Which path issued the scenario's kills. */
function killsBy(s: LatencyScenario): string {
  const shortcut = s.shortcutKills - (s.killPathKills ?? 0);
  return s.killPathKills === undefined ? `${s.shortcutKills} by the memory shortcut` : `${s.killPathKills} by the kill path, ${shortcut} by the memory shortcut, ${s.samples.length - s.shortcutKills} by a pass`;
}

/** The reference's own notification → kill, per reaction. */
function referenceInside(s: LatencyScenario): Distribution | null {
  return distribution((s.reference?.samples ?? []).flatMap((r) => (r.toNotified === null || r.toTermination === null ? [] : [r.toTermination - r.toNotified])));
}

function headline(s: LatencyScenario, loadAverage: number, cores: number): Headline {
  if (s.reference !== undefined) return referenceHeadline(s, loadAverage, cores);
  const targetMs = LATENCY_TARGETS_P99_MS[s.key];
  const d = s.stages.toTermination;
  const missed = d !== null && d.p99 >= targetMs;
  return {
    what: WHAT[s.key],
    target: `p99 < ${targetMs} ms`,
    result: d === null ? 'no sample' : `p99 ${fmt(d.p99)} ms, median ${fmt(d.median)} ms (${d.count} reactions, ${killsBy(s)})`,
    met: d === null ? null : !missed,
    ...(missed
      ? {
          note: `of which kernel → the agent woken p99 ${fmt(s.stages.toNotified?.p99)} ms (median ${fmt(s.stages.toNotified?.median)}) and notification → kill inside the agent p99 ${fmt(s.notifiedToTermination?.p99)} ms (median ${fmt(s.notifiedToTermination?.median)}); load average ${s.loadAverage.toFixed(1)} when the scenario started, ${loadAverage.toFixed(1)} at the part's start, on ${cores} shared cores`,
        }
      : {}),
  };
}

export function latencySection(result: PartResult<ReactionLatencyData>): Section {
  const data = result.data as ReactionLatencyData;
  const scenarios = data.scenarios;
  const headlines: Headline[] = scenarios.map((s) => headline(s, result.machine.loadAverage, result.machine.cores));
  const idle = scenarios.find((s) => s.key === 'idle-110');
  if (idle !== undefined) {
    headlines.push({
      what: 'kernel event → API DELETE sent, 110 pods, idle machine',
      target: '–',
      result: idle.stages.toApiRequest === null ? 'no sample' : `p99 ${fmt(idle.stages.toApiRequest.p99)} ms, median ${fmt(idle.stages.toApiRequest.median)} ms`,
      met: null,
    });
  }

  const rows = STAGES.map((stage) => [stage.label, ...scenarios.map((s) => cell(s.stages[stage.key]))]);
  rows.push(['(inside the agent: wake-up → local termination)', ...scenarios.map((s) => cell(s.notifiedToTermination))]);
  if (scenarios.some((s) => s.reference !== undefined)) {
    rows.push(['**C reference killer**, same run: event reaches its epoll_wait', ...scenarios.map((s) => cell(s.reference?.stages.toNotified))]);
    rows.push(['**C reference killer**: kill issued (SIGKILL)', ...scenarios.map((s) => cell(s.reference?.stages.toTermination))]);
    rows.push(['**C reference killer**: its processes gone (reaped)', ...scenarios.map((s) => cell(s.reference?.stages.toGone))]);
    rows.push(['(inside the reference: event → kill)', ...scenarios.map((s) => cell(referenceInside(s)))]);
    rows.push([
      'agent ÷ reference, local kill issued: median / p99',
      ...scenarios.map((s) => {
        const [p99, median] = reactionRatios({ scenarios: [s], notifierAlone: null });
        return p99?.value === null || median?.value === null || p99 === undefined || median === undefined ? '–' : `×${fmtRatio(median.value)} / ×${fmtRatio(p99.value)}`;
      }),
    ]);
    rows.push(['reference reactions measured (failed)', ...scenarios.map((s) => (s.reference === undefined ? '–' : `${s.reference.samples.length}${s.reference.failures.length > 0 ? ` (${s.reference.failures.length})` : ''}`))]);
  }
  rows.push(['previous round: local termination issued, median / p99', ...scenarios.map((s) => {
    const previous = PREVIOUS_ROUND_MS[s.key];
    return previous === undefined ? '– (not measured)' : `${fmt(previous.median)} / ${fmt(previous.p99)}`;
  })]);
  rows.push(['reactions measured (failed)', ...scenarios.map((s) => `${s.samples.length}${s.failures.length > 0 ? ` (${s.failures.length})` : ''}`)]);
  rows.push(['kills by the kill path / the memory shortcut / a pass', ...scenarios.map((s) => `${s.killPathKills ?? '–'} / ${s.shortcutKills - (s.killPathKills ?? 0)} / ${s.samples.length - s.shortcutKills}`)]);
  rows.push(['load average when the scenario started', ...scenarios.map((s) => s.loadAverage.toFixed(1))]);
  const alone = data.notifierAlone;
  const aloneRow = (label: string, d: Distribution | null): string[] => [label, fmt(d?.median), fmt(d?.p90), fmt(d?.p99), fmt(d?.max), String(d?.count ?? 0)];
  const aloneRows = alone === null ? [] : [aloneRow('crossing → onEvent, notifier alone', alone.latency), aloneRow('arming a threshold (registration off the main thread)', alone.arming)];
  const failures = scenarios.flatMap((s) => s.failures.map((f) => `${s.key}: ${f}`));

  const chartStages = STAGES.filter((s) => s.key !== 'toShortcut');
  const svg = rangeChart({
    title: 'Reaction, ms after the kernel-side crossing: median (dot) to p99',
    caption: chartCaption(result),
    yLabel: 'ms after the crossing',
    groups: chartStages.map((s) => ({ label: s.short })),
    series: scenarios.map((s) => ({ label: s.label, color: COLORS[s.key] })),
    values: chartStages.map((stage) =>
      scenarios.map((s) => {
        const d = s.stages[stage.key];
        return d === null ? null : { median: d.median, low: d.median, high: d.p99 };
      }),
    ),
    yMin: 0.1,
    yMax: Math.max(100, ...scenarios.flatMap((s) => chartStages.map((stage) => (s.stages[stage.key]?.p99 ?? 0) * 1.15))),
    log: true,
    reference: { value: LATENCY_TARGETS_P99_MS['idle-110'], label: `target: p99 < ${LATENCY_TARGETS_P99_MS['idle-110']} ms to the local kill (110 pods, idle)` },
    width: 900,
  });

  const busy = scenarios.find((s) => s.key === 'busy-110');
  const large = scenarios.find((s) => s.key === 'idle-1000');
  const markdown = `## 2. Reaction latency

How fast the agent reacts, from the kernel's point of view. The sandbox node starts with ${idle?.pods ?? 110} pods: every pod
exists in the API stand-in and has a real pod cgroup (${idle?.idleProcesses ?? '–'} of them with a tiny idle
process, a few empty, one holding most of the memory). Each iteration starts a fresh pod
whose process touches memory in 64 KiB steps, reading the node's \`memory.usage_in_bytes\` after each,
and notes the start of the step that crosses the armed threshold on CLOCK_MONOTONIC (a process
killed inside that step, before it could report, marked each step's start in a file from 2 MiB
below the threshold on: the last one it marked is its crossing, for the agent and the reference
alike); on the same clock the agent notes when it was woken and when local termination was issued
(the kill path's thread stamps both itself, and reports them after its kill), and hooks in the
agent's process note when the eviction reached the main thread, when the DELETE goes to the API,
and when the pod's process has been reaped. The agent (notifier + local termination, with the kill
path: docs/notifier.md) is the real run loop; the numbers include the kernel's own rate-limited
threshold check.

The **C reference killer** (\`bench/reference-killer.c\`, built with \`cc -O2\` at bench time) is
the physical limit on this machine: it registers the same threshold (an eventfd on the node
cgroup's \`memory.usage_in_bytes\` through \`cgroup.event_control\`), waits in one epoll set, and on
the event confirms with one reading of the usage, reads the victim's \`cgroup.procs\` and sends
SIGKILL, with no JavaScript, no engine and no API. It runs on a second sandbox node of the same
shape (the same ballast, pod cgroups and idle processes, grown to 1,000 pods with the agent's),
one iteration after each of the agent's, in the same idle and busy blocks, and its kill is noted
where the agent's is (before \`cgroup.procs\` is read). The targets are the agent's figures as
ratios to it.

${scenarios.some((s) => s.key === 'busy-1000') ? 'Four' : 'Three'} scenarios: **idle** (nothing else started by the bench); **busy node**: ${busy?.busyProcesses ?? 2} processes
spinning on the CPU (\`sh -c 'while :; do :; done'\`, one per core, ${(busy?.busyNice ?? 0) === 0 ? "at the agent's own priority" : `at nice ${busy?.busyNice}, below the agent's 0`}),
started before and killed after each block of ${LATENCY_BLOCK} iterations, idle and busy blocks alternating so
that load from other work on the machine falls on both; **1,000 pods**: the same node grown to
${large?.pods ?? 1000} pods afterwards (the pods added have an idle process in one of ten, ${large?.idleProcesses ?? '–'} in all)${scenarios.some((s) => s.key === 'busy-1000') ? ', idle and busy blocks alternating there too' : ''}. The
machine is shared with other work, so "idle" means only that the bench adds no load; the load
average at each scenario's start is in the table.

On cgroup v1 the kill path answers a hard memory crossing on a thread of its own, with the pod the
engine ranked first after the last pass or pod change (and again 64 MiB below the threshold): from
its wake-up to the signal it reads the node's usage and \`memory.stat\`, the victim's working set,
and the usage of every pod that could have overtaken it (one pread each, on that thread), checks the
node lock, and signals through pidfds, so what the main thread is doing no longer stands between
the kernel's event and the kill. A crossing it does not answer (its
plan not armed yet, or declined) falls to the main thread's memory shortcut, which reads every
pod's usage from files kept open (\`docs/observation.md\`); the table says how many went each way.

ms after the crossing, median / p99 / max:

${table(['stage', ...scenarios.map((s) => s.label)], rows)}

![Reaction latency](benchmarks-reaction-latency.svg)

${alone === null ? '' : `The notifier alone (no agent, the method of \`bench/notifier-latency.ts\`: a threshold armed 2 MiB above the current usage, ${alone.crossings} crossings), ms:\n\n${table(['ms', 'median', 'p90', 'p99', 'max', 'samples'], aloneRows)}\n\n`}${failures.length > 0 ? `${failures.length} iteration(s) failed: ${[...new Set(failures)].slice(0, 3).join('; ')}.\n\n` : ''}${measuredOn(result)}
`;
  return { markdown, charts: [{ file: 'benchmarks-reaction-latency.svg', svg }], headlines };
}
