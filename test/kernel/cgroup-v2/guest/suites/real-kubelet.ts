// The real-kubelet scenarios on a real cgroup v2 node: containerd and a kubelet of the pinned
// version in the guest (guest-kubelet-node.ts), under the cgroup driver the host test asks for
// (KEA_GUEST_CLUSTER names the file with the cluster's details and the driver), registered with the
// host's real kube-apiserver, and the agent beside them as the DaemonSet's ServiceAccount with its
// `psi` notifier (the fast check and PSI triggers; the memory.high wake-up too under cgroupfs,
// where it is offered). Each case asserts from the kubelet's and the kernel's own records: which
// pod went, who said so (Events by source), whether the kubelet evicted anything, and the kernel's
// OOM kills under kubepods (its hierarchical memory.events). Times are the guest's (emulated):
// notes report outcomes and counts, never milliseconds to compare with the host's.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { PodStats, Summary } from '../../../../../src/api/summary.js';
import type { ControlPlane } from '../../../../e2e/harness/control-plane.js';
import { startAgentUnderTest, type AgentUnderTest } from '../../../../e2e/harness/agent-under-test.js';
import type { KubeObject } from '../../../../e2e/harness/list-watch.js';
import { createNamespace, createPod, listEvents, type EventLike, type PodLike } from '../../../../e2e/harness/objects.js';
import { PortTimeline } from '../../../../e2e/harness/port-timeline.js';
import { realPod, type RealPodOptions } from '../../../../e2e/harness/real-node-scenario.js';
import { Recorder } from '../../../../e2e/harness/recorder.js';
import { sleep, waitFor } from '../../../../e2e/harness/wait.js';
import { GuestKubeletNode, type GuestCluster } from '../guest-kubelet-node.js';
import { defineSuite, type CaseContext } from '../guest-suite.js';
import { MiB } from '../kernel-numbers.js';

