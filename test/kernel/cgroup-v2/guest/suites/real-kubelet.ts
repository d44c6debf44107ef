// The real-kubelet scenarios on a real cgroup v2 node: containerd and a kubelet of the pinned
// version in the guest (guest-kubelet-node.ts), under each cgroup driver the host test asks for
// (KEA_CGROUP_V2_DRIVERS), one driver's node after the other in the same boot, each registered with
// the host's real kube-apiserver (KEA_GUEST_CLUSTERS names the directory of their cluster files),
// and the agent beside them as the DaemonSet's ServiceAccount with its `psi` notifier (the fast
// check and PSI triggers; the memory.high wake-up too under cgroupfs, where it is offered). Each
// case asserts from the kubelet's and the kernel's own records: which pod went, who said so (Events
// by source), whether the kubelet evicted anything, and the kernel's OOM kills under kubepods (its
// hierarchical memory.events). Times are the guest's (emulated): notes report outcomes and counts,
// never milliseconds to compare with the host's.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { PodStats, Summary } from '../../../../../src/api/summary.js';
import type { ControlPlane } from '../../../../e2e/harness/control-plane.js';
import { startAgentUnderTest, type AgentUnderTest } from '../../../../e2e/harness/agent-under-test.js';
import type { KubeObject } from '../../../../e2e/harness/list-watch.js';
import { createNamespace, createPod, listEvents, offendingUsageBytes, type EventLike, type PodLike } from '../../../../e2e/harness/objects.js';
import { PortTimeline } from '../../../../e2e/harness/port-timeline.js';
import { realPod, type RealPodOptions } from '../../../../e2e/harness/real-node-scenario.js';
import { Recorder } from '../../../../e2e/harness/recorder.js';
import { sleep, waitFor } from '../../../../e2e/harness/wait.js';
import { cgroupDrivers, GuestKubeletNode, populated, type CgroupDriver, type GuestCluster } from '../guest-kubelet-node.js';
import { defineSuite, type CaseContext, type GuestCase } from '../guest-suite.js';
import { MiB } from '../kernel-numbers.js';

export const KUBEPODS_LIMIT_BYTES = 1024n * BigInt(MiB);
export const ROOT_DIR_BYTES = 256n * BigInt(MiB);
export const POD_PIDS_LIMIT = 1024;
// The kubelet's thresholds below the agent's: if both see pressure, the agent must act first.
export const KUBELET_EVICTION_HARD = { 'memory.available': '64Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
export const AGENT_EVICTION_HARD = { 'memory.available': '256Mi', 'nodefs.available': '40%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const STATS_TOLERANCE_BYTES = 1 * MiB;
export const POD_START_TIMEOUT_MS = 180_000;

// The node of the driver whose cases run now, once it started; each driver's cases start and stop
// their own. `created` is kept from before the start, so a node that failed to start is ended too.
let node: GuestKubeletNode | null = null;
let created: GuestKubeletNode | null = null;

// The driver's cluster file, in the directory the host test shares (KEA_GUEST_CLUSTERS).
export function cluster(driver: CgroupDriver): GuestCluster {
  const dir = process.env.KEA_GUEST_CLUSTERS;
  assert.ok(dir !== undefined, 'KEA_GUEST_CLUSTERS is not set: the host test names the directory of the cluster files');
  return JSON.parse(readFileSync(join(dir, `${driver}.json`), 'utf8')) as GuestCluster;
}

function theNode(): GuestKubeletNode {
  assert.ok(node !== null, "this driver's node did not start");
  return node;
}

/** The agent's configuration on this node: the node's real paths, the psi notifier, fast passes. */
function agentConfig(n: GuestKubeletNode, evictionHard: Readonly<Record<string, string>>, extra: { readonly dryRun?: boolean } = {}): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    ...Object.entries(evictionHard).map(([signal, value]) => `  ${signal}: "${value}"`),
    'evictionPressureTransitionPeriod: 5s',
    'housekeepingInterval: 1s',
    'observe:',
    `  cgroupDriver: ${n.driver}`,
    '  podCgroupRoot: kubepods',
    `  kubeletRootDir: ${n.kubeletRootDir}`,
    `  imageFsPath: ${n.imageFsDir}`,
    `  podLogsDir: ${n.podLogsDir}`,
    '  diskUsageInterval: 1s',
    'notifier:',
    '  mode: psi',
    // The opt-in wake-up is the cgroupfs driver's (the agent owns no systemd unit's memory.high).
    ...(n.driver === 'cgroupfs' ? ['  memoryHighWakeup: true'] : []),
    'actions:',
    '  localTermination: true',
    '  setDisruptionTargetCondition: true',
    // The emulated node's kubelet takes seconds to tear down an evicted pod (one was still on the API
    // server 7.2 s after its eviction); the 5 s default, meant for a real node, then passes over a
    // pod that is not stuck, only slow.
    '  escalationTimeout: 30s',
    ...(extra.dryRun === true ? ['  dryRun: true'] : []),
    'reporting:',
    '  nodeConditions: true',
    '  events: true',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'logLevel: debug',
    '',
  ].join('\n');
}

export function running(pod: PodLike | undefined): boolean {
  const statuses = (pod?.status as { containerStatuses?: { state?: { running?: unknown } }[] } | undefined)?.containerStatuses;
  return pod?.status?.phase === 'Running' && statuses !== undefined && statuses.length > 0 && statuses.every((s) => s.state?.running !== undefined);
}

function podStats(summary: Summary, namespace: string, name: string): PodStats | undefined {
  return summary.pods?.find((p) => p.podRef.namespace === namespace && p.podRef.name === name);
}

