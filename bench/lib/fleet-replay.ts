// A storm's burst as a real fleet would send it. On this machine the agents share 2 cores with the
// API server, so in the agents' own storms their requests reach it spread over tens of seconds
// (each agent's work, times N, on one machine); on a cluster every node's agent sends within the
// second its node crosses. Here each node's burst (the requests an agent sends within a second of
// a local kill: the Evicted Event, the DisruptionTarget condition, then the DELETE, the node's
// EvictionThresholdMet Event, the taint, then the conditions; the same bodies, as the agents'
// ServiceAccount, so API Priority and Fairness classifies them alike) is sent by a light client,
// one kept-alive connection per node opened at the burst as an agent's is, every node within one
// second. The taint and condition are of types of their own, so the running agents ignore them.
// Measured from the audit log: the mutating calls' latency, how long the API server took to answer
// them all, its 429s; the second client beside it.

import { ApiClient, CONTENT_TYPE } from '../../test/e2e/harness/api-client.js';
import { MUTATING_VERBS, countByVerbAndResource } from '../../test/e2e/harness/audit-log.js';
import { FLEET_NAMESPACE, fleetPodName, inParallel } from '../../test/e2e/harness/fleet.js';
import { applyObject, objectPath } from '../../test/e2e/harness/manifest.js';
import { metricValue } from '../../test/e2e/harness/metric-value.js';
import { cpuMark, cpuUse, latencyByVerb, leakersOn, resetLeakers, sleep, summarize, waitUntil, workerStats, type FleetContext } from './fleet-context.js';
import type { FlowControlSetting, ReplayResult } from './fleet-result.js';
import { chartFlowControl } from './fleet-storm.js';

const REPLAY_CONDITION = 'fleet-replay.kube-eviction-agent.io/MemoryPressure';
const REPLAY_TAINT = 'fleet-replay.kube-eviction-agent.io/pressure';
const SPREAD_MS = 1000;

// The Evicted Event's message and annotations as the agent writes them for a leaker.
const EVICTED_MESSAGE = 'The node was low on resource: memory. Threshold quantity: 500Mi, available: 312Mi. Container main was using 6291456Ki, request is 0, has larger consumption of memory. ';

function event(namespace: string, involvedObject: Record<string, string>, reason: string, message: string, nodeName: string, annotations?: Record<string, string>): Record<string, unknown> {
  const now = new Date();
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${involvedObject.name}.${(BigInt(now.getTime()) * 1_000_000n + BigInt(Math.floor(Math.random() * 1e6))).toString(16)}`, namespace, ...(annotations === undefined ? {} : { annotations }) },
    involvedObject,
    reason,
    message,
    type: 'Warning',
    count: 1,
    firstTimestamp: now.toISOString(),
    lastTimestamp: now.toISOString(),
    source: { component: 'kube-eviction-agent', host: nodeName },
    reportingComponent: 'kube-eviction-agent',
    reportingInstance: nodeName,
  };
}

// One node's burst, in the agent's order; resolves with each answer's status.
async function burst(api: ApiClient, nodeName: string, pod: { name: string; uid: string }, resourceVersion: string): Promise<number[]> {
  const podPath = `/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${pod.name}`;
  const now = new Date().toISOString();
  const status = async (request: Promise<{ status: number }>): Promise<number> => (await request.catch(() => ({ status: 0 }))).status;
  const podRequests = async (): Promise<number[]> => {
    const condition = await status(api.request('PATCH', `${podPath}/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: { metadata: { uid: pod.uid }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: 'The node was low on resource: memory.', lastTransitionTime: now }] } } }));
    const deleted = await status(api.request('DELETE', podPath, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 1, preconditions: { uid: pod.uid } } }));
    return [condition, deleted];
  };
  const nodeRequests = async (): Promise<number[]> => {
    const taint = await status(api.request('PATCH', `/api/v1/nodes/${nodeName}`, { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion }, spec: { taints: [{ key: REPLAY_TAINT, value: '', effect: 'NoSchedule' }] } } }));
    const conditions = await status(
      api.request('PATCH', `/api/v1/nodes/${nodeName}/status`, {
        contentType: CONTENT_TYPE.strategicMergePatch,
        body: { status: { conditions: [{ type: REPLAY_CONDITION, status: 'True', reason: 'AgentHasInsufficientMemory', message: 'kube-eviction-agent: node has insufficient memory available', lastHeartbeatTime: now, lastTransitionTime: now }] } },
      }),
    );
    return [taint, conditions];
  };
  const answers = await Promise.all([
    status(api.request('POST', `/api/v1/namespaces/${FLEET_NAMESPACE}/events`, { body: event(FLEET_NAMESPACE, { apiVersion: 'v1', kind: 'Pod', namespace: FLEET_NAMESPACE, name: pod.name, uid: pod.uid }, 'Evicted', EVICTED_MESSAGE, nodeName, { offending_containers: 'main', offending_containers_usage: '6291456Ki', starved_resource: 'memory' }) })),
    podRequests(),
    status(api.request('POST', '/api/v1/namespaces/default/events', { body: event('default', { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeName }, 'EvictionThresholdMet', 'Attempting to reclaim memory', nodeName) })),
    nodeRequests(),
  ]);
  return answers.flat();
}

