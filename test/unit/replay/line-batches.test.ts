// Batches of whole lines give the lines boundedLines gives, with the same numbers, whatever the
// reads and the batch size: `\r\n`, blank lines, a last line without a newline, characters split
// across reads; and a line over the limit refused with the same number after the same lines,
// having read no more than about the limit of it.

import { ReplayInputError } from '../../../src/errors.js';
import { lineBatches, parseBatch, type LineBatch } from '../../../src/replay/line-batches.js';
import { boundedLines } from '../../../src/replay/lines.js';

const step = (i: number, pad = ''): string => `{"time":"2026-11-01T12:00:${String(i % 60).padStart(2, '0')}Z",${pad}"node":{"metadata":{"name":"n-é€-${i}"}}}`;

/** `line:node name` of each step, then the error that stopped the lines, if one did. */
async function viaBoundedLines(chunks: readonly Buffer[], maxLineBytes: number): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const { line, text } of boundedLines(chunks, maxLineBytes)) {
      if (text.trim() !== '') out.push(`${line}:${(JSON.parse(text) as { node: { metadata: { name: string } } }).node.metadata.name}`);
    }
  } catch (err) {
    if (!(err instanceof ReplayInputError)) throw err;
    out.push(err.message);
  }
  return out;
}

/** The same through batches, parsed; a refused line ends it as it ends a replay. */
async function viaBatches(chunks: readonly Buffer[], batchBytes: number, maxLineBytes: number): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const batch of lineBatches(chunks, batchBytes, maxLineBytes)) {
      for (const result of parseBatch(batch, maxLineBytes)) {
        if (result.kind === 'fault') throw result.error;
        // The replay stops at the first refused line.
        if (result.kind === 'refused') return [...out, result.error.message];
        out.push(`${result.step.line}:${result.step.node?.metadata.name ?? ''}`);
      }
    }
  } catch (err) {
    if (!(err instanceof ReplayInputError)) throw err;
    out.push(err.message);
  }
  return out;
}

/** The input cut into reads of `size` bytes. */
function reads(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, at + size));
  return out;
}

const LIMIT = 200;
const inputs: readonly { name: string; text: string }[] = [
  { name: 'plain lines', text: `${[1, 2, 3, 4, 5].map((i) => step(i)).join('\n')}\n` },
  { name: '\\r\\n line ends, blank lines and a last line without a newline', text: `${step(1)}\r\n\r\n  \n${step(2)}\r\n\n${step(3)}` },
  { name: 'an empty input', text: '' },
  { name: 'blank lines only', text: '\n\r\n \n' },
  { name: 'a line of exactly the limit', text: `${step(1)}\n${step(2, ' '.repeat(LIMIT - Buffer.byteLength(step(2))))}\n${step(3)}\n` },
  { name: 'a whole line over the limit after others', text: `${step(1)}\n${step(2)}\n${step(3, ' '.repeat(LIMIT))}\n${step(4)}\n` },
  { name: 'a last line over the limit, without its end', text: `${step(1)}\n\n${step(2)}\n${'x'.repeat(3 * LIMIT)}` },
  { name: 'a \\r counted in the limit', text: `${step(1)}\n${step(2, ' '.repeat(LIMIT - Buffer.byteLength(step(2))))}\r\n` },
];

describe('lineBatches and parseBatch', () => {
  test.each(inputs)('$name: the lines of boundedLines, for any reads and batch size', async ({ text }) => {
    for (const readBytes of [1, 7, 64, 100_000]) {
      const chunks = reads(text, readBytes);
      const expected = await viaBoundedLines(chunks, LIMIT);
      for (const batchBytes of [1, 50, 1 << 20]) expect([readBytes, batchBytes, await viaBatches(chunks, batchBytes, LIMIT)]).toEqual([readBytes, batchBytes, expected]);
    }
  });

  test('every batch is whole lines in a buffer of its own', async () => {
    const text = `${[1, 2, 3, 4, 5, 6].map((i) => step(i)).join('\n')}\n${step(7)}`;
    const batches: LineBatch[] = [];
    for await (const batch of lineBatches(reads(text, 13), 60, LIMIT)) batches.push(batch);
    expect(batches.length).toBeGreaterThan(2);
    expect(Buffer.concat(batches.map((b) => b.bytes)).toString()).toBe(text);
    for (const batch of batches.slice(0, -1)) expect(batch.bytes.at(-1)).toBe(0x0a);
    for (const batch of batches) expect([batch.bytes.byteOffset, batch.bytes.buffer.byteLength]).toEqual([0, batch.bytes.length]);
    expect(batches.map((b) => b.firstLine)).toEqual(batches.map((_, i) => 1 + batches.slice(0, i).reduce((n, b) => n + b.bytes.toString().split('\n').length - 1, 0)));
  });

  test('an endless line is refused after reading about the limit of it', async () => {
    let readBytes = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      yield Buffer.from(`${step(1)}\n`);
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (;;) {
        readBytes += chunk.length;
        yield chunk;
      }
    }
    const limit = 1024 * 1024;
    const out: string[] = [];
    await expect(
      (async () => {
        for await (const batch of lineBatches(endless(), 1 << 20, limit)) for (const result of parseBatch(batch, limit)) if (result.kind === 'step') out.push(String(result.step.line));
      })(),
    ).rejects.toThrow(/^line 2: longer than 1 MiB/);
    expect(out).toEqual(['1']);
    expect(readBytes).toBeLessThanOrEqual(limit + 64 * 1024);
  });
});
