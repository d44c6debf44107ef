// Part 1, the OOM race: does the agent stop a runaway pod before the kernel OOM killer does?
// Each agent variant gets its own sandbox node (a 1 GiB memory cgroup, hard memory.available
// threshold 256Mi, a few quiet pods) and its own long-lived agent; a fresh pod then allocates
// at a requested rate, and the run ends when its processes are gone, the OOM killer fired, or
// the timeout passed. Variants are alternated run by run, so a busy moment on the shared machine
// hits them all alike. Measured per run: the outcome, the rate actually achieved, the node's usage
// at the moment the kill was issued (overshoot past the threshold) and the peak usage. The C
// reference killer (bench/reference-killer.c) races beside variant (a) on a node of its own, the
// same threshold and quiet pods, in the same rotation: the physical limit the agent is compared with.

import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { errorMessage } from '../../src/errors.js';
import type { ApiStandIn } from '../../src/demo/api-stand-in.js';
import type { MemcgV1Notifier } from '../../src/notifier/memcg-v1-notifier.js';
import { startApiStandIn } from '../../src/demo/api-stand-in.js';
import { AllocatorProcess, rateBetween, burstableOomScoreAdj, type AllocationPlan } from '../lib/allocator.js';
import { cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { startBenchAgent, type AgentVariant, type BenchAgent } from '../lib/bench-agent.js';
import { BenchNode } from '../lib/bench-node.js';
import { BENCH_NAMESPACE, benchPod, containerCgroup, podCgroup } from '../lib/bench-pods.js';
import { throwIfInterrupted } from '../lib/cleanup.js';
import type { BenchPart, PartContext, PartResult } from '../lib/part.js';
import { watchPodDeletion } from '../lib/simulated-kubelet.js';
import { fmt, MiB } from '../lib/stats.js';
import { referenceReaderUnavailable } from '../lib/reference-reader.js';
import { buildReferenceKiller, ReferenceKiller } from '../lib/reference-killer.js';

export const RACE_LIMIT_BYTES = 1024 * MiB;
export const RACE_THRESHOLD = '256Mi';
export const RACE_THRESHOLD_BYTES = 256 * MiB;
/** The node usage at which memory.available drops below the threshold. */
const TRIGGER_USAGE_BYTES = RACE_LIMIT_BYTES - RACE_THRESHOLD_BYTES;
export const KILL_DELAY_MS = 1000;
const RUN_TIMEOUT_MS = 30_000;
const QUIET_PODS = 4;
// Each quiet pod is a Node process (~40 MiB of its own) holding this much more: together with the
// allocating pod's own start-up they bring the node to ~650 MiB (one allocating process), so it
// allocates ~115 MiB before it crosses the threshold (~75 MiB with two processes).
const QUIET_BYTES = 154 * MiB;
const QUIET_REQUEST_BYTES = 256 * MiB;
const ALLOCATOR_MAX_BYTES = 1536 * MiB;
/** The allocating pod's request: it goes far over it, so it ranks first for eviction. */
const ALLOCATOR_REQUEST_BYTES = 64 * MiB;
/**
 * The achieved rate is measured over this long either side of the threshold crossing (cut at the
 * start and at the kill or the OOM kill): the rate the race is actually run at. Measured closer
 * to the limit it would show the stall of the kernel's reclaim instead.
 */
const RATE_HALF_WINDOW_NS = 200_000_000n;

/** The variant the targets are about, and the one the reference races beside. */
export const HEADLINE_RACE_VARIANT = 'notifier-local';

export const RACE_VARIANTS: readonly AgentVariant[] = [
  { key: 'notifier-local', label: '(a) notifier + local termination', notifier: 'memcg-v1', localTermination: true, housekeepingIntervalMs: 10_000 },
  { key: 'notifier-api', label: '(b) notifier + API only', notifier: 'memcg-v1', localTermination: false, housekeepingIntervalMs: 10_000 },
  { key: 'poll10-local', label: '(c) 10 s polling + local termination', notifier: 'disabled', localTermination: true, housekeepingIntervalMs: 10_000 },
  { key: 'poll10-api', label: "(c') 10 s polling + API only", notifier: 'disabled', localTermination: false, housekeepingIntervalMs: 10_000 },
  { key: 'poll1-local', label: '(d) 1 s polling + local termination', notifier: 'disabled', localTermination: true, housekeepingIntervalMs: 1_000 },
  { key: 'poll1-api', label: "(d') 1 s polling + API only", notifier: 'disabled', localTermination: false, housekeepingIntervalMs: 1_000 },
];

/** The C reference killer, raced beside (a) as a column of its own: no agent, the kill as soon as the kernel's event comes. */
export const REFERENCE_VARIANT: AgentVariant = { key: 'reference-c', label: '(ref) C reference killer', notifier: 'memcg-v1', localTermination: true, housekeepingIntervalMs: 0 };

export interface RaceRate {
  readonly key: string;
  readonly label: string;
  /** The pod's total requested rate; null for as fast as possible. */
  readonly bytesPerSecond: number | null;
}

export const RACE_RATES: readonly RaceRate[] = [
  { key: '100MiBps', label: '100 MiB/s', bytesPerSecond: 100 * MiB },
  { key: '500MiBps', label: '500 MiB/s', bytesPerSecond: 500 * MiB },
  { key: '1GiBps', label: '1 GiB/s', bytesPerSecond: 1024 * MiB },
  { key: 'asap', label: 'as fast as possible', bytesPerSecond: null },
];

export const RACE_PROCESS_COUNTS = [1, 2] as const;

export type RaceOutcome = 'evicted' | 'oom' | 'timeout' | 'error';

/** One run. Times are milliseconds after the allocation started ("go"); null when it did not happen. */
export interface RaceRun {
  readonly variant: string;
  readonly rate: string;
  readonly processes: number;
  readonly run: number;
  readonly outcome: RaceOutcome;
  readonly error?: string;
  readonly baselineUsageBytes: number;
  /** The node's inactive page cache before the run (the threshold is crossed at limit − threshold + this). */
  readonly inactiveFileBytes: number;
  /** The pod's total rate within 200 ms either side of the threshold crossing (cut at go and at the kill or OOM kill), from its own reports. */
  readonly achievedBytesPerSecond: number | null;
  /** Its mean rate from go to the crossing. */
  readonly meanBytesPerSecond: number | null;
  /** When the node's usage reached the threshold, as the allocating process saw it (to within 256 KiB of touching). */
  readonly crossingMs: number | null;
  readonly notifiedMs: number | null;
  readonly terminatingMs: number | null;
  readonly requestingMs: number | null;
  readonly kubeletKillMs: number | null;
  /** The kill that ended the pod: local termination, or the simulated kubelet's. */
  readonly killIssuedMs: number | null;
  readonly usageAtKillBytes: number | null;
  /** Usage at the kill minus the usage at which the threshold is crossed (limit − threshold + inactive page cache). */
  readonly overshootAtKillBytes: number | null;
  /** memory.max_usage_in_bytes minus that same usage. */
  readonly peakOvershootBytes: number;
  readonly firstExitMs: number | null;
  /** The usage the notifier had armed when the run started (notifier variants). */
  readonly armedBytes: number | null;
  /** Every synchronize pass of the agent during the run: what it saw and decided. */
  readonly passes: readonly RacePass[];
  readonly oomKills: number;
  readonly failcnt: number;
  readonly exitSignals: readonly (string | null)[];
  /** The machine's 1-minute load average when the run ended (runs from before it was recorded have none). */
  readonly loadAverage?: number;
}

export interface RacePass {
  readonly atMs: number;
  readonly trigger: string;
  /** memory.available as the pass observed it, minus the threshold (negative: the threshold is met). */
  readonly marginBytes: number | null;
  /** Whether the pass decided to evict the allocating pod. */
  readonly evicting: boolean;
}

export interface OomRaceData {
  readonly limitBytes: number;
  readonly thresholdBytes: number;
  readonly killDelayMs: number;
  readonly timeoutMs: number;
  readonly runsPerCell: number;
  /** When variants were raced in separate runs: the runs per rate and process count of each. */
  readonly runsPerCellByVariant?: Readonly<Record<string, number>>;
  /** Where the runs of the variants not raced this time came from. */
  readonly keptFrom?: { readonly date: string; readonly revision: string | null; readonly loadAverage: number; readonly variants: readonly string[] };
  readonly quietPods: number;
  readonly quietBytes: number;
  readonly variants: readonly AgentVariant[];
  readonly rates: readonly RaceRate[];
  readonly processCounts: readonly number[];
  readonly runs: readonly RaceRun[];
  /** Quiet pods restarted because the OOM killer took one of them instead of the allocating pod. */
  readonly quietRestarts: number;
}

interface QuietPod {
  readonly relative: string;
  process: AllocatorProcess;
}

interface VariantNode {
  readonly variant: AgentVariant;
  readonly nodeName: string;
  readonly node: BenchNode;
  /** The agent; null on the reference killer's node. */
  readonly agent: BenchAgent | null;
  readonly killer: ReferenceKiller | null;
  readonly quiet: QuietPod[];
}

interface Cell {
  readonly rate: RaceRate;
  readonly processes: number;
}

const nsToMs = (ns: bigint | null, goNs: bigint): number | null => (ns === null ? null : Number(ns - goNs) / 1e6);

async function startQuiet(node: BenchNode, relative: string): Promise<AllocatorProcess> {
  const quiet = await AllocatorProcess.start(node.cgroup, relative, {
    mode: 'asap',
    rateBytesPerSecond: 0,
    maxBytes: QUIET_BYTES,
    usagePath: node.usagePath,
    oomScoreAdj: burstableOomScoreAdj(QUIET_REQUEST_BYTES, RACE_LIMIT_BYTES),
  });
  quiet.go();
  await quiet.whenDone();
  return quiet;
}

async function setUpVariant(variant: AgentVariant, standIn: ApiStandIn, scratchDir: string, referenceBinary: string | null = null): Promise<VariantNode> {
  const node = BenchNode.create(`race-${variant.key}`, BigInt(RACE_LIMIT_BYTES));
  const nodeName = `race-${variant.key}`;
  const quiet: QuietPod[] = [];
  for (let i = 0; i < QUIET_PODS; i++) {
    const pod = standIn.createPod(benchPod({ name: `quiet-${variant.key}-${i}`, nodeName, memoryRequest: `${QUIET_REQUEST_BYTES / MiB}Mi` }));
    const relative = containerCgroup(pod);
    quiet.push({ relative, process: await startQuiet(node, relative) });
  }
  if (referenceBinary !== null) return { variant, nodeName, node, agent: null, killer: ReferenceKiller.start(referenceBinary, node.cgroup.path), quiet };
  const agent = await startBenchAgent({ node, standIn, nodeName, variant, thresholdQuantity: RACE_THRESHOLD, scratchDir });
  return { variant, nodeName, node, agent, killer: null, quiet };
}

let podSequence = 0;

async function raceOnce(v: VariantNode, standIn: ApiStandIn, cell: Cell, run: number): Promise<{ result: RaceRun; quietRestarts: number }> {
  const { node, agent, killer, variant } = v;
  let quietRestarts = 0;
  for (const quiet of v.quiet) {
    if (quiet.process.alive) continue;
    quiet.process = await startQuiet(node, quiet.relative);
    quietRestarts++;
  }
  const name = `alloc-${variant.key}-${podSequence++}`;
  const pod = standIn.createPod(benchPod({ name, nodeName: v.nodeName, memoryRequest: `${ALLOCATOR_REQUEST_BYTES / MiB}Mi` }));
  const uid = pod.metadata.uid ?? randomUUID();
  const plan: AllocationPlan = {
    mode: cell.rate.bytesPerSecond === null ? 'asap' : 'paced',
    rateBytesPerSecond: (cell.rate.bytesPerSecond ?? 0) / cell.processes,
    maxBytes: ALLOCATOR_MAX_BYTES,
    usagePath: node.usagePath,
    oomScoreAdj: burstableOomScoreAdj(ALLOCATOR_REQUEST_BYTES, RACE_LIMIT_BYTES),
  };
  const allocators: AllocatorProcess[] = [];
  const base = { variant: variant.key, rate: cell.rate.key, processes: cell.processes, run };
  try {
    allocators.push(...(await Promise.all(Array.from({ length: cell.processes }, () => AllocatorProcess.start(node.cgroup, containerCgroup(pod), plan)))));
    await agent?.waitForPod(uid, true);
    node.resetCounters();
    const oomBefore = node.oomKills();
    const baselineUsageBytes = Number(node.usageBytes());
    // The threshold is on the working set (usage minus inactive page cache), as the notifier arms it.
    const inactiveFileBytes = Number(node.inactiveFileBytes());

    let goNs = process.hrtime.bigint();
    // Filled in by the hooks as the run goes (an object, so the closures' writes are seen).
    const marks = {
      notifiedNs: null as bigint | null,
      terminatingNs: null as bigint | null,
      requestingNs: null as bigint | null,
      kubeletKillNs: null as bigint | null,
      firstExitNs: null as bigint | null,
      usageAtKillBytes: null as number | null,
      passes: [] as RacePass[],
    };
    // Read synchronously just before the signal goes out: the usage the kill has to undo.
    const noteKill = (): void => {
      marks.usageAtKillBytes ??= Number(node.usageBytes());
    };
    const armed = agent !== null && 'armedThresholds' in agent.notifier ? (agent.notifier as MemcgV1Notifier).armedThresholds()[0] : undefined;
    const hooks: BenchAgent['hooks'] = {
      // The first wake-up: the kill path's thread's or the main thread's, reported in either order.
      notified: (atNs) => {
        if (atNs >= goNs && (marks.notifiedNs === null || atNs < marks.notifiedNs)) marks.notifiedNs = atNs;
      },
      decided: (result, trigger, atNs) => {
        if (atNs < goNs) return;
        const available = result.observations.get('memory.available')?.available;
        marks.passes.push({
          atMs: Number(atNs - goNs) / 1e6,
          trigger,
          marginBytes: available === undefined ? null : Number(available) - RACE_THRESHOLD_BYTES,
          evicting: result.evictions.some((e) => e.pod.metadata.uid === uid),
        });
      },
      terminating: (p, atNs, byKillPath) => {
        if (p.metadata.uid !== uid || marks.terminatingNs !== null) return;
        marks.terminatingNs = atNs;
        // The kill path's thread read the usage right before its signals, as the reference does.
        if (byKillPath !== undefined) marks.usageAtKillBytes ??= Number(byKillPath.usageBytes);
        else noteKill();
      },
      requesting: (p, atNs) => {
        if (p.metadata.uid === uid && marks.requestingNs === null) marks.requestingNs = atNs;
      },
    };
    if (agent !== null) agent.hooks = hooks;
    const kubelet = watchPodDeletion(standIn, { namespace: BENCH_NAMESPACE, name }, allocators.map((a) => a.process), KILL_DELAY_MS, (atNs) => {
      marks.kubeletKillNs = atNs;
      noteKill();
    });

    const triggerBytes = TRIGGER_USAGE_BYTES + inactiveFileBytes;
    // The reference arms exactly the usage at which memory.available drops below the threshold.
    await killer?.arm(triggerBytes, node.cgroup.resolve(containerCgroup(pod)));
    goNs = process.hrtime.bigint();
    for (const allocator of allocators) allocator.go(BigInt(triggerBytes));
    const exits = allocators.map((a) => a.process.exited);
    void Promise.race(exits).then((e) => (marks.firstExitNs = e.atNs));
    // No polling while the race is on (it would compete with the agent in this process): the run
    // ends on the processes' exits. A SIGKILL nobody here sent, or a quiet pod dying, is the OOM
    // killer; the kernel's own count confirms it afterwards.
    const ended = await new Promise<'oom' | 'exited' | 'timeout'>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), RUN_TIMEOUT_MS);
      const finish = (why: 'oom' | 'exited'): void => {
        clearTimeout(timer);
        resolve(why);
      };
      void Promise.all(exits).then(() => finish('exited'));
      for (const exit of exits) {
        void exit.then(({ signal }) => {
          // The reference's own SIGKILL is reported on its output, which may come after the exit: the kernel's count decides there.
          if (signal === 'SIGKILL' && killer === null && marks.terminatingNs === null && marks.kubeletKillNs === null) finish('oom');
        });
      }
      for (const quiet of v.quiet) void quiet.process.process.exited.then(() => finish('oom'));
    });
    kubelet.stop();
    if (agent !== null) agent.hooks = {};
    if (killer !== null) {
      // Its report follows its kill by microseconds; none means the run ended another way (then it is disarmed).
      const kill = (await killer.killed(ended === 'exited' ? 1000 : 0)) ?? (await killer.disarm());
      if (kill !== null && kill.killIssuedNs >= goNs) {
        marks.notifiedNs = kill.notifiedNs;
        marks.terminatingNs = kill.killIssuedNs;
        marks.usageAtKillBytes = kill.usageAtKillBytes;
      }
    }
    await node.cgroup.kill(allocators.map((a) => a.process));
    await Promise.all(allocators.map((a) => a.finished));
    // The OOM kill is counted before its victim exits; a moment's wait covers the last exit.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const oomKills = node.oomKills() - oomBefore;
    const exitResults = await Promise.all(exits);

    const killIssuedNs = marks.terminatingNs ?? marks.kubeletKillNs;
    let outcome: RaceOutcome;
    if (oomKills > 0 || ended === 'oom') outcome = 'oom';
    else if (ended === 'timeout') outcome = 'timeout';
    else outcome = killIssuedNs !== null ? 'evicted' : 'error';

    // The decisive moment: the kill, or else the first exit (the OOM killer's victim).
    const firstExitNs = marks.firstExitNs;
    const decisiveNs = killIssuedNs !== null && (firstExitNs === null || killIssuedNs <= firstExitNs) ? killIssuedNs : (firstExitNs ?? process.hrtime.bigint());
    const usageAtKillBytes = marks.usageAtKillBytes;
    const crossings = allocators.flatMap((a) => (a.crossedNs === null ? [] : [a.crossedNs]));
    const crossingNs = crossings.length === 0 ? null : crossings.reduce((a, b) => (a < b ? a : b));
    const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);
    const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);
    const achievedBytesPerSecond =
      crossingNs === null
        ? rateBetween(allocators, max(goNs, decisiveNs - 2n * RATE_HALF_WINDOW_NS), decisiveNs)
        : rateBetween(allocators, max(goNs, crossingNs - RATE_HALF_WINDOW_NS), min(decisiveNs, crossingNs + RATE_HALF_WINDOW_NS));
    const result: RaceRun = {
      ...base,
      outcome,
      ...(outcome === 'error' ? { error: `the pod's processes exited without a kill being issued (${exitResults.map((e) => e.signal ?? e.code).join(', ')})` } : {}),
      baselineUsageBytes,
      inactiveFileBytes,
      achievedBytesPerSecond,
      meanBytesPerSecond: rateBetween(allocators, goNs, crossingNs ?? decisiveNs),
      crossingMs: nsToMs(crossingNs, goNs),
      notifiedMs: nsToMs(marks.notifiedNs, goNs),
      terminatingMs: nsToMs(marks.terminatingNs, goNs),
      requestingMs: nsToMs(marks.requestingNs, goNs),
      kubeletKillMs: nsToMs(marks.kubeletKillNs, goNs),
      killIssuedMs: nsToMs(killIssuedNs, goNs),
      usageAtKillBytes,
      overshootAtKillBytes: usageAtKillBytes === null ? null : usageAtKillBytes - triggerBytes,
      peakOvershootBytes: Number(node.maxUsageBytes()) - triggerBytes,
      firstExitMs: nsToMs(firstExitNs, goNs),
      armedBytes: killer !== null ? triggerBytes : armed === undefined ? null : Number(armed.memcgThresholdBytes),
      passes: marks.passes,
      oomKills,
      failcnt: node.failCount(),
      exitSignals: exitResults.map((e) => e.signal),
    };
    return { result, quietRestarts };
  } catch (err) {
    const message = errorMessage(err);
    return {
      result: {
        ...base,
        outcome: 'error',
        error: message,
        baselineUsageBytes: 0,
        inactiveFileBytes: 0,
        achievedBytesPerSecond: null,
        meanBytesPerSecond: null,
        crossingMs: null,
        notifiedMs: null,
        terminatingMs: null,
        requestingMs: null,
        kubeletKillMs: null,
        killIssuedMs: null,
        usageAtKillBytes: null,
        overshootAtKillBytes: null,
        peakOvershootBytes: 0,
        firstExitMs: null,
        armedBytes: null,
        passes: [],
        oomKills: 0,
        failcnt: 0,
        exitSignals: [],
      },
      quietRestarts,
    };
  } finally {
    if (agent !== null) agent.hooks = {};
    await node.cgroup.kill(allocators.map((a) => a.process));
    standIn.deletePodNow(BENCH_NAMESPACE, name);
    await agent?.waitForPod(uid, false).catch(() => undefined);
    node.cgroup.remove(podCgroup(uid));
  }
}

