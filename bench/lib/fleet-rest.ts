// The fleet at rest: for the window, every agent's requests by verb and resource per node per
// minute (from the audit log), their LISTs and writes (none expected), the watches they hold, what
// the API server's watches of pods and Nodes sent, each agent's CPU and memory, and, in the same
// window, one real kubelet's requests.

import { countByVerbAndResource, MUTATING_VERBS } from '../../test/e2e/harness/audit-log.js';
import { metricValue } from '../../test/e2e/harness/metric-value.js';
import { cpuMark, cpuUse, sleep, workerStats, type FleetContext } from './fleet-context.js';
import type { RestResult } from './fleet-result.js';
import { total, type WorkerStats } from './fleet-workers.js';

export async function measureRest(context: FleetContext, restMs: number, kubelet: { user: string; pods: number } | null, baseline: readonly WorkerStats[]): Promise<RestResult> {
  const { admin, plane, agentUser, nodeCount, say } = context;
  const metricsBefore = (await admin.request('GET', '/metrics')).text;
  const statsBefore = await workerStats(context);
  const cpuBefore = cpuMark(plane, statsBefore);
  const startMs = Date.now();
  say(`at rest for ${Math.round(restMs / 1000)} s`);
  await sleep(Math.max(0, Math.min(restMs, context.deadlineMs - Date.now())));
  const endMs = Date.now();
  const statsAfter = await workerStats(context);
  const metricsAfter = (await admin.request('GET', '/metrics')).text;
  const minutes = (endMs - startMs) / 60_000;
  const agent = context.audit.between(agentUser, startMs, endMs);
  const kubeletRequests = kubelet === null ? null : context.audit.between(kubelet.user, startMs, endMs);
  const perMinute = (counts: Record<string, number>, divisor: number): Record<string, number> => Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / divisor / minutes]));
  // What the watches of pods and Nodes carried (every watcher's: the agents', and the one kubelet's
  // and the harness's, which at rest see their own few changes). Responses to other requests are
  // left out: at rest the agents make none, and the scrapes' own would dominate.
  const watchBytes = (text: string): number => metricValue(text, 'apiserver_watch_events_sizes_sum', { resource: 'pods' }) + metricValue(text, 'apiserver_watch_events_sizes_sum', { resource: 'nodes' });
  const objects = (resource: string): number => metricValue(metricsAfter, 'apiserver_resource_objects', { resource }) || metricValue(metricsAfter, 'apiserver_storage_objects', { resource });
  const cpuMicros = total(statsAfter, 'cpuMicros') - total(statsBefore, 'cpuMicros');
  const rest: RestResult = {
    minutes,
    requestsPerNodePerMinute: perMinute(countByVerbAndResource(agent), nodeCount),
    kubeletRequestsPerMinute: kubeletRequests === null ? null : perMinute(countByVerbAndResource(kubeletRequests), 1),
    kubeletPods: kubelet?.pods ?? 0,
    lists: agent.filter((r) => r.verb === 'list').length,
    writes: agent.filter((r) => MUTATING_VERBS.has(r.verb)).length,
    watchesOpenPerNode: context.audit.openWatches(agentUser) / nodeCount,
    watchesOpenInAll: metricValue(metricsAfter, 'apiserver_longrunning_requests', { verb: 'WATCH' }),
    bytesFromApiServerPerNodePerMinute: (watchBytes(metricsAfter) - watchBytes(metricsBefore)) / nodeCount / minutes,
    cpuPercentPerAgent: (cpuMicros / 1e6 / (minutes * 60) / nodeCount) * 100,
    rssBytesPerProcess: statsAfter.map((w) => w.rssBytes),
    rssBytesPerAgent: (total(statsAfter, 'rssBytes') - total(baseline, 'rssBytes')) / nodeCount,
    apiServerObjects: { pods: objects('pods'), events: objects('events') },
    cpu: cpuUse(cpuBefore, cpuMark(plane, statsAfter)),
  };
  say(`at rest: ${JSON.stringify(rest.requestsPerNodePerMinute)} per node per minute; ${rest.lists} LISTs, ${rest.writes} writes; ${rest.cpuPercentPerAgent.toFixed(3)} % CPU and ${(rest.rssBytesPerAgent / 1048576).toFixed(1)} MiB per agent; kubelet ${JSON.stringify(rest.kubeletRequestsPerMinute)} per minute`);
  return rest;
}
