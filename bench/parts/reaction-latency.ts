// Part 2, reaction latency: from the kernel's threshold event to the eviction, on a node with 110
// pods. The agent (notifier + local termination) runs on a sandbox node whose 110 pods all exist
// in the API stand-in and in real pod cgroups (most with a tiny idle process, one holding most of
// the memory); each iteration a fresh pod steps its memory across the armed threshold and notes
// the crossing on CLOCK_MONOTONIC, and hooks in the same process note, on the same clock, the
// notification reaching JavaScript, the decision, local termination, the API request and the
// pod's processes being gone. The notifier alone (no agent) is measured the same way, as in
// bench/notifier-latency.ts.

import { AllocatorProcess } from '../lib/allocator.js';
import { startBenchAgent, type AgentVariant, type BenchAgent } from '../lib/bench-agent.js';
import { BenchCgroup, cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { BenchNode } from '../lib/bench-node.js';
import { BENCH_NAMESPACE, benchPod, containerCgroup, podCgroup } from '../lib/bench-pods.js';
import { throwIfInterrupted } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { watchPodDeletion } from '../lib/simulated-kubelet.js';
import { distribution, fmt, MiB, type Distribution } from '../lib/stats.js';
import { SteppingChild } from '../lib/stepping-child.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseQuantity } from '../../src/api/quantity.js';
import type { Summary } from '../../src/api/summary.js';
import { startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { errorMessage } from '../../src/errors.js';
import { createMemoryThresholdNotifier } from '../../src/notifier/create-memory-threshold-notifier.js';
import type { MemcgV1Notifier } from '../../src/notifier/memcg-v1-notifier.js';
import { FakeClock } from '../../test/fakes/fake-clock.js';
import { notifierSettings } from '../../test/fixtures/settings.js';

const LIMIT_BYTES = 1024 * MiB;
const THRESHOLD = '256Mi';
export const LATENCY_POD_COUNT = 110;
/** One pod holds most of the memory, so the stepping pod reaches the threshold in ~100 MiB. */
const BALLAST_BYTES = 560 * MiB;
/** One idle pod in this many has no process at all (an empty cgroup). */
const EMPTY_EVERY = 10;
const VARIANT: AgentVariant = { key: 'notifier-local', label: 'notifier + local termination', notifier: 'memcg-v1', localTermination: true, housekeepingIntervalMs: 10_000 };

/** Milliseconds from the kernel-side crossing, per iteration. */
export interface LatencySample {
  readonly toNotified: number | null;
  readonly toDecided: number | null;
  readonly toTermination: number | null;
  readonly toApiRequest: number | null;
  readonly toGone: number | null;
}

export interface ReactionLatencyData {
  readonly pods: number;
  readonly idleProcesses: number;
  readonly iterations: number;
  readonly failures: readonly string[];
  readonly samples: readonly LatencySample[];
  readonly stages: Readonly<Record<keyof LatencySample, Distribution | null>>;
  /** notification → local termination, inside the agent. */
  readonly notifiedToTermination: Distribution | null;
  /** The notifier alone, no agent: crossing → onEvent (bench/notifier-latency.ts). */
  readonly notifierAlone: { readonly crossings: number; readonly latency: Distribution | null; readonly arming: Distribution | null } | null;
}

const iterationsFor = (quick: boolean): number => (quick ? 10 : 200);
const crossingsFor = (quick: boolean): number => (quick ? 20 : 200);

async function populateNode(node: BenchNode, standIn: ApiStandIn, nodeName: string): Promise<{ idleProcesses: number }> {
  const ballast = standIn.createPod(benchPod({ name: 'ballast', nodeName, memoryRequest: '1Gi' }));
  const holder = await AllocatorProcess.start(node.cgroup, containerCgroup(ballast), { mode: 'asap', rateBytesPerSecond: 0, maxBytes: BALLAST_BYTES, usagePath: node.usagePath });
  holder.go();
  await holder.whenDone();
  let idleProcesses = 0;
  const idle: Promise<unknown>[] = [];
  // 108 idle pods + the ballast + the stepping pod of each iteration = 110.
  for (let i = 0; i < LATENCY_POD_COUNT - 2; i++) {
    const pod = standIn.createPod(benchPod({ name: `idle-${String(i).padStart(3, '0')}`, nodeName, memoryRequest: '16Mi' }));
    const relative = containerCgroup(pod);
    if (i % EMPTY_EVERY === EMPTY_EVERY - 1) {
      node.cgroup.mkdir(relative);
      continue;
    }
    idle.push(node.cgroup.spawnIdle(relative));
    idleProcesses++;
  }
  await Promise.all(idle);
  return { idleProcesses };
}

async function iteration(agent: BenchAgent, node: BenchNode, standIn: ApiStandIn, nodeName: string, index: number): Promise<LatencySample> {
  const name = `step-${index}`;
  const pod = standIn.createPod(benchPod({ name, nodeName, memoryRequest: '16Mi' }));
  const uid = pod.metadata.uid ?? '';
  let child: SteppingChild | null = null;
  let stopKubelet = (): void => undefined;
  try {
    child = await SteppingChild.start(node.cgroup, containerCgroup(pod), node.cgroup.path);
    await agent.waitForPod(uid, true);
    const notifier = agent.notifier as MemcgV1Notifier;
    let armed = notifier.armedThresholds()[0];
    for (let i = 0; i < 500 && armed === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      armed = notifier.armedThresholds()[0];
    }
    if (armed === undefined) throw new Error('no memory threshold armed');

    const marks = { notified: [] as bigint[], decidedNs: null as bigint | null, terminatingNs: null as bigint | null, requestingNs: null as bigint | null };
    agent.hooks = {
      notified: (atNs) => marks.notified.push(atNs),
      decided: (result, _trigger, atNs) => {
        if (marks.decidedNs === null && result.evictions.some((e) => e.pod.metadata.uid === uid)) marks.decidedNs = atNs;
      },
      terminating: (p, atNs) => {
        if (p.metadata.uid === uid) marks.terminatingNs ??= atNs;
      },
      requesting: (p, atNs) => {
        if (p.metadata.uid === uid) marks.requestingNs ??= atNs;
      },
    };
    const watch = watchPodDeletion(standIn, { namespace: BENCH_NAMESPACE, name }, [child.process], 0, () => undefined);
    stopKubelet = () => watch.stop();
    const crossedNs = await child.cross(armed.memcgThresholdBytes);
    const exited = await Promise.race([child.process.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);
    // The API request follows local termination by a few milliseconds.
    for (let i = 0; i < 100 && marks.requestingNs === null; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    if (crossedNs === null) throw new Error('the stepping pod died before it reported its crossing');
    const since = (ns: bigint | null | undefined): number | null => (ns === null || ns === undefined ? null : Number(ns - crossedNs) / 1e6);
    return {
      toNotified: since(marks.notified.find((ns) => ns >= crossedNs)),
      toDecided: since(marks.decidedNs),
      toTermination: since(marks.terminatingNs),
      toApiRequest: since(marks.requestingNs),
      toGone: since(exited?.atNs),
    };
  } finally {
    stopKubelet();
    agent.hooks = {};
    if (child !== null) await node.cgroup.kill([child.process]);
    standIn.deletePodNow(BENCH_NAMESPACE, name);
    await agent.waitForPod(uid, false).catch(() => undefined);
    node.cgroup.remove(podCgroup(uid));
  }
}

// The notifier alone, as bench/notifier-latency.ts measures it: a threshold armed 2 MiB above the
// current usage, crossed by the stepping child, over and over. The fake clock only lets each
// re-arm through the kubelet's 10 s re-arm interval.
async function notifierAlone(crossings: number, progress: PartContext['progress']): Promise<ReactionLatencyData['notifierAlone']> {
  const sandbox = BenchCgroup.create('notifier', 2048n * BigInt(MiB));
  const clock = new FakeClock();
  const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'memcg-v1' }), { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: sandbox.name, podCgroupRoot: `${sandbox.name}/kubepods`, procRoot: '/proc', clock, logger: silentLogger }) as MemcgV1Notifier;
  const warmup = 5;
  const latenciesMs: number[] = [];
  const armingMs: number[] = [];
  try {
    const child = await SteppingChild.start(sandbox, 'stepper', sandbox.path);
    let onCallback: ((ns: bigint) => void) | null = null;
    notifier.start(() => {
      const calledNs = process.hrtime.bigint();
      onCallback?.(calledNs);
      onCallback = null;
    });
    const threshold = [{ signal: 'memory.available' as const, value: { kind: 'quantity' as const, quantity: parseQuantity('1Gi') }, gracePeriodMs: 0, minReclaim: null }];
    for (let i = 0; i < warmup + crossings; i++) {
      throwIfInterrupted();
      const targetBytes = sandbox.readBytes('', 'memory.usage_in_bytes') + 2n * BigInt(MiB);
      clock.step(10_001);
      const armStartedMs = performance.now();
      // No inactive page cache, 1Gi threshold: the armed usage is exactly targetBytes.
      const summary: Summary = { node: { memory: { availableBytes: Number(targetBytes) + 1024 * MiB, usageBytes: 0, workingSetBytes: 0 } } };
      notifier.updateThresholds(summary, threshold);
      await notifier.settled();
      armingMs.push(performance.now() - armStartedMs);
      const called = new Promise<bigint>((resolve) => (onCallback = resolve));
      const crossedNs = await child.cross(targetBytes);
      const calledNs = await Promise.race([called, new Promise<null>((resolve) => setTimeout(() => resolve(null), 2000))]);
      if (crossedNs === null || calledNs === null) throw new Error(`no event for crossing ${i} at ${targetBytes} bytes`);
      if (i >= warmup) latenciesMs.push(Number(calledNs - crossedNs) / 1e6);
      progress.step(i + 1, warmup + crossings, `notifier alone: crossing ${i + 1}`);
    }
  } finally {
    await notifier.stop();
    await sandbox.destroy();
  }
  return { crossings, latency: distribution(latenciesMs), arming: distribution(armingMs) };
}

export const reactionLatencyPart: BenchPart<ReactionLatencyData> = {
  name: 'reaction-latency',
  title: 'Reaction latency',
  estimateMs: (quick) => 10_000 + iterationsFor(quick) * 500 + crossingsFor(quick) * 100,
  unavailable: () => cgroupV1Unavailable(),
  async run(context: PartContext): Promise<ReactionLatencyData> {
    const iterations = iterationsFor(context.quick);
    const nodeName = 'latency-node';
    const standIn = await startApiStandIn();
    const node = BenchNode.create('latency', BigInt(LIMIT_BYTES));
    let agent: BenchAgent | null = null;
    const samples: LatencySample[] = [];
    const failures: string[] = [];
    let idleProcesses = 0;
    try {
      ({ idleProcesses } = await populateNode(node, standIn, nodeName));
      agent = await startBenchAgent({ node, standIn, nodeName, variant: VARIANT, thresholdQuantity: THRESHOLD, scratchDir: context.scratchDir });
      context.progress.note(`sandbox node ${node.name}: ${LATENCY_POD_COUNT} pods, ${idleProcesses} idle processes, usage ${fmt(Number(node.usageBytes()) / MiB)} MiB of ${LIMIT_BYTES / MiB} MiB`);
      for (let i = 0; i < iterations; i++) {
        throwIfInterrupted();
        try {
          const sample = await iteration(agent, node, standIn, nodeName, i);
          samples.push(sample);
          context.progress.step(i + 1, iterations, `crossing -> notified ${fmt(sample.toNotified)} ms, -> local kill ${fmt(sample.toTermination)} ms, -> API ${fmt(sample.toApiRequest)} ms, -> gone ${fmt(sample.toGone)} ms`);
        } catch (err) {
          failures.push(errorMessage(err));
          context.progress.step(i + 1, iterations, `failed: ${failures.at(-1) ?? ''}`, true);
        }
      }
    } finally {
      await agent?.stop();
      await standIn.stop();
      await node.destroy();
    }
    const stage = (key: keyof LatencySample): Distribution | null => distribution(samples.flatMap((s) => (s[key] === null ? [] : [s[key] as number])));
    const inAgent = samples.flatMap((s) => (s.toTermination === null || s.toNotified === null ? [] : [s.toTermination - s.toNotified]));
    return {
      pods: LATENCY_POD_COUNT,
      idleProcesses,
      iterations,
      failures,
      samples,
      stages: { toNotified: stage('toNotified'), toDecided: stage('toDecided'), toTermination: stage('toTermination'), toApiRequest: stage('toApiRequest'), toGone: stage('toGone') },
      notifiedToTermination: distribution(inAgent),
      notifierAlone: await notifierAlone(crossingsFor(context.quick), context.progress),
    };
  },
};
