// The "real kubelet" suite (root, cgroup v1, real kube-apiserver, real kubelet and containerd): one
// real node for the file (harness/real-node.ts), with real pods run by runc from locally built
// images, and the agent running beside the kubelet as the DaemonSet's ServiceAccount, its observer,
// notifier and terminator wired from its configuration's paths to the kubelet's cgroup root and
// root directory. The agent must see what the kubelet sees, and act before the kernel and before
// the kubelet: on memory (fast and slow leaks), PIDs and disk, never on critical or static pods.

import { readFileSync, statfsSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { PodStats, Summary } from '../../src/api/summary.js';
import { replayStream } from '../../src/cli/replay.js';
import { recordingSources } from '../../src/compose/record-sources.js';
import { systemClock } from '../../src/api/clock.js';
import { parseConfigText } from '../../src/config/load.js';
import { silentLogger } from '../../src/api/logger.js';
import { record } from '../../src/replay/recorder.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { findRealNodeBinaries } from './harness/binaries.js';
import { thisHostIdentity } from '../../src/host/host-identity.js';
import { startAgentUnderTest } from './harness/agent-under-test.js';
import { createPod, getPod, listEvents, nodeCondition, offendingUsageBytes, type PodLike } from './harness/objects.js';
import { describeReaction } from './harness/port-timeline.js';
import { nodeImages, RealNode } from './harness/real-node.js';
import { agentConfig, podCgroupUids, realPod, startRealNodeScenario, type RealNodeScenario } from './harness/real-node-scenario.js';
import { describeEvents, eventsBySource, expectKubeletDidNotEvict, expectUntouched } from './harness/scenario-checks.js';
import { e2eSuite, type TestContext } from './harness/suite.js';
import { cgroupProcs, resume, sandboxView, type SandboxView } from './harness/sandbox-view.js';
import { sleep, waitFor } from './harness/wait.js';
import { agentOutcomes } from '../../src/cli/explain.js';

const MiB = 1024 * 1024;
const NODE = 'real-node';
const KUBEPODS_LIMIT_BYTES = 1536n * BigInt(MiB);
const ROOT_DIR_BYTES = 256n * BigInt(MiB);
const POD_PIDS_LIMIT = 1024;
const MEMORY_CONDITION = 'kube-eviction-agent.io/MemoryPressure';
// The kubelet's own thresholds sit below the agent's: if both see pressure, the agent acts first.
const KUBELET_EVICTION_HARD = { 'memory.available': '100Mi', 'nodefs.available': '10%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
const AGENT_EVICTION_HARD = { 'memory.available': '400Mi', 'nodefs.available': '40%', 'nodefs.inodesFree': '5%', 'imagefs.available': '2%', 'imagefs.inodesFree': '2%' };
// The agent's observation against the kubelet's Summary, per pod and container.
const STATS_TOLERANCE_BYTES = 1 * MiB;

const binaries = findRealNodeBinaries();
const images = nodeImages();
const suite = e2eSuite<RealNode>({
  nodeNames: [NODE],
  needsCgroupV1: true,
  skipReasons: [...(binaries.ok ? [] : [binaries.reason]), ...(images.ok ? [] : [images.reason])],
  fixture: {
    start: ({ plane }) => {
      if (!binaries.ok || !images.ok) throw new Error('unreachable: the suite skips without binaries or images');
      return RealNode.start({
        plane,
        binaries: binaries.binaries,
        nodeName: NODE,
        imagesTar: images.binaries,
        kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES,
        rootDirSizeBytes: ROOT_DIR_BYTES,
        evictionHard: KUBELET_EVICTION_HARD,
        podPidsLimit: POD_PIDS_LIMIT,
      });
    },
    stop: (node) => node.stop(),
    diagnostics: (node) => `real node:\n${node.diagnostics()}`,
  },
});

type Context = TestContext<RealNode>;







function podStats(summary: Summary, namespace: string, name: string): PodStats | undefined {
  return summary.pods?.find((p) => p.podRef.namespace === namespace && p.podRef.name === name);
}

async function waitMemoryPressureFalse(context: Context): Promise<void> {
  await waitFor(async () => (await nodeCondition(context.admin, NODE, MEMORY_CONDITION))?.status === 'False', { what: `${MEMORY_CONDITION} False at start`, timeoutMs: 20_000 });
}

suite.test("the agent's observation equals the kubelet's /stats/summary per pod and container, within 1 MiB, a static pod's under its own UID (root, cgroup v1, real kubelet)", async (context) => {
  const scenario = await startRealNodeScenario(context, 'observe');
  const { namespace, timeline, node, pods } = scenario;
  const staticName = scenario.runStaticPod('static-observed', ['hold', '80']);
  const held: Readonly<Record<string, number>> = { 'hold-64': 64, 'hold-160': 160, 'guaranteed-96': 96, [staticName]: 80 };
  await scenario.runPods([
    { name: 'hold-64', options: { args: ['hold', '64'] } },
    { name: 'hold-160', options: { args: ['hold', '160'], requests: { memory: '100Mi' } } },
    { name: 'guaranteed-96', options: { args: ['hold', '96'], requests: { memory: '128Mi', cpu: '100m' }, limits: { memory: '128Mi', cpu: '100m' } } },
  ]);
  await pods.waitFor(staticName, (p) => p.status?.phase === 'Running', 'mirror pod Running', 60_000);
  const staticUid = pods.latest(staticName)?.metadata.annotations?.['kubernetes.io/config.mirror'];
  expect(staticUid).toMatch(/^[0-9a-f]{32}$/);
  await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
  const names = Object.keys(held);
  const holding = (summary: Summary | undefined): boolean => summary !== undefined && names.every((name) => (podStats(summary, namespace, name)?.memory?.workingSetBytes ?? 0) >= (held[name] ?? 0) * MiB);
  // The kubelet refreshes pod stats about every 10 s: wait for a Summary taken once every pod holds its memory.
  const kubelet = await waitFor(async () => {
    const summary = await node.summary();
    return holding(summary) ? summary : undefined;
  }, { what: "the kubelet's Summary to show every pod holding its memory", timeoutMs: 40_000, intervalMs: 1000 });
  const kubeletAtMs = Date.now();
  const agent = await waitFor(() => timeline.observations.find((o) => o.atMs >= kubeletAtMs && holding(o.observation.summary))?.observation, { what: "the agent's next observation", timeoutMs: 10_000 });

  const rows: string[] = [];
  for (const name of names) {
    const k = podStats(kubelet, namespace, name);
    const a = podStats(agent.summary, namespace, name);
    expect([name, a?.podRef.uid]).toEqual([name, k?.podRef.uid]);
    // The static pod under its own UID (the mirror annotation), as the kubelet reports it.
    if (name === staticName) expect(a?.podRef.uid).toBe(staticUid);
    for (const field of ['workingSetBytes', 'usageBytes'] as const) {
      const kubeletBytes = k?.memory?.[field];
      const agentBytes = a?.memory?.[field];
      rows.push(`${name} pod ${field}: kubelet ${kubeletBytes} agent ${agentBytes} diff ${(agentBytes ?? NaN) - (kubeletBytes ?? NaN)}`);
      expect([name, field, typeof kubeletBytes, typeof agentBytes]).toEqual([name, field, 'number', 'number']);
      expect([name, field, Math.abs((agentBytes as number) - (kubeletBytes as number)) <= STATS_TOLERANCE_BYTES]).toEqual([name, field, true]);
    }
    for (const container of k?.containers ?? []) {
      const mine = a?.containers?.find((c) => c.name === container.name);
      const kubeletBytes = container.memory?.workingSetBytes;
      const agentBytes = mine?.memory?.workingSetBytes;
      rows.push(`${name}/${container.name} workingSetBytes: kubelet ${kubeletBytes} agent ${agentBytes}`);
      expect([name, container.name, typeof agentBytes]).toEqual([name, container.name, 'number']);
      expect([name, container.name, Math.abs((agentBytes as number) - (kubeletBytes as number)) <= STATS_TOLERANCE_BYTES]).toEqual([name, container.name, true]);
    }
  }
  // The PID limit is the kernel's, read the same way.
  expect(agent.summary.node.rlimit?.maxpid).toBe(kubelet.node.rlimit?.maxpid);
  // Every pod of the namespace was found in its cgroup.
  expect(agent.problems.filter((p) => p.includes(namespace))).toEqual([]);
  console.log(`agent observation vs kubelet Summary (tolerance ${STATS_TOLERANCE_BYTES} bytes):\n${rows.join('\n')}`);
}, 120_000);

// A leak in one pod beside a large, well-behaved one; `leak` holds `startMi` at once, then grows
// `rateMi` a second up to more than the node has, so only an eviction keeps the OOM killer away.
async function leakScenario(context: Context, scenario: RealNodeScenario, leak: { readonly name: string; readonly rateMi: number; readonly startMi: number }): Promise<number> {
  const { node, namespace, pods, timeline } = scenario;
  const agent = await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
  await waitMemoryPressureFalse(context);
  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  await createPod(context.admin, namespace, realPod(leak.name, NODE, { args: ['leak', String(leak.rateMi), String(leak.startMi), '1600'], requests: { memory: '16Mi' } }));
  const deletedAtMs = await pods.waitDeleted(leak.name, 90_000);

  // The kernel OOM killer never had to act, and kubepods never reached its limit.
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  // The agent ended the pod's processes on the node, then deleted it through the API.
  expect(agent.log.find('ended pod processes locally', { pod: `${namespace}/${leak.name}` })).toHaveLength(1);
  const { kubelet, agent: agentEvents } = await eventsBySource(context.admin, namespace);
  const evicted = agentEvents.filter((e) => e.reason === 'Evicted' && e.involvedObject.name === leak.name);
  expect(evicted).toHaveLength(1);
  expect(evicted[0]).toMatchObject({ type: 'Warning', source: { component: 'kube-eviction-agent', host: NODE }, metadata: { annotations: { starved_resource: 'memory', offending_containers: 'main' } } });
  // Who reported, as the kubelet's own Events say it: the component and the node.
  expect(evicted[0]).toMatchObject({ reportingComponent: 'kube-eviction-agent', reportingInstance: NODE });
  expect(kubelet.filter((e) => e.involvedObject.name === leak.name).map((e) => [e.reportingComponent, e.reportingInstance])).toContainEqual(['kubelet', NODE]);
  // The kubelet ran the pod (its own Events) and did not evict it.
  expect(kubelet.filter((e) => e.involvedObject.name === leak.name).map((e) => e.reason)).toEqual(expect.arrayContaining(['Created', 'Started']));
  await expectKubeletDidNotEvict(context.admin, scenario, [leak.name]);
  const reaction = timeline.reaction(`${namespace}/${leak.name}`);
  expect(reaction).not.toBeNull();
  // Generous: the machine is shared; the figures themselves are printed.
  expect(reaction?.toLocalTerminationMs).toBeLessThan(2000);
  console.log(
    `${leak.rateMi} MiB/s leak: created -> deleted ${deletedAtMs - startMs} ms\n${describeReaction(reaction!)}\n` +
      `kubelet Events:\n${describeEvents(kubelet.filter((e) => e.involvedObject.name === leak.name))}\nagent Events:\n${describeEvents(agentEvents)}`,
  );
  return deletedAtMs;
}

suite.test('a fast leak (400 MiB/s) is evicted by the agent before the kernel OOM killer and before the kubelet; the large well-behaved pod stays (root, cgroup v1, real kubelet)', async (context) => {
  const scenario = await startRealNodeScenario(context, 'leak-fast');
  await scenario.runPods([
    { name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } },
    { name: 'quiet', options: { args: ['hold', '32'], requests: { memory: '64Mi' } } },
  ]);
  await leakScenario(context, scenario, { name: 'leaky-fast', rateMi: 400, startMi: 0 });
  expectUntouched(scenario, ['ballast', 'quiet']);
}, 180_000);

// kubepods' working set as the kernel counts it (usage less inactive page cache), read by the test itself.
function kubepodsWorkingSetBytes(node: RealNode): number {
  const usage = Number(readFileSync(join(node.kubepodsMemoryPath, 'memory.usage_in_bytes'), 'utf8'));
  const inactive = /^total_inactive_file (\d+)$/m.exec(readFileSync(join(node.kubepodsMemoryPath, 'memory.stat'), 'utf8'));
  return usage - Number(inactive?.[1] ?? 0);
}

suite.test("a leaking pod's eviction outcome (Event text, metrics, explain's /outcomes) matches the kernel's own counters: the memory freed and the time to relief (root, cgroup v1, real kubelet)", async (context) => {
  const scenario = await startRealNodeScenario(context, 'outcome');
  const { node, namespace, pods } = scenario;
  await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
  // A short re-trigger window: the outcome is known 5 s after memory is back.
  const agent = await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD).replace('reporting:\n', 'reporting:\n  retriggerWindow: 5s\n'));
  await waitMemoryPressureFalse(context);
  const startMs = Date.now();
  // The test's own samples of kubepods, every 50 ms, from before the leak until the outcome is reported.
  const samples: { atMs: number; workingSetBytes: number }[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      samples.push({ atMs: Date.now(), workingSetBytes: kubepodsWorkingSetBytes(node) });
      await sleep(50);
    }
  })();
  try {
    await createPod(context.admin, namespace, realPod('leaky', NODE, { args: ['leak', '200', '0', '1600'], requests: { memory: '16Mi' } }));
    await pods.waitDeleted('leaky', 90_000);
    const outcomeEvents = await waitFor(async () => {
      const found = (await listEvents(context.admin, namespace, 'EvictionOutcome')).filter((e) => e.involvedObject.name === 'leaky');
      return found.length > 0 ? found : undefined;
    }, { what: 'the EvictionOutcome Event on the leaking pod', timeoutMs: 30_000, intervalMs: 200 });
    sampling = false;
    await sampler;
    expect(node.oomWatch.since(startMs)).toEqual([]);
    expect(outcomeEvents).toHaveLength(1);
    const event = outcomeEvents[0]!;
    expect(event).toMatchObject({ type: 'Normal', source: { component: 'kube-eviction-agent', host: NODE } });
    expect(event.message).toMatch(/^Eviction outcome for (allocatableMemory|memory)\.available \(threshold 400\.0 MiB, target 400\.0 MiB\): relieved; pod outcome\/leaky \(local-termination\) freed [\d.]+ MiB of the [\d.]+ MiB needed \(ratio [\d.]+\), [\d.]+ s from the first kill to relief; crossed .*; not re-triggered within 5 s; no kernel OOM kill$/);

    // explain's source, the agent's /outcomes: the same outcome with its figures.
    const explained = await agentOutcomes(parseConfigText(`server:\n  address: 127.0.0.1\n  port: ${agent.agent.opsPort ?? 0}\n`, 'explain.yaml'));
    expect(explained).toEqual({ source: `http://127.0.0.1:${agent.agent.opsPort ?? 0}/outcomes`, messages: [event.message] });
    const [outcome] = agent.agent.outcomes.recent();
    expect(outcome).toBeDefined();
    const { signal } = outcome!;
    // The metrics: one relieved outcome, its ratio and its time to relief observed once.
    expect(await agent.metric('kube_eviction_agent_eviction_outcomes_total', { signal, result: 'relieved' })).toBe(1);
    expect(await agent.metric('kube_eviction_agent_eviction_reclaimed_ratio_count', { signal })).toBe(1);
    expect(await agent.metric('kube_eviction_agent_eviction_time_to_relief_seconds_count', { signal, action: 'local-termination' })).toBe(1);
    expect(await agent.metric('kube_eviction_agent_eviction_time_to_relief_seconds_sum', { signal, action: 'local-termination' })).toBeCloseTo((outcome!.timeToReliefMs ?? 0) / 1000, 3);
    expect(await agent.metric('kube_eviction_agent_eviction_retriggers_total', { signal })).toBe(0);

    // Against the kernel: kubepods' working set just before the kill, and its lowest from the kill
    // until 2 s after the agent saw relief.
    const before = samples.filter((x) => x.atMs <= outcome!.actedAtMs).at(-1);
    const after = samples.filter((x) => x.atMs >= outcome!.actedAtMs && x.atMs <= (outcome!.relievedAtMs ?? 0) + 2000);
    expect(before).toBeDefined();
    expect(after.length).toBeGreaterThan(0);
    const kernelFreedBytes = before!.workingSetBytes - Math.min(...after.map((x) => x.workingSetBytes));
    const agentFreedBytes = Number(outcome!.reclaimedAmount);
    // Generous: the samples are 50 ms apart while the leak grows 200 MiB/s, and the node's other memory moves too.
    expect(kernelFreedBytes).toBeGreaterThan(100 * MiB);
    expect(Math.abs(agentFreedBytes - kernelFreedBytes)).toBeLessThanOrEqual(Math.max(kernelFreedBytes / 3, 64 * MiB));
    // When memory was back by the kernel's counter (kubepods' limit less its working set at the target).
    const back = samples.find((x) => x.atMs >= outcome!.actedAtMs && Number(KUBEPODS_LIMIT_BYTES) - x.workingSetBytes >= Number(outcome!.targetAmount));
    expect(back).toBeDefined();
    const kernelReliefMs = back!.atMs - outcome!.actedAtMs;
    expect(outcome!.timeToReliefMs).not.toBeNull();
    expect(Math.abs(outcome!.timeToReliefMs! - kernelReliefMs)).toBeLessThanOrEqual(3000);
    console.log(
      `eviction outcome: ${event.message}\n` +
        `kernel (kubepods working set, the test's own 50 ms samples): freed ${(kernelFreedBytes / MiB).toFixed(1)} MiB, back ${kernelReliefMs} ms after the kill; ` +
        `agent: freed ${(agentFreedBytes / MiB).toFixed(1)} MiB, back ${outcome!.timeToReliefMs} ms after the kill`,
    );
  } finally {
    sampling = false;
    await sampler;
  }
}, 180_000);

