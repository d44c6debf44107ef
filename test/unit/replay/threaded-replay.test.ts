// Replay with the parsing on worker threads against the single-threaded replay, byte for byte: the
// same output lines, the same error (class and message, line number included) after the same
// lines, on the examples, the golden recordings, a 110-pod node, and recordings with refused pods
// and bad lines placed in the middle of a batch, at a batch's edge and past the switch from this
// thread to the workers. Small batches put every recording across many batches and both workers.
// The workers run the built parse-worker.js (npm test builds first).

import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { autoThreads, replayStream } from '../../../src/cli/replay.js';
import { parseConfigText } from '../../../src/config/load.js';
import { ReplayRunner } from '../../../src/replay/runner.js';
import { replayThreaded } from '../../../src/replay/threaded-replay.js';
import { pickTaintOptions } from '../../../src/taint/taint-options.js';
import { GOLDEN_CONFIG, GOLDEN_KUBELET_CONFIG, goldenRecording } from '../../fixtures/replay-recording.js';
import { runCli } from '../../cli/run-cli.js';

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const WORKER = new URL('dist/src/replay/parse-worker.js', `file://${REPO_ROOT}/`);

class Collect extends Writable {
  text = '';

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.text += chunk.toString();
    done();
  }
}

interface Outcome {
  readonly printed: string;
  readonly steps: number | null;
  /** `ClassName: message` of what stopped the replay. */
  readonly error: string | null;
}

// Pieces of 7 KiB: lines are cut across reads, as a file or a pipe delivers them.
function chunks(recording: string): Readable {
  const bytes = Buffer.from(recording, 'utf8');
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 7 * 1024) pieces.push(bytes.subarray(at, at + 7 * 1024));
  return Readable.from(pieces);
}

async function outcome(run: (output: Writable) => Promise<number>): Promise<Outcome> {
  const output = new Collect();
  try {
    const steps = await run(output);
    return { printed: output.text, steps, error: null };
  } catch (err) {
    return { printed: output.text, steps: null, error: err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err) };
  }
}

type Mode = { readonly threads: number; readonly parallelAfterBytes: number; readonly batchBytes: number; readonly parseHere?: boolean; readonly workerScript?: URL };

async function both(configYaml: string, recording: string, modes: readonly Mode[], maxLineBytes?: number): Promise<{ single: Outcome; threaded: Outcome[] }> {
  const config = parseConfigText(configYaml, 'config.yaml');
  const taints = pickTaintOptions(config.agent.taintEviction);
  const { stormGuard } = config.agent;
  const { retriggerWindowMs } = config.agent.reporting;
  const single = await outcome((output) => replayStream(config.eviction, chunks(recording), output, taints, maxLineBytes, stormGuard, retriggerWindowMs));
  const threaded: Outcome[] = [];
  for (const mode of modes) {
    const runner = new ReplayRunner(config.eviction, taints, stormGuard, retriggerWindowMs);
    threaded.push(await outcome((output) => replayThreaded(runner, chunks(recording), output, { workerScript: WORKER, ...mode, ...(maxLineBytes === undefined ? {} : { maxLineBytes }) })));
  }
  return { single, threaded };
}

// Two workers from the first byte, parsing every batch; one worker after this thread parsed the
// first 20 KiB, sharing the batches with this thread.
const MODES: readonly Mode[] = [
  { threads: 2, parallelAfterBytes: 0, batchBytes: 8 * 1024, parseHere: false },
  { threads: 1, parallelAfterBytes: 20 * 1024, batchBytes: 3 * 1024 },
];

const golden = goldenRecording(100, 14, 14);
const lines = (replace: Readonly<Record<number, string>>, base: readonly string[] = golden): string => `${base.map((line, i) => replace[i + 1] ?? line).join('\n')}\n`;
const at = (line: number): Record<string, unknown> => JSON.parse(golden[line - 1] as string) as Record<string, unknown>;
const withKeys = (line: number, keys: Record<string, unknown>): string => JSON.stringify({ ...at(line), ...keys });
const deep = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

