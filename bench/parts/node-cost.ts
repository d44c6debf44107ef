// Part 3, cost as the node grows: one synchronize pass — observe (the cgroup observer reading real
// pod cgroups of a sandbox node) and decide (EvictionManager.synchronize on that Summary and the
// matching Pod objects) — with 10, 110, 500 and 1,000 pods, reported separately and together,
// wall time and CPU time, for a housekeeping pass (every pod's processes counted) and for a pass
// woken by a notification (counts reused, as `run` configures the observer); the C reference
// reader repeating exactly the file operations of one recorded housekeeping observe (the floor);
// and `replay` throughput on a 10,000-step recording of 110 pods, for the real command end to end
// and in process. Built on bench/observe-bench.ts (same pod layout: an app and a pause container
// cgroup per pod, a tiny idle process in one pod of ten).

import { spawn } from 'node:child_process';
import { createReadStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { openRecording, replayStream } from '../../src/cli/replay.js';
import { parseConfigText } from '../../src/config/load.js';
import { EvictionManager } from '../../src/eviction/manager.js';
import { parseReplayLine } from '../../src/replay/input.js';
import { boundedLines } from '../../src/replay/lines.js';
import { ReplayRunner } from '../../src/replay/runner.js';
import type { CgroupObserver } from '../../src/observe/cgroup-observer.js';
import { errorMessage } from '../../src/errors.js';
import { cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { BenchNode } from '../lib/bench-node.js';
import { benchPod, containerCgroup, podCgroup, syntheticUid } from '../lib/bench-pods.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { RECORDING_CONFIG, writeRecording } from '../lib/recording.js';
import { buildReferenceReader, countOps, RecordingHostFs, referenceReaderUnavailable, runReferenceReader } from '../lib/reference-reader.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';

export const COST_POD_COUNTS = [10, 110, 500, 1000];
const WARMUP_PASSES = 10;
const NODE_LIMIT_BYTES = 4n << 30n;
const IDLE_EVERY = 10;
export const REPLAY_PODS = 110;

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
  /** Observe in a pass woken by a notification: process counts reused from the last housekeeping pass. */
  readonly observeReusingCounts: Distribution | null;
  readonly decide: Distribution | null;
  readonly decideUnderPressure: Distribution | null;
  readonly total: Distribution | null;
  readonly totalUnderPressure: Distribution | null;
  /** Pods the observer found stats for in the last pass (should equal `pods`). */
  readonly podsObserved: number;
  /** Passes under pressure that produced an eviction (should be all of them). */
  readonly pressurePassesEvicting: number;
  /** The C reference reader repeating one recorded housekeeping observe, or why it did not run. */
  readonly reference?: ReferenceResult;
}

export type ReferenceResult =
  | { readonly kind: 'measured'; readonly passes: number; readonly passMs: Distribution | null; readonly cpuPerPassMs: number; readonly ops: Readonly<Record<string, number>> }
  | { readonly kind: 'skipped' | 'failed'; readonly reason: string };

export interface ReplayThroughput {
  readonly steps: number;
  readonly pods: number;
  readonly recordingBytes: number;
  readonly runs: number;
  /** `node dist/src/main.js replay` on the recording, spawn to exit. */
  readonly cliSeconds: Distribution | null;
  /** The same command on an empty recording: start-up alone. */
  readonly cliStartupSeconds: Distribution | null;
  /** replayStream in process: read, validate, decide, write. */
  readonly inProcessSeconds: Distribution | null;
  /** ReplayRunner.step alone (the engine, parse excluded). */
  readonly engineSeconds: Distribution | null;
  /**
   * Reading the recording's lines as replay does and `JSON.parse` of each, nothing else: the floor
   * of any replay that parses its JSON on one thread (absent from results before it was measured).
   */
  readonly parseOnlySeconds?: Distribution | null;
  readonly outputLines: number;
  readonly evictionLines: number;
}

export interface NodeCostData {
  readonly points: readonly CostPoint[];
  /** Least-squares line through the median totals: cost per pod and fixed cost (ms). */
  readonly fit: { readonly perPodMs: number; readonly fixedMs: number; readonly r2: number } | null;
  readonly replay: ReplayThroughput;
}

const passesFor = (quick: boolean): number => (quick ? 20 : 300);
const replayStepsFor = (quick: boolean): number => (quick ? 1000 : 10_000);
const replayRunsFor = (quick: boolean): number => (quick ? 1 : 3);

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

// One more housekeeping observe, recorded, then repeated by the C reference reader as many times.
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

async function measurePoint(count: number, passes: number, context: PartContext, done: () => void): Promise<CostPoint> {
  const node = BenchNode.create(`cost-${count}`, NODE_LIMIT_BYTES);
  try {
    const pods = await populate(node, count);
    const common = { nodeName: 'cost-node', scratchDir: context.scratchDir, notifierMode: 'disabled' as const, clock: systemClock, logger: silentLogger };
    // A housekeeping pass counts every pod's processes; a pass woken by a notification reuses the
    // counts of the last housekeeping pass (as `run` configures the observer).
    const recorder = new RecordingHostFs();
    const { observer } = node.adapters({ ...common, processCountIntervalMs: 0, hostFs: recorder });
    const { observer: notifiedObserver } = node.adapters({ ...common, processCountIntervalMs: 3600_000 });
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
      await notifiedObserver.observe(pods);
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
    observer.close();
    notifiedObserver.close();
    return {
      reference,
      pods: count,
      passes,
      observe: distribution(observeMs),
      observeCpu: distribution(observeCpuMs),
      observeSystemCpu: distribution(observeSystemMs),
      observeReusingCounts: distribution(reusingMs),
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

/** Runs the CLI; resolves with its wall time (s) and the lines it printed. */
function timeCli(mainJs: string, args: readonly string[]): Promise<{ seconds: number; lines: number; evictionLines: number }> {
  return new Promise((resolve, reject) => {
    const startedMs = performance.now();
    const child = trackChild(spawn(process.execPath, [mainJs, ...args], { stdio: ['ignore', 'pipe', 'pipe'] }));
    let lines = 0;
    let evictionLines = 0;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines++;
      if (!line.includes('"evictions":[]')) evictionLines++;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) reject(new Error(`replay exited with ${code}: ${stderr.trim()}`));
      else resolve({ seconds: (performance.now() - startedMs) / 1000, lines, evictionLines });
    });
  });
}

async function inProcessReplay(configText: string, recording: string): Promise<{ seconds: number; lines: number }> {
  const config = parseConfigText(configText, 'replay.yaml');
  let lines = 0;
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const byte of chunk) if (byte === 10) lines++;
      callback();
    },
  });
  const startedMs = performance.now();
  await replayStream(config.eviction, openRecording(recording), sink);
  return { seconds: (performance.now() - startedMs) / 1000, lines };
}