suite.test('a slow leak (40 MiB/s) is evicted by the agent before the OOM killer and the kubelet, passing over a static pod and a system-node-critical pod that use more memory (root, cgroup v1, real kubelet)', async (context) => {
  const scenario = await startRealNodeScenario(context, 'leak-slow');
  const { node, namespace, pods } = scenario;
  const staticName = scenario.runStaticPod('static-hold', ['hold', '400']);
  await scenario.runPods([{ name: 'critical', options: { args: ['hold', '450'], requests: { memory: '16Mi' }, priorityClassName: 'system-node-critical' } }]);
  // The kubelet creates the mirror pod of its static pod.
  await pods.waitFor(staticName, (p) => p.status?.phase === 'Running', 'mirror pod Running', 60_000);
  const mirrorHash = pods.latest(staticName)?.metadata.annotations?.['kubernetes.io/config.mirror'];
  expect(mirrorHash).toMatch(/^[0-9a-f]{32}$/);
  // The static pod's cgroup is named after its own UID (the mirror hash), not the mirror pod's API UID.
  await waitFor(() => podCgroupUids(node).includes(mirrorHash as string), { what: "the static pod's cgroup", timeoutMs: 30_000 });
  expect(pods.latest('critical')?.spec.priority).toBe(2000001000);

  await leakScenario(context, scenario, { name: 'leaky-slow', rateMi: 40, startMi: 150 });
  // Both used more memory than the leak when it was evicted, and both stayed.
  const evicted = (await listEvents(context.admin, namespace, 'Evicted')).find((e) => e.involvedObject.name === 'leaky-slow');
  const leakBytes = offendingUsageBytes(evicted);
  expect(leakBytes).toBeGreaterThan(0);
  expectUntouched(scenario, ['critical', staticName]);
  // The kubelet's own figures for both.
  const summary = await waitFor(async () => {
    const s = await node.summary();
    return [podStats(s, namespace, 'critical'), podStats(s, namespace, staticName)].every((p) => (p?.memory?.workingSetBytes ?? 0) > 0) ? s : undefined;
  }, { what: 'the kubelet Summary of the critical and static pods', timeoutMs: 30_000, intervalMs: 1000 });
  for (const name of ['critical', staticName]) expect([name, (podStats(summary, namespace, name)?.memory?.workingSetBytes ?? 0) > leakBytes]).toEqual([name, true]);
}, 180_000);

