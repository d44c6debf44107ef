// The replay input's lines: split across any chunking, CRLF and UTF-8 kept whole, and a line over
// the limit refused by its number after reading at most the limit of it.

import { ReplayInputError } from '../../../src/errors.js';
import { boundedLines, MAX_REPLAY_LINE_BYTES } from '../../../src/replay/lines.js';

async function lines(chunks: readonly (string | Buffer)[], maxLineBytes?: number): Promise<string[]> {
  const out: string[] = [];
  for await (const { line, text } of boundedLines(chunks, maxLineBytes)) out.push(`${line}:${text}`);
  return out;
}

async function refusal(input: AsyncIterable<Buffer | string> | Iterable<Buffer | string>, maxLineBytes: number): Promise<ReplayInputError> {
  try {
    for await (const line of boundedLines(input, maxLineBytes)) void line;
  } catch (err) {
    if (err instanceof ReplayInputError) return err;
    throw err;
  }
  throw new Error('expected a ReplayInputError');
}

describe('boundedLines', () => {
  test('splits on newlines whatever the chunks, drops a \\r before the \\n, keeps a last line without one', async () => {
    expect(await lines(['a\nb', 'c\r\n\n', 'd'])).toEqual(['1:a', '2:bc', '3:', '4:d']);
    expect(await lines(['', 'x\n'])).toEqual(['1:x']);
    expect(await lines([])).toEqual([]);
  });

  test('a character split across chunks is decoded whole', async () => {
    const bytes = Buffer.from('é€\n', 'utf8');
    expect(await lines([bytes.subarray(0, 1), bytes.subarray(1, 3), bytes.subarray(3)])).toEqual(['1:é€']);
  });

  test('a line of exactly the limit is read; one byte more is refused, naming the line and the limit', async () => {
    expect(await lines([`${'x'.repeat(8)}\n${'y'.repeat(8)}`], 8)).toEqual([`1:${'x'.repeat(8)}`, `2:${'y'.repeat(8)}`]);
    const err = await refusal(['ok\n', 'x'.repeat(5), 'x'.repeat(4), '\n'], 8);
    expect(err.line).toBe(2);
    expect(err.message).toBe('line 2: longer than 8 bytes, the limit of a replay input line (one step per line: record shorter steps)');
  });

  test('an endless line is refused after reading about the limit of it, never held whole', async () => {
    let readBytes = 0;
    async function* endless(): AsyncGenerator<Buffer> {
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      for (;;) {
        readBytes += chunk.length;
        yield chunk;
      }
    }
    const limit = 1024 * 1024;
    const err = await refusal(endless(), limit);
    expect(err.line).toBe(1);
    expect(readBytes).toBeLessThanOrEqual(limit + 64 * 1024);
  });

  test('the limit is 64 MiB and says so', async () => {
    expect(MAX_REPLAY_LINE_BYTES).toBe(64 * 1024 * 1024);
    const err = await refusal([Buffer.alloc(MAX_REPLAY_LINE_BYTES + 1, 0x61)], MAX_REPLAY_LINE_BYTES);
    expect(err.message).toMatch(/^line 1: longer than 64 MiB, the limit/);
  });
});