/** The kubelet's eviction Events at a moment, by name: their count, reason, object and what they said. */
type KubeletMark = ReadonlyMap<string, { readonly count: number; readonly reason: string; readonly object: string; readonly said: string }>;

/** One case's namespace, pods and agent; everything goes when the case ends. */
export class Scenario {
  readonly timeline = new PortTimeline();
  private readonly cleanups: (() => Promise<void>)[] = [];
  private readonly created: PodLike[] = [];
  /** Static pod manifests written, and their mirror pods' names. */
  private readonly staticPods: { readonly file: string; readonly mirror: string }[] = [];
  readonly agents: AgentUnderTest[] = [];
  /** Guest time spent waiting for pods to run, for the agent to start, and on the clean-up, for the case's notes. */
  podStartMs = 0;
  agentStartMs = 0;
  cleanUpMs = 0;

  private startMark: KubeletMark = new Map();

  private constructor(
    readonly n: GuestKubeletNode,
    readonly namespace: string,
    readonly pods: Recorder<PodLike & KubeObject>,
  ) {}

  static async start(name: string, n: GuestKubeletNode = theNode()): Promise<Scenario> {
    // One API server for both drivers' nodes: each node's namespaces are its own.
    const namespace = `${n.driver}-${name}`;
    await createNamespace(n.admin, namespace);
    const scenario = new Scenario(n, namespace, await Recorder.pods(n.admin, namespace));
    // The node's Events are the node's whole life: this case answers for what comes after this.
    scenario.startMark = await scenario.kubeletMark();
    return scenario;
  }

  async runPods(list: readonly { readonly name: string; readonly options: RealPodOptions }[]): Promise<PodLike[]> {
    const made: PodLike[] = [];
    for (const { name, options } of list) made.push(await createPod(this.n.admin, this.namespace, realPod(name, this.n.cluster.nodeName, options)));
    this.created.push(...made);
    const startedMs = performance.now();
    await Promise.all(list.map(({ name }) => this.pods.waitFor(name, running, 'Running', POD_START_TIMEOUT_MS)));
    this.podStartMs += performance.now() - startedMs;
    return made;
  }

  async createPod(name: string, options: RealPodOptions): Promise<PodLike> {
    const made = await createPod(this.n.admin, this.namespace, realPod(name, this.n.cluster.nodeName, options));
    this.created.push(made);
    return made;
  }

