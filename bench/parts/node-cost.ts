// Part 3, cost as the node grows: one synchronize pass — observe (the cgroup observer reading real
// pod cgroups of a sandbox node) and decide (EvictionManager.synchronize on that Summary and the
// matching Pod objects) — with 10, 110, 500 and 1,000 pods, reported separately and together,
// wall time and CPU time: a full read (every pod's memory and processes, as the full read once a
// minute and every pass without a plan read them); the C reference reader repeating exactly the
// file operations of one recorded full read (the floor); and the passes as the loop runs them,
// reading the pods only as the decision needs them: a pass woken by a memory notification on a
// calm node and on one where a memory threshold is met (every pod's memory read, no process
// count), and the 10 s housekeeping pass on its own cadence (a fake clock 10 s on per pass, so
// one pass in six is the full read). (`replay` throughput is part 9, bench/parts/replay.ts.) Built on
// bench/observe-bench.ts (same pod layout: an app and a pause container cgroup per pod, a tiny idle
// process in one pod of ten).

import { systemClock, type Clock } from '../../src/api/clock.js';
import { ManualClock } from '../../src/api/manual-clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { DEFAULT_HOUSEKEEPING_INTERVAL_MS } from '../../src/config/defaults.js';
import { parseConfigText } from '../../src/config/load.js';
import type { ObservePlan } from '../../src/daemon/ports.js';
import { EvictionManager } from '../../src/eviction/manager.js';
import type { CgroupObserver } from '../../src/observe/cgroup-observer.js';
import { errorMessage } from '../../src/errors.js';
import { cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { BenchNode } from '../lib/bench-node.js';
import { benchPod, containerCgroup, podCgroup, syntheticUid } from '../lib/bench-pods.js';
import { throwIfInterrupted } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { buildReferenceReader, countOps, RecordingHostFs, referenceReaderUnavailable, runReferenceReader } from '../lib/reference-reader.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';

export const COST_POD_COUNTS = [10, 110, 500, 1000];
const WARMUP_PASSES = 10;
const NODE_LIMIT_BYTES = 4n << 30n;
const IDLE_EVERY = 10;

const CALM_CONFIG = 'evictionHard:\n  memory.available: 256Mi\nenforceNodeAllocatable: []\n';
// A threshold above the node's capacity: met on every pass, so every pass ranks all the pods
// and builds the eviction (the worst case for decide).
const PRESSURE_CONFIG = 'evictionHard:\n  memory.available: 64Gi\nenforceNodeAllocatable: []\n';

export interface CostPoint {
  readonly pods: number;
  readonly passes: number;
  readonly observe: Distribution | null;
  readonly observeCpu: Distribution | null;
  /** The part of observe's CPU time spent in the kernel (reading cgroup files). */
  readonly observeSystemCpu: Distribution | null;
  /**
   * Observe in a pass that reads every pod's memory but counts no process: a pass woken by a memory
   * notification with a memory threshold met (before reduced reads: every pass woken by a
   * notification, which reused the counts of the last housekeeping pass).
   */
  readonly observeReusingCounts: Distribution | null;
  /** The passes as the loop runs them, reading the pods only as the decision needs them (absent before they did). */
  readonly loopPasses?: LoopPasses;
  readonly decide: Distribution | null;
  readonly decideUnderPressure: Distribution | null;
  readonly total: Distribution | null;
  readonly totalUnderPressure: Distribution | null;
  /** Pods the observer found stats for in the last pass (should equal `pods`). */
  readonly podsObserved: number;
  /** Passes under pressure that produced an eviction (should be all of them). */
  readonly pressurePassesEvicting: number;
  /** The C reference reader repeating one recorded full read, or why it did not run. */
  readonly reference?: ReferenceResult;
  /** The same for one observe that reads every pod's memory and no process (absent before reduced reads). */
  readonly referenceMemoryOnly?: ReferenceResult;
}

/** A pass as the loop runs it: observe with the engine's plan, then decide; wall and CPU, ms. */
export interface LoopPass {
  readonly total: Distribution | null;
  readonly cpu: Distribution | null;
  /** Passes that read the pods' memory (a threshold met, or the full read due). */
  readonly podReads: number;
}

export interface LoopPasses {
  /** Woken by a memory notification, no threshold met: the node's figures only. */
  readonly notifiedCalm: LoopPass;
  /** Woken by a memory notification with a memory threshold met: every pod's memory too, for the ranking. */
  readonly notifiedUnderPressure: LoopPass;
  /** The housekeeping pass, 10 s apart on a fake clock: one in six is the full read (every 60 s). */
  readonly housekeeping: LoopPass;
  /** The housekeeping passes that were full reads. */
  readonly housekeepingFullRead: LoopPass;
}

export type ReferenceResult =
  | { readonly kind: 'measured'; readonly passes: number; readonly passMs: Distribution | null; readonly cpuPerPassMs: number; readonly ops: Readonly<Record<string, number>> }
  | { readonly kind: 'skipped' | 'failed'; readonly reason: string };

export interface NodeCostData {
  readonly points: readonly CostPoint[];
  /** Least-squares line through the median totals: cost per pod and fixed cost (ms). */
  readonly fit: { readonly perPodMs: number; readonly fixedMs: number; readonly r2: number } | null;
}

const passesFor = (quick: boolean): number => (quick ? 20 : 300);

async function populate(node: BenchNode, count: number): Promise<Pod[]> {
  const pods: Pod[] = [];
  const idle: Promise<unknown>[] = [];
  for (let i = 0; i < count; i++) {
    const pod = benchPod({ name: `pod-${i}`, nodeName: 'cost-node', memoryRequest: '64Mi', uid: syntheticUid(i) });
    pods.push(pod);
    node.cgroup.mkdir(containerCgroup(pod));
    const pause = `${podCgroup(syntheticUid(i))}/pause${i.toString(16).padStart(59, '0')}`;
    node.cgroup.mkdir(pause);
    if (i % IDLE_EVERY === 0) idle.push(node.cgroup.spawnIdle(pause));
  }
  await Promise.all(idle);
  return pods;
}

// One more observe, recorded, then repeated by the C reference reader as many times.
async function measureReference(observer: CgroupObserver, recorder: RecordingHostFs, pods: readonly Pod[], passes: number, context: PartContext): Promise<ReferenceResult> {
  const unavailable = referenceReaderUnavailable();
  if (unavailable !== null) return { kind: 'skipped', reason: unavailable };
  try {
    const binary = buildReferenceReader(context.benchDir, context.scratchDir);
    recorder.recording = [];
    await observer.observe(pods);
    const ops = recorder.recording;
    recorder.recording = null;
    const measured = runReferenceReader(binary, ops, passes);
    return { kind: 'measured', passes, passMs: measured.passMs, cpuPerPassMs: measured.cpuPerPassMs, ops: countOps(ops) };
  } catch (err) {
    return { kind: 'failed', reason: errorMessage(err) };
  }
}

// The plan the loop gives its observer: the engine's own.
const planOf = (manager: EvictionManager, pods: readonly Pod[]): ObservePlan => ({ podStatsNeeded: (preliminary) => manager.podStatsNeeded({ ...preliminary, pods }) });

/** Passes as the loop runs them, on one observer and one engine of their own. */
class LoopPassSeries {
  private readonly wallMs: number[] = [];
  private readonly cpuMs: number[] = [];
  private readonly fullWallMs: number[] = [];
  private readonly fullCpuMs: number[] = [];
  private podReads = 0;

  constructor(
    private readonly observer: CgroupObserver,
    private readonly manager: EvictionManager,
    private readonly clock: Clock,
  ) {}

  async pass(pods: readonly Pod[], measured: boolean): Promise<void> {
    const startedMs = performance.now();
    const cpu = process.cpuUsage();
    const observation = await this.observer.observe(pods, planOf(this.manager, pods));
    this.manager.synchronize({ nowMs: this.clock.nowMs(), summary: observation.summary, pods, dedicatedImageFs: observation.dedicatedImageFs, splitContainerFs: observation.splitContainerFs });
    const cpuUsed = process.cpuUsage(cpu);
    if (!measured) return;
    const wallMs = performance.now() - startedMs;
    const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000;
    this.wallMs.push(wallMs);
    this.cpuMs.push(cpuMs);
    if (observation.podStatsRead?.memory !== true) return;
    this.podReads++;
    if (observation.podStatsRead.processes) {
      this.fullWallMs.push(wallMs);
      this.fullCpuMs.push(cpuMs);
    }
  }

  result(): LoopPass {
    return { total: distribution(this.wallMs), cpu: distribution(this.cpuMs), podReads: this.podReads };
  }

  fullReads(): LoopPass {
    return { total: distribution(this.fullWallMs), cpu: distribution(this.fullCpuMs), podReads: this.fullWallMs.length };
  }

  close(): void {
    this.observer.close();
  }
}

async function measurePoint(count: number, passes: number, context: PartContext, done: () => void): Promise<CostPoint> {
  const node = BenchNode.create(`cost-${count}`, NODE_LIMIT_BYTES);
  try {
    const pods = await populate(node, count);
    const common = { nodeName: 'cost-node', scratchDir: context.scratchDir, notifierMode: 'disabled' as const, clock: systemClock, logger: silentLogger };
    // A full read counts every pod's processes; a read of memory only counts none (as a pass woken
    // by a notification with a memory threshold met).
    const recorder = new RecordingHostFs();
    const { observer } = node.adapters({ ...common, processCountIntervalMs: 0, hostFs: recorder });
    const memoryOnlyRecorder = new RecordingHostFs();
    const { observer: memoryOnlyObserver } = node.adapters({ ...common, processCountIntervalMs: 3600_000, hostFs: memoryOnlyRecorder });
    const calm = new EvictionManager(parseConfigText(CALM_CONFIG, 'calm').eviction);
    const pressure = new EvictionManager(parseConfigText(PRESSURE_CONFIG, 'pressure').eviction);
    const observeMs: number[] = [];
    const observeCpuMs: number[] = [];
    const observeSystemMs: number[] = [];
    const decideMs: number[] = [];
    const pressureMs: number[] = [];
    const reusingMs: number[] = [];
    let podsObserved = 0;
    let evicting = 0;
    let lastMs = 0;
    for (let pass = 0; pass < WARMUP_PASSES + passes; pass++) {
      if (pass % 20 === 0) throwIfInterrupted();
      // Each pass's stats carry a later millisecond than the last (the engine ignores stale stats).
      while (Date.now() <= lastMs) await new Promise((resolve) => setImmediate(resolve));
      const startedMs = performance.now();
      const cpu = process.cpuUsage();
      const observation = await observer.observe(pods);
      const cpuUsed = process.cpuUsage(cpu);
      const observedMs = performance.now();
      const nowMs = Date.now();
      lastMs = nowMs;
      const input = { nowMs, summary: observation.summary, pods, dedicatedImageFs: observation.dedicatedImageFs, splitContainerFs: observation.splitContainerFs };
      calm.synchronize(input);
      const decidedMs = performance.now();
      const result = pressure.synchronize(input);
      const pressuredMs = performance.now();
      await memoryOnlyObserver.observe(pods);
      const reusedMs = performance.now() - pressuredMs;
      if (pass < WARMUP_PASSES) continue;
      reusingMs.push(reusedMs);
      observeMs.push(observedMs - startedMs);
      observeCpuMs.push((cpuUsed.user + cpuUsed.system) / 1000);
      observeSystemMs.push(cpuUsed.system / 1000);
      decideMs.push(decidedMs - observedMs);
      pressureMs.push(pressuredMs - decidedMs);
      podsObserved = observation.summary.pods?.filter((p) => p.memory !== undefined).length ?? 0;
      if (result.evictions.length > 0) evicting++;
      done();
    }
    const reference = await measureReference(observer, recorder, pods, passes, context);
    const referenceMemoryOnly = await measureReference(memoryOnlyObserver, memoryOnlyRecorder, pods, passes, context);
    // Their kept-open files given back before the next observers keep theirs: the process may keep
    // 20,000 open at 1,000 pods, about three observers' worth.
    observer.close();
    memoryOnlyObserver.close();
    const loopPasses = await measureLoopPasses(node, pods, passes, common, done);
    return {
      reference,
      referenceMemoryOnly,
      pods: count,
      passes,
      observe: distribution(observeMs),
      observeCpu: distribution(observeCpuMs),
      observeSystemCpu: distribution(observeSystemMs),
      observeReusingCounts: distribution(reusingMs),
      loopPasses,
      decide: distribution(decideMs),
      decideUnderPressure: distribution(pressureMs),
      total: distribution(observeMs.map((ms, i) => ms + (decideMs[i] as number))),
      totalUnderPressure: distribution(observeMs.map((ms, i) => ms + (pressureMs[i] as number))),
      podsObserved,
      pressurePassesEvicting: evicting,
    };
  } finally {
    await node.destroy();
  }
}

// The loop's passes, alternated pass by pass: woken by notifications (no full read comes due after
// the first, warm-up pass), and housekeeping every 10 s on a clock of its own.
async function measureLoopPasses(node: BenchNode, pods: readonly Pod[], passes: number, common: Omit<Parameters<BenchNode['adapters']>[0], 'processCountIntervalMs'>, done: () => void): Promise<LoopPasses> {
  const engine = (config: string): EvictionManager => new EvictionManager(parseConfigText(config, 'loop').eviction);
  const observerOf = (clock: Clock, observer: NonNullable<Parameters<BenchNode['adapters']>[0]['observer']>): CgroupObserver => node.adapters({ ...common, clock, processCountIntervalMs: 0, observer }).observer;
  const housekeepingClock = new ManualClock(Date.now());
  // A calm pass keeps only the node's files open (its one full read, the first, opens the pods' afresh).
  const notifiedCalm = new LoopPassSeries(observerOf(systemClock, { fullReadIntervalMs: Number.POSITIVE_INFINITY, maxOpenCgroupFiles: 64 }), engine(CALM_CONFIG), systemClock);
  const notifiedUnderPressure = new LoopPassSeries(observerOf(systemClock, { fullReadIntervalMs: Number.POSITIVE_INFINITY }), engine(PRESSURE_CONFIG), systemClock);
  const housekeeping = new LoopPassSeries(observerOf(housekeepingClock, {}), engine(CALM_CONFIG), housekeepingClock);
  try {
    for (let pass = 0; pass < WARMUP_PASSES + passes; pass++) {
      if (pass % 20 === 0) throwIfInterrupted();
      const measured = pass >= WARMUP_PASSES;
      await notifiedCalm.pass(pods, measured);
      await notifiedUnderPressure.pass(pods, measured);
      housekeepingClock.advanceTo(housekeepingClock.nowMs() + DEFAULT_HOUSEKEEPING_INTERVAL_MS);
      await housekeeping.pass(pods, measured);
      if (measured) done();
    }
    return { notifiedCalm: notifiedCalm.result(), notifiedUnderPressure: notifiedUnderPressure.result(), housekeeping: housekeeping.result(), housekeepingFullRead: housekeeping.fullReads() };
  } finally {
    for (const series of [notifiedCalm, notifiedUnderPressure, housekeeping]) series.close();
  }
}

function linearFit(points: readonly CostPoint[]): NodeCostData['fit'] {
  const xy = points.flatMap((p) => (p.total === null ? [] : [[p.pods, p.total.median] as const]));
  if (xy.length < 2) return null;
  const n = xy.length;
  const meanX = xy.reduce((s, [x]) => s + x, 0) / n;
  const meanY = xy.reduce((s, [, y]) => s + y, 0) / n;
  const sxx = xy.reduce((s, [x]) => s + (x - meanX) ** 2, 0);
  const sxy = xy.reduce((s, [x, y]) => s + (x - meanX) * (y - meanY), 0);
  const slope = sxy / sxx;
  const intercept = meanY - slope * meanX;
  const ssTot = xy.reduce((s, [, y]) => s + (y - meanY) ** 2, 0);
  const ssRes = xy.reduce((s, [x, y]) => s + (y - (intercept + slope * x)) ** 2, 0);
  return { perPodMs: slope, fixedMs: intercept, r2: ssTot === 0 ? 1 : 1 - ssRes / ssTot };
}

export const nodeCostPart: BenchPart<NodeCostData> = {
  name: 'node-cost',
  title: 'Cost as the node grows',
  estimateMs: (quick) => (quick ? 30_000 : 260_000),
  unavailable: () => cgroupV1Unavailable(),
  async run(context: PartContext): Promise<NodeCostData> {
    const passes = passesFor(context.quick);
    // Each size's full reads, then its passes as the loop runs them.
    const total = COST_POD_COUNTS.length * passes * 2;
    let done = 0;
    const points: CostPoint[] = [];
    for (const count of COST_POD_COUNTS) {
      throwIfInterrupted();
      const point = await measurePoint(count, passes, context, () => context.progress.step(++done, total, `${count} pods`));
      points.push(point);
      const loop = point.loopPasses;
      context.progress.note(
        `${count} pods: full read ${fmt(point.total?.median)} ms (CPU ${fmt(point.observeCpu?.median)} ms, C ${point.reference?.kind === 'measured' ? fmt(point.reference.cpuPerPassMs) : '–'} ms); notified pass ${fmt(loop?.notifiedCalm.total?.median)} ms, under memory pressure ${fmt(loop?.notifiedUnderPressure.total?.median)} ms; 10 s pass ${fmt(loop?.housekeeping.total?.median)} ms (full read ${fmt(loop?.housekeepingFullRead.total?.median)} ms)`,
      );
    }
    return { points, fit: linearFit(points) };
  },
};
