// A replay input cut into batches of whole lines, and a batch parsed into its steps, for a replay
// that parses on several threads: each batch is a buffer of its own (so it can be handed to a
// thread without a copy), numbered by its first line, and parsed without knowing the previous
// step's time. The lines, their numbers and their limit are exactly those of boundedLines
// (lines.ts): the same `\r\n` handling, blank lines skipped, and a line over the limit refused
// by its number once the limit is passed, before the rest of it is read.

import { ReplayInputError } from '../errors.js';
import { completeReplayLine, readReplayLineHead, type ReplayStep } from './input.js';
import { lineTooLong, MAX_REPLAY_LINE_BYTES } from './lines.js';

export interface LineBatch {
  /** The number of its first line (1-based). */
  readonly firstLine: number;
  /** Whole lines, each ending with `\n` but the input's last; the buffer's memory is its own. */
  readonly bytes: Buffer;
}

/** A line parsed up to the order of its time, which the thread that decides checks. */
export type LineResult =
  | { readonly kind: 'step'; readonly step: ReplayStep; readonly timeText: string }
  /** The line is refused; `timeMs` when its time was read before the problem was found (its order is checked first). */
  | { readonly kind: 'refused'; readonly error: ReplayInputError; readonly timeMs: number | null; readonly timeText: string | null }
  /** Parsing it failed in a way no input should (a defect): rethrown as it is. */
  | { readonly kind: 'fault'; readonly error: unknown };

const NEWLINE = 0x0a;

function countNewlines(data: Buffer): number {
  let count = 0;
  for (let at = data.indexOf(NEWLINE); at >= 0; at = data.indexOf(NEWLINE, at + 1)) count++;
  return count;
}

/**
 * Cuts `input` into batches of whole lines of at least `batchBytes` (the last may be shorter, and
 * a batch holds at least one line). Throws {@link ReplayInputError} when a line grows past
 * `maxLineBytes` before its end arrives; a complete line over it is refused by {@link parseBatch}.
 */
export async function* lineBatches(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, batchBytes: number, maxLineBytes = MAX_REPLAY_LINE_BYTES): AsyncGenerator<LineBatch> {
  let parts: Buffer[] = [];
  let partsBytes = 0;
  let partsNewlines = 0;
  // Where the last whole line in `parts` ends (0: none has).
  let wholeBytes = 0;
  // The bytes of the line not yet ended (a `\r` before its `\n` counts, as in boundedLines).
  let openLineBytes = 0;
  let firstLine = 1;
  // The first `end` bytes of `parts` as a batch; the rest stays in `parts`.
  const cut = (end: number): LineBatch => {
    const bytes = Buffer.allocUnsafeSlow(end);
    const rest: Buffer[] = [];
    let at = 0;
    for (const part of parts) {
      const taken = Math.min(part.length, end - at);
      at += part.copy(bytes, at, 0, taken);
      if (taken < part.length) rest.push(part.subarray(taken));
    }
    const batch = { firstLine, bytes };
    firstLine += partsNewlines;
    parts = rest;
    partsBytes -= end;
    partsNewlines = 0;
    wholeBytes = 0;
    return batch;
  };
  for await (const chunk of input) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    if (data.length === 0) continue;
    const newlines = countNewlines(data);
    const last = newlines === 0 ? -1 : data.lastIndexOf(NEWLINE);
    if (last >= 0) wholeBytes = partsBytes + last + 1;
    openLineBytes = last < 0 ? openLineBytes + data.length : data.length - last - 1;
    parts.push(data);
    partsBytes += data.length;
    partsNewlines += newlines;
    const tooLong = openLineBytes > maxLineBytes;
    // The lines before one that is too long are replayed first, as boundedLines yields them.
    if (wholeBytes > 0 && (partsBytes >= batchBytes || tooLong)) yield cut(wholeBytes);
    if (tooLong) throw lineTooLong(firstLine, maxLineBytes);
  }
  if (partsBytes > 0) yield cut(partsBytes);
}

function failure(err: unknown, head: { readonly timeMs: number; readonly timeText: string } | null): LineResult {
  if (!(err instanceof ReplayInputError)) return { kind: 'fault', error: err };
  return { kind: 'refused', error: err, timeMs: head?.timeMs ?? null, timeText: head?.timeText ?? null };
}

/** One line's text, parsed as `parseReplayLine` does but for the order of its time. */
export function parseLine(text: string, line: number): LineResult {
  let head;
  try {
    head = readReplayLineHead(text, line);
  } catch (err) {
    return failure(err, null);
  }
  try {
    return { kind: 'step', step: completeReplayLine(head), timeText: head.timeText };
  } catch (err) {
    return failure(err, head);
  }
}

/**
 * The non-blank lines of a batch, parsed one at a time as they are taken (so that only the line
 * in hand is alive, and what parsing it left dies young); it stops at the first refused line (the
 * replay stops there).
 */
export function* parseBatch(batch: LineBatch, maxLineBytes = MAX_REPLAY_LINE_BYTES): Generator<LineResult> {
  const { bytes } = batch;
  let line = batch.firstLine;
  for (let start = 0; start < bytes.length; line++) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline < 0 ? bytes.length : newline;
    if (end - start > maxLineBytes) {
      yield { kind: 'refused', error: lineTooLong(line, maxLineBytes), timeMs: null, timeText: null };
      return;
    }
    const text = bytes.toString('utf8', start, end > start && bytes[end - 1] === 0x0d ? end - 1 : end);
    start = end + 1;
    if (text.trim() === '') continue;
    const result = parseLine(text, line);
    yield result;
    if (result.kind !== 'step') return;
  }
}
