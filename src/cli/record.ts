// `kube-eviction-agent record --node-name NODE --output FILE`: captures a node into the replay
// format, one consistent step per interval (src/replay/recorder.ts), from the kubelet's summary
// through the API server or from the agent's own observer on this host. Progress goes to stderr,
// the recording to the file (or stdout); a bound or Ctrl-C ends it after a whole line.

import { closeSync, openSync, writeSync } from 'node:fs';
import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import { parseQuantity, quantityValue } from '../api/quantity.js';
import { systemClock, type Clock } from '../api/clock.js';
import { readAgentConfig } from '../compose/config-file.js';
import { recordingSources, type RecordingSources, type RecordingStatsSource } from '../compose/record-sources.js';
import { formatConfigErrors } from '../config/effective-table.js';
import { parseGoDuration } from '../config/go-duration.js';
import { AgentError, ConfigError, errorMessage } from '../errors.js';
import { createLogger } from '../log.js';
import { record, type RecordOutcome } from '../replay/recorder.js';

export interface RecordCliOptions {
  readonly nodeName?: string;
  readonly output: string;
  readonly source: string;
  readonly config?: string;
  readonly kubeconfig?: string;
  readonly interval: string;
  readonly count?: string;
  readonly duration?: string;
  readonly maxSize: string;
}

/** The checked command line: every bound explicit. */
export interface RecordSettings {
  readonly nodeName: string;
  readonly output: string;
  readonly source: RecordingStatsSource;
  readonly intervalMs: number;
  readonly maxSteps: number | null;
  readonly maxDurationMs: number | null;
  readonly maxBytes: number;
}

// A step a second is already far more than the kubelet's own 10 s loop looks at.
const MIN_INTERVAL_MS = 1000;
const MAX_BYTES_LIMIT = 16 * 1024 ** 3;

function usage(message: string): AgentError {
  return new AgentError('EVA_ERR_USAGE', message);
}

function duration(flag: string, text: string): number {
  let ms: number;
  try {
    ms = parseGoDuration(text);
  } catch (err) {
    throw usage(`${flag}: ${errorMessage(err)}`);
  }
  if (!(ms > 0)) throw usage(`${flag} must be positive: ${text}`);
  return ms;
}

export function recordSettings(options: RecordCliOptions, env: Readonly<Record<string, string | undefined>> = process.env): RecordSettings {
  const nodeName = options.nodeName ?? env.NODE_NAME ?? '';
  if (nodeName === '') throw usage('The node name is unknown: pass --node-name or set NODE_NAME');
  if (options.source !== 'kubelet' && options.source !== 'observer') throw usage(`--source must be kubelet or observer: ${options.source}`);
  if (options.source === 'observer' && options.config === undefined) throw usage('--source observer needs --config (the agent configuration the observer is built from)');
  const intervalMs = duration('--interval', options.interval);
  if (intervalMs < MIN_INTERVAL_MS) throw usage(`--interval must be at least 1s: ${options.interval}`);
  let maxSteps: number | null = null;
  if (options.count !== undefined) {
    maxSteps = Number(options.count);
    if (!Number.isInteger(maxSteps) || maxSteps < 1) throw usage(`--count must be a positive integer: ${options.count}`);
  }
  const maxDurationMs = options.duration === undefined ? null : duration('--duration', options.duration);
  let maxBytes: number;
  try {
    maxBytes = Number(quantityValue(parseQuantity(options.maxSize)));
  } catch (err) {
    throw usage(`--max-size: ${errorMessage(err)}`);
  }
  if (!(maxBytes > 0 && maxBytes <= MAX_BYTES_LIMIT)) throw usage(`--max-size must be more than 0 and at most 16Gi: ${options.maxSize}`);
  return { nodeName, output: options.output, source: options.source, intervalMs, maxSteps, maxDurationMs, maxBytes };
}

const END_REASONS: Record<RecordOutcome['endedBy'], string> = {
  count: 'the step count was reached',
  duration: 'the duration was reached',
  size: 'the next step would pass --max-size',
  interrupted: 'interrupted',
};

