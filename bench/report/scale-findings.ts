// The conclusions of docs/scale.md, computed from the stored results: the issue's goals against
// the figures, the second client with and without the chart's FlowSchema, what the agent's request
// changes did (a run of the agent before them, bench/results/fleet-<N>-before.json, beside the run
// after), and the extrapolation to 5,000 nodes from the largest N measured.

import type { FleetResult, StormResult } from '../lib/fleet-result.js';
import { table } from './markdown.js';

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);
const num = (v: number, digits = 1): string => (Number.isInteger(v) ? String(v) : v.toFixed(digits));
const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
const reads = (counts: Record<string, number>): number => Object.entries(counts).filter(([k]) => /^(get|list|watch) /.test(k)).reduce((a, [, v]) => a + v, 0);

/** The storm on every node as shipped (the agents under the API server's built-in schemas). */
export function asShipped(r: FleetResult): StormResult | undefined {
  return r.storms.find((s) => s.nodes === r.nodes && s.flowControl === null);
}

function fullStorms(r: FleetResult): StormResult[] {
  return r.storms.filter((s) => s.nodes === r.nodes);
}

/** The storms on every node with the agents under the chart's FlowSchema (its values, then the ones tried). */
function flowControlled(r: FleetResult): StormResult[] {
  return fullStorms(r).filter((s) => s.flowControl !== null);
}

/** The agents' mutating p99 in the storm is under the 1 s SLO (a storm without the figure is not). */
function withinSlo(s: StormResult): boolean {
  return (s.mutating.p99Ms ?? Infinity) < 1000;
}

/** API server CPU seconds per request of the agents' in a storm (every client's CPU counted: an upper bound). */
export function apiCpuPerRequestMs(s: StormResult): number {
  const requests = sum(s.agentRequests);
  return requests === 0 ? 0 : (s.cpu.apiServerS / requests) * 1000;
}

/** A FlowSchema setting tried, in short (the storm must have one). */
function shares(s: StormResult): string {
  const f = s.flowControl;
  return f === null ? 'none' : `${f.nominalConcurrencyShares} shares, queues of ${f.queueLengthLimit}`;
}

function setting(s: StormResult): string {
  const f = s.flowControl;
  return f === null ? 'built-in `service-accounts` schema (chart default)' : `chart FlowSchema: ${f.nominalConcurrencyShares} shares, ${f.handSize} of ${f.queues} queues of ${f.queueLengthLimit}`;
}

// The issue's storm goals are set for this fleet size.
const GOAL_NODES = 1000;
const GOAL_TEXT = '1,000';