const KUBEPODS_LIMIT_BYTES = 1024n * BigInt(MiB);
const ROOT_DIR_BYTES = 256n * BigInt(MiB);
const POD_PIDS_LIMIT = 1024;
// The kubelet's thresholds below the agent's: if both see pressure, the agent must act first.
const KUBELET_EVICTION_HARD = { 'memory.available': '64Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const AGENT_EVICTION_HARD = { 'memory.available': '256Mi', 'nodefs.available': '40%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const STATS_TOLERANCE_BYTES = 1 * MiB;
const POD_START_TIMEOUT_MS = 180_000;

let node: GuestKubeletNode | null = null;

function cluster(): GuestCluster {
  const file = process.env.KEA_GUEST_CLUSTER;
  assert.ok(file !== undefined, 'KEA_GUEST_CLUSTER is not set: the host test names the cluster file');
  return JSON.parse(readFileSync(file, 'utf8')) as GuestCluster;
}

function theNode(): GuestKubeletNode {
  assert.ok(node !== null, 'the node did not start');
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

function running(pod: PodLike | undefined): boolean {
  const statuses = (pod?.status as { containerStatuses?: { state?: { running?: unknown } }[] } | undefined)?.containerStatuses;
  return pod?.status?.phase === 'Running' && statuses !== undefined && statuses.length > 0 && statuses.every((s) => s.state?.running !== undefined);
}

function podStats(summary: Summary, namespace: string, name: string): PodStats | undefined {
  return summary.pods?.find((p) => p.podRef.namespace === namespace && p.podRef.name === name);
}

/** One case's namespace, pods and agent; everything goes when the case ends. */
class Scenario {
  readonly timeline = new PortTimeline();
  private readonly cleanups: (() => Promise<void>)[] = [];
  private readonly created: PodLike[] = [];
  readonly agents: AgentUnderTest[] = [];

  private constructor(
    readonly n: GuestKubeletNode,
    readonly namespace: string,
    readonly pods: Recorder<PodLike & KubeObject>,
  ) {}

  static async start(name: string): Promise<Scenario> {
    const n = theNode();
    // One API server for both drivers' boots: each node's namespaces are its own.
    const namespace = `${n.driver}-${name}`;
    await createNamespace(n.admin, namespace);
    return new Scenario(n, namespace, await Recorder.pods(n.admin, namespace));
  }

  async runPods(list: readonly { readonly name: string; readonly options: RealPodOptions }[]): Promise<PodLike[]> {
    const made: PodLike[] = [];
    for (const { name, options } of list) made.push(await createPod(this.n.admin, this.namespace, realPod(name, this.n.cluster.nodeName, options)));
    this.created.push(...made);
    await Promise.all(list.map(({ name }) => this.pods.waitFor(name, running, 'Running', POD_START_TIMEOUT_MS)));
    return made;
  }

  async createPod(name: string, options: RealPodOptions): Promise<PodLike> {
    const made = await createPod(this.n.admin, this.namespace, realPod(name, this.n.cluster.nodeName, options));
    this.created.push(made);
    return made;
  }

  /** A static pod (the kubelet's manifest directory); returns its mirror pod's name. */
  runStaticPod(name: string, args: readonly string[]): string {
    const file = join(this.n.staticPodDir, `${name}.yaml`);
    writeFileSync(file, stringify(realPod(name, this.n.cluster.nodeName, { namespace: this.namespace, args })));
    const mirror = `${name}-${this.n.cluster.nodeName}`;
    this.cleanups.push(async () => {
      rmSync(file, { force: true });
      const uid = this.pods.versions(mirror)[0]?.object.metadata.annotations?.['kubernetes.io/config.mirror'];
      await waitFor(() => uid === undefined || !this.n.podCgroups().has(uid), { what: 'the static pod removed by the kubelet', timeoutMs: 120_000, intervalMs: 500 });
    });
    return mirror;
  }

  async startAgent(configYaml: string): Promise<AgentUnderTest> {
    const c = this.n.cluster;
    const plane = { url: this.n.url, caPem: c.caPem } as unknown as ControlPlane;
    const agent = await startAgentUnderTest({ plane, token: c.agentToken, nodeName: c.nodeName, configYaml, realNode: true, timeline: this.timeline });
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

  async events(): Promise<{ kubelet: EventLike[]; agent: EventLike[] }> {
    const events = await listEvents(this.n.admin, this.namespace);
    return { kubelet: events.filter((e) => e.source?.component === 'kubelet'), agent: events.filter((e) => e.source?.component === 'kube-eviction-agent') };
  }

  /** The kubelet evicted nothing: no Evicted Event of its own, no pod it marked Evicted, no node Event. */
  async assertKubeletDidNotEvict(names: readonly string[]): Promise<void> {
    const { kubelet } = await this.events();
    assert.deepEqual(kubelet.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name), [], 'the kubelet evicted');
    for (const name of names) assert.equal(this.pods.versions(name).some((v) => (v.object.status as { reason?: string } | undefined)?.reason === 'Evicted'), false, `the kubelet marked ${name} Evicted`);
    const nodeEvents = (await listEvents(this.n.admin, 'default', 'EvictionThresholdMet')).filter((e) => e.source?.component === 'kubelet' && e.involvedObject.name === this.n.cluster.nodeName);
    assert.deepEqual(nodeEvents.map((e) => e.message), [], 'the kubelet met an eviction threshold');
  }

  /** Each pod is Running and was never marked for deletion. */
  assertUntouched(names: readonly string[]): void {
    for (const name of names) {
      assert.equal(this.pods.latest(name)?.status?.phase, 'Running', `${name} is not Running`);
      assert.equal(this.pods.versions(name).some((v) => v.object.metadata.deletionTimestamp !== undefined && v.object.metadata.deletionTimestamp !== null), false, `${name} was marked for deletion`);
    }
  }

  /** The agent, the static pods, then the pods, each gone before the next case. */
  async stop(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
    await this.n.admin.request('DELETE', `/api/v1/namespaces/${this.namespace}/pods`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    const uids = new Set(this.created.map((p) => p.metadata.uid));
    await waitFor(() => ![...this.n.podCgroups().keys()].some((uid) => uids.has(uid)), { what: `the pod cgroups of ${this.namespace} removed by the kubelet`, timeoutMs: 120_000, intervalMs: 500 });
    await this.pods.stop();
  }
}

async function withScenario(namespace: string, run: (scenario: Scenario) => Promise<void>): Promise<void> {
  const scenario = await Scenario.start(namespace);
  try {
    await run(scenario);
  } catch (error) {
    // What the node said, for the host's report.
    const tail = (name: string): string => `--- ${name} log (last lines):\n${scenario.n.log(name).split('\n').slice(-40).join('\n')}`;
    const agents = scenario.agents.map((agent) => `--- agent log (last lines):\n${agent.log.tail(40)}`).join('\n');
    if (error instanceof Error) error.message = `${error.message}\n${agents}\n${tail('kubelet')}\n${tail('containerd')}`;
    throw error;
  } finally {
    await scenario.stop();
  }
}

async function observe({ note }: CaseContext): Promise<void> {
  await withScenario('observe', async (scenario) => {
    const { namespace, timeline, pods, n } = scenario;
    const staticName = scenario.runStaticPod('static-observed', ['hold', '48']);
    const held: Readonly<Record<string, number>> = { 'hold-32': 32, 'hold-80': 80, 'guaranteed-48': 48, [staticName]: 48 };
    await scenario.runPods([
      { name: 'hold-32', options: { args: ['hold', '32'] } },
      { name: 'hold-80', options: { args: ['hold', '80'], requests: { memory: '64Mi' } } },
      { name: 'guaranteed-48', options: { args: ['hold', '48'], requests: { memory: '64Mi', cpu: '100m' }, limits: { memory: '64Mi', cpu: '100m' } } },
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
    await scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD));
    const names = Object.keys(held);
    const holding = (summary: Summary | undefined): boolean => summary !== undefined && names.every((name) => (podStats(summary, namespace, name)?.memory?.workingSetBytes ?? 0) >= (held[name] ?? 0) * MiB);
    // The kubelet refreshes pod stats about every 10 s (longer in the emulated guest): one taken once every pod holds.
    const kubelet = await waitFor(async () => {
      const summary = await n.summary();
      return holding(summary) ? summary : undefined;
    }, { what: "the kubelet's Summary to show every pod holding its memory", timeoutMs: 120_000, intervalMs: 1000 });
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

interface LeakOutcome {
  readonly oomKills: number;
  readonly kubeletEvicted: readonly string[];
  readonly agentEvicted: readonly string[];
  /** Pods other than the leak that were killed, evicted or deleted. */
  readonly wrongPods: readonly string[];
  readonly leakGone: boolean;
  /** The most kubepods held, sampled every 50 ms from the leak's creation until it was stopped. */
  readonly kubepodsMaxBytes: number;
}

// A leak in one pod beside well-behaved ones, with the agent on (its configuration) or off (the
// kubelet alone); counted from the kernel's and the API server's records.
async function runLeak(scenario: Scenario, leak: { readonly name: string; readonly rateMi: number; readonly startMi: number }, bystanders: readonly string[], agentYaml: string | null): Promise<LeakOutcome & { agent: AgentUnderTest | null }> {
  const { n, pods } = scenario;
  const agent = agentYaml === null ? null : await scenario.startAgent(agentYaml);
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
  await scenario.createPod(leak.name, { args: ['leak', String(leak.rateMi), String(leak.startMi), '1600'], requests: { memory: '16Mi' } });
  // Gone (deleted by the agent), or, with the kubelet alone, evicted by it, or OOM-killed in its place.
  const settled = await waitFor(() => {
    const latest = pods.latest(leak.name);
    if (pods.deletedAtMs(leak.name) !== undefined) return 'deleted';
    if ((latest?.status as { reason?: string } | undefined)?.reason === 'Evicted') return 'evicted';
    if (agentYaml === null && n.kubepodsOomKills() > oomBefore) return 'oom';
    return undefined;
  }, { what: `the leak ${leak.name} to be stopped`, timeoutMs: 240_000, intervalMs: 100 }).finally(() => {
    sampling = false;
  });
  await sampler;
  // The kernel and the kubelet get a moment to act on what was left.
  await sleep(settled === 'oom' ? 15_000 : 3000);
  const { kubelet, agent: agentEvents } = await scenario.events();
  const kubeletEvicted = kubelet.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name);
  const agentEvicted = agentEvents.filter((e) => e.reason === 'Evicted').map((e) => e.involvedObject.name);
  const wrongPods = bystanders.filter((name) => {
    const latest = pods.latest(name);
    return latest === undefined || pods.deletedAtMs(name) !== undefined || latest.status?.phase !== 'Running' || restarts(latest) !== restartsBefore.get(name) || kubeletEvicted.includes(name) || agentEvicted.includes(name);
  });
  return { agent, oomKills: n.kubepodsOomKills() - oomBefore, kubeletEvicted, agentEvicted, wrongPods, leakGone: settled === 'deleted', kubepodsMaxBytes };
}

function restarts(pod: PodLike | undefined): number {
  return ((pod?.status as { containerStatuses?: { restartCount?: number }[] } | undefined)?.containerStatuses ?? []).reduce((sum, s) => sum + (s.restartCount ?? 0), 0);
}

function noteOutcome(note: CaseContext['note'], prefix: string, outcome: LeakOutcome): void {
  note(`${prefix}OomKills`, outcome.oomKills);
  note(`${prefix}WrongPods`, outcome.wrongPods.length);
  note(`${prefix}KubeletEvictions`, outcome.kubeletEvicted.length);
  note(`${prefix}AgentEvictions`, outcome.agentEvicted.length);
  note(`${prefix}KubepodsMaxMiB`, Math.round(outcome.kubepodsMaxBytes / MiB));
}

// The agent on: the leak gone by its hand, no OOM kill, nothing else touched, the kubelet idle.
async function assertAgentWon(scenario: Scenario, name: string, outcome: LeakOutcome & { agent: AgentUnderTest | null }, bystanders: readonly string[]): Promise<void> {
  assert.equal(outcome.oomKills, 0, 'kernel OOM kills under kubepods');
  assert.equal(outcome.leakGone, true, 'the leak was not deleted');
  assert.deepEqual(outcome.agentEvicted, [name], "the agent's Evicted Events");
  assert.deepEqual(outcome.wrongPods, [], 'pods other than the leak were touched');
  assert.equal(outcome.agent?.log.find('ended pod processes locally', { pod: `${scenario.namespace}/${name}` }).length, 1, "the agent's local termination");
  const { agent } = await scenario.events();
  const evicted = agent.find((e) => e.reason === 'Evicted');
  assert.equal(evicted?.source?.host, scenario.n.cluster.nodeName);
  assert.equal(evicted?.metadata.annotations?.starved_resource, 'memory');
  await scenario.assertKubeletDidNotEvict([name, ...bystanders]);
  scenario.assertUntouched(bystanders);
  assert.ok(outcome.kubepodsMaxBytes < Number(KUBEPODS_LIMIT_BYTES) - 16 * MiB, `kubepods reached ${outcome.kubepodsMaxBytes} bytes of its ${KUBEPODS_LIMIT_BYTES} limit`);
}

const FAST = { rateMi: 200, startMi: 0 };
const SLOW = { rateMi: 20, startMi: 100 };
const BALLAST = [
  { name: 'ballast', options: { args: ['hold', '400'], requests: { memory: '448Mi' } } },
  { name: 'quiet', options: { args: ['hold', '24'], requests: { memory: '48Mi' } } },
];

async function fastLeak(agentOn: boolean, { note }: CaseContext): Promise<void> {
  await withScenario(agentOn ? 'leak-fast' : 'leak-fast-alone', async (scenario) => {
    await scenario.runPods(BALLAST);
    const name = 'leaky-fast';
    const bystanders = BALLAST.map((p) => p.name);
    const outcome = await runLeak(scenario, { name, ...FAST }, bystanders, agentOn ? agentConfig(scenario.n, AGENT_EVICTION_HARD) : null);
    noteOutcome(note, agentOn ? 'agentOn' : 'kubeletAlone', outcome);
    if (agentOn) {
      await assertAgentWon(scenario, name, outcome, bystanders);
      const reaction = scenario.timeline.reaction(`${scenario.namespace}/${name}`);
      // Whether a notification (the fast check, a PSI trigger, memory.high) started the pass that evicted.
      note('evictedAfterNotification', reaction === null ? 'no' : 'yes');
    } else {
      // The kubelet alone: the leak is stopped by the kubelet or by the kernel, and the record says which.
      assert.deepEqual(outcome.agentEvicted, [], 'no agent ran');
      assert.ok(outcome.oomKills > 0 || outcome.kubeletEvicted.length > 0, 'the leak was stopped by neither the kernel nor the kubelet');
    }
  });
}

async function slowLeak({ note }: CaseContext): Promise<void> {
  await withScenario('leak-slow', async (scenario) => {
    const { pods } = scenario;
    const staticName = scenario.runStaticPod('static-hold', ['hold', '260']);
    await scenario.runPods([{ name: 'critical', options: { args: ['hold', '300'], requests: { memory: '16Mi' }, priorityClassName: 'system-node-critical' } }]);
    await pods.waitFor(staticName, running, 'mirror pod Running', POD_START_TIMEOUT_MS);
    assert.equal(pods.latest('critical')?.spec.priority, 2000001000);
    const name = 'leaky-slow';
    const outcome = await runLeak(scenario, { name, ...SLOW }, ['critical', staticName], agentConfig(scenario.n, AGENT_EVICTION_HARD));
    noteOutcome(note, 'agentOn', outcome);
    await assertAgentWon(scenario, name, outcome, ['critical', staticName]);
    // Both used more memory than the leak when it was evicted, and both stayed.
    const evicted = (await scenario.events()).agent.find((e) => e.reason === 'Evicted');
    const leakBytes = Number(evicted?.metadata.annotations?.offending_containers_usage?.replace(/Ki$/, '')) * 1024;
    assert.ok(leakBytes > 0, 'no offending_containers_usage on the Evicted Event');
    const summary = await scenario.n.summary();
    for (const pod of ['critical', staticName]) {
      const bytes = podStats(summary, scenario.namespace, pod)?.memory?.workingSetBytes ?? 0;
      assert.ok(bytes > leakBytes, `${pod} uses ${bytes} bytes, the leak ${leakBytes}`);
    }
    note('leakAtEvictionMiB', Math.round(leakBytes / MiB));
  });
}

async function oomDryRun({ note }: CaseContext): Promise<void> {
  await withScenario('oom-dry-run', async (scenario) => {
    const { n, pods } = scenario;
    await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '24'], requests: { memory: '48Mi' } } }]);
    const agent = await scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD, { dryRun: true }));
    const before = n.kubepodsOomKills();
    const created = await scenario.createPod('oom-victim', { args: ['leak', '200', '0', '1600'], requests: { memory: '16Mi' } });
    await waitFor(() => n.kubepodsOomKills() > before || undefined, { what: 'the kernel OOM killer under kubepods', timeoutMs: 240_000, intervalMs: 100 });
    // A dry run writes no Event: the agent's record is its log line and its metric.
    const kill = await waitFor(() => agent.log.lines.find((l) => l.msg === 'kernel OOM kill' && l.fields?.pod === `${scenario.namespace}/oom-victim`), { what: "the agent's kernel OOM kill report for the pod", timeoutMs: 60_000, intervalMs: 500 });
    assert.equal(kill.fields?.container, 'main');
    assert.equal(kill.fields?.kind, 'allocatable');
    assert.equal(kill.fields?.agentState, 'dry-run');
    assert.equal(kill.fields?.oomCgroup, `/${n.kubepodsPath.replace('/sys/fs/cgroup/', '')}`);
    // The victim's cgroup is the container's own under the pod's: a scope (systemd) or the ID (cgroupfs).
    const victimCgroup = String(kill.fields?.victimCgroup ?? '');
    const podUid = created.metadata.uid ?? '';
    assert.ok(victimCgroup.includes(n.driver === 'systemd' ? `pod${podUid.replaceAll('-', '_')}.slice/cri-containerd-` : `pod${podUid}/`), `the victim's cgroup ${victimCgroup} is not the pod's container`);
    assert.match(victimCgroup, n.driver === 'systemd' ? /\/cri-containerd-[0-9a-f]{64}\.scope$/ : /\/[0-9a-f]{64}$/);
    assert.deepEqual((await scenario.events()).agent.filter((e) => e.reason === 'OOMKilledByKernel'), [], 'a dry run wrote an Event');
    // The kubelet's own record of it: the container terminated OOMKilled (containerd read the container's memory.events).
    const killed = await waitFor(() => pods.first('oom-victim', (p) => JSON.stringify(p.status ?? {}).includes('"reason":"OOMKilled"')), { what: 'the kubelet reporting the container OOMKilled', timeoutMs: 120_000, intervalMs: 500 });
    assert.ok(killed !== undefined);
    // A dry run: nothing evicted, nothing deleted by the agent.
    assert.equal(agent.log.find('ended pod processes locally').length, 0);
    assert.deepEqual((await scenario.events()).agent.filter((e) => e.reason === 'Evicted'), []);
    assert.ok((await agent.metric('kube_eviction_agent_kernel_oom_kills_total', { kind: 'allocatable' })) >= 1);
    note('oomKills', n.kubepodsOomKills() - before);
    note('victimCgroup', victimCgroup);
    note('detectedBy', String(kill.fields?.source ?? ''));
  });
}

