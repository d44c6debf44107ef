// What every phase of the fleet benchmark measures with: the running fleet (the API server, the
// workers and which nodes each runs, the simulated kubelets, the Nodes' pressure), the agents'
// and the kubelet's requests from the audit log, CPU marks of the API server, etcd, the agents
// and the machine, and the tally of a set of evictions (each pod gone once, ended locally once,
// with one Evicted Event). Waits end early when the run is interrupted or out of time.

import { readFileSync } from 'node:fs';
import { CONTENT_TYPE, type ApiClient } from '../../test/e2e/harness/api-client.js';
import { AuditLogTail, type AuditedRequest } from '../../test/e2e/harness/audit-log.js';
import type { ControlPlane } from '../../test/e2e/harness/control-plane.js';
import { FLEET_NAMESPACE, fleetPodName, inParallel, type FleetKubelets, type FleetNodes } from '../../test/e2e/harness/fleet.js';
import { LEAKER_LABEL } from '../../test/e2e/harness/fleet-host.js';
import { interruptSignal } from './cleanup.js';
import type { CpuUse, EvictionTally, LatencySummary } from './fleet-result.js';
import { allStats, terminations, total, type FleetWorker, type WorkerStats } from './fleet-workers.js';
import type { SecondClient } from './second-client.js';
import { percentile } from './stats.js';

export interface FleetContext {
  readonly nodeCount: number;
  readonly admin: ApiClient;
  readonly plane: ControlPlane;
  readonly workers: readonly FleetWorker[];
  /** Which worker runs each node's agent. */
  readonly assignment: ReadonlyMap<string, number>;
  readonly kubelets: FleetKubelets;
  readonly fleetNodes: FleetNodes;
  readonly second: SecondClient;
  readonly audit: AuditRecord;
  readonly agentUser: string;
  /** The agents' ServiceAccount name: the chart's FlowSchema and priority level are named after it. */
  readonly serviceAccount: string;
  readonly agentNamespace: string;
  /** When the run must end its measurements (ms since the epoch). */
  readonly deadlineMs: number;
  readonly say: (line: string) => void;
}

/** The requests of the users measured (the agents', the kubelet's), kept from the audit log as it grows. */
export class AuditRecord {
  private readonly tail: AuditLogTail;
  private readonly kept: AuditedRequest[] = [];

  constructor(
    file: string,
    private readonly users: ReadonlySet<string>,
  ) {
    this.tail = new AuditLogTail(file);
  }

  /** Reads what the API server logged since the last call. */
  refresh(): void {
    for (const request of this.tail.read()) if (this.users.has(request.user)) this.kept.push(request);
  }

  /** `user`'s requests received in [fromMs, toMs), after a refresh. */
  between(user: string, fromMs: number, toMs = Infinity): AuditedRequest[] {
    this.refresh();
    return this.kept.filter((r) => r.user === user && r.receivedAtMs >= fromMs && r.receivedAtMs < toMs);
  }

  openWatches(user: string): number {
    this.refresh();
    return this.tail.openWatches(user);
  }
}

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => {
    if (interruptSignal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      interruptSignal.removeEventListener('abort', done);
      resolve();
    }
    interruptSignal.addEventListener('abort', done, { once: true });
  });

/**
 * Polls `done` every `intervalMs` until it holds, `capMs` has passed, the run's deadline has
 * passed or the run is interrupted; resolves with whether it held, or why the wait ended.
 */
export async function waitUntil(context: Pick<FleetContext, 'deadlineMs'>, done: () => boolean | Promise<boolean>, capMs: number, intervalMs = 500): Promise<true | string> {
  const endMs = Math.min(Date.now() + capMs, context.deadlineMs);
  for (;;) {
    if (await done()) return true;
    if (interruptSignal.aborted) return 'interrupted';
    if (Date.now() >= endMs) return Date.now() >= context.deadlineMs ? 'the run\'s time limit' : `not within ${Math.round(capMs / 1000)} s`;
    await sleep(intervalMs);
  }
}

export function summarize(latenciesMs: readonly number[]): LatencySummary {
  return { count: latenciesMs.length, p50Ms: percentile(latenciesMs, 50), p99Ms: percentile(latenciesMs, 99), maxMs: latenciesMs.length === 0 ? null : latenciesMs.reduce((a, b) => Math.max(a, b), 0) };
}

export function latencyByVerb(requests: readonly AuditedRequest[]): Record<string, LatencySummary> {
  const verbs = new Map<string, number[]>();
  for (const r of requests) verbs.set(r.verb, [...(verbs.get(r.verb) ?? []), r.latencyMs]);
  return Object.fromEntries([...verbs.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([verb, values]) => [verb, summarize(values)]));
}

const CLOCK_TICKS_PER_SECOND = 100;

