// Replay with the parsing on other threads: JSON.parse and validation of a recording cost about
// four times what the engine does, so worker threads parse batches of lines while this thread
// decides, strictly in the recording's order, on what they parsed. What is printed, and where a
// replay stops, are those of the single-threaded replay (cli/replay.ts, replayStream) byte for
// byte: the same lines are parsed by the same code, each line's time is checked against the
// previous step's here before any problem found past its time is reported, and every line before
// a refused one is decided and printed. The first bytes are parsed on this thread, and the workers
// start only past `parallelAfterBytes`, so a short recording costs no thread start.
//
// Memory stays bounded however long the recording: this thread reads ahead at most
// AHEAD_PER_THREAD batches per worker (a batch is about BATCH_BYTES of whole lines, or one line of
// at most the line limit), stops reading while they are parsed, and stops deciding while the
// output is not drained. A worker's reply is held as typed arrays, and each step rebuilt from it
// only as it is decided, so what is rebuilt dies young.

import { Worker } from 'node:worker_threads';
import type { Writable } from 'node:stream';
import { checkReplayTimeOrder } from './input.js';
import { lineBatches, parseBatch, type LineBatch, type LineResult } from './line-batches.js';
import { MAX_REPLAY_LINE_BYTES } from './lines.js';
import { PARSE_WORKER_READY, resultsOf, type ParseReply, type ParseRequest } from './parse-protocol.js';
import type { ReplayRunner } from './runner.js';
import { SummaryDecoder } from './summary-codec.js';

/** Whole lines handed to a worker at a time. */
export const BATCH_BYTES = 1 << 20;
/** Batches read ahead per worker: one being parsed and two waiting, so no worker idles while this thread parses one. */
export const AHEAD_PER_THREAD = 3;
/** Batches read ahead besides, parsed here when their turn comes. */
const AHEAD_HERE = 2;
/** Output is written in pieces of about this size (one write per line would dominate). */
const WRITE_BYTES = 65536;

// A worker's JavaScript stack limit set to the main thread's (V8's default, 984 KiB; Node keeps
// 192 KiB of a worker's stack below its limit), so that a line nested deep enough to exhaust it
// fails on a worker exactly where it fails on one thread.
const WORKER_STACK_MB = (984 + 192) / 1024;

export interface ThreadedReplayOptions {
  /** Worker threads that parse (0: everything on this thread), or a function asked once `parallelAfterBytes` are read. */
  readonly threads: number | (() => number);
  /** The input parsed on this thread before the workers start. */
  readonly parallelAfterBytes: number;
  readonly maxLineBytes?: number;
  /** Whether this thread parses the batches no worker has room for (default true). */
  readonly parseHere?: boolean;
  /** Default BATCH_BYTES. */
  readonly batchBytes?: number;
  /** The worker's script (default: parse-worker.js beside this file). */
  readonly workerScript?: URL;
}

interface Waiting {
  readonly resolve: (results: Iterable<LineResult>) => void;
  readonly reject: (err: unknown) => void;
}

/**
 * The parsing workers: each batch goes to the least busy, and each worker's replies come back in
 * order. A worker counts as having room only once it has started (loading its modules takes tens
 * of milliseconds, which this thread spends parsing instead of waiting).
 */
class ParsePool {
  private readonly workers: { readonly worker: Worker; readonly waiting: Waiting[]; readonly decoder: SummaryDecoder; ready: boolean }[] = [];

  constructor(count: number, script: URL) {
    for (let i = 0; i < count; i++) {
      const worker = new Worker(script, { resourceLimits: { stackSizeMb: WORKER_STACK_MB } });
      const entry = { worker, waiting: [] as Waiting[], decoder: new SummaryDecoder(), ready: false };
      const failAll = (err: unknown): void => {
        for (const waiting of entry.waiting.splice(0)) waiting.reject(err);
      };
      worker.on('message', (reply: ParseReply | typeof PARSE_WORKER_READY) => {
        if (reply === PARSE_WORKER_READY) entry.ready = true;
        else entry.waiting.shift()?.resolve(resultsOf(reply, entry.decoder));
      });
      worker.on('error', failAll);
      worker.on('exit', (code) => failAll(new Error(`a replay parsing thread exited (${code})`)));
      this.workers.push(entry);
    }
  }

  get size(): number {
    return this.workers.length;
  }