export async function measureReplay(context: FleetContext, repoRoot: string, flowControl: FlowControlSetting | null, token: string): Promise<ReplayResult> {
  const { admin, plane, second, agentUser, say } = context;
  const nodes = [...context.assignment.keys()];
  const flowObjects = flowControl === null ? [] : chartFlowControl(repoRoot, context, flowControl);
  for (const object of flowObjects) await applyObject(admin, object);
  try {
    if (flowObjects.length > 0) await sleep(5_000);
    const versions = new Map((await admin.get<{ items: { metadata: { name: string; resourceVersion: string } }[] }>('/api/v1/nodes')).items.map((n) => [n.metadata.name, n.metadata.resourceVersion]));
    const leakers = new Map([...(await leakersOn(admin, nodes)).entries()].map(([uid, name]) => [name, uid]));
    const clients = new Map(nodes.map((n) => [n, new ApiClient(plane.url, plane.caPem, token, { keepAlive: true })]));
    const statsBefore = await workerStats(context);
    const metricsBefore = (await admin.request('GET', '/metrics')).text;
    const cpuBefore = cpuMark(plane, statsBefore);
    const startMs = Date.now();
    say(`replayed burst${flowControl === null ? '' : ' under the chart FlowSchema'}: ${nodes.length} nodes' requests within 1 s`);
    let lastAnswerMs = startMs;
    const codes = (
      await Promise.all(
        nodes.map(async (nodeName) => {
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * SPREAD_MS)));
          const pod = fleetPodName(nodeName, 0);
          const answers = await burst(clients.get(nodeName) as ApiClient, nodeName, { name: pod, uid: leakers.get(pod) ?? '' }, versions.get(nodeName) ?? '');
          lastAnswerMs = Math.max(lastAnswerMs, Date.now());
          return answers;
        }),
      )
    ).flat();
    await sleep(3_000);
    const endMs = Date.now();
    const statsAfter = await workerStats(context);
    const metricsAfter = (await admin.request('GET', '/metrics')).text;
    const mutating = context.audit.between(agentUser, startMs, endMs).filter((r) => MUTATING_VERBS.has(r.verb));
    const level = flowControl === null ? 'workload-low' : context.serviceAccount;
    const secondSamples = second.between(startMs, endMs);
    const result: ReplayResult = {
      nodes: nodes.length,
      flowControl,
      requests: countByVerbAndResource(mutating),
      answeredWithinMs: lastAnswerMs - startMs,
      statuses: Object.fromEntries([...new Set(codes)].sort().map((code) => [String(code), codes.filter((c) => c === code).length])),
      mutating: summarize(mutating.map((r) => r.latencyMs)),
      latencyByVerb: latencyByVerb(mutating),
      apfRejected: metricValue(metricsAfter, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: level }) - metricValue(metricsBefore, 'apiserver_flowcontrol_rejected_requests_total', { priority_level: level }),
      secondClient: { ...summarize(secondSamples.map((s) => s.latencyMs)), failures: secondSamples.filter((s) => s.status !== 200).length },
      cpu: cpuUse(cpuBefore, cpuMark(plane, statsAfter)),
    };
    say(`replayed burst: ${mutating.length} requests answered within ${result.answeredWithinMs} ms; p50/p99 ${result.mutating.p50Ms}/${result.mutating.p99Ms} ms; answers ${JSON.stringify(result.statuses)}; second client p99 ${result.secondClient.p99Ms} ms`);
    return result;
  } finally {
    for (const object of flowObjects) await admin.delete(await objectPath(admin, object)).catch(() => undefined);
    // The replay's taint and condition come off; the leakers come back.
    await inParallel(nodes, 16, async (nodeName) => {
      const node = await admin.get<{ spec?: { taints?: { key: string }[] } }>(`/api/v1/nodes/${nodeName}`);
      const kept = (node.spec?.taints ?? []).filter((t) => t.key !== REPLAY_TAINT);
      await admin.patch(`/api/v1/nodes/${nodeName}`, { spec: { taints: kept.length === 0 ? null : kept } }, CONTENT_TYPE.mergePatch).catch(() => undefined);
      await admin.patch(`/api/v1/nodes/${nodeName}/status`, { status: { conditions: [{ type: REPLAY_CONDITION, status: 'False', reason: 'Replayed', message: 'replay over' }] } }, CONTENT_TYPE.strategicMergePatch).catch(() => undefined);
    });
    await waitUntil(context, () => [...context.kubelets.terminatingAtMs.keys()].every((uid) => context.kubelets.goneAtMs.has(uid)), 120_000);
    await resetLeakers(context, nodes);
  }
}
