// `npm run bench:fleet -- --nodes N`: N agents as shipped against one real kube-apiserver and
// etcd (test/e2e/harness), 30 pods per node, the hosts simulated (test/e2e/harness/fleet-host.ts),
// the agents in a few worker processes (bench/workers/fleet-worker.ts, at most 250 agents each).
// Phases: at rest (KEA_FLEET_REST_S, default 600 s), a storm on 10 % of the nodes, one on 100 %
// with the chart's FlowSchema and PriorityLevelConfiguration, one on 100 % without them, and an
// API server restart. What each agent asked is read from the API server's audit log (by user),
// latencies from it and from the API server's metrics; a second client (another ServiceAccount)
// reads a pod every 100 ms throughout. Writes bench/results/fleet-<N>.json, then regenerates
// docs/scale.md and its plots from every stored result (`--report-only`: only that).
// Everything started (etcd, kube-apiserver, workers) is stopped at the end, also on failure.
// KEA_FLEET_LOCK=/tmp/kea-heavy.lock: the set-up runs under that lock shared, the measured phases
// (at rest, the storms, the restart) under it exclusively.

import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { installAgentIdentity, serviceAccountToken } from '../test/e2e/harness/agent-identity.js';
import { CONTENT_TYPE, type ApiClient } from '../test/e2e/harness/api-client.js';
import { countByVerbAndResource, MUTATING_VERBS, openWatches, readAuditLog, type AuditedRequest } from '../test/e2e/harness/audit-log.js';
import { findControlPlaneBinaries, findRealNodeBinaries } from '../test/e2e/harness/binaries.js';
import { nodeImages, RealNode } from '../test/e2e/harness/real-node.js';
import { realPod } from '../test/e2e/harness/real-node-scenario.js';
import { cgroupV1Unavailable } from '../test/helpers/cgroup-sandbox.js';
import { ControlPlane } from '../test/e2e/harness/control-plane.js';
import { createFleetObjects, FLEET_NAMESPACE, fleetNodeName, fleetPodName, FleetKubelets, inParallel, STORM_BYTES } from '../test/e2e/harness/fleet.js';
import { LEAKER_LABEL } from '../test/e2e/harness/fleet-host.js';
import { applyObject, objectPath, type ManifestObject } from '../test/e2e/harness/manifest.js';
import { metricValue } from '../test/e2e/harness/metric-value.js';
import { holdLock } from './lib/heavy-lock.js';
import { percentile } from './lib/stats.js';
import { writeScalePage, type FleetResult, type StormResult } from './report/scale-page.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchDir, '..', '..');
const resultsDir = join(repoRoot, 'bench', 'results');
const PODS_PER_NODE = 30;
const AGENTS_PER_PROCESS = 250;
// The one real kubelet whose requests the agents' are compared with, and the pods it runs.
const KUBELET_NODE = 'fleet-kubelet';
const KUBELET_NAMESPACE = 'fleet-kubelet';
const KUBELET_PODS = 10;
const MiB = 1024 * 1024;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const say = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} fleet: ${line}\n`);
};

class Worker {
  private readonly waiting = new Map<string, (message: Record<string, unknown>) => void>();
  constructor(readonly child: ChildProcess) {
    child.on('message', (message: Record<string, unknown>) => {
      if (message.type === 'error') {
        say(`worker error: ${String(message.message)}`);
        return;
      }
      const resolveIt = this.waiting.get(String(message.type));
      this.waiting.delete(String(message.type));
      resolveIt?.(message);
    });
  }
  ask(command: Record<string, unknown>, reply: string): Promise<Record<string, unknown>> {
    return new Promise((resolveIt) => {
      this.waiting.set(reply, resolveIt);
      this.child.send(command);
    });
  }
}

interface WorkerStats {
  agents: number;
  rssBytes: number;
  cpuMicros: number;
  terminations: Record<string, number>;
  apiErrors: number;
  stormReports: number;
}

async function allStats(workers: readonly Worker[]): Promise<WorkerStats[]> {
  return (await Promise.all(workers.map((w) => w.ask({ type: 'stats' }, 'stats')))) as unknown as WorkerStats[];
}

// The chart's FlowSchema and PriorityLevelConfiguration, rendered by helm, for the agents' account.
function chartFlowControl(serviceAccount: string, namespace: string): ManifestObject[] {
  const helm = process.env.KEA_HELM_BIN;
  if (helm === undefined || !existsSync(helm)) throw new Error('KEA_HELM_BIN is not set: source /tmp/kea-env.sh (the FlowSchema is rendered from deploy/chart)');
  const text = execFileSync(helm, ['template', 'fleet', join(repoRoot, 'deploy', 'chart'), '--namespace', namespace, '--set', `fullnameOverride=${serviceAccount}`, '--set', 'flowControl.enabled=true', '--show-only', 'templates/flowcontrol.yaml'], { encoding: 'utf8' });
  return parseAllDocuments(text).map((d) => d.toJS() as ManifestObject).filter((o) => o !== null);
}

async function removeFlowControl(admin: ApiClient, objects: readonly ManifestObject[]): Promise<void> {
  for (const object of objects) await admin.delete(await objectPath(admin, object));
}

// A second client, of another ServiceAccount (APF's service-accounts schema), reading one pod every 100 ms.
class SecondClient {
  readonly samples: { atMs: number; latencyMs: number; status: number }[] = [];
  private running = true;
  private readonly loop: Promise<void>;
  constructor(private readonly api: ApiClient, private readonly path: string) {
    this.loop = this.run();
  }
  private async run(): Promise<void> {
    while (this.running) {
      const startMs = Date.now();
      let status = 0;
      try {
        status = (await this.api.request('GET', this.path, { timeoutMs: 30_000 })).status;
      } catch {
        status = 0;
      }
      this.samples.push({ atMs: startMs, latencyMs: Date.now() - startMs, status });
      await sleep(Math.max(0, 100 - (Date.now() - startMs)));
    }
  }
  between(fromMs: number, toMs: number): number[] {
    return this.samples.filter((s) => s.atMs >= fromMs && s.atMs < toMs).map((s) => s.latencyMs);
  }
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

async function secondClient(admin: ApiClient, plane: ControlPlane): Promise<SecondClient> {
  await admin.create(`/api/v1/namespaces/${FLEET_NAMESPACE}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'second-client' } });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${FLEET_NAMESPACE}/roles`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'second-client' }, rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get'] }] });
  await admin.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${FLEET_NAMESPACE}/rolebindings`, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'second-client' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'second-client' }, subjects: [{ kind: 'ServiceAccount', name: 'second-client', namespace: FLEET_NAMESPACE }] });
  const token = await serviceAccountToken(admin, FLEET_NAMESPACE, 'second-client');
  return new SecondClient(plane.client(token), `/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${fleetPodName(fleetNodeName(0), 1)}`);
}