async function pidPressure({ note }: CaseContext): Promise<void> {
  await withScenario('pid-pressure', async (scenario) => {
    const { n } = scenario;
    await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '16'], requests: { memory: '32Mi' } } }]);
    const rlimit = (await n.summary()).node.rlimit;
    assert.ok(rlimit?.maxpid !== undefined && rlimit.curproc !== undefined, 'no PID counts in the Summary');
    const available = rlimit.maxpid - rlimit.curproc;
    const thresholdPids = available - 300;
    await scenario.startAgent(agentConfig(n, { ...AGENT_EVICTION_HARD, 'pid.available': String(thresholdPids) }));
    const [forker] = await scenario.runPods([{ name: 'forker', options: { args: ['forks', '100', '2000'], requests: { memory: '32Mi' } } }]);
    let maxPids = 0;
    await scenario.sampleUntilDeleted('forker', () => {
      const cgroup = n.podCgroups().get(forker?.metadata.uid ?? '');
      if (cgroup !== undefined) {
        try {
          maxPids = Math.max(maxPids, Number(readFileSync(join(cgroup, 'pids.current'), 'utf8')));
        } catch {
          // Gone.
        }
      }
    }, 240_000);
    const { agent } = await scenario.events();
    assert.deepEqual(agent.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource]), [['forker', 'pids']]);
    assert.ok(maxPids > 100 && maxPids < POD_PIDS_LIMIT, `the forker reached ${maxPids} processes`);
    await scenario.assertKubeletDidNotEvict(['forker', 'quiet']);
    scenario.assertUntouched(['quiet']);
    note('forkerMaxPids', maxPids);
  });
}