  /** Deletes a pod (grace 0) and waits until its processes are gone. */
  async deletePod(name: string): Promise<void> {
    const uid = this.pods.latest(name)?.metadata.uid;
    await this.n.admin.request('DELETE', `/api/v1/namespaces/${this.namespace}/pods/${name}`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    await waitFor(
      () => {
        const cgroup = uid === undefined ? undefined : this.n.podCgroups().get(uid);
        return cgroup === undefined || !populated(cgroup);
      },
      { what: `the processes of ${name} ended`, timeoutMs: 120_000, intervalMs: 100 },
    );
  }

  /** A static pod (the kubelet's manifest directory), removed when the case ends; returns its mirror pod's name. */
  runStaticPod(name: string, args: readonly string[]): string {
    const file = join(this.n.staticPodDir, `${name}.yaml`);
    writeFileSync(file, stringify(realPod(name, this.n.cluster.nodeName, { namespace: this.namespace, args })));
    const mirror = `${name}-${this.n.cluster.nodeName}`;
    this.staticPods.push({ file, mirror });
    return mirror;
  }

  async startAgent(configYaml: string): Promise<AgentUnderTest> {
    const c = this.n.cluster;
    const plane = { url: this.n.url, caPem: c.caPem } as unknown as ControlPlane;
    const startedMs = performance.now();
    const agent = await startAgentUnderTest({ plane, token: c.agentToken, nodeName: c.nodeName, configYaml, realNode: true, timeline: this.timeline });
    this.agentStartMs += performance.now() - startedMs;
    this.cleanups.push(() => agent.stop());
    this.agents.push(agent);
    return agent;
  }

  /** Calls `sample` every 50 ms until the pod is deleted; resolves with when it was. */
  async sampleUntilDeleted(name: string, sample: () => void, timeoutMs: number): Promise<number> {
    const sampling = (async () => {
      while (this.pods.deletedAtMs(name) === undefined) {
        sample();
        await sleep(50);
      }
    })();
    const deletedAtMs = await this.pods.waitDeleted(name, timeoutMs);
    await sampling;
    return deletedAtMs;
  }

  /** Waits for an Event of the kubelet's or the agent's on the pod (Events are written after what they report). */
  async waitForEvent(source: 'kubelet' | 'agent', reason: string, name: string): Promise<EventLike> {
    return waitFor(async () => (await this.events())[source].find((e) => e.reason === reason && e.involvedObject.name === name), { what: `the ${source}'s ${reason} Event on ${name}`, timeoutMs: 60_000, intervalMs: 200 });
  }

  async events(): Promise<{ kubelet: EventLike[]; agent: EventLike[] }> {
    const events = await listEvents(this.n.admin, this.namespace);
    return { kubelet: events.filter((e) => e.source?.component === 'kubelet'), agent: events.filter((e) => e.source?.component === 'kube-eviction-agent') };
  }

  /**
   * The kubelet's eviction records so far (its Evicted Events here, its EvictionThresholdMet Events
   * on the Node), each Event by name with its count: what is new since is what the kubelet did since.
   */
  async kubeletMark(): Promise<KubeletMark> {
    const { kubelet } = await this.events();
    const nodeEvents = (await listEvents(this.n.admin, 'default', 'EvictionThresholdMet')).filter((e) => e.source?.component === 'kubelet' && e.involvedObject.name === this.n.cluster.nodeName);
    return new Map([...kubelet.filter((e) => e.reason === 'Evicted'), ...nodeEvents].map((e) => [`${e.metadata.namespace}/${e.metadata.name}`, { count: e.count ?? 1, reason: e.reason, object: e.involvedObject.name, said: `${e.reason} ${e.involvedObject.name}: ${e.message}` }]));
  }

  /** The kubelet's eviction Events written (or counted again) since the mark. */
  async kubeletSince(mark: KubeletMark): Promise<{ readonly reason: string; readonly object: string; readonly said: string }[]> {
    return [...(await this.kubeletMark())].filter(([key, { count }]) => count > (mark.get(key)?.count ?? 0)).map(([, event]) => event);
  }

  /** The kubelet evicted nothing since `since` (the case's start by default): no Evicted Event of its own, no pod it marked Evicted, no threshold met on the Node. */
  async assertKubeletDidNotEvict(names: readonly string[], since: KubeletMark = this.startMark): Promise<void> {
    assert.deepEqual((await this.kubeletSince(since)).map((e) => e.said), [], 'the kubelet evicted or met an eviction threshold');
    for (const name of names) assert.equal(this.pods.versions(name).some((v) => (v.object.status as { reason?: string } | undefined)?.reason === 'Evicted'), false, `the kubelet marked ${name} Evicted`);
  }

  /** Each pod is Running and was never marked for deletion. */
  assertUntouched(names: readonly string[]): void {
    for (const name of names) {
      assert.equal(this.pods.latest(name)?.status?.phase, 'Running', `${name} is not Running`);
      assert.equal(this.pods.versions(name).some((v) => v.object.metadata.deletionTimestamp !== undefined && v.object.metadata.deletionTimestamp !== null), false, `${name} was marked for deletion`);
    }
  }

  /**
   * The agent first; then the static pods and the pods together, every process of theirs gone
   * before the next case (their cgroups empty: the kernel's record). The kubelet's own clean-up
   * (the cgroups, the pod directories) goes on while the next case starts, as on any busy node;
   * the next case's namespace, pods and agent are its own.
   */
  async stop(): Promise<void> {
    const startedMs = performance.now();
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    for (const { file } of this.staticPods) rmSync(file, { force: true });
    await this.n.admin.request('DELETE', `/api/v1/namespaces/${this.namespace}/pods`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    // A static pod's cgroup is named after its own UID, its mirror pod's annotation.
    const staticUids = this.staticPods.map(({ mirror }) => this.pods.versions(mirror)[0]?.object.metadata.annotations?.['kubernetes.io/config.mirror']);
    const uids = new Set([...this.created.map((p) => p.metadata.uid), ...staticUids].filter((uid) => uid !== undefined));
    await waitFor(() => ![...this.n.podCgroups()].some(([uid, path]) => uids.has(uid) && populated(path)), { what: `the processes of the pods of ${this.namespace} ended`, timeoutMs: 120_000, intervalMs: 100 });
    await this.pods.stop();
    this.cleanUpMs = performance.now() - startedMs;
  }
}

export async function withScenario(namespace: string, note: CaseContext['note'], run: (scenario: Scenario) => Promise<void>, n?: GuestKubeletNode): Promise<void> {
  const scenario = await Scenario.start(namespace, n);
  try {
    await run(scenario);
  } catch (error) {
    // What the node said, for the host's report.
    const tail = (name: string): string => `--- ${name} log (last lines):\n${scenario.n.log(name).split('\n').slice(-40).join('\n')}`;
    const agents = scenario.agents.map((agent) => `--- agent log (last lines):\n${agent.log.tail(40)}`).join('\n');
    // Into the stack too: an AssertionError's stack (what the guest reports) is written when it is made.
    if (error instanceof Error) {
      const logs = `\n${agents}\n${tail('kubelet')}\n${tail('containerd')}`;
      error.message += logs;
      if (error.stack !== undefined) error.stack += logs;
    }
    throw error;
  } finally {
    await scenario.stop();
    const seconds = (ms: number): number => Math.round(ms / 100) / 10;
    note('podStartS', seconds(scenario.podStartMs));
    if (scenario.agents.length > 0) note('agentStartS', seconds(scenario.agentStartMs));
    note('cleanUpS', seconds(scenario.cleanUpMs));
  }
}

async function observe({ note }: CaseContext): Promise<void> {
  await withScenario('observe', note, async (scenario) => {
    const { namespace, timeline, pods, n } = scenario;
    const staticName = scenario.runStaticPod('static-observed', ['hold', '48']);
    const held: Readonly<Record<string, number>> = { 'hold-32': 32, 'hold-80': 80, 'guaranteed-48': 48, [staticName]: 48 };
    // The agent starts while the pods do.
    await Promise.all([
      scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD)),
      scenario.runPods([
        { name: 'hold-32', options: { args: ['hold', '32'] } },
        { name: 'hold-80', options: { args: ['hold', '80'], requests: { memory: '64Mi' } } },
        { name: 'guaranteed-48', options: { args: ['hold', '48'], requests: { memory: '64Mi', cpu: '100m' }, limits: { memory: '64Mi', cpu: '100m' } } },
      ]),
    ]);
    await pods.waitFor(staticName, running, 'mirror pod Running', POD_START_TIMEOUT_MS);
    const staticUid = pods.latest(staticName)?.metadata.annotations?.['kubernetes.io/config.mirror'];
    assert.match(staticUid ?? '', /^[0-9a-f]{32}$/);
    // The static pod's cgroup is named after its own UID, not the mirror pod's API UID.
    const mirrorUid = pods.latest(staticName)?.metadata.uid ?? '';
    const staticCgroup = n.podCgroups().get(staticUid ?? '');
    assert.ok(staticCgroup !== undefined, `no cgroup for the static pod's own UID ${staticUid}; pod cgroups: ${[...n.podCgroups().values()].join(', ')}`);
    assert.equal(n.podCgroups().has(mirrorUid), false, "a cgroup named after the mirror pod's API UID");
    note('staticPodCgroup', staticCgroup.replace('/sys/fs/cgroup/', ''));
    const names = Object.keys(held);
    const holding = (summary: Summary | undefined): boolean => summary !== undefined && names.every((name) => (podStats(summary, namespace, name)?.memory?.workingSetBytes ?? 0) >= (held[name] ?? 0) * MiB);
    // The kubelet refreshes pod stats about every 10 s (longer in the emulated guest): one taken once every pod holds.
    const kubelet = await waitFor(async () => {
      const summary = await n.summary();
      return holding(summary) ? summary : undefined;
    }, { what: "the kubelet's Summary to show every pod holding its memory", timeoutMs: 120_000, intervalMs: 500 });
    const kubeletAtMs = Date.now();
    const agent = await waitFor(() => timeline.observations.find((o) => o.atMs >= kubeletAtMs && holding(o.observation.summary))?.observation, { what: "the agent's next observation", timeoutMs: 30_000 });
    let largestDifferenceBytes = 0;
    for (const name of names) {
      const k = podStats(kubelet, namespace, name);
      const a = podStats(agent.summary, namespace, name);
      assert.equal(a?.podRef.uid, k?.podRef.uid, `${name}: the pod's UID`);
      if (name === staticName) assert.equal(a?.podRef.uid, staticUid, "the static pod under its own UID");
      for (const field of ['workingSetBytes', 'usageBytes'] as const) {
        const kubeletBytes = k?.memory?.[field];
        const agentBytes = a?.memory?.[field];
        assert.ok(typeof kubeletBytes === 'number' && typeof agentBytes === 'number', `${name} ${field}: kubelet ${kubeletBytes}, agent ${agentBytes}`);
        largestDifferenceBytes = Math.max(largestDifferenceBytes, Math.abs(agentBytes - kubeletBytes));
        assert.ok(Math.abs(agentBytes - kubeletBytes) <= STATS_TOLERANCE_BYTES, `${name} pod ${field}: kubelet ${kubeletBytes}, agent ${agentBytes}`);
      }
      assert.ok((k?.containers ?? []).length > 0, `${name}: no containers in the kubelet's Summary`);
      for (const container of k?.containers ?? []) {
        const kubeletBytes = container.memory?.workingSetBytes;
        const agentBytes = a?.containers?.find((c) => c.name === container.name)?.memory?.workingSetBytes;
        assert.ok(typeof kubeletBytes === 'number' && typeof agentBytes === 'number', `${name}/${container.name}: kubelet ${kubeletBytes}, agent ${agentBytes}`);
        largestDifferenceBytes = Math.max(largestDifferenceBytes, Math.abs(agentBytes - kubeletBytes));
        assert.ok(Math.abs(agentBytes - kubeletBytes) <= STATS_TOLERANCE_BYTES, `${name}/${container.name} workingSetBytes: kubelet ${kubeletBytes}, agent ${agentBytes}`);
      }
    }
    assert.equal(agent.summary.node.rlimit?.maxpid, kubelet.node.rlimit?.maxpid, 'the PID limit');
    assert.deepEqual(agent.problems.filter((p) => p.includes(namespace)), [], "the agent's problems with the namespace's pods");
    note('largestDifferenceKiB', Math.round(largestDifferenceBytes / 1024));
  });
}