// 110 pods, their pods with the first step only, a full Summary at every step.
function nodeOf110Pods(steps: number): string {
  const pods = Array.from({ length: 110 }, (_, i) => ({
    metadata: { name: `app-${i}`, namespace: 'bench', uid: `00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}` },
    spec: { containers: [{ name: 'main', resources: { requests: { memory: `${64 + (i % 8) * 64}Mi` } } }] },
    status: { phase: 'Running' },
  }));
  const out: string[] = [];
  for (let step = 0; step < steps; step++) {
    const time = new Date(Date.UTC(2026, 0, 1) + step * 10_000).toISOString();
    const summaryPods = pods.map((p, i) => {
      const workingSetBytes = Math.round((96 + (i % 8) * 64 + 48 * Math.sin(step / 3 + i)) * 2 ** 20);
      const memory = { time, workingSetBytes, usageBytes: workingSetBytes + 4 * 2 ** 20 };
      return { podRef: { name: p.metadata.name, namespace: 'bench', uid: p.metadata.uid }, memory, containers: [{ name: 'main', memory }] };
    });
    const availableBytes = step % 20 < 3 ? 400 * 2 ** 20 : 8 * 2 ** 30;
    const summary = { node: { nodeName: 'n', memory: { time, availableBytes, workingSetBytes: 2 ** 36 - availableBytes } }, pods: summaryPods };
    out.push(JSON.stringify({ time, summary, ...(step === 0 ? { pods, node: { metadata: { name: 'n' } } } : {}) }));
  }
  return `${out.join('\n')}\n`;
}

const refusedPods = [
  { metadata: { name: 'bad-quantity', uid: 'u-1' }, spec: { containers: [{ name: 'c', resources: { requests: { memory: '12XYZ' } } }] } },
  { metadata: { name: 'twin-a', uid: 'u-2' }, spec: { containers: [{ name: 'c' }] } },
  { metadata: { name: 'twin-b', uid: 'u-2' }, spec: { containers: [{ name: 'c' }] } },
  'not a pod',
];

const cases: readonly { name: string; config: string; recording: () => string; maxLineBytes?: number; stops?: RegExp; shows?: string }[] = [
  {
    name: 'the example recording',
    config: readFileSync(join(REPO_ROOT, 'examples/memory-pressure.config.yaml'), 'utf8'),
    recording: () => readFileSync(join(REPO_ROOT, 'examples/memory-pressure.jsonl'), 'utf8'),
  },
  { name: 'the golden recording, agent configuration with the storm guard', config: GOLDEN_CONFIG, recording: () => lines({}) },
  { name: 'the golden recording, kubelet configuration', config: GOLDEN_KUBELET_CONFIG, recording: () => `${goldenRecording(100, 14, 7).join('\r\n\r\n')}\r\n` },
  { name: 'a node of 110 pods', config: GOLDEN_KUBELET_CONFIG, recording: () => nodeOf110Pods(40) },
  { name: 'refused pods on two steps', config: GOLDEN_CONFIG, recording: () => lines({ 37: withKeys(37, { pods: [...(at(1).pods as unknown[]), ...refusedPods] }), 80: withKeys(80, { pods: refusedPods }) }), shows: '"refusedPods":[{"pod":"default/bad-quantity","reason":"line 37: pods[' },
  { name: 'invalid JSON', config: GOLDEN_CONFIG, recording: () => lines({ 60: '{"time": ' }), stops: /line 60: invalid JSON/ },
  { name: 'time going backwards', config: GOLDEN_CONFIG, recording: () => lines({ 71: withKeys(71, { time: '2020-01-01T00:00:00Z' }) }), stops: /line 71: time: time goes backwards/ },
  {
    name: 'time going backwards on a line with a bad summary: the time is named',
    config: GOLDEN_CONFIG,
    recording: () => lines({ 45: withKeys(45, { time: '2020-01-01T00:00:00Z', summary: { node: { memory: { availableBytes: -1 } } } }) }),
    stops: /line 45: time: time goes backwards/,
  },
  { name: 'a bad summary', config: GOLDEN_CONFIG, recording: () => lines({ 88: withKeys(88, { summary: { node: { memory: { availableBytes: 'lots' } } } }) }), stops: /line 88: summary.node.memory.availableBytes/ },
  { name: 'an unknown key on the first line', config: GOLDEN_CONFIG, recording: () => lines({ 1: withKeys(1, { extra: 1 }) }), stops: /line 1: extra: unknown key/ },
  { name: 'a bad last line without a newline', config: GOLDEN_CONFIG, recording: () => lines({}).trimEnd().concat('\n{"time": 3}'), stops: /line 101: time: expected an RFC 3339 timestamp/ },
  { name: 'a line over the limit', config: GOLDEN_CONFIG, recording: () => lines({ 57: withKeys(57, { node: { metadata: { name: 'x'.repeat(100_000) } } }) }), maxLineBytes: 64 * 1024, stops: /line 57: longer than 65536 bytes/ },
  { name: 'an endless last line over the limit', config: GOLDEN_CONFIG, recording: () => `${lines({})}${'x'.repeat(100_000)}`, maxLineBytes: 64 * 1024, stops: /line 101: longer than 65536 bytes/ },
  { name: 'a value nested too deep to describe', config: GOLDEN_CONFIG, recording: () => lines({ 33: `{"time":"2026-11-01T12:10:00Z","summary":{"node":{"memory":{"availableBytes":${deep(200_000)}}}}}` }), stops: /Maximum call stack size exceeded/ },
];