suite.test('with the API server paused, a hard memory eviction ends the leaking pod\'s containers locally and spares its sandbox: the pause process lives on and the kubelet starts no new sandbox; once the API server resumes the pod is deleted once, with its Events (root, cgroup v1, real kubelet)', async (context) => {
  const scenario = await startRealNodeScenario(context, 'api-paused');
  const { node, namespace, pods, timeline } = scenario;
  const name = 'leaky-paused';
  await scenario.runPods([{ name: 'ballast', options: { args: ['hold', '600'], requests: { memory: '640Mi' } } }]);
  const agent = await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
  await waitMemoryPressureFalse(context);
  node.resetKubepodsMaxUsage();
  const startMs = Date.now();
  // Slow enough (about 10 s to the agent's threshold) that the API server is paused well before.
  const [created] = await scenario.runPods([{ name, options: { args: ['leak', '40', '150', '1600'], requests: { memory: '16Mi' } } }]);
  const running = pods.latest(name) as PodLike;
  const uid = created?.metadata.uid ?? '';
  const podCgroup = join(node.kubepodsMemoryPath, 'burstable', `pod${uid}`);
  const before = await sandboxView(node, running, podCgroup);
  expect(before.task).toEqual({ pid: before.pid, status: 'RUNNING' });
  expect(before.sandboxes).toEqual([before.id]);
  const containerCgroup = join(podCgroup, ((running.status as { containerStatuses?: { containerID?: string }[] }).containerStatuses?.[0]?.containerID ?? '').replace(/^containerd:\/\//, ''));
  expect(cgroupProcs(containerCgroup).length).toBeGreaterThan(0);

  const apiServerPid = context.plane.apiServerPid as number;
  expect(apiServerPid).toBeGreaterThan(0);
  const kubeletLogFrom = node.kubeletLogSize();
  let pausedAtMs = 0;
  let resumedAtMs = 0;
  let endedAtMs = 0;
  let after: SandboxView;
  let kubeletLog: string;
  process.kill(apiServerPid, 'SIGSTOP');
  try {
    pausedAtMs = Date.now();
    // The agent acts on the watch's last state and its own observation: no API round trip first.
    await waitFor(() => agent.log.find('ended pod processes locally', { pod: `${namespace}/${name}` }).length > 0, { what: 'the local kill with the API server paused', timeoutMs: 60_000, intervalMs: 100 });
    endedAtMs = Date.now();
    // The kubelet, cut off from the API server, keeps the pod: for 12 s its container may be
    // restarted (and ended again by the agent), but its sandbox must stay the same.
    await sleep(12_000);
    after = await sandboxView(node, running, podCgroup);
    kubeletLog = node.kubeletLog(kubeletLogFrom);
  } finally {
    resume(apiServerPid);
    resumedAtMs = Date.now();
  }
  expect(readFileSync(`/proc/${apiServerPid}/stat`, 'utf8')).not.toMatch(/\) T /);
  // Still paused when the containers were ended, and for the whole check.
  const terminateSpan = timeline.spans.find((s) => s.port === 'terminate' && s.pod === `${namespace}/${name}`);
  expect(terminateSpan?.startMs).toBeGreaterThan(pausedAtMs);
  expect(resumedAtMs - endedAtMs).toBeGreaterThanOrEqual(12_000);
  // The sandbox outlived the kill: the same ID, the same pause process, containerd's only sandbox of the pod.
  expect(after).toEqual(before);
  // The kubelet never found the sandbox gone (it says so before it starts a new one).
  expect(kubeletLog.split('\n').filter((l) => l.includes('No ready sandbox for pod') && l.includes(name))).toEqual([]);

  const deletedAtMs = await pods.waitDeleted(name, 90_000);
  // The kernel OOM killer never had to act, and kubepods never reached its limit.
  expect(node.oomWatch.since(startMs)).toEqual([]);
  expect(node.kubepodsMaxUsageBytes()).toBeLessThan(Number(KUBEPODS_LIMIT_BYTES));
  // One local kill, one accepted deletion, one Evicted Event: nothing doubled by the retries.
  expect(agent.log.find('ended pod processes locally', { pod: `${namespace}/${name}` })).toHaveLength(1);
  expect(agent.log.find('evicted pod', { pod: `${namespace}/${name}` })).toHaveLength(1);
  // The Evicted Event, whose first write the paused API server never answered, is written by a
  // retry (every 10 s, as the kubelet's recorder does), once.
  const evicted = await waitFor(async () => {
    const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
    const found = agentEvents.filter((e) => e.reason === 'Evicted');
    return found.length > 0 ? found : undefined;
  }, { what: "the agent's Evicted Event", timeoutMs: 30_000, intervalMs: 500 });
  await sleep(2_000);
  expect((await eventsBySource(context.admin, namespace)).agent.filter((e) => e.reason === 'Evicted')).toHaveLength(1);
  expect(evicted.map((e) => e.involvedObject.name)).toEqual([name]);
  expect(evicted[0]).toMatchObject({ type: 'Warning', source: { component: 'kube-eviction-agent', host: NODE }, metadata: { annotations: { starved_resource: 'memory' } } });
  await expectKubeletDidNotEvict(context.admin, scenario, [name]);
  expectUntouched(scenario, ['ballast']);
  const restarted = agent.log.find('ended a container restarted in a pod being evicted', { pod: `${namespace}/${name}` }).length;
  console.log(
    `API server paused ${resumedAtMs - pausedAtMs} ms; local kill ${endedAtMs - pausedAtMs} ms after the pause; sandbox ${before.id.slice(0, 12)} pause pid ${before.pid} unchanged; ` +
      `restarted containers ended while paused: ${restarted}; deleted ${deletedAtMs - resumedAtMs} ms after the resume`,
  );
}, 180_000);

suite.test('PID pressure from a fork-leaking pod: the agent evicts it before it reaches its pids limit, and before the kubelet (root, cgroup v1, real kubelet)', async (context) => {
  const scenario = await startRealNodeScenario(context, 'pid-pressure');
  const { node, namespace } = scenario;
  await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '16'], requests: { memory: '32Mi' } } }]);
  // The threshold sits 300 processes below what is available now (the machine is shared).
  const availablePids = await waitFor(async () => {
    const rlimit = (await node.summary()).node.rlimit;
    return rlimit?.maxpid !== undefined && rlimit.curproc !== undefined ? rlimit.maxpid - rlimit.curproc : undefined;
  }, { what: 'the PID counts in the kubelet Summary', timeoutMs: 20_000 });
  const thresholdPids = availablePids - 300;
  await scenario.startAgent(agentConfig(node, { ...AGENT_EVICTION_HARD, 'pid.available': String(thresholdPids) }));
  await waitMemoryPressureFalse(context);
  const [forker] = await scenario.runPods([{ name: 'forker', options: { args: ['forks', '200', '2000'], requests: { memory: '32Mi' } } }]);
  // The pod's pids cgroup, sampled until it goes: how close the leak came to its limit.
  let maxPids = 0;
  const pidsFile = join('/sys/fs/cgroup/pids', node.cgroups.name, 'kubepods', 'burstable', `pod${forker?.metadata.uid}`, 'pids.current');
  await scenario.sampleUntilDeleted('forker', () => {
    try {
      maxPids = Math.max(maxPids, Number(readFileSync(pidsFile, 'utf8')));
    } catch {
      // Not there yet, or gone.
    }
  }, 90_000);

  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource])).toEqual([['forker', 'pids']]);
  // It forked well past what the machine's other processes move by (the threshold is 300 below).
  expect(maxPids).toBeGreaterThan(100);
  expect(maxPids).toBeLessThan(POD_PIDS_LIMIT);
  await expectKubeletDidNotEvict(context.admin, scenario, ['forker']);
  expectUntouched(scenario, ['quiet']);
  console.log(`PID pressure: threshold pid.available ${thresholdPids} (available at start ${availablePids}); the forker reached ${maxPids} processes (pod limit ${POD_PIDS_LIMIT})`);
}, 180_000);

