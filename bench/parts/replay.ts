// Part 9, replay throughput: the real command (`node dist/src/main.js replay`, spawn to exit) on a
// generated 10,000-step recording of a 110-pod node, four ways, alternated run by run: as it runs
// by default (worker threads on the CPUs the load average shows free), with one parsing worker
// beside the deciding thread (`--threads 1`), on one thread (`--threads 0`), and confined to one
// core (`taskset -c 0`, where the default is one thread).
// Their outputs are compared byte for byte. Beside them: start-up alone, the peak RSS of each way,
// where the CPU goes in a run on threads (the deciding thread against all the others), small
// recordings (below the size at which workers start) by default and on one thread, and in process
// the engine alone and the reading and JSON.parse alone (the ceiling of one parsing thread).

import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { openRecording, replayStream } from '../../src/cli/replay.js';
import { parseConfigText } from '../../src/config/load.js';
import { parseReplayLine } from '../../src/replay/input.js';
import { boundedLines } from '../../src/replay/lines.js';
import { ReplayRunner } from '../../src/replay/runner.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { RECORDING_CONFIG, writeRecording } from '../lib/recording.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';

export const REPLAY_PODS = 110;

/** The ways the command is run on the long recording. */
export const REPLAY_WAYS = ['default', 'oneWorker', 'oneThread', 'oneCore'] as const;
export type ReplayWay = (typeof REPLAY_WAYS)[number];

export interface ReplayWayResult {
  readonly seconds: Distribution | null;
  readonly maxRssBytes: Distribution | null;
  /** sha256 of what it printed (the same for every way, or the outputs differ). */
  readonly outputSha256: string | null;
}

export interface SmallRecording {
  readonly name: string;
  readonly bytes: number;
  readonly steps: number;
  /** By default and with `--threads 0`, spawn to exit. */
  readonly defaultSeconds: Distribution | null;
  readonly oneThreadSeconds: Distribution | null;
}

export interface ReplayData {
  readonly steps: number;
  readonly pods: number;
  readonly recordingBytes: number;
  readonly runs: number;
  /** os.availableParallelism() where it ran. */
  readonly cpus: number;
  readonly ways: Readonly<Record<ReplayWay, ReplayWayResult | null>>;
  /** Why `oneCore` was not run (no taskset), or null. */
  readonly oneCoreSkipped: string | null;
  /** The 1-minute load average when each run by default started (it chooses the workers from it). */
  readonly defaultLoadAverages?: readonly number[];
  /** The command on an empty recording: start-up alone. */
  readonly startupSeconds: Distribution | null;
  /** CPU time of one run with a worker (`--threads 1`): the deciding (main) thread and all the others (the worker, V8's compiler and collector threads). */
  readonly threadCpu: { readonly mainMs: number; readonly otherMs: number; readonly wallMs: number } | null;
  readonly small: readonly SmallRecording[];
  /** ReplayRunner.step alone (lines parsed outside the timed part). */
  readonly engineSeconds: Distribution | null;
  /** replayStream in process (one thread: read, validate, decide, write). */
  readonly inProcessSeconds: Distribution | null;
  /** Reading the lines and JSON.parse alone, nothing else: the ceiling of a replay that parses on one thread. */
  readonly parseOnlySeconds: Distribution | null;
  readonly outputLines: number;
  readonly evictionLines: number;
}

const stepsFor = (quick: boolean): number => (quick ? 1000 : 10_000);
const runsFor = (quick: boolean): number => (quick ? 1 : 3);
const smallRunsFor = (quick: boolean): number => (quick ? 2 : 7);

// Preloaded into every measured command: its peak RSS (kB) into the file the part names.
const RSS_PRELOAD = `const { writeFileSync } = require('node:fs');
process.on('exit', () => writeFileSync(process.env.KEA_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)));
`;

interface CliRun {
  readonly seconds: number;
  readonly maxRssBytes: number;
  readonly lines: number;
  readonly evictionLines: number;
  readonly sha256: string;
  readonly threadCpu: { mainMs: number; otherMs: number; wallMs: number } | null;
}

let clockTicks: number | null = null;
function ticksPerSecond(): number {
  clockTicks ??= Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
  return clockTicks;
}

/** utime + stime of every thread of `pid` seen so far, by thread id (threads that end keep their last reading). */
function sampleThreads(pid: number, into: Map<string, number>): void {
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        into.set(tid, Number(fields[11]) + Number(fields[12]));
      } catch {
        // The thread ended between the listing and the read.
      }
    }
  } catch {
    // The process ended.
  }
}

