// Part 2, reaction latency: from the kernel's threshold event to the eviction, in four
// scenarios side by side: 110 pods on an idle machine, the same node with the machine's CPUs
// saturated by two busy processes (a busy node), and the node grown to 1,000 pods, idle and busy. The agent
// (notifier + local termination) runs on a sandbox node whose pods all exist in the API stand-in
// and in real pod cgroups (most with a tiny idle process, one holding most of the memory); each
// iteration a fresh pod steps its memory across the armed threshold and notes the crossing on
// CLOCK_MONOTONIC, and hooks in the same process note, on the same clock, the notification
// reaching JavaScript, the memory shortcut's eviction, local termination, the API request and the
// pod's processes being gone. The notifier alone (no agent) is measured the same way, as in
// bench/notifier-latency.ts. The C reference killer (bench/reference-killer.c) runs alternately
// with the agent, iteration by iteration in every scenario, on a second sandbox node of the same
// shape (the same ballast, the same pod cgroups and idle processes), so the agent's figures are
// read as ratios to the physical limit measured in the same run.

import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { AllocatorProcess } from '../lib/allocator.js';
import { startBenchAgent, type AgentVariant, type BenchAgent } from '../lib/bench-agent.js';
import { BenchCgroup, cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { BenchNode } from '../lib/bench-node.js';
import { BENCH_NAMESPACE, benchPod, containerCgroup, podCgroup, syntheticUid } from '../lib/bench-pods.js';
import { referenceReaderUnavailable } from '../lib/reference-reader.js';
import { buildReferenceKiller, ReferenceKiller } from '../lib/reference-killer.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
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
const THRESHOLD_BYTES = 256 * MiB;
export const LATENCY_POD_COUNT = 110;
export const LARGE_POD_COUNT = 1000;
/** The busy node: this many processes spinning on the CPU (as many as the machine has cores here). */
export const BUSY_PROCESSES = 2;
/** One pod holds most of the memory, so the stepping pod reaches the threshold in ~100 MiB. */
const BALLAST_BYTES = 560 * MiB;
/** One idle pod in this many has no process at all (an empty cgroup). */
const EMPTY_EVERY = 10;
/** The pods added to reach 1,000: one in this many with an idle process (bounds the machine's load). */
const LARGE_PROCESS_EVERY = 10;
/** Idle and busy iterations alternate in blocks of this many, so load from other work falls on both. */
export const LATENCY_BLOCK = 10;
const VARIANT: AgentVariant = { key: 'notifier-local', label: 'notifier + local termination', notifier: 'memcg-v1', localTermination: true, housekeepingIntervalMs: 10_000 };

/** Milliseconds from the kernel-side crossing, per iteration. */
export interface LatencySample {
  readonly toNotified: number | null;
  /** The memory shortcut chose the pod (noted after its kill was issued). */
  readonly toShortcut: number | null;
  readonly toTermination: number | null;
  readonly toApiRequest: number | null;
  readonly toGone: number | null;
  /** The kill went out from the kill path's thread (absent in results recorded before it existed). */
  readonly byKillPath?: boolean;
}

export type LatencyStage = Exclude<keyof LatencySample, 'byKillPath'>;

export type ScenarioKey = 'idle-110' | 'busy-110' | 'idle-1000' | 'busy-1000';

/** One scenario: a node size, with or without the busy processes. */
export interface LatencyScenario {
  readonly key: ScenarioKey;
  readonly label: string;
  readonly pods: number;
  readonly busyProcesses: number;
  /** The busy processes' nice value (the agent runs at 0); absent in results recorded before it was a setting. */
  readonly busyNice?: number;
  readonly idleProcesses: number;
  readonly iterations: number;
  readonly failures: readonly string[];
  readonly samples: readonly LatencySample[];
  readonly stages: Readonly<Record<LatencyStage, Distribution | null>>;
  /** notification → local termination, inside the agent. */
  readonly notifiedToTermination: Distribution | null;
  /** Kills issued by the memory shortcut or the kill path (the rest by a full pass). */
  readonly shortcutKills: number;
  /** Of those, the kill path's, from its own thread (absent in results recorded before it existed). */
  readonly killPathKills?: number;
  /** The 1-minute load average when the scenario's first iteration started. */
  readonly loadAverage: number;
  /** The C reference killer, run alternately with the agent in the same scenario (absent in results recorded before it existed). */
  readonly reference?: ReferenceScenario;
}

/** Milliseconds from the kernel-side crossing, per iteration of the reference killer. */
export interface ReferenceSample {
  readonly toNotified: number | null;
  readonly toTermination: number | null;
  readonly toGone: number | null;
}

export interface ReferenceScenario {
  readonly iterations: number;
  readonly failures: readonly string[];
  readonly samples: readonly ReferenceSample[];
  readonly stages: Readonly<Record<keyof ReferenceSample, Distribution | null>>;
}

export interface ReactionLatencyData {
  readonly scenarios: readonly LatencyScenario[];
  /** Why the reference killer did not run, when it did not (no C compiler). */
  readonly referenceSkipped?: string;
  /** The notifier alone, no agent: crossing → onEvent (bench/notifier-latency.ts). */
  readonly notifierAlone: { readonly crossings: number; readonly latency: Distribution | null; readonly arming: Distribution | null } | null;
}

/** `KEA_BENCH_LATENCY_ITERATIONS` sets the iterations per scenario (200 by default, 10 in quick mode): a run that must fit one hold of the benchmark lock. */
export function iterationsFor(quick: boolean, raw = process.env.KEA_BENCH_LATENCY_ITERATIONS): number {
  if (raw === undefined || raw === '') return quick ? 10 : 200;
  const iterations = Number(raw);
  if (!Number.isInteger(iterations) || iterations < 1 || iterations > 10_000) throw new Error(`KEA_BENCH_LATENCY_ITERATIONS: ${raw} is not a whole number from 1 to 10000`);
  return iterations;
}
const crossingsFor = (quick: boolean): number => (quick ? 20 : 200);

/** Creates pods idle-<from>..idle-<to - 1>, with an idle process where `hasProcess` says so (an empty cgroup otherwise). */
async function addIdlePods(node: BenchNode, standIn: ApiStandIn, nodeName: string, from: number, to: number, hasProcess: (i: number) => boolean): Promise<{ idleProcesses: number; lastUid: string }> {
  let idleProcesses = 0;
  let lastUid = '';
  const idle: Promise<unknown>[] = [];
  for (let i = from; i < to; i++) {
    const pod = standIn.createPod(benchPod({ name: `idle-${String(i).padStart(4, '0')}`, nodeName, memoryRequest: '16Mi' }));
    lastUid = pod.metadata.uid ?? '';
    const relative = containerCgroup(pod);
    if (!hasProcess(i)) {
      node.cgroup.mkdir(relative);
      continue;
    }
    idle.push(node.cgroup.spawnIdle(relative));
    idleProcesses++;
    // A few at a time: a thousand processes started at once would load the machine being measured.
    if (idle.length >= 50) await Promise.all(idle.splice(0));
  }
  await Promise.all(idle);
  return { idleProcesses, lastUid };
}

async function populateNode(node: BenchNode, standIn: ApiStandIn, nodeName: string): Promise<{ idleProcesses: number }> {
  const ballast = standIn.createPod(benchPod({ name: 'ballast', nodeName, memoryRequest: '1Gi' }));
  const holder = await AllocatorProcess.start(node.cgroup, containerCgroup(ballast), { mode: 'asap', rateBytesPerSecond: 0, maxBytes: BALLAST_BYTES, usagePath: node.usagePath });
  holder.go();
  await holder.whenDone();
  // 108 idle pods + the ballast + the stepping pod of each iteration = 110.
  return addIdlePods(node, standIn, nodeName, 0, LATENCY_POD_COUNT - 2, (i) => i % EMPTY_EVERY !== EMPTY_EVERY - 1);
}

/**
 * `KEA_BENCH_BUSY_NICE` runs the busy processes at that nice value instead of the agent's own (0):
 * a busy node on which the agent has the higher CPU weight, as it would with a negative nice
 * value of its own (docs/deployment.md, "Scheduling priority and memory locking").
 */
export function busyNiceFromEnv(raw = process.env.KEA_BENCH_BUSY_NICE): number {
  if (raw === undefined || raw === '') return 0;
  const nice = Number(raw);
  if (!Number.isInteger(nice) || nice < 0 || nice > 19) throw new Error(`KEA_BENCH_BUSY_NICE: ${raw} is not a whole number from 0 to 19`);
  return nice;
}

/** Processes spinning on the CPU outside the sandbox node at nice `nice`, until stopped: a busy node. */
async function startBusyProcesses(count: number, nice: number): Promise<() => Promise<void>> {
  const children = Array.from({ length: count }, () => trackChild(spawn('nice', ['-n', String(nice), '/bin/sh', '-c', 'while :; do :; done'], { stdio: 'ignore' })));
  const exits = children.map((child) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()))));
  // Let the scheduler see them running before the first crossing.
  await new Promise((resolve) => setTimeout(resolve, 200));
  return async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(exits);
  };
}

