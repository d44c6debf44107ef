// The real node section: kernel notification → local termination and → API DELETE on a real
// kubelet, containerd and kube-apiserver, per leak rate, side by side with the sandbox's figures
// (part 2: 110 pods, the in-process API stand-in), and the headline (no kernel OOM kill).

import type { PartResult } from '../lib/part.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';
import type { RealNodeData } from '../parts/real-node.js';
import type { LatencyScenario, ReactionLatencyData } from '../parts/reaction-latency.js';
import { measuredOn, table, type Headline, type Section } from './markdown.js';

const cells = (d: Distribution | null | undefined): string[] => [fmt(d?.median), fmt(d?.p90), fmt(d?.max), String(d?.count ?? 0)];

// The sandbox's stages measured, like the real node's, from the notification reaching the agent.
function sandboxFromNotification(data: LatencyScenario, to: 'toTermination' | 'toApiRequest'): Distribution | null {
  return distribution(data.samples.flatMap((s) => (s.toNotified === null || s[to] === null ? [] : [(s[to] as number) - s.toNotified])));
}

// What the side-by-side figures say, from the numbers: which side is faster at each stage, the
// pods each pass observes, and what stands in front of the DELETE.
function comparison(data: RealNodeData, sandbox: LatencyScenario, loadAverage: number): string {
  const pods = Math.max(0, ...data.samples.map((s) => s.observedPods));
  const medianOf = (values: readonly (number | null)[]): number | null => distribution(values.flatMap((v) => (v === null ? [] : [v])))?.median ?? null;
  const relation = (real: number | null, other: number | null): string => {
    if (real === null || other === null) return 'not comparable (no sample)';
    if (Math.abs(real - other) <= Math.max(1, 0.2 * other)) return `about the same (median ${fmt(real)} against ${fmt(other)} ms)`;
    return `${real < other ? 'sooner' : 'later'} on the real node (median ${fmt(real)} against ${fmt(other)} ms)`;
  };
  const slowest = [...data.samples].sort((a, b) => (b.toLocalTermination ?? 0) - (a.toLocalTermination ?? 0))[0];
  const observeShare = slowest !== undefined && slowest.toLocalTermination !== null && slowest.toLocalTermination > 0 ? slowest.observe / slowest.toLocalTermination : 0;
  const term = relation(medianOf(data.samples.map((s) => s.toLocalTermination)), sandboxFromNotification(sandbox, 'toTermination')?.median ?? null);
  const del = relation(medianOf(data.samples.map((s) => s.toDelete)), sandboxFromNotification(sandbox, 'toApiRequest')?.median ?? null);
  return (
    `Against the sandbox's ${sandbox.label}, the local termination comes ${term}, the API DELETE ${del}. ` +
    `The real node's pass observes ${pods} pods${observeShare >= 0.5 ? `; in its slowest run (${fmt(slowest?.toLocalTermination)} ms) the observation took ${fmt(slowest?.observe)} ms of it` : ''}. ` +
    `In front of the DELETE, one after the other, are the re-check GET and the \`DisruptionTarget\` condition, answered here by a real API server ` +
    `sharing ${loadAverage >= 4 ? `a machine at load average ${loadAverage.toFixed(1)}` : 'the machine'}; the local kill waits for neither.\n\n`
  );
}

export function realNodeSection(result: PartResult<RealNodeData>, title: string, sandbox: PartResult<ReactionLatencyData> | undefined): Section {
  const data = result.data as RealNodeData;
  // The sandbox's nodes of about the real node's size (the 1,000-pod node is part 2's own question).
  const sandboxScenarios = (sandbox?.data?.scenarios ?? []).filter((sc) => sc.pods <= 110);
  const sandboxData = sandboxScenarios[0] ?? null;
  const rows: string[][] = [];
  for (const stage of [
    { label: 'notification → local termination', real: (r: RealNodeData['rates'][number]) => r.toLocalTermination, sandbox: 'toTermination' as const },
    { label: 'notification → API DELETE sent', real: (r: RealNodeData['rates'][number]) => r.toDelete, sandbox: 'toApiRequest' as const },
  ]) {
    for (const rate of data.rates) rows.push([`${stage.label}, real node, ${rate.rateMi} MiB/s leak`, ...cells(stage.real(rate))]);
    for (const scenario of sandboxScenarios) rows.push([`${stage.label}, sandbox (part 2, ${scenario.label}, API stand-in)`, ...cells(sandboxFromNotification(scenario, stage.sandbox))]);
  }
  for (const rate of data.rates) rows.push([`observation of the node in the pass that acted, real node, ${rate.rateMi} MiB/s`, ...cells(rate.observe)]);
  const runs = data.samples.length;
  const oomKills = data.samples.reduce((sum, s) => sum + s.oomKills, 0);
  const all = distribution(data.samples.flatMap((s) => (s.toLocalTermination === null ? [] : [s.toLocalTermination])));
  const headlines: Headline[] = [
    {
      what: 'Real node (kubelet, containerd, kube-apiserver): leaks evicted before the kernel OOM killer',
      target: 'every run',
      result: `${runs - oomKills} of ${runs} runs${data.failures.length > 0 ? `, ${data.failures.length} failed` : ''}`,
      met: runs === 0 ? null : oomKills === 0 && data.failures.length === 0,
    },
    {
      what: 'Real node: kernel notification → local termination',
      target: '–',
      result: all === null ? 'no sample' : `median ${fmt(all.median)} ms, max ${fmt(all.max)} ms (${all.count} runs at ${data.rates.map((r) => r.rateMi).join(' and ')} MiB/s)`,
      met: null,
    },
  ];
  const samples = data.samples.map((s) => [`${s.rateMi}`, fmt(s.toLocalTermination), fmt(s.toDelete), fmt(s.observe), String(s.observedPods), fmt(s.createdToDeletedMs, ''), String(s.oomKills), s.loadAverage]);
  const markdown = `## ${title}

The same reaction on a real node: the end-to-end suite's real kubelet, containerd and runc, and a real
kube-apiserver and etcd, on loopback (${data.versions}; \`test/e2e/harness/real-node.ts\`, its
\`kubepods\` limited to 1.5 GiB). Each run starts a fresh agent as the DaemonSet's ServiceAccount (so
each eviction is the first of its pressure episode) beside a pod holding 600 MiB, then a pod leaking
40 MiB/s (holding 300 MiB at once) or 400 MiB/s; rates alternate run by run. The agent's ports are
timed by the harness's port timeline, from the kernel notification reaching the agent: the
local termination, and the API DELETE that follows it in the background (after the re-check GET and
the \`DisruptionTarget\` condition, beside the \`Evicted\` Event). Part 2 (the sandbox) measures the same two
stages from the notification, with the in-process API stand-in; it is shown beside them.

ms after the notification:

${table(['stage', 'median', 'p90', 'max', 'runs'], rows)}

${sandboxData === null ? '' : comparison(data, sandboxData, result.machine.loadAverage)}Every run:

${table(['MiB/s', '→ local termination', '→ DELETE', 'observe', 'pods observed', 'created → deleted (ms)', 'OOM kills', 'load average'], samples)}

${data.failures.length > 0 ? `${data.failures.length} run(s) failed: ${[...new Set(data.failures)].slice(0, 3).join('; ')}.\n\n` : ''}${measuredOn(result)}${sandbox === undefined ? '' : `

The sandbox's figures (part 2): ${measuredOn(sandbox)}`}
`;
  return { markdown, charts: [], headlines };
}