/** The agent a leak runs beside, as far as the outcome's checks read it: its log (the process here, or the DaemonSet's pod). */
export interface LeakAgent {
  readonly log: { find(msg: string, fields?: Readonly<Record<string, unknown>>): readonly unknown[] };
}

interface LeakOutcome {
  readonly oomKills: number;
  readonly kubeletEvicted: readonly string[];
  readonly agentEvicted: readonly string[];
  /** Pods other than the leak that were killed, evicted or deleted. */
  readonly wrongPods: readonly string[];
  readonly leakGone: boolean;
  /** The most kubepods held, sampled every 50 ms from the leak's creation until it was stopped. */
  readonly kubepodsMaxBytes: number;
  /** Guest time from the leak's creation until it was stopped, and from then until the record of it was written. */
  readonly stoppedAfterMs: number;
  readonly recordAfterMs: number;
  /** The kubelet's records when the leak started: what it did about the leak is what came after. */
  readonly kubeletMark: KubeletMark;
}

// A leak in one pod beside well-behaved ones, with the agent on (started) or off (the kubelet
// alone); counted from the kernel's and the API server's records from the leak's start on.
export async function runLeak(scenario: Scenario, leak: { readonly name: string; readonly rateMi: number; readonly startMi: number }, bystanders: readonly string[], agent: LeakAgent | null): Promise<LeakOutcome & { agent: LeakAgent | null }> {
  const { n, pods } = scenario;
  const kubeletMark = await scenario.kubeletMark();
  const oomBefore = n.kubepodsOomKills();
  const restartsBefore = new Map(bystanders.map((name) => [name, restarts(pods.latest(name))]));
  let kubepodsMaxBytes = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      kubepodsMaxBytes = Math.max(kubepodsMaxBytes, n.kubepodsCurrentBytes());
      await sleep(50);
    }
  })();
  const createdMs = performance.now();
  await scenario.createPod(leak.name, { args: ['leak', String(leak.rateMi), String(leak.startMi), '1600'], requests: { memory: '16Mi' } });
  // Gone (deleted by the agent), or, with the kubelet alone, evicted by it, or OOM-killed in its place.
  const settled = await waitFor(() => {
    const latest = pods.latest(leak.name);
    if (pods.deletedAtMs(leak.name) !== undefined) return 'deleted';
    if (evictedByKubelet(latest)) return 'evicted';
    if (agent === null && n.kubepodsOomKills() > oomBefore) return 'oom';
    return undefined;
  }, { what: `the leak ${leak.name} to be stopped`, timeoutMs: 120_000, intervalMs: 100 }).finally(() => {
    sampling = false;
  });
  await sampler;
  const stoppedMs = performance.now();
  // Until the record of whoever stopped it is written: the Evicted Event of the agent or the
  // kubelet, or the kubelet's report of the container OOMKilled. With the kubelet alone on a slow
  // node, the kubelet's own pass may evict the restarted leak before it reports the kill: then its
  // Evicted Event is the record (both are the kubelet alone's outcome, and both are counted).
  if (settled === 'oom') {
    if ((await kubeletRecordOfOomKill(pods, leak.name, 60_000)) === 'evicted') await scenario.waitForEvent('kubelet', 'Evicted', leak.name);
  } else await scenario.waitForEvent(settled === 'deleted' ? 'agent' : 'kubelet', 'Evicted', leak.name);
  const recordedMs = performance.now();
  const kubeletEvicted = (await scenario.kubeletSince(kubeletMark)).filter((e) => e.reason === 'Evicted').map((e) => e.object);
  const agentEvicted = (await scenario.events()).agent.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name);
  const wrongPods = bystanders.filter((name) => {
    const latest = pods.latest(name);
    return latest === undefined || pods.deletedAtMs(name) !== undefined || latest.status?.phase !== 'Running' || restarts(latest) !== restartsBefore.get(name) || kubeletEvicted.includes(name) || agentEvicted.includes(name);
  });
  return { agent, oomKills: n.kubepodsOomKills() - oomBefore, kubeletEvicted, agentEvicted, wrongPods, leakGone: settled === 'deleted', kubepodsMaxBytes, stoppedAfterMs: stoppedMs - createdMs, recordAfterMs: recordedMs - stoppedMs, kubeletMark };
}