function cellsFor(quick: boolean): Cell[] {
  if (quick) {
    return [
      { rate: RACE_RATES[0] as RaceRate, processes: 1 },
      { rate: RACE_RATES[3] as RaceRate, processes: 2 },
    ];
  }
  return RACE_PROCESS_COUNTS.flatMap((processes) => RACE_RATES.map((rate) => ({ rate, processes })));
}

/**
 * `KEA_BENCH_RACE_VARIANTS` (comma-separated keys) races only those variants, and
 * `KEA_BENCH_RACE_RUNS` sets the runs per rate and process count: a long run of one variant
 * (the ≥ 320 runs the target asks of (a)) without re-running the five it is compared with.
 */
function raceVariantsFromEnv(): readonly AgentVariant[] {
  const keys = (process.env.KEA_BENCH_RACE_VARIANTS ?? '').split(',').map((k) => k.trim()).filter((k) => k !== '');
  if (keys.length === 0) return RACE_VARIANTS;
  const unknown = keys.filter((k) => !RACE_VARIANTS.some((v) => v.key === k));
  if (unknown.length > 0) throw new Error(`KEA_BENCH_RACE_VARIANTS: unknown variant ${unknown.join(', ')} (known: ${RACE_VARIANTS.map((v) => v.key).join(', ')})`);
  return RACE_VARIANTS.filter((v) => keys.includes(v.key));
}