suite.test("disk pressure from a pod filling its emptyDir on the kubelet's small tmpfs root: the agent evicts it before the filesystem fills and before the kubelet (root, cgroup v1, real kubelet)", async (context) => {
  const scenario = await startRealNodeScenario(context, 'disk-pressure');
  const { node, namespace } = scenario;
  await scenario.runPods([{ name: 'quiet', options: { args: ['hold', '8'], requests: { memory: '32Mi' }, emptyDir: true } }]);
  await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
  await waitMemoryPressureFalse(context);
  let minFreeBytes = Number.POSITIVE_INFINITY;
  const free = (): number => {
    const stats = statfsSync(node.rootDir);
    return stats.bavail * stats.bsize;
  };
  // 40 MiB/s up to 240 MiB of the 256 MiB: only an eviction keeps the filesystem from filling.
  await createPod(context.admin, namespace, realPod('filler', NODE, { args: ['fill', '/scratch/data', '40', '240'], requests: { memory: '32Mi' }, emptyDir: true }));
  await scenario.sampleUntilDeleted('filler', () => {
    minFreeBytes = Math.min(minFreeBytes, free());
  }, 90_000);

  const { agent: agentEvents } = await eventsBySource(context.admin, namespace);
  expect(agentEvents.filter((e) => e.reason === 'Evicted').map((e) => [e.involvedObject.name, e.metadata.annotations?.starved_resource])).toEqual([['filler', 'ephemeral-storage']]);
  // Never below the kubelet's own threshold (10%), let alone full.
  expect(minFreeBytes).toBeGreaterThan(Number(ROOT_DIR_BYTES) / 10);
  await expectKubeletDidNotEvict(context.admin, scenario, ['filler']);
  expectUntouched(scenario, ['quiet']);
  console.log(`disk pressure: the kubelet root's free space went down to ${(minFreeBytes / MiB).toFixed(1)} MiB of ${Number(ROOT_DIR_BYTES) / MiB} MiB`);
}, 180_000);

