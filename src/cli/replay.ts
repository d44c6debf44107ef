// `kube-eviction-agent replay --config FILE [INPUT | -]`: what would this config have done on
// that node? Reads a JSON Lines recording and prints one decision line per step, streaming, so
// a long recording starts printing at once and a bad line stops with everything before it printed.

import { createReadStream } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { InvalidArgumentError, type Command } from 'commander';
import type { StormGuardSettings } from '../api/agent-settings.js';
import type { EvictionConfig } from '../api/eviction-config.js';
import { formatConfigErrors } from '../config/effective-table.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError, ReplayInputError } from '../errors.js';
import { parseReplayLine } from '../replay/input.js';
import { boundedLines } from '../replay/lines.js';
import { ReplayRunner } from '../replay/runner.js';
import { replayThreaded } from '../replay/threaded-replay.js';
import { pickTaintOptions, type TaintOptions } from '../taint/taint-options.js';

const READ_CHUNK_BYTES = 1 << 20;

/** Parsing threads at most, by default: past three the deciding thread is what limits (docs/replay.md). */
const MAX_AUTO_THREADS = 3;
/** By default a recording is parsed on the deciding thread up to this size, and on workers after it. */
export const PARALLEL_AFTER_BYTES = 8 << 20;
/** `--threads` at most. */
const MAX_THREADS = 16;

/** How many worker threads parse: a number, or `auto` ({@link autoThreads}). */
export type ReplayThreads = number | 'auto';

/**
 * The workers `auto` starts once a recording is past PARALLEL_AFTER_BYTES: the CPUs that the load
 * average shows free, less the one this thread takes (it parses too, whenever the workers are
 * busy), at most MAX_AUTO_THREADS. Workers on CPUs that other work keeps busy only add the cost of
 * handing steps over (1.25 to 1.4 times one thread's CPU, as measured): there one thread is faster
 * (docs/replay.md).
 */
export function autoThreads(cpus = availableParallelism(), loadAverage = loadavg()[0] ?? 0): number {
  const free = Math.floor(cpus - loadAverage - 0.5);
  return Math.max(0, Math.min(cpus - 1, free, MAX_AUTO_THREADS));
}

/**
 * A recording file as `replay` reads it: in reads of 1 MiB, not the default 64 KiB (a recording's
 * steps are tens of KiB each, and the per-read cost of a stream was most of the reading).
 */
export function openRecording(path: string): Readable {
  return createReadStream(path, { highWaterMark: READ_CHUNK_BYTES });
}

/** Replays `input` into `output`; resolves with the number of steps, rejects with ReplayInputError. */
export async function replayStream(
  config: EvictionConfig,
  input: Readable,
  output: Writable,
  taintOptions: Partial<TaintOptions> = {},
  maxLineBytes?: number,
  stormGuard: StormGuardSettings | null = null,
  retriggerWindowMs?: number,
): Promise<number> {
  const runner = new ReplayRunner(config, taintOptions, stormGuard, retriggerWindowMs);
  let steps = 0;
  let pending = '';
  try {
    for await (const { line: lineNumber, text } of boundedLines(input as AsyncIterable<Buffer | string>, maxLineBytes)) {
      if (text.trim() === '') continue;
      const step = parseReplayLine(text, lineNumber, runner.previousTimeMs);
      pending += `${JSON.stringify(runner.step(step))}\n`;
      steps++;
      // Batch writes: one write per line would dominate the cost of a long recording.
      if (pending.length > 65536) {
        if (!output.write(pending)) await new Promise((resolve) => output.once('drain', resolve));
        pending = '';
      }
    }
  } finally {
    // Every line before a bad one is printed.
    if (pending !== '') output.write(pending);
  }
  return steps;
}

/** The streams a command reads and writes (the process's, or a test's). */
export interface CommandStreams {
  readonly stdin: Readable;
  readonly stdout: Writable;
  readonly stderr: Writable;
}

/** `replay --config FILE INPUT`: resolves with the exit status (1 for a bad configuration or input line). */
export async function replayCommand(configPath: string, inputPath: string, streams: CommandStreams, threads: ReplayThreads = 'auto'): Promise<number> {
  let config;
  try {
    config = await loadConfigFile(configPath);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    streams.stderr.write(`${configPath}: invalid configuration\n${formatConfigErrors(err)}\n`);
    return 1;
  }
  const input = inputPath === '-' ? streams.stdin : openRecording(inputPath);
  const taintOptions = pickTaintOptions(config.agent.taintEviction);
  const { stormGuard } = config.agent;
  const { retriggerWindowMs } = config.agent.reporting;
  try {
    if (threads === 0) await replayStream(config.eviction, input, streams.stdout, taintOptions, undefined, stormGuard, retriggerWindowMs);
    else {
      // Asked for: workers from the start; by default, past PARALLEL_AFTER_BYTES, on the CPUs free then.
      const runner = new ReplayRunner(config.eviction, taintOptions, stormGuard, retriggerWindowMs);
      const options = threads === 'auto' ? { threads: () => autoThreads(), parallelAfterBytes: PARALLEL_AFTER_BYTES } : { threads, parallelAfterBytes: 0 };
      await replayThreaded(runner, input as AsyncIterable<Buffer | string>, streams.stdout, options);
    }
    return 0;
  } catch (err) {
    if (!(err instanceof ReplayInputError)) throw err;
    streams.stderr.write(`${inputPath === '-' ? 'stdin' : inputPath}: ${err.message}\n`);
    return 1;
  }
}

export function registerReplay(program: Command): void {
  program
    .command('replay')
    .description('Replay a recording of node stats and pods (JSON Lines) through the engine and print each step\'s decisions')
    .requiredOption('-c, --config <file>', 'AgentConfiguration or KubeletConfiguration file')
    .option('--threads <count>', `worker threads that parse the recording while this one decides: auto (from ${PARALLEL_AFTER_BYTES >> 20} MiB in, the CPUs the load average shows free, less one, at most ${MAX_AUTO_THREADS}), or 0 to ${MAX_THREADS} (0: one thread does everything)`, parseThreads, 'auto' as ReplayThreads)
    .argument('[input]', 'recording file, or - for standard input', '-')
    .action(async (inputPath: string, options: { config: string; threads: ReplayThreads }) => {
      process.exitCode = await replayCommand(options.config, inputPath, process, options.threads);
    });
}

function parseThreads(value: string): ReplayThreads {
  if (value === 'auto') return value;
  const count = /^\d{1,2}$/.test(value) ? Number(value) : NaN;
  if (!(count <= MAX_THREADS)) throw new InvalidArgumentError(`expected auto or a whole number from 0 to ${MAX_THREADS}`);
  return count;
}