/**
 * What the kubelet recorded of a pod the kernel OOM killer took: its container OOMKilled, or its own
 * eviction when its pass got there first (the kill then came in the eviction's grace period).
 */
async function kubeletRecordOfOomKill(pods: Recorder<PodLike & KubeObject>, name: string, timeoutMs: number): Promise<'oom-killed' | 'evicted'> {
  const recorded = await pods.waitFor(name, (p) => oomKilled(p) || evictedByKubelet(p), 'the kubelet reporting the container OOMKilled or evicting the pod', timeoutMs);
  return oomKilled(recorded.object) ? 'oom-killed' : 'evicted';
}

/** The kubelet reports a container of the pod terminated by the kernel OOM killer (now or last time). */
function oomKilled(pod: PodLike | undefined): boolean {
  const statuses = (pod?.status as { containerStatuses?: { state?: { terminated?: { reason?: string } }; lastState?: { terminated?: { reason?: string } } }[] } | undefined)?.containerStatuses ?? [];
  return statuses.some((s) => s.state?.terminated?.reason === 'OOMKilled' || s.lastState?.terminated?.reason === 'OOMKilled');
}

/** The kubelet marked the pod Evicted (the status its eviction manager writes). */
function evictedByKubelet(pod: PodLike | undefined): boolean {
  return (pod?.status as { reason?: string } | undefined)?.reason === 'Evicted';
}

function restarts(pod: PodLike | undefined): number {
  return ((pod?.status as { containerStatuses?: { restartCount?: number }[] } | undefined)?.containerStatuses ?? []).reduce((sum, s) => sum + (s.restartCount ?? 0), 0);
}

export function noteOutcome(note: CaseContext['note'], prefix: string, outcome: LeakOutcome): void {
  note(`${prefix}OomKills`, outcome.oomKills);
  note(`${prefix}WrongPods`, outcome.wrongPods.length);
  note(`${prefix}KubeletEvictions`, outcome.kubeletEvicted.length);
  note(`${prefix}AgentEvictions`, outcome.agentEvicted.length);
  note(`${prefix}KubepodsMaxMiB`, Math.round(outcome.kubepodsMaxBytes / MiB));
  note(`${prefix}LeakStoppedAfterS`, Math.round(outcome.stoppedAfterMs / 100) / 10);
  note(`${prefix}RecordAfterS`, Math.round(outcome.recordAfterMs / 100) / 10);
}

