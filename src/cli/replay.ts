// `kube-eviction-agent replay --config FILE [INPUT | -]`: what would this config have done on
// that node? Reads a JSON Lines recording and prints one decision line per step, streaming, so
// a long recording starts printing at once and a bad line stops with everything before it printed.

import { createReadStream } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import type { Command } from 'commander';
import type { StormGuardSettings } from '../api/agent-settings.js';
import type { EvictionConfig } from '../api/eviction-config.js';
import { formatConfigErrors } from '../config/effective-table.js';
import { loadConfigFile } from '../config/load.js';
import { ConfigError, ReplayInputError } from '../errors.js';
import { parseReplayLine } from '../replay/input.js';
import { boundedLines } from '../replay/lines.js';
import { ReplayRunner } from '../replay/runner.js';
import { pickTaintOptions, type TaintOptions } from '../taint/taint-options.js';

const READ_CHUNK_BYTES = 1 << 20;

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
export async function replayCommand(configPath: string, inputPath: string, streams: CommandStreams): Promise<number> {
  let config;
  try {
    config = await loadConfigFile(configPath);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    streams.stderr.write(`${configPath}: invalid configuration\n${formatConfigErrors(err)}\n`);
    return 1;
  }
  const input = inputPath === '-' ? streams.stdin : openRecording(inputPath);
  try {
    await replayStream(config.eviction, input, streams.stdout, pickTaintOptions(config.agent.taintEviction), undefined, config.agent.stormGuard, config.agent.reporting.retriggerWindowMs);
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
    .argument('[input]', 'recording file, or - for standard input', '-')
    .action(async (inputPath: string, options: { config: string }) => {
      process.exitCode = await replayCommand(options.config, inputPath, process);
    });
}