describe('replay on worker threads prints what the single-threaded replay prints', () => {
  beforeAll(() => {
    if (!existsSync(fileURLToPath(WORKER))) throw new Error(`${fileURLToPath(WORKER)} is missing: run \`npm run build\` first (npm test does)`);
  });

  test.each(cases)('$name', async ({ config, recording, maxLineBytes, stops, shows }) => {
    const { single, threaded } = await both(config, recording(), MODES, maxLineBytes);
    // The recording does what its name says.
    if (stops === undefined) {
      expect(single.error).toBeNull();
      expect(single.steps).toBeGreaterThan(10);
    } else expect(single.error).toMatch(stops);
    if (shows !== undefined) expect(single.printed).toContain(shows);
    for (const run of threaded) {
      expect(run.error).toBe(single.error);
      expect(run.steps).toBe(single.steps);
      expect(run.printed).toBe(single.printed);
    }
  });

  test('batches handed to the workers are parsed there: a worker that cannot start stops the replay', async () => {
    const { threaded } = await both(GOLDEN_CONFIG, lines({}), [{ threads: 2, parallelAfterBytes: 0, batchBytes: 4096, parseHere: false, workerScript: new URL('file:///nonexistent/parse-worker.js') }]);
    expect(threaded[0]?.error).toMatch(/Cannot find module|ERR_MODULE_NOT_FOUND|exited/);
    expect(threaded[0]?.printed).toBe('');
  });

  test('a recording shorter than the switch is replayed without starting a worker', async () => {
    // A worker started from a script that does not exist would fail the replay.
    const { single, threaded } = await both(GOLDEN_CONFIG, lines({}), [{ threads: 2, parallelAfterBytes: 1 << 30, batchBytes: 4096, workerScript: new URL('file:///nonexistent/parse-worker.js') }]);
    expect(threaded[0]?.error).toBeNull();
    expect(threaded[0]?.printed).toBe(single.printed);
  });

  test('the command takes --threads: the same output with 2 as with 0; anything but auto or 0 to 16 refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-replay-threads-'));
    try {
      writeFileSync(join(dir, 'config.yaml'), GOLDEN_CONFIG);
      writeFileSync(join(dir, 'recording.jsonl'), lines({}));
      const run = (threads: string) => runCli(['replay', '--config', join(dir, 'config.yaml'), '--threads', threads, join(dir, 'recording.jsonl')]);
      const [two, zero] = [run('2'), run('0')];
      expect([two.status, two.stderr]).toEqual([0, '']);
      expect(two.stdout).toBe(zero.stdout);
      const bad = run('17');
      expect(bad.status).not.toBe(0);
      expect(bad.stderr).toMatch(/--threads <count>.*expected auto or a whole number from 0 to 16/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('autoThreads: the workers a long recording gets by default', () => {
  test.each([
    { name: 'one CPU', cpus: 1, load: 0, workers: 0 },
    { name: 'two idle CPUs', cpus: 2, load: 0.3, workers: 1 },
    { name: 'two CPUs, one of them half busy', cpus: 2, load: 0.6, workers: 0 },
    { name: 'two CPUs busy with other work', cpus: 2, load: 5, workers: 0 },
    { name: 'four CPUs, one busy', cpus: 4, load: 1.2, workers: 2 },
    { name: 'eight idle CPUs: at most three', cpus: 8, load: 0.1, workers: 3 },
  ])('$name: $workers', ({ cpus, load, workers }) => {
    expect(autoThreads(cpus, load)).toBe(workers);
  });
});