/** Runs the command; resolves with its wall time, peak RSS and what it printed. */
function runCli(command: readonly string[], preload: string, rssFile: string, sampleCpu = false): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    writeFileSync(rssFile, '');
    const env: NodeJS.ProcessEnv = { ...process.env, KEA_BENCH_RSS_FILE: rssFile };
    delete env.NODE_OPTIONS;
    const [program, ...args] = command as [string, ...string[]];
    const startedMs = performance.now();
    const child = trackChild(spawn(program, args.map((a) => (a === '{preload}' ? preload : a)), { stdio: ['ignore', 'pipe', 'pipe'], env }));
    const threads = new Map<string, number>();
    const sampler = sampleCpu && child.pid !== undefined ? setInterval(() => sampleThreads(child.pid as number, threads), 20) : null;
    const hash = createHash('sha256');
    let lines = 0;
    let evictionLines = 0;
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => hash.update(chunk));
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines++;
      if (!line.includes('"evictions":[]')) evictionLines++;
    });
    child.once('error', reject);
    child.once('close', (code) => {
      if (sampler !== null) clearInterval(sampler);
      const wallMs = performance.now() - startedMs;
      if (code !== 0) return reject(new Error(`replay exited with ${code}: ${stderr.trim()}`));
      const kib = Number(readFileSync(rssFile, 'utf8'));
      const tick = 1000 / ticksPerSecond();
      const mainTicks = threads.get(String(child.pid)) ?? 0;
      const allTicks = [...threads.values()].reduce((sum, t) => sum + t, 0);
      resolvePromise({
        seconds: wallMs / 1000,
        maxRssBytes: kib * 1024,
        lines,
        evictionLines,
        sha256: hash.digest('hex'),
        threadCpu: sampler === null ? null : { mainMs: mainTicks * tick, otherMs: (allTicks - mainTicks) * tick, wallMs },
      });
    });
  });
}

async function inProcessReplay(recording: string): Promise<number> {
  const config = parseConfigText(RECORDING_CONFIG, 'replay.yaml');
  const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
  const startedMs = performance.now();
  await replayStream(config.eviction, openRecording(recording), sink);
  return (performance.now() - startedMs) / 1000;
}

