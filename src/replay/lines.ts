// The lines of a replay input, each at most MAX_REPLAY_LINE_BYTES: a longer line is refused by its
// number before it is held whole, so a huge or endless line costs the limit, not the process (a
// line past V8's string limit used to end `replay` in a raw stack trace).

import { ReplayInputError } from '../errors.js';

/** The longest input line `replay` reads, in bytes (64 MiB: a recording of a node with thousands of pods fits). */
export const MAX_REPLAY_LINE_BYTES = 64 * 1024 * 1024;

export interface InputLine {
  /** 1-based. */
  readonly line: number;
  /** Without its `\n` (or `\r\n`). */
  readonly text: string;
}

/** Splits `input` into lines; throws {@link ReplayInputError} at the first over `maxLineBytes` (a `\r` before the `\n` counts). */
export async function* boundedLines(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, maxLineBytes = MAX_REPLAY_LINE_BYTES): AsyncGenerator<InputLine> {
  let parts: Buffer[] = [];
  let partsBytes = 0;
  let line = 0;
  // Held only up to the limit: past it the line is refused before the rest is read.
  const hold = (piece: Buffer): void => {
    if (partsBytes + piece.length > maxLineBytes) throw lineTooLong(line + 1, maxLineBytes);
    parts.push(piece);
    partsBytes += piece.length;
  };
  // A line held whole in one piece is decoded where it lies, without a copy.
  const finish = (): InputLine => {
    const bytes = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, partsBytes);
    parts = [];
    partsBytes = 0;
    line++;
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    return { line, text: bytes.toString('utf8', 0, end) };
  };
  for await (const chunk of input) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (let newline = data.indexOf(0x0a); newline >= 0; newline = data.indexOf(0x0a, start)) {
      hold(data.subarray(start, newline));
      yield finish();
      start = newline + 1;
    }
    hold(data.subarray(start));
  }
  if (partsBytes > 0) yield finish();
}

/** The error of a line over `maxLineBytes`. */
export function lineTooLong(line: number, maxLineBytes: number): ReplayInputError {
  return new ReplayInputError(line, '', `longer than ${formatLimit(maxLineBytes)}, the limit of a replay input line (one step per line: record shorter steps)`);
}

function formatLimit(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}