async function diskPressure({ note }: CaseContext): Promise<void> {
  await withScenario('disk-pressure', async (scenario) => {
    const { n } = scenario;
    await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '8'], requests: { memory: '32Mi' }, emptyDir: true } }]);
    await scenario.startAgent(agentConfig(n, AGENT_EVICTION_HARD));
    let minFreeBytes = Number.POSITIVE_INFINITY;
    await scenario.createPod('filler', { args: ['fill', '/scratch/data', '20', '240'], requests: { memory: '32Mi' }, emptyDir: true });
    await scenario.sampleUntilDeleted('filler', () => {
      const stats = statfsSync(n.kubeletRootDir);
      minFreeBytes = Math.min(minFreeBytes, stats.bavail * stats.bsize);
    }, 240_000);
    const { agent } = await scenario.events();
    assert.deepEqual(agent.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource]), [['filler', 'ephemeral-storage']]);
    assert.ok(minFreeBytes > Number(ROOT_DIR_BYTES) / 10, `the kubelet's root went down to ${minFreeBytes} bytes free`);
    await scenario.assertKubeletDidNotEvict(['filler', 'quiet']);
    scenario.assertUntouched(['quiet']);
    note('minFreeMiB', Math.round(minFreeBytes / MiB));
  });
}

export const suite = defineSuite({
  name: 'real-kubelet',
  title: 'a real kubelet and containerd on cgroup v2, with the agent and its psi notifier',
  setUpTimeoutMs: 480_000,
  async setUp() {
    node = await GuestKubeletNode.start({ cluster: cluster(), kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES, rootDirBytes: ROOT_DIR_BYTES, evictionHard: KUBELET_EVICTION_HARD, podPidsLimit: POD_PIDS_LIMIT });
  },
  async tearDown() {
    await node?.stop();
  },
  cases: [
    { name: "the agent's observation equals the kubelet's /stats/summary per pod and container, within 1 MiB, the static pod under its own UID", timeoutMs: 360_000, run: observe },
    { name: 'the kubelet alone: a fast leak (200 MiB/s) is stopped by the kernel OOM killer or the kubelet, as the records say', timeoutMs: 360_000, run: (context) => fastLeak(false, context) },
    { name: 'the agent on: the same fast leak is evicted by the agent before the kernel OOM killer and the kubelet; the bystanders stay', timeoutMs: 360_000, run: (context) => fastLeak(true, context) },
    { name: 'a slow leak (20 MiB/s) is evicted by the agent, passing over a static pod and a system-node-critical pod that use more memory', timeoutMs: 420_000, run: slowLeak },
    { name: "a kernel OOM kill (agent in dry run) is attributed from memory.events to its pod and container in the agent's report; the kubelet reports it OOMKilled", timeoutMs: 360_000, run: oomDryRun },
    { name: 'PID pressure from a fork-leaking pod: the agent evicts it before its pids limit and before the kubelet', timeoutMs: 360_000, run: pidPressure },
    { name: "disk pressure from a pod filling its emptyDir on the kubelet's small root: the agent evicts it before the filesystem fills and before the kubelet", timeoutMs: 360_000, run: diskPressure },
  ],
});