// The engine alone: lines are parsed outside the timed region, one step at a time.
async function engineOnly(recording: string): Promise<number> {
  const runner = new ReplayRunner(parseConfigText(RECORDING_CONFIG, 'replay.yaml').eviction);
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
async function parseOnly(recording: string): Promise<number> {
  const startedMs = performance.now();
  for await (const { text } of boundedLines(openRecording(recording) as AsyncIterable<Buffer>)) JSON.parse(text);
  return (performance.now() - startedMs) / 1000;
}

function hasTaskset(): boolean {
  return spawnSync('taskset', ['-c', '0', 'true']).status === 0;
}

export const replayPart: BenchPart<ReplayData> = {
  name: 'replay',
  title: 'Replay throughput',
  estimateMs: (quick) => (quick ? 20_000 : 120_000),
  unavailable: () => null,
  async run(context: PartContext): Promise<ReplayData> {
    const steps = stepsFor(context.quick);
    const runs = runsFor(context.quick);
    const recording = join(context.scratchDir, 'recording.jsonl');
    const empty = join(context.scratchDir, 'empty.jsonl');
    const config = join(context.scratchDir, 'replay.yaml');
    const preload = join(context.scratchDir, 'rss-at-exit.cjs');
    const rssFile = join(context.scratchDir, 'rss');
    writeFileSync(config, RECORDING_CONFIG);
    writeFileSync(empty, '');
    writeFileSync(preload, RSS_PRELOAD);
    const recordingBytes = await writeRecording(recording, steps, REPLAY_PODS);
    const oneCore = hasTaskset();
    context.progress.note(`replay: ${steps} steps, ${REPLAY_PODS} pods, ${fmt(recordingBytes / 2 ** 20)} MiB recording, ${availableParallelism()} CPUs`);

    const node = (...args: string[]): string[] => [process.execPath, '--require', '{preload}', context.mainJs, 'replay', '--config', config, ...args];
    const commands: Readonly<Record<ReplayWay, readonly string[] | null>> = {
      default: node(recording),
      oneWorker: node('--threads', '1', recording),
      oneThread: node('--threads', '0', recording),
      oneCore: oneCore ? ['taskset', '-c', '0', ...node(recording)] : null,
    };
    const measured = Object.fromEntries(REPLAY_WAYS.map((way) => [way, { seconds: [] as number[], rss: [] as number[], sha256: null as string | null }]));
    const startup: number[] = [];
    const defaultLoadAverages: number[] = [];
    let threadCpu: ReplayData['threadCpu'] = null;
    let outputLines = 0;
    let evictionLines = 0;
    for (let run = 0; run < runs; run++) {
      // Alternated, so a busy moment does not fall on one way only.
      for (const way of REPLAY_WAYS) {
        const command = commands[way];
        if (command === null) continue;
        throwIfInterrupted();
        if (way === 'default') defaultLoadAverages.push(loadavg()[0] ?? 0);
        const result = await runCli(command, preload, rssFile, way === 'oneWorker' && run === runs - 1);
        if (result.lines !== steps) throw new Error(`replay (${way}) printed ${result.lines} lines for ${steps} steps`);
        const slot = measured[way] as { seconds: number[]; rss: number[]; sha256: string | null };
        slot.seconds.push(result.seconds);
        slot.rss.push(result.maxRssBytes);
        slot.sha256 = result.sha256;
        if (result.threadCpu !== null) threadCpu = result.threadCpu;
        outputLines = result.lines;
        evictionLines = result.evictionLines;
      }
      startup.push((await runCli(node(empty), preload, rssFile)).seconds);
      context.progress.note(`replay run ${run + 1}/${runs}: ${REPLAY_WAYS.map((way) => `${way} ${fmt(steps / ((measured[way]?.seconds.at(-1) ?? NaN) || NaN))} steps/s`).join(', ')}`);
    }

    // Small recordings: below the size at which the workers start, the default must cost nothing more.
    const smallRecording = join(context.scratchDir, 'small.jsonl');
    const smallBytes = await writeRecording(smallRecording, 100, REPLAY_PODS);
    const example = resolve(context.benchDir, '..', '..', 'examples', 'memory-pressure.jsonl');
    const exampleConfig = resolve(context.benchDir, '..', '..', 'examples', 'memory-pressure.config.yaml');
    const smalls = [
      { name: 'the example recording (examples/memory-pressure.jsonl)', path: example, config: exampleConfig, bytes: readFileSync(example).length, steps: readFileSync(example, 'utf8').trim().split('\n').length },
      { name: `100 steps × ${REPLAY_PODS} pods`, path: smallRecording, config, bytes: smallBytes, steps: 100 },
    ];
    const small: SmallRecording[] = [];
    for (const s of smalls) {
      const times = { default: [] as number[], oneThread: [] as number[] };
      for (let run = 0; run < smallRunsFor(context.quick); run++) {
        throwIfInterrupted();
        const base = [process.execPath, '--require', '{preload}', context.mainJs, 'replay', '--config', s.config];
        times.default.push((await runCli([...base, s.path], preload, rssFile)).seconds);
        times.oneThread.push((await runCli([...base, '--threads', '0', s.path], preload, rssFile)).seconds);
      }
      small.push({ name: s.name, bytes: s.bytes, steps: s.steps, defaultSeconds: distribution(times.default), oneThreadSeconds: distribution(times.oneThread) });
    }

    const engine: number[] = [];
    const inProcess: number[] = [];
    const parse: number[] = [];
    for (let run = 0; run < runs; run++) {
      throwIfInterrupted();
      inProcess.push(await inProcessReplay(recording));
      engine.push(await engineOnly(recording));
      parse.push(await parseOnly(recording));
    }
    const ways = Object.fromEntries(
      REPLAY_WAYS.map((way) => {
        const slot = measured[way] as { seconds: number[]; rss: number[]; sha256: string | null };
        return [way, slot.seconds.length === 0 ? null : { seconds: distribution(slot.seconds), maxRssBytes: distribution(slot.rss), outputSha256: slot.sha256 }];
      }),
    ) as Record<ReplayWay, ReplayWayResult | null>;
    return {
      steps,
      pods: REPLAY_PODS,
      recordingBytes,
      runs,
      cpus: availableParallelism(),
      ways,
      oneCoreSkipped: oneCore ? null : 'no taskset on this machine',
      defaultLoadAverages,
      startupSeconds: distribution(startup),
      threadCpu,
      small,
      engineSeconds: distribution(engine),
      inProcessSeconds: distribution(inProcess),
      parseOnlySeconds: distribution(parse),
      outputLines,
      evictionLines,
    };
  },
};