async function iteration(agent: BenchAgent, node: BenchNode, standIn: ApiStandIn, nodeName: string, index: number, markPath: string): Promise<LatencySample> {
  const name = `step-${index}`;
  const pod = standIn.createPod(benchPod({ name, nodeName, memoryRequest: '16Mi' }));
  const uid = pod.metadata.uid ?? '';
  let child: SteppingChild | null = null;
  let stopKubelet = (): void => undefined;
  try {
    child = await SteppingChild.start(node.cgroup, containerCgroup(pod), node.cgroup.path, markPath);
    await agent.waitForPod(uid, true);
    const notifier = agent.notifier as MemcgV1Notifier;
    let armed = notifier.armedThresholds()[0];
    for (let i = 0; i < 500 && armed === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      armed = notifier.armedThresholds()[0];
    }
    if (armed === undefined) throw new Error('no memory threshold armed');

    const marks = { notified: [] as bigint[], shortcutNs: null as bigint | null, terminatingNs: null as bigint | null, byKillPath: false, requestingNs: null as bigint | null };
    agent.hooks = {
      notified: (atNs) => marks.notified.push(atNs),
      shortcut: (p, atNs) => {
        if (p.metadata.uid === uid) marks.shortcutNs ??= atNs;
      },
      terminating: (p, atNs, byKillPath) => {
        if (p.metadata.uid !== uid || marks.terminatingNs !== null) return;
        marks.terminatingNs = atNs;
        marks.byKillPath = byKillPath !== undefined;
      },
      requesting: (p, atNs) => {
        if (p.metadata.uid === uid) marks.requestingNs ??= atNs;
      },
    };
    const watch = watchPodDeletion(standIn, { namespace: BENCH_NAMESPACE, name }, [child.process], 0, () => undefined);
    stopKubelet = () => watch.stop();
    const crossedNs = await child.cross(armed.memcgThresholdBytes);
    const exited = await Promise.race([child.process.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);
    // The API request follows local termination by a few milliseconds; the kill path's own stamp
    // comes with its report, which waits for the main thread (a pass at 1,000 pods on a busy node
    // takes hundreds of milliseconds).
    for (let i = 0; i < 1000 && (marks.requestingNs === null || marks.terminatingNs === null); i++) await new Promise((resolve) => setTimeout(resolve, 5));
    if (crossedNs === null) throw new Error('the stepping pod died before it reported its crossing');
    const since = (ns: bigint | null | undefined): number | null => (ns === null || ns === undefined ? null : Number(ns - crossedNs) / 1e6);
    // The first wake-up after the crossing: the kill path's thread's, or the main thread's (reported in either order).
    const notifiedNs = marks.notified.filter((ns) => ns >= crossedNs).reduce<bigint | null>((first, ns) => (first === null || ns < first ? ns : first), null);
    return {
      byKillPath: marks.byKillPath,
      toNotified: since(notifiedNs),
      toShortcut: since(marks.shortcutNs),
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

/**
 * The reference killer's node: the same shape as the agent's (the ballast, the pod cgroups, one idle
 * process in the same places), as cgroups and processes only: the killer needs no API objects.
 */
class ReferenceNode {
  private constructor(
    readonly node: BenchNode,
    readonly killer: ReferenceKiller,
  ) {}

  static async create(binary: string): Promise<ReferenceNode> {
    const node = BenchNode.create('latency-ref', BigInt(LIMIT_BYTES));
    const killer = ReferenceKiller.start(binary, node.cgroup.path);
    const reference = new ReferenceNode(node, killer);
    try {
      const holder = await AllocatorProcess.start(node.cgroup, `${podCgroup(syntheticUid(0))}/ballast`, { mode: 'asap', rateBytesPerSecond: 0, maxBytes: BALLAST_BYTES, usagePath: node.usagePath });
      holder.go();
      await holder.whenDone();
      await reference.addIdle(0, LATENCY_POD_COUNT - 2, (i) => i % EMPTY_EVERY !== EMPTY_EVERY - 1);
    } catch (err) {
      await reference.destroy();
      throw err;
    }
    return reference;
  }

  async addIdle(from: number, to: number, hasProcess: (i: number) => boolean): Promise<void> {
    const idle: Promise<unknown>[] = [];
    for (let i = from; i < to; i++) {
      const relative = `${podCgroup(syntheticUid(1 + i))}/main`;
      if (!hasProcess(i)) {
        this.node.cgroup.mkdir(relative);
        continue;
      }
      idle.push(this.node.cgroup.spawnIdle(relative));
      if (idle.length >= 50) await Promise.all(idle.splice(0));
    }
    await Promise.all(idle);
  }

  async destroy(): Promise<void> {
    await this.killer.stop();
    await this.node.destroy();
  }
}

/** One reaction of the reference killer: the agent's threshold (memory.available 256Mi) on its node, crossed the same way. */
async function referenceIteration(reference: ReferenceNode, index: number, markPath: string): Promise<ReferenceSample> {
  const uid = syntheticUid(100_000 + index);
  const relative = `${podCgroup(uid)}/main`;
  const { node, killer } = reference;
  let child: SteppingChild | null = null;
  try {
    child = await SteppingChild.start(node.cgroup, relative, node.cgroup.path, markPath);
    // The usage at which memory.available (capacity − working set) drops below the threshold.
    const usageBytes = BigInt(LIMIT_BYTES - THRESHOLD_BYTES) + node.inactiveFileBytes();
    await killer.arm(usageBytes, node.cgroup.resolve(relative));
    const crossedNs = await child.cross(usageBytes);
    const kill = await killer.killed(5000);
    const exited = await Promise.race([child.process.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000))]);
    if (kill === null) {
      await killer.disarm();
      throw new Error('the reference killer issued no kill within 5 s');
    }
    if (crossedNs === null) throw new Error('the stepping pod died before it reported its crossing');
    const since = (ns: bigint | null | undefined): number | null => (ns === null || ns === undefined ? null : Number(ns - crossedNs) / 1e6);
    return { toNotified: since(kill.notifiedNs), toTermination: since(kill.killIssuedNs), toGone: since(exited?.atNs) };
  } finally {
    if (child !== null) await node.cgroup.kill([child.process]);
    node.cgroup.remove(podCgroup(uid));
  }
}

/** What the reference collects in one scenario. */
class ReferenceRun {
  readonly samples: ReferenceSample[] = [];
  readonly failures: string[] = [];

  async run(reference: ReferenceNode, index: number, key: ScenarioKey, context: PartContext): Promise<void> {
    throwIfInterrupted();
    try {
      const sample = await referenceIteration(reference, index, join(context.scratchDir, 'stepping-mark'));
      this.samples.push(sample);
      context.progress.note(`${key}, reference: crossing -> notified ${fmt(sample.toNotified)} ms, -> kill ${fmt(sample.toTermination)} ms`);
    } catch (err) {
      this.failures.push(errorMessage(err));
      context.progress.note(`${key}, reference: failed: ${this.failures.at(-1) ?? ''}`);
    }
  }

  result(): ReferenceScenario {
    const stage = (key: keyof ReferenceSample): Distribution | null => distribution(this.samples.flatMap((s) => (s[key] === null ? [] : [s[key] as number])));
    return { iterations: this.samples.length + this.failures.length, failures: this.failures, samples: this.samples, stages: { toNotified: stage('toNotified'), toTermination: stage('toTermination'), toGone: stage('toGone') } };
  }
}

/** What a scenario collects while its iterations run (possibly interleaved with another's). */
class ScenarioRun {
  readonly samples: LatencySample[] = [];
  readonly failures: string[] = [];
  loadAverage: number | null = null;
  readonly reference = new ReferenceRun();
  constructor(
    readonly key: ScenarioKey,
    readonly label: string,
    readonly pods: number,
    readonly busyProcesses: number,
    readonly idleProcesses: number,
    readonly busyNice = 0,
  ) {}

  async run(agent: BenchAgent, node: BenchNode, standIn: ApiStandIn, nodeName: string, index: number, context: PartContext, step: () => [number, number]): Promise<void> {
    throwIfInterrupted();
    this.loadAverage ??= loadavg()[0] ?? 0;
    const [done, total] = step();
    try {
      const sample = await iteration(agent, node, standIn, nodeName, index, join(context.scratchDir, 'stepping-mark'));
      this.samples.push(sample);
      context.progress.step(done, total, `${this.key}: crossing -> notified ${fmt(sample.toNotified)} ms, -> local kill ${fmt(sample.toTermination)} ms, -> API ${fmt(sample.toApiRequest)} ms, -> gone ${fmt(sample.toGone)} ms`);
    } catch (err) {
      this.failures.push(errorMessage(err));
      context.progress.step(done, total, `${this.key}: failed: ${this.failures.at(-1) ?? ''}`, true);
    }
  }

  result(): LatencyScenario {
    const stage = (key: LatencyStage): Distribution | null => distribution(this.samples.flatMap((s) => (s[key] === null ? [] : [s[key] as number])));
    const inAgent = this.samples.flatMap((s) => (s.toTermination === null || s.toNotified === null ? [] : [s.toTermination - s.toNotified]));
    return {
      key: this.key,
      label: this.label,
      pods: this.pods,
      busyProcesses: this.busyProcesses,
      ...(this.busyProcesses > 0 ? { busyNice: this.busyNice } : {}),
      idleProcesses: this.idleProcesses,
      iterations: this.samples.length + this.failures.length,
      failures: this.failures,
      samples: this.samples,
      stages: { toNotified: stage('toNotified'), toShortcut: stage('toShortcut'), toTermination: stage('toTermination'), toApiRequest: stage('toApiRequest'), toGone: stage('toGone') },
      notifiedToTermination: distribution(inAgent),
      shortcutKills: this.samples.filter((s) => s.toShortcut !== null).length,
      killPathKills: this.samples.filter((s) => s.byKillPath === true).length,
      loadAverage: this.loadAverage ?? 0,
      ...(this.reference.samples.length + this.reference.failures.length > 0 ? { reference: this.reference.result() } : {}),
    };
  }
}

// The notifier alone, as bench/notifier-latency.ts measures it: a threshold armed 2 MiB above the
// current usage, crossed by the stepping child, over and over. The fake clock only lets each
// re-arm through the kubelet's 10 s re-arm interval.
async function notifierAlone(crossings: number, progress: PartContext['progress'], markPath: string): Promise<ReactionLatencyData['notifierAlone']> {
  const sandbox = BenchCgroup.create('notifier', 2048n * BigInt(MiB));
  const clock = new FakeClock();
  const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'memcg-v1' }), { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: sandbox.name, podCgroupRoot: `${sandbox.name}/kubepods`, procRoot: '/proc', clock, logger: silentLogger }) as MemcgV1Notifier;
  const warmup = 5;
  const latenciesMs: number[] = [];
  const armingMs: number[] = [];
  try {
    const child = await SteppingChild.start(sandbox, 'stepper', sandbox.path, markPath);
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
  estimateMs: (quick) => 40_000 + 4 * iterationsFor(quick) * 800 + crossingsFor(quick) * 100,
  unavailable: () => cgroupV1Unavailable(),
  async run(context: PartContext): Promise<ReactionLatencyData> {
    const iterations = iterationsFor(context.quick);
    const busyNice = busyNiceFromEnv();
    const referenceSkipped = referenceReaderUnavailable();
    const total = 4 * iterations;
    let done = 0;
    const step = (): [number, number] => [++done, total];
    const nodeName = 'latency-node';
    const standIn = await startApiStandIn();
    const node = BenchNode.create('latency', BigInt(LIMIT_BYTES));
    let agent: BenchAgent | null = null;
    let reference: ReferenceNode | null = null;
    let stopBusy: (() => Promise<void>) | null = null;
    const scenarios: ScenarioRun[] = [];
    // Each of the agent's iterations is followed by one of the reference killer's, in the same conditions.
    const both = async (scenario: ScenarioRun, index: number): Promise<void> => {
      await scenario.run(agent as BenchAgent, node, standIn, nodeName, index, context, step);
      if (reference !== null) await scenario.reference.run(reference, index, scenario.key, context);
    };
    try {
      const { idleProcesses } = await populateNode(node, standIn, nodeName);
      if (referenceSkipped === null) reference = await ReferenceNode.create(buildReferenceKiller(context.benchDir, context.scratchDir));
      else context.progress.note(`reference killer skipped: ${referenceSkipped}`);
      agent = await startBenchAgent({ node, standIn, nodeName, variant: VARIANT, thresholdQuantity: THRESHOLD, scratchDir: context.scratchDir });
      context.progress.note(`sandbox node ${node.name}: ${LATENCY_POD_COUNT} pods, ${idleProcesses} idle processes, usage ${fmt(Number(node.usageBytes()) / MiB)} MiB of ${LIMIT_BYTES / MiB} MiB`);
      const idle = new ScenarioRun('idle-110', `${LATENCY_POD_COUNT} pods, idle machine`, LATENCY_POD_COUNT, 0, idleProcesses);
      const busyLabel = `${LATENCY_POD_COUNT} pods, ${BUSY_PROCESSES} busy processes${busyNice === 0 ? '' : ` at nice ${busyNice}`} (a busy node)`;
      const busy = new ScenarioRun('busy-110', busyLabel, LATENCY_POD_COUNT, BUSY_PROCESSES, idleProcesses, busyNice);
      scenarios.push(idle, busy);
      let index = 0;
      for (let block = 0; block * LATENCY_BLOCK < iterations; block++) {
        const count = Math.min(LATENCY_BLOCK, iterations - block * LATENCY_BLOCK);
        for (let i = 0; i < count; i++) await both(idle, index++);
        stopBusy = await startBusyProcesses(BUSY_PROCESSES, busyNice);
        for (let i = 0; i < count; i++) await both(busy, index++);
        await stopBusy();
        stopBusy = null;
      }
      // The same node grown to 1,000 pods (the ballast and the stepping pod included); the reference's too.
      const added = await addIdlePods(node, standIn, nodeName, LATENCY_POD_COUNT - 2, LARGE_POD_COUNT - 2, (i) => i % LARGE_PROCESS_EVERY === 0);
      await reference?.addIdle(LATENCY_POD_COUNT - 2, LARGE_POD_COUNT - 2, (i) => i % LARGE_PROCESS_EVERY === 0);
      await agent.waitForPod(added.lastUid, true, 60_000);
      const large = new ScenarioRun('idle-1000', `${LARGE_POD_COUNT} pods, idle machine`, LARGE_POD_COUNT, 0, idleProcesses + added.idleProcesses);
      const largeBusy = new ScenarioRun('busy-1000', `${LARGE_POD_COUNT} pods, ${BUSY_PROCESSES} busy processes${busyNice === 0 ? '' : ` at nice ${busyNice}`}`, LARGE_POD_COUNT, BUSY_PROCESSES, idleProcesses + added.idleProcesses, busyNice);
      scenarios.push(large, largeBusy);
      context.progress.note(`sandbox node grown to ${LARGE_POD_COUNT} pods, ${large.idleProcesses} idle processes, usage ${fmt(Number(node.usageBytes()) / MiB)} MiB`);
      for (let block = 0; block * LATENCY_BLOCK < iterations; block++) {
        const count = Math.min(LATENCY_BLOCK, iterations - block * LATENCY_BLOCK);
        for (let i = 0; i < count; i++) await both(large, index++);
        stopBusy = await startBusyProcesses(BUSY_PROCESSES, busyNice);
        for (let i = 0; i < count; i++) await both(largeBusy, index++);
        await stopBusy();
        stopBusy = null;
      }
    } finally {
      await stopBusy?.();
      await agent?.stop();
      await standIn.stop();
      await reference?.destroy();
      await node.destroy();
    }
    return {
      scenarios: scenarios.map((s) => s.result()),
      ...(referenceSkipped === null ? {} : { referenceSkipped }),
      notifierAlone: await notifierAlone(crossingsFor(context.quick), context.progress, join(context.scratchDir, 'stepping-mark')),
    };
  },
};