async function leakers(admin: ApiClient): Promise<Map<string, string>> {
  const list = await admin.get<{ items: { metadata: { name: string; uid: string } }[] }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods`, { labelSelector: `${LEAKER_LABEL}=true` });
  return new Map(list.items.map((p) => [p.metadata.uid, p.metadata.name]));
}

// The leaker of each node, again (the one before was evicted).
async function recreateLeakers(admin: ApiClient, nodes: readonly string[]): Promise<void> {
  await inParallel(nodes, 16, async (nodeName) => {
    const name = fleetPodName(nodeName, 0);
    const created = await admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'fleet', [LEAKER_LABEL]: 'true' } },
      spec: { nodeName, containers: [{ name: 'main', image: 'registry.example/fleet:1' }], terminationGracePeriodSeconds: 5 },
    });
    const now = new Date().toISOString();
    await admin.patch(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${name}/status`, { metadata: { uid: created.metadata.uid }, status: { phase: 'Running', startTime: now, containerStatuses: [{ name: 'main', image: 'registry.example/fleet:1', imageID: '', containerID: `containerd://${created.metadata.uid.replace(/-/g, '')}`, ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } } }] } }, CONTENT_TYPE.strategicMergePatch);
  });
}

function p(values: readonly number[], q: number): number | null {
  return percentile([...values].sort((a, b) => a - b), q);
}

