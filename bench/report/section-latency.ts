// The reaction latency section: each stage of a reaction measured from the kernel-side threshold
// crossing on a 110-pod node (median, p90, p99, max), the notifier alone for comparison, a
// chart, and the headline against the target (p99 under 20 ms to the eviction request).

import type { PartResult } from '../lib/part.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';
import type { LatencySample, ReactionLatencyData } from '../parts/reaction-latency.js';
import { chartCaption, measuredOn, table, type Headline, type Section } from './markdown.js';
import { rangeChart } from './svg.js';

const TARGET_P99_MS = 20;

const STAGES: readonly { key: keyof LatencySample; label: string; short: string }[] = [
  { key: 'toNotified', label: 'notification reaches JavaScript (kernel → onEvent)', short: 'notified' },
  { key: 'toDecided', label: 'decision made (observe + synchronize)', short: 'decided' },
  { key: 'toTermination', label: 'eviction request: local termination issued (SIGTERM)', short: 'local kill issued' },
  { key: 'toApiRequest', label: 'eviction request: API DELETE sent', short: 'API DELETE sent' },
  { key: 'toGone', label: "pod's processes gone (reaped)", short: 'processes gone' },
];

const row = (label: string, d: Distribution | null): string[] => [label, fmt(d?.median), fmt(d?.p90), fmt(d?.p99), fmt(d?.max), String(d?.count ?? 0)];

export function latencySection(result: PartResult<ReactionLatencyData>): Section {
  const data = result.data as ReactionLatencyData;
  const rows = STAGES.map((s) => row(s.label, data.stages[s.key]));
  rows.push(row('(inside the agent: notification → local termination)', data.notifiedToTermination));
  const split = (from: keyof LatencySample, to: keyof LatencySample): Distribution | null =>
    distribution(data.samples.flatMap((s) => (s[from] === null || s[to] === null ? [] : [(s[to] as number) - (s[from] as number)])));
  rows.push(row('(inside the agent: notification → decision: observe + synchronize)', split('toNotified', 'toDecided')));
  rows.push(row('(inside the agent: decision → local termination)', split('toDecided', 'toTermination')));
  const alone = data.notifierAlone;
  const aloneRows = alone === null ? [] : [row('crossing → onEvent, notifier alone', alone.latency), row('arming a threshold (registration off the main thread)', alone.arming)];

  const toRequest = data.stages.toTermination;
  const toDecision = split('toNotified', 'toDecided');
  const observeDominates = toDecision !== null && data.notifiedToTermination !== null && toDecision.median >= 0.8 * data.notifiedToTermination.median;
  const headlines: Headline[] = [
    {
      what: `Reaction latency, ${data.pods} pods: kernel event → eviction request (local termination)`,
      target: `p99 < ${TARGET_P99_MS} ms`,
      result: toRequest === null ? 'no sample' : `p99 ${fmt(toRequest.p99)} ms, median ${fmt(toRequest.median)} ms (${toRequest.count} reactions)`,
      met: toRequest === null ? null : toRequest.p99 < TARGET_P99_MS,
      ...(toRequest !== null && toRequest.p99 >= TARGET_P99_MS
        ? {
            note: `of which kernel → JavaScript p99 ${fmt(data.stages.toNotified?.p99)} ms and notification → termination inside the agent p99 ${fmt(data.notifiedToTermination?.p99)} ms${observeDominates ? `, nearly all of it the pass observing all ${data.pods} pods' cgroups before it decides (part 3)` : ''}; load average ${result.machine.loadAverage.toFixed(1)} on ${result.machine.cores} shared cores`,
          }
        : {}),
    },
    {
      what: 'Reaction latency: kernel event → API DELETE sent',
      target: '–',
      result: data.stages.toApiRequest === null ? 'no sample' : `p99 ${fmt(data.stages.toApiRequest.p99)} ms, median ${fmt(data.stages.toApiRequest.median)} ms`,
      met: null,
    },
  ];

  const chartStages = [...STAGES];
  const svg = rangeChart({
    title: `Reaction on a ${data.pods}-pod node, ms after the kernel-side crossing: median (dot) to p99`,
    caption: chartCaption(result),
    yLabel: 'ms after the crossing',
    groups: chartStages.map((s) => ({ label: s.short })),
    series: [{ label: 'notifier + local termination', color: '#009E73' }],
    values: chartStages.map((s) => {
      const d = data.stages[s.key];
      return [d === null ? null : { median: d.median, low: d.median, high: d.p99 }];
    }),
    yMin: 0,
    yMax: Math.max(25, ...chartStages.map((s) => (data.stages[s.key]?.p99 ?? 0) * 1.15)),
    log: false,
    reference: { value: TARGET_P99_MS, label: `target: p99 < ${TARGET_P99_MS} ms to the request` },
    width: 900,
  });

  const markdown = `## 2. Reaction latency

How fast the agent reacts, from the kernel's point of view, on a node with ${data.pods} pods: every pod
exists in the API stand-in and has a real pod cgroup on the sandbox node (${data.idleProcesses} of them with a tiny idle
process, a few empty, one holding most of the memory). Each of the ${data.iterations} iterations starts a fresh pod
whose process touches memory in 64 KiB steps, reading the node's \`memory.usage_in_bytes\` after each,
and notes the start of the step that crosses the armed threshold on CLOCK_MONOTONIC; hooks in the
agent's process note, on the same clock, when the notification reaches JavaScript (wrapping the
notifier's \`onEvent\`), when the pass decides, when local termination is issued, when the DELETE
goes to the API, and when the pod's process has been reaped. The agent (notifier + local
termination) is the real run loop; the numbers include the kernel's own rate-limited threshold check
and the hop from the epoll thread to the main thread. The agent's own metric
\`kube_eviction_agent_notification_to_eviction_seconds\` measures the in-agent part only.

ms after the crossing:

${table(['stage', 'median', 'p90', 'p99', 'max', 'samples'], rows)}

![Reaction latency](benchmarks-reaction-latency.svg)

${alone === null ? '' : `The notifier alone (no agent, the method of \`bench/notifier-latency.ts\`: a threshold armed 2 MiB above the current usage, ${alone.crossings} crossings):\n\n${table(['ms', 'median', 'p90', 'p99', 'max', 'samples'], aloneRows)}\n\n`}${data.failures.length > 0 ? `${data.failures.length} iteration(s) failed: ${[...new Set(data.failures)].slice(0, 3).join('; ')}.\n\n` : ''}${measuredOn(result)}
`;
  return { markdown, charts: [{ file: 'benchmarks-reaction-latency.svg', svg }], headlines };
}