export function goalsSection(results: readonly FleetResult[]): string[] {
  const lines: string[] = ['## The goals, against the figures', ''];
  const rested = results.filter((r) => r.rest !== null);
  if (rested.length > 0) {
    const quiet = rested.every((r) => r.rest?.lists === 0 && r.rest.writes === 0);
    lines.push(`- **At rest, no periodic LIST and no write: ${quiet ? 'met' : 'missed'}.** ${rested.map((r) => `${r.nodes} nodes: ${r.rest?.lists} LISTs and ${r.rest?.writes} writes in ${num(r.rest?.minutes ?? 0)} minutes`).join('; ')}; only watch re-opens.`);
    const compared = rested.filter((r) => r.rest?.kubeletRequestsPerMinute !== null);
    if (compared.length > 0) {
      const rows = compared.map((r) => ({ n: r.nodes, agent: reads(r.rest?.requestsPerNodePerMinute ?? {}), kubelet: reads(r.rest?.kubeletRequestsPerMinute ?? {}) }));
      lines.push(`- **Reads per node at most the kubelet's: ${rows.every((x) => x.agent <= x.kubelet) ? 'met' : 'missed'}.** ${rows.map((x) => `${x.n} nodes: ${num(x.agent, 3)} a minute against the kubelet's ${num(x.kubelet, 2)}`).join('; ')}.`);
    }
  }
  if (rested.length === 0) lines.push('- **At rest, no periodic LIST and no write; reads per node at most the kubelet\'s: not measured** in any stored run.');
  else if (rested.every((r) => r.rest?.kubeletRequestsPerMinute === null)) lines.push('- **Reads per node at most the kubelet\'s: not measured** (no stored run has the kubelet\'s requests).');
  const stormed = results.filter((r) => fullStorms(r).length > 0);
  if (stormed.length === 0) lines.push(`- **In a 100 % storm at ${GOAL_TEXT} nodes, no request lost, no eviction repeated, p99 of the agents' mutating calls under 1 s, other clients not starved: not measured** in any stored run.`);
  if (stormed.length > 0) {
    const all = stormed.flatMap(fullStorms);
    const retried429 = all.reduce((a, s) => a + s.status429, 0);
    // Where no run reached the goals' size, each verdict says at which size it was reached.
    const at = stormed.some((r) => r.nodes >= GOAL_NODES) ? '' : ` at ${stormed.map((r) => r.nodes).join(' and ')} nodes`;
    const lost = all.reduce((a, s) => a + (s.podsTargeted - s.podsEvicted) + s.lostEvents, 0);
    const atRest = all.every((s) => s.recoveredMs !== null);
    lines.push(`- **In a 100 % storm no request of the agents' lost: ${lost === 0 && atRest ? 'met' : 'missed'}${at}.** Every storm on every node, whatever the flow control: ${all.map((s) => `${s.podsEvicted}/${s.podsTargeted}`).join(', ')} pods evicted, ${all.reduce((a, s) => a + s.lostEvents, 0)} Evicted Events lost, ${atRest ? 'every Node back at rest (conditions and taints written)' : 'not every Node back at rest'}; ${retried429 === 0 ? 'no 429 was answered' : `the ${retried429} 429s were retried`}.`);
    const repeats = all.reduce((a, s) => a + s.repeatedLocalKills + s.doubledEvents, 0);
    lines.push(`- **No eviction repeated: ${repeats === 0 ? 'met' : 'missed'}${at}.** ${all.reduce((a, s) => a + s.repeatedLocalKills, 0)} pods ended locally twice, ${all.reduce((a, s) => a + s.doubledEvents, 0)} with two Evicted Events; ${all.reduce((a, s) => a + s.repeatedDeletes, 0)} pods got a second DELETE answered 2xx.`);
    const shipped = stormed.map((r) => ({ r, s: asShipped(r) })).filter((x): x is { r: FleetResult; s: StormResult } => x.s !== undefined);
    if (shipped.length > 0) {
      const under = shipped.filter((x) => withinSlo(x.s));
      // Sizes where the agents as shipped went over 1 s, and whether the chart's FlowSchema kept them under it there.
      const over = shipped.filter((x) => !under.includes(x)).map((x) => x.r);
      const rescued = over.length > 0 && over.every((r) => flowControlled(r).some(withinSlo));
      const underFlowControl = stormed.flatMap((r) => flowControlled(r).map((s) => `${r.nodes} nodes, ${shares(s)}: ${ms(s.mutating.p99Ms)}`));
      const largest = shipped[shipped.length - 1] as { r: FleetResult; s: StormResult };
      const perRequestMs = apiCpuPerRequestMs(largest.s);
      const burst = largest.s.requestsPerNode * largest.r.nodes;
      lines.push(
        `- **p99 of the agents' mutating calls under 1 s in a 100 % storm: ${under.length === shipped.length ? 'met' : under.length === 0 ? 'missed' : `met up to ${under[under.length - 1]?.r.nodes} nodes, missed above`}${at}${rescued ? `; met at ${over.map((r) => r.nodes).join(' and ')} nodes under the chart's FlowSchema` : ''}.** ` +
          `${shipped.map((x) => `${x.r.nodes} nodes: ${ms(x.s.mutating.p99Ms)} (the first 30 s: ${ms(x.s.mutatingBurst.p99Ms)})`).join('; ')}${underFlowControl.length > 0 ? `; under the chart's FlowSchema: ${underFlowControl.join('; ')}` : ''}. ` +
          `The storm is a burst: at ${largest.r.nodes} nodes ${Math.round(burst)} requests (${num(largest.s.requestsPerNode)} per node) arrive within seconds, and this API server spent about ${num(perRequestMs, 1)} ms of CPU per request (every client's CPU counted) on a machine ${Math.round(largest.s.cpu.machineBusy * 100)} % busy, so the burst drains in about ${Math.round((burst * perRequestMs) / 1000 / 2)} s on its 2 cores at best, and a request that waits behind most of it waits that long, in APF's queues or on the CPU. A p99 under 1 s for a fleet-wide storm at this size needs a control plane that drains it within a second: about ${Math.max(1, Math.round((burst * perRequestMs) / 1000))} cores of API server at the cost measured here, or the writes spread over time.`,
      );
    }
    if (!stormed.some((r) => r.nodes >= GOAL_NODES)) {
      lines.push(`- **The storm goals at ${GOAL_TEXT} nodes, where the issue sets them: not measured** with this agent; [scale-1000-before.md](scale-1000-before.md) has a run at ${GOAL_TEXT} nodes of the agent before its request changes (every pod evicted; the agents' mutating p99 over 1 s in every storm).`);
    }
    const secondRows = stormed.flatMap((r) => fullStorms(r).map((s) => `${r.nodes} nodes, ${setting(s)}: p99 ${ms(s.secondClient.p99Ms)}, max ${ms(s.secondClient.maxMs)}`));
    lines.push(`- **Other clients not starved.** The second client's GET (every 100 ms) in each storm on every node: ${secondRows.join('; ')}. The table below sets them side by side.`);
  }
  lines.push('');
  return lines;
}

export function flowControlSection(results: readonly FleetResult[]): string[] {
  const compared = results.filter((r) => new Set(fullStorms(r).map((s) => JSON.stringify(s.flowControl))).size > 1);
  if (compared.length === 0) return [];
  const lines = ['## The chart\'s FlowSchema, measured', ''];
  lines.push(
    'The same storm on every node under the API server\'s built-in schemas (where the agents go without the chart\'s FlowSchema:',
    '`service-accounts`, level `workload-low`, beside the second client, each its own flow) and under the chart\'s FlowSchema with',
    'its values and others (`--tuned`). The FlowSchema\'s distinguisher is the namespace: the storm\'s pod requests are all in',
    'one namespace here (one flow, a hand of queues), its Node writes in none, its node Events in `default`.',
    '',
  );
  lines.push(
    table(
      ['nodes', 'agents\' requests under', 'all gone after', 'back at rest after', 'agents\' mutating p50 / p99', '429s to the agents', 'APF rejected (their level)', 'second client p50 / p99 / max', 'API server CPU s'],
      compared.flatMap((r) => fullStorms(r).map((s) => [String(r.nodes), setting(s), ms(s.allGoneMs), ms(s.recoveredMs), `${ms(s.mutating.p50Ms)} / ${ms(s.mutating.p99Ms)}`, String(s.status429), String(s.apfRejected), `${ms(s.secondClient.p50Ms)} / ${ms(s.secondClient.p99Ms)} / ${ms(s.secondClient.maxMs)}`, num(s.cpu.apiServerS, 0)])),
    ),
    '',
  );
  return lines;
}

export function changesSection(results: readonly FleetResult[], before: readonly FleetResult[]): string[] {
  const pairs = before.map((b) => ({ b, a: results.find((r) => r.nodes === b.nodes) })).filter((x): x is { b: FleetResult; a: FleetResult } => x.a !== undefined && asShipped(x.a) !== undefined && asShipped(x.b) !== undefined);
  if (pairs.length === 0) return [];
  const lines = ['## What the agent\'s request changes did', ''];
  lines.push(
    'The same storm on every node, as shipped, by the agent before and after the changes this benchmark led to (the "before"',
    'run is bench/results/fleet-N-before.json, the agent of the commit it names): API calls over kept-alive connections instead',
    'of a new TLS connection per call; no re-check GET after a local kill (the watch, checked before the kill, and the UID',
    'preconditions cover it); the Node\'s conditions and taint written from the watched Node instead of a GET before each write;',
    'failed deletions retried with jittered back-off and not when the watch shows they landed; Events answered 429 retried.',
    '',
  );
  lines.push(
    table(
      ['nodes', 'agent', 'requests /node', 'of which GET', 'all gone after', 'back at rest after', 'mutating p50 / p99', '429s', 'repeated DELETE', 'Events lost', 'API server CPU s', 'API server CPU /request'],
      pairs.flatMap(({ b, a }) =>
        [
          ['before', b],
          ['after', a],
        ].map(([name, r]) => {
          const x = r as FleetResult;
          const s = asShipped(x) as StormResult;
          const gets = Object.entries(s.agentRequests).filter(([k]) => k.startsWith('get ')).reduce((t, [, v]) => t + v, 0);
          return [String(x.nodes), `${String(name)} (${x.commit})`, num(s.requestsPerNode), num(gets / s.nodes), ms(s.allGoneMs), ms(s.recoveredMs), `${ms(s.mutating.p50Ms)} / ${ms(s.mutating.p99Ms)}`, String(s.status429), String(s.repeatedDeletes), String(s.lostEvents), num(s.cpu.apiServerS, 0), `${num(apiCpuPerRequestMs(s), 2)} ms`];
        }),
      ),
    ),
    '',
  );
  return lines;
}

export function extrapolationSection(results: readonly FleetResult[]): string[] {
  const largest = [...results].reverse().find((r) => r.rest !== null || asShipped(r) !== undefined);
  if (largest === undefined) return [];
  const factor = 5000 / largest.nodes;
  const lines = ['## At 5,000 nodes', '', `From the largest fleet measured (${largest.nodes} nodes), scaled by 5,000 / ${largest.nodes}:`, ''];
  if (largest.rest !== null) {
    const rest = largest.rest;
    const perMinute = sum(rest.requestsPerNodePerMinute) * 5000;
    lines.push(
      `- At rest: about ${Math.round(perMinute)} requests a minute in all, every one a watch re-open (${Object.entries(rest.requestsPerNodePerMinute).map(([k, v]) => `${k} ${Math.round(v * 5000)}`).join(', ') || 'none'}), no LIST, no write; ${Math.round(rest.watchesOpenPerNode * 5000)} watches open; ${Math.round((rest.bytesFromApiServerPerNodePerMinute * 5000) / 1024)} KiB a minute of watch events. Beside 5,000 kubelets at the rate measured here, that is the share the kubelet comparison above gives.`,
    );
  }
  const full = asShipped(largest);
  if (full !== undefined) {
    const requests = full.requestsPerNode * 5000;
    const cpuS = (requests * apiCpuPerRequestMs(full)) / 1000;
    lines.push(
      `- A storm on every node: about ${Math.round(requests)} requests (${num(full.requestsPerNode)} per node: the burst's DisruptionTarget condition, DELETE, Evicted and EvictionThresholdMet Events, taint and conditions, then the recovery's taint and conditions and the two EvictionOutcome Events), 5,000 pods deleted. At the API server CPU cost measured here (${num(apiCpuPerRequestMs(full), 2)} ms a request, every client included) that is about ${Math.round(cpuS)} CPU seconds: ${Math.round(cpuS / 2)} s of a 2-core API server like this one, ${Math.round(cpuS / 16)} s of three 8-core ones with the load spread; every pod's processes are ended locally at once whatever the API server does (memory is freed in milliseconds), only the API objects follow at that pace.`,
    );
    lines.push(`- This run: ${full.podsEvicted} pods gone within ${ms(full.allGoneMs)}, ${num(full.evictionsPerSecondMean ?? 0)} a second on average (peak ${full.evictionsPerSecondPeak}); scaled, 5,000 within about ${Math.round(((full.allGoneMs ?? 0) / 1000) * factor)} s on this machine.`);
  }
  lines.push(
    '- Assumptions: each agent\'s requests depend on its own node only (its watches select its node\'s pods and its Node), so the cost grows linearly with N; one API server and etcd here stand for the control plane, sharing 2 cores with the agents (which run at the lowest priority); every watch is served from the watch cache; a storm evicts one pod per node (each further pod under pressure costs its own condition, DELETE and Events again); pods in one namespace (APF\'s flows by namespace are fewer than in a real cluster).',
    '',
  );
  return lines;
}

/** What the figures come to for an operator: the FlowSchema advice from the largest fleet that stormed both ways. */
export function operatorAdvice(results: readonly FleetResult[]): string[] {
  const lines = ['## What to set on a large cluster', '', '- At rest nothing: the agent only watches, and writes node conditions only when they change, never on a timer.'];
  const compared = results.filter((r) => asShipped(r) !== undefined && flowControlled(r).length > 0);
  const largest = compared[compared.length - 1];
  if (largest === undefined) {
    lines.push('- `flowControl.enabled` (off by default) puts the agents on a priority level of their own; no stored run compares it with the built-in schemas.');
  } else {
    const storms = [asShipped(largest) as StormResult, ...flowControlled(largest)];
    const each = (figure: (s: StormResult) => string): string => storms.map(figure).join(', ');
    // The smallest fleet whose agents, as shipped, went over the 1 s SLO in a storm on every node.
    const firstOver = results.find((r) => asShipped(r) !== undefined && !withinSlo(asShipped(r) as StormResult));
    lines.push(
      `- \`flowControl.enabled\` (off by default) puts the agents on a priority level of their own. In the storm on every node of ${largest.nodes} nodes, ` +
        `as shipped, then under the chart's FlowSchema with ${flowControlled(largest).map(shares).join(', then with ')}: the agents' mutating p99 ${each((s) => ms(s.mutating.p99Ms))}; ` +
        `429s to the agents ${each((s) => String(s.status429))}; the second client's p99 ${each((s) => ms(s.secondClient.p99Ms))}; every pod gone after ${each((s) => ms(s.allGoneMs))}. ` +
        (firstOver === undefined
          ? 'The built-in schemas kept the agents under 1 s at every size measured: turn it on where the agents must be kept apart from other service accounts.'
          : `Turn it on from about ${firstOver.nodes} nodes, where the agents as shipped went over 1 s, with \`flowControl.priorityLevel\` sized for the cluster; below that the built-in schemas kept them under 1 s here.`),
    );
  }
  lines.push('- `reporting.taint.enabled` adds a Node patch at the start and at the end of pressure on each node; leave it off unless the', '  scheduler must avoid nodes under pressure.', '');
  return lines;
}