// The agent on: the leak gone by its hand, no OOM kill, nothing else touched, the kubelet idle.
export async function assertAgentWon(scenario: Scenario, name: string, outcome: LeakOutcome & { agent: LeakAgent | null }, bystanders: readonly string[]): Promise<void> {
  assert.equal(outcome.oomKills, 0, 'kernel OOM kills under kubepods');
  assert.equal(outcome.leakGone, true, 'the leak was not deleted');
  assert.deepEqual(outcome.agentEvicted, [name], "the agent's Evicted Events");
  assert.deepEqual(outcome.wrongPods, [], 'pods other than the leak were touched');
  assert.equal(outcome.agent?.log.find('ended pod processes locally', { pod: `${scenario.namespace}/${name}` }).length, 1, "the agent's local termination");
  const { agent } = await scenario.events();
  const evicted = agent.find((e) => e.reason === 'Evicted');
  assert.equal(evicted?.source?.host, scenario.n.cluster.nodeName);
  assert.equal(evicted?.metadata.annotations?.starved_resource, 'memory');
  await scenario.assertKubeletDidNotEvict([name, ...bystanders], outcome.kubeletMark);
  scenario.assertUntouched(bystanders);
  assert.ok(outcome.kubepodsMaxBytes < Number(KUBEPODS_LIMIT_BYTES) - 16 * MiB, `kubepods reached ${outcome.kubepodsMaxBytes} bytes of its ${KUBEPODS_LIMIT_BYTES} limit`);
}

export const FAST = { rateMi: 200, startMi: 0 };
const SLOW = { rateMi: 20, startMi: 100 };
export const BALLAST = [
  { name: 'ballast', options: { args: ['hold', '400'], requests: { memory: '448Mi' } } },
  { name: 'quiet', options: { args: ['hold', '24'], requests: { memory: '48Mi' } } },
];

// The same fast leak beside the same pods, first with the kubelet alone, then with the agent on.
async function fastLeakSideBySide({ note }: CaseContext): Promise<void> {
  await withScenario('leak-fast', note, async (scenario) => {
    await scenario.runPods(BALLAST);
    const bystanders = BALLAST.map((p) => p.name);
    // The kubelet alone: the leak is stopped by the kubelet or by the kernel, and the record says which.
    const alone = await runLeak(scenario, { name: 'leaky-alone', ...FAST }, bystanders, null);
    noteOutcome(note, 'kubeletAlone', alone);
    assert.deepEqual(alone.agentEvicted, [], 'no agent ran');
    assert.ok(alone.oomKills > 0 || alone.kubeletEvicted.length > 0, 'the leak was stopped by neither the kernel nor the kubelet');
    // The agent starts while that leak (restarted by the kubelet, killed again) goes.
    const [agent] = await Promise.all([scenario.startAgent(agentConfig(scenario.n, AGENT_EVICTION_HARD)), scenario.deletePod('leaky-alone')]);
    const name = 'leaky-fast';
    const outcome = await runLeak(scenario, { name, ...FAST }, bystanders, agent);
    noteOutcome(note, 'agentOn', outcome);
    await assertAgentWon(scenario, name, outcome, bystanders);
    const reaction = scenario.timeline.reaction(`${scenario.namespace}/${name}`);
    // Whether a notification (the fast check, a PSI trigger, memory.high) started the pass that evicted.
    note('evictedAfterNotification', reaction === null ? 'no' : 'yes');
  });
}

async function slowLeak({ note }: CaseContext): Promise<void> {
  await withScenario('leak-slow', note, async (scenario) => {
    const { pods } = scenario;
    const staticName = scenario.runStaticPod('static-hold', ['hold', '260']);
    const [agent] = await Promise.all([scenario.startAgent(agentConfig(scenario.n, AGENT_EVICTION_HARD)), scenario.runPods([{ name: 'critical', options: { args: ['hold', '300'], requests: { memory: '16Mi' }, priorityClassName: 'system-node-critical' } }])]);
    await pods.waitFor(staticName, running, 'mirror pod Running', POD_START_TIMEOUT_MS);
    assert.equal(pods.latest('critical')?.spec.priority, 2000001000);
    const name = 'leaky-slow';
    const outcome = await runLeak(scenario, { name, ...SLOW }, ['critical', staticName], agent);
    noteOutcome(note, 'agentOn', outcome);
    await assertAgentWon(scenario, name, outcome, ['critical', staticName]);
    // Both used more memory than the leak when it was evicted, and both stayed.
    const evicted = (await scenario.events()).agent.find((e) => e.reason === 'Evicted');
    const leakBytes = offendingUsageBytes(evicted);
    assert.ok(leakBytes > 0, 'no offending_containers_usage on the Evicted Event');
    for (const pod of ['critical', staticName]) {
      // From the kubelet's summary once it has the pod's memory: its stats come from a cache that
      // an emulated node's kubelet may fill late, and under the cgroupfs driver it reported a
      // static pod's working set as 0 once (a pod holding 260 MiB); missing or 0 is waited out.
      const bytes = await waitFor(async () => podStats(await scenario.n.summary(), scenario.namespace, pod)?.memory?.workingSetBytes || undefined, { what: `the kubelet's working set of ${pod} (missing or 0 until then)`, timeoutMs: 30_000, intervalMs: 1_000 });
      assert.ok(bytes > leakBytes, `${pod} uses ${bytes} bytes, the leak ${leakBytes}`);
    }
    note('leakAtEvictionMiB', Math.round(leakBytes / MiB));
  });
}