// The engine alone: lines are parsed outside the timed region, one step at a time.
async function engineOnly(configText: string, recording: string): Promise<number> {
  const runner = new ReplayRunner(parseConfigText(configText, 'replay.yaml').eviction);
  let engineMs = 0;
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(recording), crlfDelay: Infinity })) {
    line++;
    const step = parseReplayLine(text, line, runner.previousTimeMs);
    const startedMs = performance.now();
    runner.step(step);
    engineMs += performance.now() - startedMs;
  }
  return engineMs / 1000;
}

// What parsing costs on its own: the same line reader as replay, JSON.parse, no validation.
async function parseOnly(recording: string): Promise<{ seconds: number; lines: number }> {
  const startedMs = performance.now();
  let lines = 0;
  for await (const { text } of boundedLines(openRecording(recording) as AsyncIterable<Buffer>)) {
    if (JSON.parse(text) !== null) lines++;
  }
  return { seconds: (performance.now() - startedMs) / 1000, lines };
}

async function measureReplay(context: PartContext): Promise<ReplayThroughput> {
  const steps = replayStepsFor(context.quick);
  const runs = replayRunsFor(context.quick);
  const recording = join(context.scratchDir, 'recording.jsonl');
  const empty = join(context.scratchDir, 'empty.jsonl');
  const config = join(context.scratchDir, 'replay.yaml');
  writeFileSync(config, RECORDING_CONFIG);
  writeFileSync(empty, '');
  const recordingBytes = await writeRecording(recording, steps, REPLAY_PODS);
  context.progress.note(`replay: ${steps} steps, ${REPLAY_PODS} pods, ${fmt(recordingBytes / 2 ** 20)} MiB recording`);
  const cli: number[] = [];
  const startup: number[] = [];
  const inProcess: number[] = [];
  const engine: number[] = [];
  const parse: number[] = [];
  let outputLines = 0;
  let evictionLines = 0;
  for (let run = 0; run < runs; run++) {
    throwIfInterrupted();
    // Alternated, so a busy moment does not fall on one of them only.
    const full = await timeCli(context.mainJs, ['replay', '--config', config, recording]);
    cli.push(full.seconds);
    outputLines = full.lines;
    evictionLines = full.evictionLines;
    startup.push((await timeCli(context.mainJs, ['replay', '--config', config, empty])).seconds);
    const own = await inProcessReplay(RECORDING_CONFIG, recording);
    if (own.lines !== steps) throw new Error(`in-process replay printed ${own.lines} lines for ${steps} steps`);
    inProcess.push(own.seconds);
    engine.push(await engineOnly(RECORDING_CONFIG, recording));
    const parsed = await parseOnly(recording);
    if (parsed.lines !== steps) throw new Error(`parsing alone read ${parsed.lines} lines for ${steps} steps`);
    parse.push(parsed.seconds);
    context.progress.note(
      `replay run ${run + 1}/${runs}: CLI ${fmt(steps / full.seconds)} steps/s, in process ${fmt(steps / own.seconds)} steps/s, engine ${fmt(steps / (engine.at(-1) ?? 1))} steps/s, JSON.parse alone ${fmt(steps / parsed.seconds)} steps/s`,
    );
  }
  if (outputLines !== steps) throw new Error(`replay printed ${outputLines} lines for ${steps} steps`);
  return {
    steps,
    pods: REPLAY_PODS,
    recordingBytes,
    runs,
    cliSeconds: distribution(cli),
    cliStartupSeconds: distribution(startup),
    inProcessSeconds: distribution(inProcess),
    engineSeconds: distribution(engine),
    parseOnlySeconds: distribution(parse),
    outputLines,
    evictionLines,
  };
}

export const nodeCostPart: BenchPart<NodeCostData> = {
  name: 'node-cost',
  title: 'Cost as the node grows',
  estimateMs: (quick) => (quick ? 20_000 : 200_000),
  unavailable: () => cgroupV1Unavailable(),
  async run(context: PartContext): Promise<NodeCostData> {
    const passes = passesFor(context.quick);
    const total = COST_POD_COUNTS.length * passes;
    let done = 0;
    const points: CostPoint[] = [];
    for (const count of COST_POD_COUNTS) {
      throwIfInterrupted();
      const point = await measurePoint(count, passes, context, () => context.progress.step(++done, total, `${count} pods`));
      points.push(point);
      context.progress.note(
        `${count} pods: observe ${fmt(point.observe?.median)} ms, decide ${fmt(point.decide?.median)} ms (under pressure ${fmt(point.decideUnderPressure?.median)} ms), total ${fmt(point.total?.median)} ms median, ${fmt(point.total?.p99)} ms p99`,
      );
    }
    const replay = await measureReplay(context);
    return { points, fit: linearFit(points), replay };
  },
};