  /** Whether a worker that has started has fewer than AHEAD_PER_THREAD batches. */
  hasRoom(): boolean {
    return this.workers.some((entry) => entry.ready && entry.waiting.length < AHEAD_PER_THREAD);
  }

  /** Hands `batch` to the worker with the fewest, one that has started if any has. */
  parse(batch: LineBatch, maxLineBytes: number): Promise<Iterable<LineResult>> {
    const started = this.workers.filter((entry) => entry.ready);
    const entry = (started.length > 0 ? started : this.workers).reduce((least, candidate) => (candidate.waiting.length < least.waiting.length ? candidate : least));
    const request: ParseRequest = { firstLine: batch.firstLine, bytes: batch.bytes, maxLineBytes };
    const results = new Promise<Iterable<LineResult>>((resolve, reject) => entry.waiting.push({ resolve, reject }));
    entry.worker.postMessage(request, [batch.bytes.buffer as ArrayBuffer]);
    return results;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map(({ worker }) => worker.terminate()));
  }
}

/** Replays `input` into `output` through `runner`; resolves with the number of steps, rejects with ReplayInputError. */
export async function replayThreaded(runner: ReplayRunner, input: AsyncIterable<Buffer | string>, output: Writable, options: ThreadedReplayOptions): Promise<number> {
  const maxLineBytes = options.maxLineBytes ?? MAX_REPLAY_LINE_BYTES;
  const script = options.workerScript ?? new URL('./parse-worker.js', import.meta.url);
  let steps = 0;
  let pending = '';
  const decide = async (results: Iterable<LineResult>): Promise<void> => {
    for (const result of results) {
      if (result.kind === 'fault') throw result.error;
      if (result.kind === 'step') checkReplayTimeOrder(result.step.line, result.step.timeMs, result.timeText, runner.previousTimeMs);
      else {
        if (result.timeMs !== null) checkReplayTimeOrder(result.error.line, result.timeMs, result.timeText ?? '', runner.previousTimeMs);
        throw result.error;
      }
      pending += `${JSON.stringify(runner.step(result.step))}\n`;
      steps++;
      if (pending.length > WRITE_BYTES) {
        const drained = output.write(pending);
        pending = '';
        if (!drained) await new Promise((resolve) => output.once('drain', resolve));
      }
    }
  };

  const batches = lineBatches(input, options.batchBytes ?? BATCH_BYTES, maxLineBytes);
  // The batches read and not yet decided, in order: each with a worker, or (null) to be parsed
  // here when its turn comes.
  const window: { readonly batch: LineBatch; readonly parsing: Promise<Iterable<LineResult>> | null }[] = [];
  let pool: ParsePool | null = null;
  // How many workers, once known.
  let workers: number | null = null;
  let readBytes = 0;
  let readDone = false;
  // A failure to read (a line over the limit, an I/O error) is reported after every line before it.
  let readFailure: { error: unknown } | null = null;
  try {
    for (;;) {
      // The workers' replies come as events: taken before the workers' room is judged.
      if (pool !== null) await new Promise(setImmediate);
      while (!readDone && window.length < (pool === null ? 1 : pool.size * AHEAD_PER_THREAD + AHEAD_HERE)) {
        let next: IteratorResult<LineBatch>;
        try {
          next = await batches.next();
        } catch (error) {
          readFailure = { error };
          readDone = true;
          break;
        }
        if (next.done === true) {
          readDone = true;
          break;
        }
        const batch = next.value;
        readBytes += batch.bytes.length;
        if (workers === null && readBytes > options.parallelAfterBytes) {
          workers = typeof options.threads === 'number' ? options.threads : options.threads();
          if (workers > 0) pool = new ParsePool(workers, script);
        }
        // A batch no worker has room for is this thread's: the workers never wait for it, and it
        // for them only as long as they are ahead.
        const parsing = pool !== null && (pool.hasRoom() || options.parseHere === false) ? pool.parse(batch, maxLineBytes) : null;
        // Awaited in order below; a replay stopped earlier must not leave its rejection unhandled.
        parsing?.catch(() => undefined);
        window.push({ batch, parsing });
      }
      const head = window.shift();
      if (head === undefined) break;
      await decide(head.parsing === null ? parseBatch(head.batch, maxLineBytes) : await head.parsing);
    }
    if (readFailure !== null) throw readFailure.error;
  } finally {
    // Every line before a bad one is printed.
    if (pending !== '') output.write(pending);
    await batches.return(undefined);
    await pool?.close();
  }
  return steps;
}