suite.test("the Node's identity as the real kubelet reports it (status.nodeInfo) is this host's: the agent acts; an agent given another node's name refuses to act on it (root, cgroup v1, real kubelet)", async (context) => {
  const scenario = await startRealNodeScenario(context, 'identity');
  const { node, namespace } = scenario;
  const host = thisHostIdentity();
  const registered = await context.admin.get<{ status?: { nodeInfo?: Record<string, string> } }>(`/api/v1/nodes/${NODE}`);
  const info = registered.status?.nodeInfo ?? {};
  // What the kubelet read (through cAdvisor) is what the agent reads.
  expect([info.bootID, info.machineID]).toEqual([host.bootID, host.machineID]);
  const agent = await scenario.startAgent(agentConfig(node, AGENT_EVICTION_HARD));
  await waitFor(() => agent.log.find('this host is the Node; acting on it').length > 0, { what: 'the identity verified', timeoutMs: 10_000 });
  expect(agent.log.find('this host is the Node; acting on it')[0]?.fields.compared).toEqual(expect.arrayContaining(['bootID', 'machineID']));
  await waitFor(() => agent.agent.readiness.reason() === null, { what: 'the agent ready', timeoutMs: 20_000 });
  await agent.stop();

  // Another node, as its own kubelet registered it on another machine, with a pod of its own.
  const other = 'other-node';
  await context.admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: other } });
  context.defer(async () => {
    await context.admin.request('DELETE', `/api/v1/namespaces/${namespace}/pods/bystander`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    await context.admin.request('DELETE', `/api/v1/nodes/${other}`);
  });
  await context.admin.request('PATCH', `/api/v1/nodes/${other}/status`, {
    contentType: 'application/strategic-merge-patch+json',
    body: { status: { nodeInfo: { bootID: '7c0f4a52-7b1e-4f0e-9d55-3a0c1f2b9e61', machineID: '0123456789abcdef0123456789abcdef', systemUUID: '' } } },
  });
  await createPod(context.admin, namespace, realPod('bystander', other, { args: ['hold', '16'] }));
  // Far more than this machine has: every pass is under hard memory pressure.
  const impostor = await startAgentUnderTest({ plane: context.plane, token: context.identity.token, nodeName: other, configYaml: agentConfig(node, { ...AGENT_EVICTION_HARD, 'memory.available': '1000Gi' }), realNode: true });
  context.defer(() => impostor.stop());
  context.addDiagnostics(() => `impostor agent log:\n${impostor.log.tail(30)}`);
  await waitFor(() => impostor.log.find('eviction attempt', { result: 'refused' }).length >= 3, { what: 'three passes that refused to act', timeoutMs: 30_000 });
  expect(impostor.agent.readiness.reason()).toMatch(/the Node other-node is another machine: its bootID "7c0f4a52-7b1e-4f0e-9d55-3a0c1f2b9e61" is not this host's/);
  expect(impostor.log.find('refusing to act: this host is not the Node')).toHaveLength(1);
  const pod = await getPod(context.admin, namespace, 'bystander');
  expect(pod?.metadata.deletionTimestamp ?? null).toBeNull();
  const otherNode = await context.admin.get<{ spec?: { taints?: unknown[] }; status?: { conditions?: { type: string }[] } }>(`/api/v1/nodes/${other}`);
  expect((otherNode.status?.conditions ?? []).filter((c) => c.type.startsWith('kube-eviction-agent.io/'))).toEqual([]);
  const warnings = (await listEvents(context.admin, 'default', 'NodeIdentityMismatch')).filter((e) => e.involvedObject.name === other);
  expect(warnings).toHaveLength(1);
  expect(warnings[0]).toMatchObject({ type: 'Warning', reportingComponent: 'kube-eviction-agent', reportingInstance: other });
  await impostor.stop();
  // Stopping writes nothing on that Node either.
  const after = await context.admin.get<{ status?: { conditions?: { type: string }[] } }>(`/api/v1/nodes/${other}`);
  expect((after.status?.conditions ?? []).filter((c) => c.type.startsWith('kube-eviction-agent.io/'))).toEqual([]);
}, 120_000);