function latencyByVerb(requests: readonly AuditedRequest[]): Record<string, { count: number; p50Ms: number | null; p99Ms: number | null }> {
  const verbs = new Map<string, number[]>();
  for (const r of requests) verbs.set(r.verb, [...(verbs.get(r.verb) ?? []), r.latencyMs]);
  return Object.fromEntries([...verbs.entries()].map(([verb, values]) => [verb, { count: values.length, p50Ms: p(values, 50), p99Ms: p(values, 99) }]));
}

async function storm(options: {
  label: string;
  admin: ApiClient;
  plane: ControlPlane;
  workers: readonly Worker[];
  assignment: ReadonlyMap<string, number>;
  nodes: readonly string[];
  kubelets: FleetKubelets;
  agentUser: string;
  second: SecondClient;
  auditFrom: number;
  flowControl: boolean;
  flowSchemaName: string;
}): Promise<{ result: StormResult; nextByte: number }> {
  const { admin, plane, workers, nodes, kubelets } = options;
  const targets = await leakers(admin);
  const onNodes = new Map([...targets.entries()].filter(([, name]) => nodes.some((n) => name === fleetPodName(n, 0))));
  const before = await allStats(workers);
  const metricsBefore = (await admin.request('GET', '/metrics')).text;
  const startMs = Date.now();
  say(`${options.label}: ${nodes.length} nodes cross the hard threshold within 1 s`);
  await Promise.all(workers.map((w, i) => w.ask({ type: 'storm', nodes: nodes.filter((n) => options.assignment.get(n) === i), bytes: STORM_BYTES, spreadMs: 1000 }, 'stormed')));
  const deadlineMs = startMs + 600_000;
  while (![...onNodes.keys()].every((uid) => kubelets.goneAtMs.has(uid)) && Date.now() < deadlineMs) await sleep(500);
  const gone = [...onNodes.keys()].filter((uid) => kubelets.goneAtMs.has(uid));
  const lastGoneMs = Math.max(0, ...gone.map((uid) => (kubelets.goneAtMs.get(uid) as number) - startMs));
  // Room for a repeat to show: more than one housekeeping pass (10 s).
  await sleep(15_000);
  const endMs = Date.now();
  const read = readAuditLog(plane.auditLogFile as string, options.auditFrom);
  const agent = read.requests.filter((r) => r.user === options.agentUser && r.receivedAtMs >= startMs);
  const after = await allStats(workers);
  const metricsAfter = (await admin.request('GET', '/metrics')).text;
  const deletes = agent.filter((r) => r.verb === 'delete' && r.resource === 'pods' && r.code >= 200 && r.code < 300);
  const perPod = new Map<string, number>();
  for (const r of deletes) perPod.set(r.name, (perPod.get(r.name) ?? 0) + 1);
  const terminations: Record<string, number> = Object.assign({}, ...after.map((s) => s.terminations));
  const ended = [...onNodes.keys()].map((uid) => terminations[uid] ?? 0);
  const events = await admin.get<{ items: { involvedObject: { uid?: string }; reason: string; count?: number }[] }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/events`);
  const evictedEvents = events.items.filter((e) => e.reason === 'Evicted' && onNodes.has(e.involvedObject.uid ?? ''));
  const mutating = agent.filter((r) => MUTATING_VERBS.has(r.verb));
  // Per second: pods deleted by the agents, and the p99 of their mutating calls started in that second.
  const seconds = Math.ceil((endMs - startMs) / 1000);
  const timeline = Array.from({ length: seconds }, (_, s) => {
    const inSecond = (r: AuditedRequest): boolean => r.receivedAtMs >= startMs + s * 1000 && r.receivedAtMs < startMs + (s + 1) * 1000;
    const writes = mutating.filter(inSecond).map((r) => r.latencyMs);
    return { second: s, evictions: deletes.filter(inSecond).length, mutatingP99Ms: p(writes, 99), secondClientP99Ms: p(options.second.between(startMs + s * 1000, startMs + (s + 1) * 1000), 99) };
  });
  const dispatched = (text: string): number => metricValue(text, 'apiserver_flowcontrol_dispatched_requests_total', { flow_schema: options.flowSchemaName });
  const rejected = (text: string): number => metricValue(text, 'apiserver_flowcontrol_rejected_requests_total');
  const secondSamples = options.second.between(startMs, endMs);
  const result: StormResult = {
    label: options.label,
    nodes: nodes.length,
    flowControl: options.flowControl,
    podsEvicted: gone.length,
    podsTargeted: onNodes.size,
    allGoneMs: gone.length === onNodes.size ? lastGoneMs : null,
    evictionsPerSecondPeak: Math.max(0, ...timeline.map((t) => t.evictions)),
    evictionsPerSecondMean: lastGoneMs > 0 ? gone.length / (lastGoneMs / 1000) : null,
    repeatedDeletes: [...perPod.values()].filter((n) => n > 1).length,
    repeatedLocalKills: ended.filter((n) => n > 1).length,
    evictedEvents: evictedEvents.length,
    lostEvents: onNodes.size - new Set(evictedEvents.map((e) => e.involvedObject.uid)).size,
    agentRequests: countByVerbAndResource(agent),
    latencyByVerb: latencyByVerb(agent),
    mutatingP99Ms: p(mutating.map((r) => r.latencyMs), 99),
    status429: agent.filter((r) => r.code === 429).length,
    agentApiErrors: after.reduce((s, w) => s + w.apiErrors, 0) - before.reduce((s, w) => s + w.apiErrors, 0),
    stormGuardReports: after.reduce((s, w) => s + w.stormReports, 0) - before.reduce((s, w) => s + w.stormReports, 0),
    apfRejected: rejected(metricsAfter) - rejected(metricsBefore),
    apfDispatchedToAgentSchema: dispatched(metricsAfter) - dispatched(metricsBefore),
    secondClient: { samples: secondSamples.length, p50Ms: p(secondSamples, 50), p99Ms: p(secondSamples, 99), maxMs: secondSamples.length === 0 ? null : Math.max(...secondSamples) },
    timeline,
  };
  say(`${options.label}: ${gone.length}/${onNodes.size} evicted, all in ${result.allGoneMs} ms; mutating p99 ${result.mutatingP99Ms} ms; 429s ${result.status429}; repeats ${result.repeatedDeletes}; second client p99 ${result.secondClient.p99Ms} ms`);
  return { result, nextByte: read.nextByte };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--report-only')) {
    writeScalePage(repoRoot, loadResults());
    return;
  }
  const nodesArg = argv.indexOf('--nodes');
  const nodeCount = Number(nodesArg >= 0 ? argv[nodesArg + 1] : '100');
  if (!Number.isInteger(nodeCount) || nodeCount < 1) throw new Error(`--nodes needs a positive integer, got ${argv[nodesArg + 1]}`);
  const restMs = Number(process.env.KEA_FLEET_REST_S ?? '600') * 1000;
  const lockFile = process.env.KEA_FLEET_LOCK;
  let release: (() => Promise<void>) | null = lockFile === undefined ? null : await holdLock(lockFile, 'shared');
  const binaries = findControlPlaneBinaries();
  if (!binaries.ok) throw new Error(`the fleet bench needs the control plane's binaries: ${binaries.reason} (source /tmp/kea-env.sh)`);
  const plane = await ControlPlane.start({ binaries: binaries.binaries, nodeNames: [KUBELET_NODE], auditLog: true });
  const workers: Worker[] = [];
  let realNode: RealNode | null = null;
  let kubelets: FleetKubelets | null = null;
  let second: SecondClient | null = null;
  try {
    const admin = plane.admin();
    const identity = await installAgentIdentity(admin);
    const flowControl = chartFlowControl(identity.serviceAccount, identity.namespace);
    for (const object of flowControl) await applyObject(admin, object);
    kubelets = new FleetKubelets(admin);
    await kubelets.synced;
    const nodes = Array.from({ length: nodeCount }, (_, i) => fleetNodeName(i));
    let t = Date.now();
    await createFleetObjects(admin, nodes, PODS_PER_NODE, 48);
    say(`${nodeCount} Nodes and ${nodeCount * PODS_PER_NODE} pods created in ${Math.round((Date.now() - t) / 1000)} s`);
    second = await secondClient(admin, plane);
    realNode = await startKubelet(plane, admin);

    const processes = Math.ceil(nodeCount / AGENTS_PER_PROCESS);
    const assignment = new Map(nodes.map((n, i) => [n, i % processes]));
    const workerJs = join(benchDir, 'workers', 'fleet-worker.js');
    for (let i = 0; i < processes; i++) workers.push(new Worker(fork(workerJs, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: ['--max-old-space-size=4096'] })));
    const baseline = await allStats(workers);
    t = Date.now();
    await Promise.all(workers.map((w, i) => w.ask({ type: 'start', nodes: nodes.filter((n) => assignment.get(n) === i), server: plane.url, caPem: plane.caPem, token: identity.token }, 'started')));
    const startupS = (Date.now() - t) / 1000;
    say(`${nodeCount} agents started in ${processes} processes in ${Math.round(startupS)} s`);
    // Start-up's own requests (the conditions, the taint check) are over.
    await sleep(20_000);
    if (lockFile !== undefined) {
      await release?.();
      say(`waiting for ${lockFile} (exclusive)`);
      release = await holdLock(lockFile, 'exclusive');
      say(`${lockFile} held exclusively`);
      await sleep(5_000);
    }

    // At rest.
    const restFrom = readAuditLog(plane.auditLogFile as string).nextByte;
    const restMetricsBefore = (await admin.request('GET', '/metrics')).text;
    const restStatsBefore = await allStats(workers);
    const restStartMs = Date.now();
    say(`at rest for ${restMs / 1000} s`);
    await sleep(restMs);
    const restRead = readAuditLog(plane.auditLogFile as string, restFrom);
    const restStatsAfter = await allStats(workers);
    const restMetricsAfter = (await admin.request('GET', '/metrics')).text;
    const restMinutes = (Date.now() - restStartMs) / 60_000;
    const restAgent = restRead.requests.filter((r) => r.user === identity.username);
    const restKubelet = restRead.requests.filter((r) => r.user === `system:node:${KUBELET_NODE}`);
    const restCounts = countByVerbAndResource(restAgent);
    // What the watches of pods and Nodes carried (every watcher's: the agents', and the one
    // kubelet's and the harness's, which at rest see their own few changes). Responses to other
    // requests are left out: at rest the agents make none, and the scrapes' own would dominate.
    const watchBytes = (text: string): number => metricValue(text, 'apiserver_watch_events_sizes_sum', { resource: 'pods' }) + metricValue(text, 'apiserver_watch_events_sizes_sum', { resource: 'nodes' });
    const longrunning = metricValue(restMetricsAfter, 'apiserver_longrunning_requests', { verb: 'WATCH' });
    const cpuMicros = restStatsAfter.reduce((s, w) => s + w.cpuMicros, 0) - restStatsBefore.reduce((s, w) => s + w.cpuMicros, 0);
    const rest = {
      minutes: restMinutes,
      requestsPerNodePerMinute: Object.fromEntries(Object.entries(restCounts).map(([k, v]) => [k, v / nodeCount / restMinutes])),
      kubeletRequestsPerMinute: realNode === null ? null : Object.fromEntries(Object.entries(countByVerbAndResource(restKubelet)).map(([k, v]) => [k, v / restMinutes])),
      kubeletPods: realNode === null ? 0 : KUBELET_PODS,
      lists: restAgent.filter((r) => r.verb === 'list').length,
      writes: restAgent.filter((r) => MUTATING_VERBS.has(r.verb)).length,
      watchesOpenPerNode: openWatches(plane.auditLogFile as string, identity.username) / nodeCount,
      watchesOpenInAll: longrunning,
      bytesFromApiServerPerNodePerMinute: (watchBytes(restMetricsAfter) - watchBytes(restMetricsBefore)) / nodeCount / restMinutes,
      cpuPercentPerAgent: (cpuMicros / 1e6 / (restMinutes * 60) / nodeCount) * 100,
      rssBytesPerProcess: restStatsAfter.map((w) => w.rssBytes),
      rssBytesPerAgent: (restStatsAfter.reduce((s, w) => s + w.rssBytes, 0) - baseline.reduce((s, w) => s + w.rssBytes, 0)) / nodeCount,
      apiServerObjects: { pods: metricValue(restMetricsAfter, 'apiserver_resource_objects', { resource: 'pods' }) || metricValue(restMetricsAfter, 'apiserver_storage_objects', { resource: 'pods' }), events: metricValue(restMetricsAfter, 'apiserver_resource_objects', { resource: 'events' }) || metricValue(restMetricsAfter, 'apiserver_storage_objects', { resource: 'events' }) },
    };
    say(`at rest: ${JSON.stringify(rest.requestsPerNodePerMinute)} per node per minute; ${rest.lists} lists, ${rest.writes} writes; ${rest.cpuPercentPerAgent.toFixed(3)} % CPU and ${(rest.rssBytesPerAgent / 1048576).toFixed(1)} MiB per agent`);

    // Storms.
    const storms: StormResult[] = [];
    let from = restRead.nextByte;
    const tenth = nodes.slice(0, Math.max(1, Math.round(nodeCount / 10)));
    const phases = [
      { label: 'storm on 10 % of the nodes', nodes: tenth, flowControl: true },
      { label: 'storm on 100 % of the nodes', nodes, flowControl: true },
      { label: 'storm on 100 % of the nodes, without the FlowSchema', nodes, flowControl: false },
    ];
    let stormed: readonly string[] | null = null;
    for (const phase of phases) {
      if (stormed !== null) {
        // Between storms: the flow control objects go before the storm without them, the hosts calm
        // down and the last storm's leakers come back.
        if (!phase.flowControl && storms.at(-1)?.flowControl === true) await removeFlowControl(admin, flowControl);
        await Promise.all(workers.map((w) => w.ask({ type: 'calm' }, 'calmed')));
        await recreateLeakers(admin, stormed);
        await sleep(10_000);
      }
      const outcome = await storm({ ...phase, admin, plane, workers, assignment, kubelets, agentUser: identity.username, second, auditFrom: from, flowSchemaName: identity.serviceAccount });
      storms.push(outcome.result);
      from = outcome.nextByte;
      stormed = phase.nodes;
    }

    // An API server restart under the fleet.
    say('API server restart');
    await plane.stopApiServer();
    await sleep(2_000);
    await plane.startApiServer();
    const restartedAtMs = Date.now();
    let convergedMs: number | null = null;
    let restartRequests: AuditedRequest[] = [];
    while (Date.now() - restartedAtMs < 300_000) {
      restartRequests = readAuditLog(plane.auditLogFile as string, from).requests.filter((r) => r.user === identity.username && r.receivedAtMs >= restartedAtMs - 1000);
      const watchers = new Set(restartRequests.filter((r) => r.verb === 'watch').map((r) => `${r.resource}:${r.userAgent}:${r.receivedAtMs}`));
      const lastWatchMs = Math.max(0, ...restartRequests.filter((r) => r.verb === 'watch').map((r) => r.receivedAtMs));
      if (watchers.size >= 2 * nodeCount) {
        convergedMs = lastWatchMs - restartedAtMs;
        break;
      }
      await sleep(1000);
    }
    await sleep(15_000);
    restartRequests = readAuditLog(plane.auditLogFile as string, from).requests.filter((r) => r.user === identity.username && r.receivedAtMs >= restartedAtMs - 1000);
    const restart = { watchesReopenedMs: convergedMs, requests: countByVerbAndResource(restartRequests), relists: restartRequests.filter((r) => r.verb === 'list').length, deletes: restartRequests.filter((r) => r.verb === 'delete').length, status429: restartRequests.filter((r) => r.code === 429).length };
    say(`restart: watches reopened in ${convergedMs} ms, ${restart.relists} relists, ${restart.deletes} deletes`);

    const result: FleetResult = {
      nodes: nodeCount,
      podsPerNode: PODS_PER_NODE,
      processes,
      agentsPerProcess: Math.ceil(nodeCount / processes),
      measuredAt: new Date().toISOString(),
      machine: `${readFileSync('/proc/cpuinfo', 'utf8').split('\n').filter((l) => l.startsWith('processor')).length} cores, Node ${process.version}`,
      startupS,
      rest,
      storms,
      restart,
    };
    mkdirSync(resultsDir, { recursive: true });
    writeFileSync(join(resultsDir, `fleet-${nodeCount}.json`), `${JSON.stringify(result, null, 2)}\n`);
    writeScalePage(repoRoot, loadResults());
    say(`wrote bench/results/fleet-${nodeCount}.json and docs/scale.md`);
  } finally {
    await release?.();
    await second?.stop();
    await Promise.all(workers.map((w) => w.ask({ type: 'stop' }, 'stopped').catch(() => undefined)));
    for (const w of workers) w.child.kill('SIGKILL');
    await kubelets?.stop();
    await realNode?.stop();
    await plane.stop();
  }
}