async function oomDryRun({ note }: CaseContext): Promise<void> {
  await withScenario('oom-dry-run', note, async (scenario) => {
    const { n, pods } = scenario;
    const [agent] = await Promise.all([scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD, { dryRun: true })), scenario.runPods([{ name: 'quiet', options: { args: ['hold', '24'], requests: { memory: '48Mi' } } }])]);
    const before = n.kubepodsOomKills();
    // On a slow node the kubelet's 10 s pass may land in the moment between its threshold and
    // kubepods' limit and evict the leak first: that is the kubelet's outcome, not a kill to
    // report, so the case starts the leak again (at most 3 times). So is a kill in the grace
    // period of the kubelet's eviction: the kubelet then records its eviction, not the OOM kill.
    let victim = '';
    let created: PodLike | undefined;
    for (let attempt = 1; victim === ''; attempt++) {
      const name = `oom-victim-${attempt}`;
      const killsBefore = n.kubepodsOomKills();
      created = await scenario.createPod(name, { args: ['leak', '200', '0', '1600'], requests: { memory: '16Mi' } });
      let outcome = await waitFor(() => (n.kubepodsOomKills() > killsBefore ? 'oom' : evictedByKubelet(pods.latest(name)) ? 'kubelet' : undefined), { what: 'the kernel OOM killer under kubepods', timeoutMs: 120_000, intervalMs: 100 });
      // The kubelet's own record of the kill: the container terminated OOMKilled (containerd read the container's memory.events).
      if (outcome === 'oom' && (await kubeletRecordOfOomKill(pods, name, 120_000)) === 'evicted') outcome = 'kubelet';
      if (outcome === 'oom') victim = name;
      else {
        assert.ok(attempt < 3, `the kubelet evicted the leak before the kernel OOM killer ${attempt} times`);
        note('kubeletEvictedFirst', attempt);
        await scenario.deletePod(name);
      }
    }
    // A dry run writes no Event: the agent's record is its log line and its metric.
    const kill = await waitFor(() => agent.log.lines.find((l) => l.msg === 'kernel OOM kill' && l.fields?.pod === `${scenario.namespace}/${victim}`), { what: "the agent's kernel OOM kill report for the pod", timeoutMs: 60_000, intervalMs: 200 });
    assert.equal(kill.fields?.container, 'main');
    assert.equal(kill.fields?.kind, 'allocatable');
    // What the agent was doing when the kernel killed: a dry run never evicts. Whether one of its
    // passes saw the crossing first ('dry-run') or the leak outran them ('not-crossed') depends on
    // the guest's speed; the report says which, truthfully.
    assert.ok(['dry-run', 'not-crossed'].includes(String(kill.fields?.agentState)), `the agent's state at the kill: ${String(kill.fields?.agentState)}`);
    assert.ok(['memory-events', 'kernel-log'].includes(String(kill.fields?.source)), `the kill was found by ${String(kill.fields?.source)}`);
    assert.equal(kill.fields?.oomCgroup, `/${n.kubepodsPath.replace('/sys/fs/cgroup/', '')}`);
    // The victim's cgroup is the container's own under the pod's: a scope (systemd) or the ID (cgroupfs).
    const victimCgroup = String(kill.fields?.victimCgroup ?? '');
    const podUid = created?.metadata.uid ?? '';
    assert.ok(victimCgroup.includes(n.driver === 'systemd' ? `pod${podUid.replaceAll('-', '_')}.slice/cri-containerd-` : `pod${podUid}/`), `the victim's cgroup ${victimCgroup} is not the pod's container`);
    assert.match(victimCgroup, n.driver === 'systemd' ? /\/cri-containerd-[0-9a-f]{64}\.scope$/ : /\/[0-9a-f]{64}$/);
    assert.deepEqual((await scenario.events()).agent.filter((e) => e.reason === 'OOMKilledByKernel'), [], 'a dry run wrote an Event');
    // A dry run: nothing evicted, nothing deleted by the agent.
    assert.equal(agent.log.find('ended pod processes locally').length, 0);
    assert.deepEqual((await scenario.events()).agent.filter((e) => e.reason === 'Evicted'), []);
    assert.ok((await agent.metric('kube_eviction_agent_kernel_oom_kills_total', { kind: 'allocatable' })) >= 1);
    note('oomKills', n.kubepodsOomKills() - before);
    note('victimCgroup', victimCgroup);
    note('detectedBy', String(kill.fields?.source ?? ''));
    note('agentState', String(kill.fields?.agentState ?? ''));
  });
}

async function pidPressure({ note }: CaseContext): Promise<void> {
  await withScenario('pid-pressure', note, async (scenario) => {
    const { n } = scenario;
    await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '16'], requests: { memory: '32Mi' } } }]);
    const rlimit = (await n.summary()).node.rlimit;
    assert.ok(rlimit?.maxpid !== undefined && rlimit.curproc !== undefined, 'no PID counts in the Summary');
    const available = rlimit.maxpid - rlimit.curproc;
    const thresholdPids = available - 200;
    await scenario.startAgent(agentConfig(n, { ...AGENT_EVICTION_HARD, 'pid.available': String(thresholdPids) }));
    // 50 a second: the 824 processes from the threshold to the pod's limit take 16 s, which the
    // agent's pass and the kubelet's kill of the evicted pod share on the emulated node.
    const [forker] = await scenario.runPods([{ name: 'forker', options: { args: ['forks', '50', '2000'], requests: { memory: '32Mi' } } }]);
    let maxPids = 0;
    const samples: { atMs: number; pids: number }[] = [];
    await scenario.sampleUntilDeleted('forker', () => {
      const cgroup = n.podCgroups().get(forker?.metadata.uid ?? '');
      if (cgroup !== undefined) {
        try {
          const pids = Number(readFileSync(join(cgroup, 'pids.current'), 'utf8'));
          maxPids = Math.max(maxPids, pids);
          samples.push({ atMs: Date.now(), pids });
        } catch {
          // Gone.
        }
      }
    }, 120_000);
    // The forker's processes when the agent asked for the eviction (its first API call for the pod).
    const requestedAtMs = scenario.timeline.spans.find((s) => (s.port === 'evictPod' || s.port === 'deletePod') && s.pod === `${scenario.namespace}/forker`)?.startMs;
    note('pidsAtEvictionRequest', requestedAtMs === undefined ? 'none' : (samples.filter((s) => s.atMs <= requestedAtMs).at(-1)?.pids ?? 0));
    note('forkerMaxPids', maxPids);
    const { agent } = await scenario.events();
    assert.deepEqual(agent.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource]), [['forker', 'pids']]);
    assert.ok(maxPids > 100 && maxPids < POD_PIDS_LIMIT, `the forker reached ${maxPids} processes`);
    await scenario.assertKubeletDidNotEvict(['forker', 'quiet']);
    scenario.assertUntouched(['quiet']);
  });
}

