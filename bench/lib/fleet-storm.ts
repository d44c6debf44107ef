// One storm of the fleet benchmark: the chosen nodes cross their hard memory threshold within one
// second, under the chart's FlowSchema with the given values or under the API server's built-in
// schemas. Measured until every targeted pod is gone and every Node is back at rest (the agents'
// condition False and taint off, 30 s of pressure transition later), then the hosts calm down and
// the leakers come back for the next storm.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { MUTATING_VERBS, countByVerbAndResource, type AuditedRequest } from '../../test/e2e/harness/audit-log.js';
import { STORM_BYTES } from '../../test/e2e/harness/fleet.js';
import { applyObject, objectPath, type ManifestObject } from '../../test/e2e/harness/manifest.js';
import { metricValue } from '../../test/e2e/harness/metric-value.js';
import { cpuMark, cpuUse, latencyByVerb, leakersOn, resetLeakers, sleep, storm, summarize, tallyEvictions, waitUntil, workerStats, type FleetContext } from './fleet-context.js';
import type { FlowControlSetting, StormResult, TimelineSecond } from './fleet-result.js';
import { total } from './fleet-workers.js';
import { percentile } from './stats.js';

export interface StormPhase {
  readonly label: string;
  readonly nodes: readonly string[];
  readonly flowControl: FlowControlSetting | null;
}

// How long the pods may take to go, and the Nodes to come back to rest, before the phase gives up.
const ALL_GONE_CAP_MS = 600_000;
const RECOVERY_CAP_MS = 240_000;
// Room for a repeated request to show up: more than one housekeeping pass (10 s).
const SETTLE_MS = 15_000;
const BURST_MS = 30_000;

/** The chart's flow-control objects for the agents' ServiceAccount, rendered by helm with `setting`. */
export function chartFlowControl(repoRoot: string, context: Pick<FleetContext, 'serviceAccount' | 'agentNamespace'>, setting: FlowControlSetting): ManifestObject[] {
  const helm = process.env.KEA_HELM_BIN;
  if (helm === undefined || !existsSync(helm)) throw new Error('KEA_HELM_BIN is not set: eval "$(bash scripts/build-tools.sh)" (the FlowSchema is rendered from deploy/chart)');
  const pl = 'flowControl.priorityLevel';
  const values = [`fullnameOverride=${context.serviceAccount}`, 'flowControl.enabled=true', `${pl}.nominalConcurrencyShares=${setting.nominalConcurrencyShares}`, `${pl}.queueLengthLimit=${setting.queueLengthLimit}`, `${pl}.queues=${setting.queues}`, `${pl}.handSize=${setting.handSize}`];
  const text = execFileSync(helm, ['template', 'fleet', join(repoRoot, 'deploy', 'chart'), '--namespace', context.agentNamespace, ...values.flatMap((v) => ['--set', v]), '--show-only', 'templates/flowcontrol.yaml'], { encoding: 'utf8' });
  return parseAllDocuments(text)
    .map((d) => d.toJS() as ManifestObject)
    .filter((o) => o !== null);
}