function runsPerCell(quick: boolean): number {
  const raw = process.env.KEA_BENCH_RACE_RUNS;
  if (raw === undefined || raw === '') return quick ? 1 : 20;
  const runs = Number(raw);
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new Error(`KEA_BENCH_RACE_RUNS: ${raw} is not a whole number from 1 to 1000`);
  return runs;
}

/**
 * A run of some variants only keeps the stored runs of the others, so the page still compares all
 * six; `runsPerCellByVariant` says how many each had.
 */
export function mergeRaceData(previousResult: PartResult<OomRaceData>, fresh: OomRaceData): OomRaceData {
  const previous = previousResult.data;
  const freshKeys = new Set(fresh.variants.map((v) => v.key));
  if (previous === null || RACE_VARIANTS.every((v) => freshKeys.has(v.key))) return fresh;
  const kept = previous.runs.filter((r) => !freshKeys.has(r.variant));
  if (kept.length === 0) return fresh;
  const keptKeys = new Set(kept.map((r) => r.variant));
  const runsPerCellByVariant: Record<string, number> = {};
  for (const v of previous.variants) if (keptKeys.has(v.key)) runsPerCellByVariant[v.key] = previous.runsPerCellByVariant?.[v.key] ?? previous.runsPerCell;
  for (const v of fresh.variants) runsPerCellByVariant[v.key] = fresh.runsPerCell;
  return {
    ...fresh,
    variants: [...RACE_VARIANTS, REFERENCE_VARIANT].filter((v) => freshKeys.has(v.key) || keptKeys.has(v.key)),
    processCounts: [...new Set([...previous.processCounts, ...fresh.processCounts])].sort((a, b) => a - b),
    runs: [...fresh.runs, ...kept],
    runsPerCellByVariant,
    keptFrom: previous.keptFrom ?? { date: previousResult.machine.date, revision: previousResult.revision ?? null, loadAverage: previousResult.machine.loadAverage, variants: [...keptKeys] },
    quietRestarts: fresh.quietRestarts + previous.quietRestarts,
  };
}