suite.test("record, then replay: a recording of the node under pressure, taken by the agent's own observer, replays to the decision the live agent made; the kubelet source's proxy failure is visible (dry run; root, cgroup v1, real kubelet)", async (context) => {
  const scenario = await startRealNodeScenario(context, 'record');
  const { node, namespace } = scenario;
  const configYaml = agentConfig(node, AGENT_EVICTION_HARD).replace('actions:\n', 'actions:\n  dryRun: true\n');
  // Two pods holding enough that less than the agent's 400Mi stays available: the live agent (a
  // dry run, so the pressure stays) decides on one of them at every pass.
  await scenario.runPods([
    { name: 'big', options: { args: ['hold', '700'], requests: { memory: '16Mi' } } },
    { name: 'small', options: { args: ['hold', '500'], requests: { memory: '16Mi' } } },
  ]);
  const agent = await scenario.startAgent(configYaml);
  const live = await waitFor(() => agent.log.find('eviction attempt').find((l) => l.fields.result === 'dry-run' && String(l.fields.pod).startsWith(`${namespace}/`)), { what: "the live agent's decision", timeoutMs: 30_000 });

  const config = parseConfigText(configYaml, 'record.yaml');
  const plan = {
    cluster: { kubeconfigYaml: kubeconfigYaml({ server: context.plane.url, caPem: context.plane.caPem, token: context.plane.credentials.adminToken, user: 'admin' }) },
    nodeName: NODE,
    config,
    clock: systemClock,
    logger: silentLogger,
  };
  const sources = await recordingSources({ ...plan, source: 'observer' });
  const lines: string[] = [];
  const progress: string[] = [];
  const outcome = await record(sources, { intervalMs: 1000, maxSteps: 3, maxDurationMs: 60_000, maxBytes: 16 * MiB, clock: systemClock, signal: new AbortController().signal, write: (line) => lines.push(line), progress: (text) => progress.push(text) });
  expect([outcome.steps, outcome.endedBy, outcome.failedCaptures]).toEqual([3, 'count', 0]);

  const input = new PassThrough();
  input.end(lines.join(''));
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  await replayStream(config.eviction, input, output);
  const decisions = printed.trim().split('\n').map((line) => JSON.parse(line) as { evictions: { pod: string; signal: string }[] });
  const replayed = decisions.map((d) => d.evictions[0]?.pod);
  const signals = decisions.map((d) => d.evictions[0]?.signal);
  console.log(`live decision: ${String(live.fields.pod)}; replayed: ${replayed.join(', ')} (${signals.join(', ')}); record: ${progress.join(' | ')}`);
  expect(replayed).toEqual([live.fields.pod, live.fields.pod, live.fields.pod]);
  // The pressure is the node's memory (the node's, or its pods' allocatable share).
  for (const signal of signals) expect(['memory.available', 'allocatableMemory.available']).toContain(signal);

  // The default source, the kubelet's summary through the API server's node proxy: this harness's
  // Node has no address the API server can reach (harness/real-node.ts), so the proxy refuses; the
  // capture fails visibly, nothing is written for it, and the recording goes on to its bound.
  const viaKubelet = await recordingSources({ ...plan, source: 'kubelet' });
  const kubeletLines: string[] = [];
  const failures: string[] = [];
  const one = await record(viaKubelet, { intervalMs: 1000, maxSteps: 1, maxDurationMs: 2500, maxBytes: 16 * MiB, clock: systemClock, signal: new AbortController().signal, write: (line) => kubeletLines.push(line), progress: (text) => (text.startsWith('capture failed') ? failures.push(text) : 0) });
  expect([one.steps, one.endedBy, kubeletLines]).toEqual([0, 'duration', []]);
  expect(failures.length).toBeGreaterThanOrEqual(2);
  expect(failures[0]).toContain(`Reading the kubelet's summary of node ${NODE} failed:`);
}, 150_000);