async function diskPressure({ note }: CaseContext): Promise<void> {
  await withScenario('disk-pressure', note, async (scenario) => {
    const { n } = scenario;
    await Promise.all([scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD)), scenario.runPods([{ name: 'quiet', options: { args: ['hold', '8'], requests: { memory: '32Mi' }, emptyDir: true } }])]);
    let minFreeBytes = Number.POSITIVE_INFINITY;
    // 120 MiB at once, then 5 MiB/s: the 40% threshold (154 MiB used) is crossed in seconds, and the
    // seconds the emulated kubelet takes to kill the evicted pod write 20 to 40 MiB more, not the 77
    // MiB left above the kubelet's 10%.
    await scenario.createPod('filler', { args: ['fill', '/scratch/data', '5', '240', '120'], requests: { memory: '32Mi' }, emptyDir: true });
    await scenario.sampleUntilDeleted('filler', () => {
      const stats = statfsSync(n.kubeletRootDir);
      minFreeBytes = Math.min(minFreeBytes, stats.bavail * stats.bsize);
    }, 120_000);
    const { agent } = await scenario.events();
    const said = agent.map((e) => `${e.reason} ${e.involvedObject.name}: ${e.message}`).join('\n');
    assert.deepEqual(agent.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource]), [['filler', 'ephemeral-storage']], `the agent's Evicted Events; its Events:\n${said}`);
    assert.ok(minFreeBytes > Number(ROOT_DIR_BYTES) / 10, `the kubelet's root went down to ${minFreeBytes} bytes free`);
    await scenario.assertKubeletDidNotEvict(['filler', 'quiet']);
    scenario.assertUntouched(['quiet']);
    note('minFreeMiB', Math.round(minFreeBytes / MiB));
  });
}

// A driver's cases: its node started (every step timed), the scenarios on it, and the node ended
// with nothing of it left (so the next driver's node, in the same boot, starts from scratch).
function driverCases(driver: CgroupDriver): GuestCase[] {
  let startedMs = 0;
  const scenarios: readonly GuestCase[] = [
    { name: "the agent's observation equals the kubelet's /stats/summary per pod and container, within 1 MiB, the static pod under its own UID", timeoutMs: 180_000, run: observe },
    { name: 'side by side, a fast leak (200 MiB/s) beside the same pods: with the kubelet alone the kernel OOM killer or the kubelet stops it, as the records say; with the agent on, the agent evicts it before either, and the bystanders stay', timeoutMs: 240_000, run: fastLeakSideBySide },
    { name: 'a slow leak (20 MiB/s) is evicted by the agent, passing over a static pod and a system-node-critical pod that use more memory', timeoutMs: 180_000, run: slowLeak },
    { name: "a kernel OOM kill (agent in dry run) is attributed to its pod and container in the agent's report (from memory.events or the kernel log, whichever it reads first); the kubelet reports it OOMKilled", timeoutMs: 180_000, run: oomDryRun },
    { name: 'PID pressure from a fork-leaking pod: the agent evicts it before its pids limit and before the kubelet', timeoutMs: 180_000, run: pidPressure },
    { name: "disk pressure from a pod filling its emptyDir on the kubelet's small root: the agent evicts it before the filesystem fills and before the kubelet", timeoutMs: 180_000, run: diskPressure },
  ];
  return [
    {
      name: `${driver} driver: the node starts (containerd and the kubelet${driver === 'systemd' ? ' as systemd services' : ''}) and its Node is Ready`,
      timeoutMs: 300_000,
      async run({ note }) {
        startedMs = performance.now();
        const starting = GuestKubeletNode.create({ cluster: cluster(driver), kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES, rootDirBytes: ROOT_DIR_BYTES, evictionHard: KUBELET_EVICTION_HARD, podPidsLimit: POD_PIDS_LIMIT });
        created = starting;
        try {
          for (const [step, ms] of Object.entries(await starting.start())) note(step, ms);
          node = starting;
        } catch (error) {
          if (error instanceof Error) error.message = `${error.message}\n${['init', 'containerd', 'kubelet'].map((name) => `--- ${name} log (last lines):\n${starting.log(name).split('\n').slice(-30).join('\n')}`).join('\n')}`;
          throw error;
        }
      },
    },
    ...scenarios.map((c) => ({ ...c, name: `${driver} driver: ${c.name}` })),
    {
      name: `${driver} driver: the node ends with no process, cgroup or mount of it left`,
      timeoutMs: 120_000,
      async run({ note }) {
        const ending = created;
        node = null;
        created = null;
        assert.ok(ending !== null, 'no node was created');
        await ending.stop();
        assert.deepEqual(ending.leftovers(), [], 'what the node left');
        note('driverWallS', Math.round((performance.now() - startedMs) / 1000));
      },
    },
  ];
}

export const suite = defineSuite({
  name: 'real-kubelet',
  title: 'a real kubelet and containerd on cgroup v2, with the agent and its psi notifier',
  // A node a failed case left running is ended before the guest powers off.
  async tearDown() {
    await created?.stop();
  },
  cases: cgroupDrivers().flatMap(driverCases),
});