// One real kubelet and containerd (test/e2e/harness/real-node.ts) on the same API server, with a
// few pods, for its own requests at rest; none where the machine cannot run it (then said so).
async function startKubelet(plane: ControlPlane, admin: ApiClient): Promise<RealNode | null> {
  const nodeBinaries = findRealNodeBinaries();
  const images = nodeImages();
  const cgroups = cgroupV1Unavailable();
  const why = !nodeBinaries.ok ? nodeBinaries.reason : !images.ok ? images.reason : cgroups;
  if (!nodeBinaries.ok || !images.ok || why !== null) {
    say(`no real kubelet to compare with: ${why ?? ''}`);
    return null;
  }
  const node = await RealNode.start({
    plane,
    binaries: nodeBinaries.binaries,
    nodeName: KUBELET_NODE,
    imagesTar: images.binaries,
    kubepodsLimitBytes: 1536n * BigInt(MiB),
    rootDirSizeBytes: 256n * BigInt(MiB),
    evictionHard: { 'memory.available': '100Mi' },
    podPidsLimit: 1024,
  });
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUBELET_NAMESPACE } });
  for (let i = 0; i < KUBELET_PODS; i++) await admin.create(`/api/v1/namespaces/${KUBELET_NAMESPACE}/pods`, realPod(`held-${i}`, KUBELET_NODE, { args: ['hold', '8'], namespace: KUBELET_NAMESPACE }));
  const deadlineMs = Date.now() + 180_000;
  for (;;) {
    const pods = await admin.get<{ items: { status?: { phase?: string } }[] }>(`/api/v1/namespaces/${KUBELET_NAMESPACE}/pods`);
    if (pods.items.filter((p) => p.status?.phase === 'Running').length === KUBELET_PODS) break;
    if (Date.now() > deadlineMs) throw new Error('the real kubelet did not run its pods within 3 minutes');
    await sleep(1000);
  }
  say(`a real kubelet runs ${KUBELET_PODS} pods on ${KUBELET_NODE}`);
  return node;
}

function loadResults(): FleetResult[] {
  if (!existsSync(resultsDir)) return [];
  return readdirSync(resultsDir)
    .filter((f) => /^fleet-\d+\.json$/.test(f))
    .map((f) => JSON.parse(readFileSync(join(resultsDir, f), 'utf8')) as FleetResult)
    .sort((a, b) => a.nodes - b.nodes);
}

main().catch((err: unknown) => {
  process.stderr.write(`fleet bench failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exitCode = 1;
});