function processCpuS(pid: number | null): number {
  if (pid === null) return 0;
  try {
    // After the command (which may hold spaces) in parentheses: utime and stime are fields 14 and 15.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

function machineTicks(): { busy: number; all: number } {
  const values = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const all = values.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: all - idle, all };
}

/** A point in time to measure CPU use from: the API server's, etcd's, the agents' and the machine's. */
export interface CpuMark {
  readonly apiServerS: number;
  readonly apiServerPid: number | null;
  readonly etcdS: number;
  readonly agentsMicros: number;
  readonly machine: { busy: number; all: number };
}

export function cpuMark(plane: ControlPlane, stats: readonly WorkerStats[]): CpuMark {
  return { apiServerS: processCpuS(plane.apiServerPid), apiServerPid: plane.apiServerPid, etcdS: processCpuS(plane.etcdPid), agentsMicros: total(stats, 'cpuMicros'), machine: machineTicks() };
}

export function cpuUse(before: CpuMark, after: CpuMark): CpuUse {
  // A restarted API server is a new process: its CPU counts from zero.
  const apiServerS = after.apiServerPid === before.apiServerPid ? after.apiServerS - before.apiServerS : after.apiServerS;
  const all = after.machine.all - before.machine.all;
  return { apiServerS, etcdS: after.etcdS - before.etcdS, agentsS: (after.agentsMicros - before.agentsMicros) / 1e6, machineBusy: all === 0 ? 0 : (after.machine.busy - before.machine.busy) / all };
}

/** The leaker of each of `nodes` now, by UID. */
export async function leakersOn(admin: ApiClient, nodes: readonly string[]): Promise<Map<string, string>> {
  const names = new Set(nodes.map((n) => fleetPodName(n, 0)));
  const list = await admin.get<{ items: { metadata: { name: string; uid: string } }[] }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods`, { labelSelector: `${LEAKER_LABEL}=true` });
  return new Map(list.items.filter((p) => names.has(p.metadata.name)).map((p) => [p.metadata.uid, p.metadata.name]));
}

/** The hosts calm down and each of `nodes` gets its leaker back (the last one was evicted). */
export async function resetLeakers(context: FleetContext, nodes: readonly string[]): Promise<void> {
  await Promise.all(context.workers.map((w) => w.ask({ type: 'calm' }, 'calmed')));
  const present = new Set((await leakersOn(context.admin, nodes)).values());
  await inParallel(
    nodes.filter((n) => !present.has(fleetPodName(n, 0))),
    16,
    async (nodeName) => {
      const name = fleetPodName(nodeName, 0);
      // The evicted one may still be finishing.
      await waitUntil(context, async () => (await context.admin.request('GET', `/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${name}`)).status === 404, 60_000);
      const created = await context.admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods`, {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, labels: { app: 'fleet', [LEAKER_LABEL]: 'true' } },
        spec: { nodeName, containers: [{ name: 'main', image: 'registry.example/fleet:1' }], terminationGracePeriodSeconds: 5 },
      });
      const now = new Date().toISOString();
      await context.admin.patch(
        `/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${name}/status`,
        { metadata: { uid: created.metadata.uid }, status: { phase: 'Running', startTime: now, containerStatuses: [{ name: 'main', image: 'registry.example/fleet:1', imageID: '', containerID: `containerd://${created.metadata.uid.replace(/-/g, '')}`, ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } } }] } },
        CONTENT_TYPE.strategicMergePatch,
      );
    },
  );
}

/** The crossing of `nodes`' hard threshold, spread over one second; resolves once every host has crossed. */
export async function storm(context: FleetContext, nodes: readonly string[], bytes: number): Promise<void> {
  await Promise.all(context.workers.map((w, i) => w.ask({ type: 'storm', nodes: nodes.filter((n) => context.assignment.get(n) === i), bytes, spreadMs: 1000 }, 'stormed')));
}

/** Each targeted pod (by UID → name): gone, deleted and ended once, with one Evicted Event. */
export async function tallyEvictions(context: FleetContext, targets: ReadonlyMap<string, string>, startMs: number, agentRequests: readonly AuditedRequest[], stats: readonly WorkerStats[]): Promise<EvictionTally> {
  const gone = [...targets.keys()].filter((uid) => context.kubelets.goneAtMs.has(uid));
  const lastGoneMs = gone.reduce((latest, uid) => Math.max(latest, (context.kubelets.goneAtMs.get(uid) as number) - startMs), 0);
  const names = new Set(targets.values());
  const deletesPerPod = new Map<string, number>();
  for (const r of agentRequests) if (r.verb === 'delete' && r.resource === 'pods' && r.code >= 200 && r.code < 300 && names.has(r.name)) deletesPerPod.set(r.name, (deletesPerPod.get(r.name) ?? 0) + 1);
  const ended = terminations(stats);
  const events = await context.admin.get<{ items: { involvedObject: { uid?: string } }[] }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/events`, { fieldSelector: 'reason=Evicted' });
  const eventsPerPod = new Map<string, number>();
  for (const e of events.items) if (targets.has(e.involvedObject.uid ?? '')) eventsPerPod.set(e.involvedObject.uid ?? '', (eventsPerPod.get(e.involvedObject.uid ?? '') ?? 0) + 1);
  return {
    podsTargeted: targets.size,
    podsEvicted: gone.length,
    allGoneMs: gone.length === targets.size ? lastGoneMs : null,
    repeatedDeletes: [...deletesPerPod.values()].filter((n) => n > 1).length,
    repeatedLocalKills: [...targets.keys()].filter((uid) => (ended.get(uid) ?? 0) > 1).length,
    lostEvents: gone.filter((uid) => (eventsPerPod.get(uid) ?? 0) === 0).length,
    doubledEvents: [...eventsPerPod.values()].filter((n) => n > 1).length,
  };
}

/** The workers' stats, also when the run was interrupted (every phase ends with them). */
export function workerStats(context: FleetContext): Promise<WorkerStats[]> {
  return allStats(context.workers);
}
