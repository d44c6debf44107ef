// `record`'s command line: every bound checked and refused with the flag's name, and an existing
// recording never overwritten; the file it writes ends with the summary line on stderr.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { recordSettings, recordToOutput, type RecordCliOptions } from '../../src/cli/record.js';
import { FakeClock } from '../fakes/fake-clock.js';
import { memorySummary } from '../fakes/fake-node.js';

const base: RecordCliOptions = { nodeName: 'node-a', output: 'out.jsonl', source: 'kubelet', interval: '10s', maxSize: '256Mi' };

test('the defaults: a step every 10 s, no count or duration, at most 256Mi', () => {
  expect(recordSettings(base, {})).toEqual({ nodeName: 'node-a', output: 'out.jsonl', source: 'kubelet', intervalMs: 10_000, maxSteps: null, maxDurationMs: null, maxBytes: 256 * 1024 ** 2 });
  expect(recordSettings({ ...base, nodeName: undefined, count: '3', duration: '1h30m' } as unknown as RecordCliOptions, { NODE_NAME: 'from-env' })).toMatchObject({ nodeName: 'from-env', maxSteps: 3, maxDurationMs: 5_400_000 });
});

test.each([
  [{ nodeName: undefined }, 'The node name is unknown'],
  [{ source: 'cadvisor' }, '--source must be kubelet or observer'],
  [{ source: 'observer' }, '--source observer needs --config'],
  [{ interval: '500ms' }, '--interval must be at least 1s'],
  [{ interval: 'often' }, '--interval: time: invalid duration "often"'],
  [{ count: '0' }, '--count must be a positive integer'],
  [{ count: '2.5' }, '--count must be a positive integer'],
  [{ duration: '-1m' }, '--duration must be positive'],
  [{ maxSize: 'lots' }, '--max-size:'],
  [{ maxSize: '17Gi' }, '--max-size must be more than 0 and at most 16Gi'],
])('%j is refused: %s', (override, message) => {
  expect(() => recordSettings({ ...base, ...override } as RecordCliOptions, {})).toThrow(message);
});

test('an existing file is never overwritten; a new one holds the steps and stderr says how it ended', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kea-record-'));
  try {
    const existing = join(dir, 'old.jsonl');
    writeFileSync(existing, 'kept\n');
    const sources = {
      listPods: () => Promise.resolve([]),
      getNode: () => Promise.resolve(null),
      stats: () => Promise.resolve({ summary: memorySummary(8 * 1024 ** 3, 4 * 1024 ** 3) }),
    };
    const stderr = new PassThrough();
    let said = '';
    stderr.on('data', (chunk: Buffer) => (said += chunk.toString()));
    const deps = { clock: new FakeClock(), signal: new AbortController().signal, stderr };
    await expect(recordToOutput({ ...recordSettings(base, {}), output: existing }, sources, deps)).rejects.toThrow(/cannot create .*old\.jsonl: .*EEXIST/);
    expect(readFileSync(existing, 'utf8')).toBe('kept\n');

    const fresh = join(dir, 'new.jsonl');
    const outcome = await recordToOutput({ ...recordSettings({ ...base, count: '1' }, {}), output: fresh }, sources, deps);
    expect(outcome).toMatchObject({ steps: 1, endedBy: 'count' });
    expect(readFileSync(fresh, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(said).toMatch(/record: 1 step\(s\) in 0\.0 s, \d+ bytes, to .*new\.jsonl; ended: the step count was reached\n$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