export const oomRacePart: BenchPart<OomRaceData> = {
  name: 'oom-race',
  title: 'The OOM race',
  estimateMs: (quick) => cellsFor(quick).length * runsPerCell(quick) * (raceVariantsFromEnv().length + 1) * 1300 + 15_000,
  unavailable: () => cgroupV1Unavailable(),
  merge: mergeRaceData,
  async run(context: PartContext): Promise<OomRaceData> {
    const cells = cellsFor(context.quick);
    const runs = runsPerCell(context.quick);
    const standIn = await startApiStandIn();
    const variants: VariantNode[] = [];
    const results: RaceRun[] = [];
    let quietRestarts = 0;
    try {
      for (const variant of raceVariantsFromEnv()) {
        throwIfInterrupted();
        variants.push(await setUpVariant(variant, standIn, context.scratchDir));
        context.progress.note(`${variant.label}: sandbox node ${variants.at(-1)?.node.name} ready`);
      }
      // The reference races whenever (a) does, so the two are always compared over the same runs.
      const noCompiler = referenceReaderUnavailable();
      if (variants.some((v) => v.variant.key === HEADLINE_RACE_VARIANT) && noCompiler === null) {
        variants.push(await setUpVariant(REFERENCE_VARIANT, standIn, context.scratchDir, buildReferenceKiller(context.benchDir, context.scratchDir)));
        context.progress.note(`${REFERENCE_VARIANT.label}: sandbox node ${variants.at(-1)?.node.name} ready`);
      } else if (noCompiler !== null) context.progress.note(`reference killer skipped: ${noCompiler}`);
      const total = cells.length * runs * variants.length;
      let done = 0;
      for (let run = 0; run < runs; run++) {
        for (const [cellIndex, cell] of cells.entries()) {
          // Rotate the order every round so no variant always follows the same one.
          const shift = (run + cellIndex) % variants.length;
          for (const v of [...variants.slice(shift), ...variants.slice(0, shift)]) {
            throwIfInterrupted();
            const { result, quietRestarts: restarted } = await raceOnce(v, standIn, cell, run);
            quietRestarts += restarted;
            results.push({ ...result, loadAverage: loadavg()[0] ?? 0 });
            done++;
            const detail = `${v.variant.key} ${cell.rate.label} x${cell.processes}: ${result.outcome}${result.overshootAtKillBytes === null ? '' : `, overshoot ${fmt(result.overshootAtKillBytes / MiB)} MiB`}${result.achievedBytesPerSecond === null ? '' : `, ${fmt(result.achievedBytesPerSecond / MiB)} MiB/s`}${result.error === undefined ? '' : ` (${result.error})`}`;
            context.progress.step(done, total, detail, result.outcome === 'error');
          }
        }
      }
    } finally {
      for (const v of variants) await (v.agent ?? v.killer)?.stop();
      await standIn.stop();
      for (const v of variants) await v.node.destroy();
    }
    return {
      limitBytes: RACE_LIMIT_BYTES,
      thresholdBytes: RACE_THRESHOLD_BYTES,
      killDelayMs: KILL_DELAY_MS,
      timeoutMs: RUN_TIMEOUT_MS,
      runsPerCell: runs,
      quietPods: QUIET_PODS,
      quietBytes: QUIET_BYTES,
      variants: variants.map((v) => v.variant),
      rates: RACE_RATES,
      processCounts: [...new Set(cells.map((c) => c.processes))],
      runs: results,
      quietRestarts,
    };
  },
};