/** Records into `settings.output` (refusing to overwrite a file); resolves with the outcome. */
export async function recordToOutput(settings: RecordSettings, sources: RecordingSources, deps: { clock: Clock; signal: AbortSignal; stderr: Writable }): Promise<RecordOutcome> {
  const toStdout = settings.output === '-';
  let fd: number;
  try {
    // 'wx': an earlier recording is never overwritten.
    fd = toStdout ? 1 : openSync(settings.output, 'wx');
  } catch (err) {
    throw usage(`cannot create ${settings.output}: ${errorMessage(err)}`);
  }
  const where = toStdout ? 'stdout' : settings.output;
  deps.stderr.write(`record: node ${settings.nodeName}, ${settings.source === 'kubelet' ? "the kubelet's summary" : "the agent's observer"}, a step every ${settings.intervalMs / 1000} s, to ${where}; Ctrl-C ends it\n`);
  try {
    const outcome = await record(sources, {
      intervalMs: settings.intervalMs,
      maxSteps: settings.maxSteps,
      maxDurationMs: settings.maxDurationMs,
      maxBytes: settings.maxBytes,
      clock: deps.clock,
      signal: deps.signal,
      write: (line) => {
        writeSync(fd, line);
      },
      progress: (text) => deps.stderr.write(`record: ${text}\n`),
    });
    deps.stderr.write(
      `record: ${outcome.steps} step(s) in ${(outcome.durationMs / 1000).toFixed(1)} s, ${outcome.bytes} bytes, to ${where}` +
        `${outcome.droppedPods > 0 ? `; ${outcome.droppedPods} pod(s) left out of their step` : ''}` +
        `${outcome.failedCaptures > 0 ? `; ${outcome.failedCaptures} capture(s) failed` : ''}; ended: ${END_REASONS[outcome.endedBy]}\n`,
    );
    return outcome;
  } finally {
    if (!toStdout) closeSync(fd);
  }
}

export function registerRecord(program: Command): void {
  program
    .command('record')
    .description('Record a node\'s pods and stats into the replay format (JSON Lines), one consistent step per interval')
    .requiredOption('-o, --output <file>', 'the recording to create (never overwritten), or - for standard output')
    .option('--node-name <name>', 'the node to record (default: $NODE_NAME)')
    .option('--source <source>', 'kubelet: the kubelet\'s summary through the API server (nodes/proxy); observer: the agent\'s own observer on this host (needs --config)', 'kubelet')
    .option('-c, --config <file>', 'AgentConfiguration or KubeletConfiguration file (the observer\'s settings)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)')
    .option('--interval <duration>', 'time between steps (at least 1s)', '10s')
    .option('--count <n>', 'stop after this many steps')
    .option('--duration <duration>', 'stop after this long (e.g. 30m)')
    .option('--max-size <quantity>', 'never write more than this (the step that would pass it is not written)', '256Mi')
    .action(async (options: RecordCliOptions) => {
      const settings = recordSettings(options);
      let config;
      if (options.config !== undefined) {
        try {
          config = (await readAgentConfig(options.config)).config;
        } catch (err) {
          process.stderr.write(err instanceof ConfigError ? `${options.config}: invalid configuration\n${formatConfigErrors(err)}\n` : `${errorMessage(err)}\n`);
          process.exitCode = 1;
          return;
        }
      }
      const logger = createLogger('warn').child({ component: 'record' });
      const sources = await recordingSources({
        cluster: { kubeconfig: options.kubeconfig },
        nodeName: settings.nodeName,
        source: settings.source,
        ...(config === undefined ? {} : { config }),
        clock: systemClock,
        logger,
      });
      const abort = new AbortController();
      const onInterrupt = (): void => abort.abort();
      process.once('SIGINT', onInterrupt);
      process.once('SIGTERM', onInterrupt);
      try {
        const outcome = await recordToOutput(settings, sources, { clock: systemClock, signal: abort.signal, stderr: process.stderr });
        process.exitCode = outcome.steps > 0 ? 0 : 1;
      } finally {
        process.off('SIGINT', onInterrupt);
        process.off('SIGTERM', onInterrupt);
      }
      // Idle keep-alive sockets of the HTTP client must not delay the exit.
      process.exit(process.exitCode ?? 0);
    });
}