export async function measureStorm(context: FleetContext, phase: StormPhase, repoRoot: string): Promise<StormResult> {
  const { admin, plane, kubelets, fleetNodes, second, agentUser, say } = context;
  const flowObjects = phase.flowControl === null ? [] : chartFlowControl(repoRoot, context, phase.flowControl);
  for (const object of flowObjects) await applyObject(admin, object);
  try {
    if (flowObjects.length > 0) await sleep(5_000);
    const targets = await leakersOn(admin, phase.nodes);
    const statsBefore = await workerStats(context);
    const metricsBefore = (await admin.request('GET', '/metrics')).text;
    const cpuBefore = cpuMark(plane, statsBefore);
    const startMs = Date.now();
    // The Nodes' pressure, second by second (what the agents show, as a scheduler would see it).
    const pressure: { atMs: number; pressed: number; tainted: number }[] = [];
    const sampler = setInterval(() => pressure.push({ atMs: Date.now(), pressed: fleetNodes.underPressure(), tainted: fleetNodes.taintedCount() }), 1000);
    say(`${phase.label}: ${phase.nodes.length} nodes cross the hard threshold within 1 s`);
    await storm(context, phase.nodes, STORM_BYTES);
    const allGone = await waitUntil(context, () => [...targets.keys()].every((uid) => kubelets.goneAtMs.has(uid)), ALL_GONE_CAP_MS);
    await sleep(SETTLE_MS);
    const recovered = allGone === true ? await waitUntil(context, () => fleetNodes.underPressure() === 0, RECOVERY_CAP_MS, 1000) : allGone;
    const recoveredMs = recovered === true ? fleetNodes.lastCalmAtMs - startMs : null;
    await sleep(5_000);
    const endMs = Date.now();
    clearInterval(sampler);
    const stuck = recovered === true ? [] : fleetNodes.pressedNames().slice(0, 5);
    const statsAfter = await workerStats(context);
    const metricsAfter = (await admin.request('GET', '/metrics')).text;
    const cpu = cpuUse(cpuBefore, cpuMark(plane, statsAfter));
    const agent = context.audit.between(agentUser, startMs, endMs);
    const tally = await tallyEvictions(context, targets, startMs, agent, statsAfter);
    const mutating = agent.filter((r) => MUTATING_VERBS.has(r.verb));
    const timeline = perSecond(startMs, endMs, agent, second.between(startMs, endMs).map((s) => ({ atMs: s.atMs, latencyMs: s.latencyMs })), pressure);
    const level = phase.flowControl === null ? 'workload-low' : context.serviceAccount;
    const secondSamples = second.between(startMs, endMs);
    const result: StormResult = {
      label: phase.label,
      nodes: phase.nodes.length,
      flowControl: phase.flowControl,
      windowS: (endMs - startMs) / 1000,
      ...tally,
      recoveredMs,
      evictionsPerSecondPeak: timeline.reduce((peak, t) => Math.max(peak, t.evictions), 0),
      evictionsPerSecondMean: tally.allGoneMs === null || tally.allGoneMs === 0 ? null : tally.podsEvicted / (tally.allGoneMs / 1000),
      agentRequests: countByVerbAndResource(agent),
      failedRequests: countByVerbAndResource(agent.filter((r) => r.code < 200 || r.code >= 300).map((r) => ({ ...r, resource: `${r.resource} ${r.code}` }))),
      requestsPerNode: agent.length / phase.nodes.length,
      latencyByVerb: latencyByVerb(agent.filter((r) => r.verb !== 'watch')),
      mutating: summarize(mutating.map((r) => r.latencyMs)),
      mutatingBurst: summarize(mutating.filter((r) => r.receivedAtMs < startMs + BURST_MS).map((r) => r.latencyMs)),
      status429: agent.filter((r) => r.code === 429).length,
      agentApiErrors: total(statsAfter, 'apiErrors') - total(statsBefore, 'apiErrors'),
      stormGuardReports: total(statsAfter, 'stormReports') - total(statsBefore, 'stormReports'),
      apfRejected: metricValue(metricsAfter, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: level }) - metricValue(metricsBefore, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: level }),
      apfDispatchedToAgentSchema: phase.flowControl === null ? 0 : metricValue(metricsAfter, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: context.serviceAccount }) - metricValue(metricsBefore, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: context.serviceAccount }),
      secondClient: { ...summarize(secondSamples.map((s) => s.latencyMs)), failures: secondSamples.filter((s) => s.status !== 200).length },
      cpu,
      ...(allGone !== true || recovered !== true ? { cutShort: allGone !== true ? `not every pod went: ${allGone}` : `not every Node came back to rest: ${recovered} (${fleetNodes.underPressure()} under pressure, ${fleetNodes.taintedCount()} tainted)` } : {}),
      ...(stuck.length === 0 ? {} : { stuckNodes: stuck.map((name) => ({ name, requests: agent.filter((r) => r.name === name || r.fieldSelector.endsWith(`=${name}`) || r.name.startsWith(`${name}.`) || r.name.startsWith(`${name}-pod-`)).map((r) => `${((r.receivedAtMs - startMs) / 1000).toFixed(1)} s ${r.verb} ${r.resource} ${r.code} ${r.latencyMs} ms`) })) }),
      timeline,
    };
    say(
      `${phase.label}: ${tally.podsEvicted}/${tally.podsTargeted} evicted, all gone in ${tally.allGoneMs} ms, at rest after ${recoveredMs} ms; mutating p50/p99 ${result.mutating.p50Ms}/${result.mutating.p99Ms} ms; ` +
        `${result.requestsPerNode.toFixed(1)} requests/node; 429s ${result.status429}; repeated deletes ${tally.repeatedDeletes}, kills ${tally.repeatedLocalKills}; Events lost ${tally.lostEvents}, doubled ${tally.doubledEvents}; second client p99 ${result.secondClient.p99Ms} ms; ` +
        `CPU s: API server ${cpu.apiServerS.toFixed(1)}, etcd ${cpu.etcdS.toFixed(1)}, agents ${cpu.agentsS.toFixed(1)}, machine busy ${(cpu.machineBusy * 100).toFixed(0)} %`,
    );
    return result;
  } finally {
    for (const object of flowObjects) await admin.delete(await objectPath(admin, object)).catch(() => undefined);
    await resetLeakers(context, phase.nodes);
  }
}

// Per second since the first crossing: pods deleted (first 2xx DELETE of each), the agents' requests
// and 429s, their mutating calls' p50 and p99, and the second client's p99.
function perSecond(startMs: number, endMs: number, agent: readonly AuditedRequest[], secondSamples: readonly { atMs: number; latencyMs: number }[], pressure: readonly { atMs: number; pressed: number; tainted: number }[]): TimelineSecond[] {
  const seconds = Math.max(1, Math.ceil((endMs - startMs) / 1000));
  const buckets = Array.from({ length: seconds }, () => ({ evictions: 0, requests: 0, status429: 0, mutating: [] as number[], second: [] as number[] }));
  const at = (ms: number): (typeof buckets)[number] | undefined => buckets[Math.floor((ms - startMs) / 1000)];
  const deleted = new Set<string>();
  for (const r of agent) {
    const bucket = at(r.receivedAtMs);
    if (bucket === undefined) continue;
    bucket.requests++;
    if (r.code === 429) bucket.status429++;
    if (MUTATING_VERBS.has(r.verb)) bucket.mutating.push(r.latencyMs);
    if (r.verb === 'delete' && r.resource === 'pods' && r.code >= 200 && r.code < 300 && !deleted.has(r.name)) {
      deleted.add(r.name);
      bucket.evictions++;
    }
  }
  for (const s of secondSamples) at(s.atMs)?.second.push(s.latencyMs);
  const pressureAt = (second: number): { pressed: number; tainted: number } => [...pressure].reverse().find((p) => p.atMs <= startMs + (second + 1) * 1000) ?? { pressed: 0, tainted: 0 };
  return buckets.map((b, second) => ({
    second,
    evictions: b.evictions,
    agentRequests: b.requests,
    status429: b.status429,
    mutatingP50Ms: percentile(b.mutating, 50),
    mutatingP99Ms: percentile(b.mutating, 99),
    secondClientP99Ms: percentile(b.second, 99),
    nodesUnderPressure: pressureAt(second).pressed,
    nodesTainted: pressureAt(second).tainted,
  }));
}
