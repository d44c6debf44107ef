// `record`'s loop on a fake clock and fake sources: consistent steps (a pod that changed between
// the two pod lists is left out), pods and node written only when changed, every bound (count,
// duration, size, interrupt) ending on a whole line, failed captures skipped, and a recording
// that `replay` reads back to the decision the live engine made.

import { PassThrough } from 'node:stream';
import type { Node, Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { replayStream } from '../../../src/cli/replay.js';
import { parseReplayLine } from '../../../src/replay/input.js';
import { record, unchangedPods, type RecordOptions, type RecordSources } from '../../../src/replay/recorder.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { memorySummary } from '../../fakes/fake-node.js';
import { makePod } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

function withVersion(pod: Pod, resourceVersion: string): Pod {
  return { ...pod, metadata: { ...pod.metadata, resourceVersion, managedFields: [{ manager: 'kubelet' }] } as Pod['metadata'] };
}

const leaky = withVersion(makePod({ name: 'leaky', requests: { memory: '100Mi' } }), '10');
const batch = withVersion(makePod({ name: 'batch', requests: { memory: '100Mi' } }), '11');
const node: Node = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', resourceVersion: '1' }, spec: { taints: [] }, status: { conditions: [] } };

/** Sources whose pod lists and stats a test scripts, one entry per call (the last one repeats). */
class ScriptedSources implements RecordSources {
  podLists: Pod[][] = [[leaky, batch]];
  availableBytes: number[] = [4 * Gi];
  node: Node = node;
  failNext = 0;
  private podCalls = 0;
  private statCalls = 0;

  listPods(): Promise<readonly Pod[]> {
    const list = this.podLists[Math.min(this.podCalls++, this.podLists.length - 1)] ?? [];
    return Promise.resolve(list);
  }

  getNode(): Promise<Node | null> {
    return Promise.resolve(this.node);
  }

  stats(): Promise<{ summary: unknown }> {
    if (this.failNext > 0) {
      this.failNext--;
      return Promise.reject(new Error('connection refused'));
    }
    const available = this.availableBytes[Math.min(this.statCalls++, this.availableBytes.length - 1)] ?? 0;
    return Promise.resolve({ summary: memorySummary(8 * Gi, available, { 'uid-default-leaky': { name: 'leaky', bytes: 3 * Gi }, 'uid-default-batch': { name: 'batch', bytes: 200 * Mi } }) });
  }
}

interface Run {
  lines: string[];
  progress: string[];
  options: RecordOptions;
}

function runOptions(clock: FakeClock, overrides: Partial<RecordOptions> = {}): Run {
  const lines: string[] = [];
  const progress: string[] = [];
  const options: RecordOptions = {
    intervalMs: 10_000,
    maxSteps: null,
    maxDurationMs: null,
    maxBytes: 1024 ** 2,
    clock,
    signal: new AbortController().signal,
    write: (line) => lines.push(line),
    progress: (text) => progress.push(text),
    ...overrides,
  };
  return { lines, progress, options };
}

/** Runs `record` to its end, stepping the fake clock as it sleeps. */
async function drive(clock: FakeClock, promise: Promise<unknown>): Promise<void> {
  let done = false;
  void promise.finally(() => {
    done = true;
  });
  for (let i = 0; i < 10_000 && !done; i++) await clock.stepAsync(1000);
}

const parsed = (run: Run): Record<string, unknown>[] => run.lines.map((line) => JSON.parse(line) as Record<string, unknown>);

// The recorded lines replayed with a 1Gi hard memory.available threshold: each output line, parsed.
async function replayRecorded(lines: readonly string[]): Promise<unknown[]> {
  const config = parseConfigText('apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: 1Gi\n', 'config.yaml');
  const input = new PassThrough();
  input.end(lines.join(''));
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  const steps = await replayStream(config.eviction, input, output);
  const decisions = printed.trim().split('\n').map((line) => JSON.parse(line) as unknown);
  expect(decisions).toHaveLength(steps);
  return decisions;
}

test('unchangedPods keeps the pods of the second list that are in the first with the same resourceVersion', () => {
  const created = withVersion(makePod({ name: 'new' }), '20');
  expect(unchangedPods([leaky, batch], [withVersion(leaky, '12'), batch, created]).map((p) => p.metadata.name)).toEqual(['batch']);
  expect(unchangedPods([leaky, batch], [leaky])).toEqual([leaky]);
});

test('a step every interval until the count; pods and node only when they changed; managedFields and node status left out', async () => {
  const clock = new FakeClock();
  const sources = new ScriptedSources();
  // Second step: `leaky` changed between the two lists (its resourceVersion moved): left out.
  sources.podLists = [[leaky, batch], [leaky, batch], [leaky, batch], [withVersion(leaky, '12'), batch], [withVersion(leaky, '12'), batch]];
  const run = runOptions(clock, { maxSteps: 3 });
  const startedMs = clock.nowMs();
  const outcome = record(sources, run.options);
  await drive(clock, outcome);
  expect(await outcome).toMatchObject({ steps: 3, endedBy: 'count', droppedPods: 1, failedCaptures: 0 });
  const steps = parsed(run);
  expect(steps.map((s) => Date.parse(s.time as string) - startedMs)).toEqual([0, 10_000, 20_000]);
  expect(steps.map((s) => (s.pods as Pod[] | undefined)?.map((p) => p.metadata.name))).toEqual([['leaky', 'batch'], ['batch'], [leaky, batch].map((p) => p.metadata.name)]);
  expect((steps[0]?.pods as Pod[])[0]?.metadata).not.toHaveProperty('managedFields');
  expect(steps.map((s) => 'node' in s)).toEqual([true, false, false]);
  expect(steps[0]?.node).toEqual({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a', resourceVersion: '1' }, spec: { taints: [] } });
  expect(run.progress.some((p) => p.includes('1 pod(s) changed while captured, left out'))).toBe(true);
  // Each written step is a valid replay line.
  let previous: number | null = null;
  run.lines.forEach((line, i) => {
    previous = parseReplayLine(line, i + 1, previous).timeMs;
  });
});

test('duration and size bounds end the recording on a whole line; a failed capture writes nothing', async () => {
  const clock = new FakeClock();
  const sources = new ScriptedSources();
  sources.failNext = 1;
  const byDuration = runOptions(clock, { maxDurationMs: 35_000 });
  const outcome = record(sources, byDuration.options);
  await drive(clock, outcome);
  // Captures at 0 (failed), 10, 20 and 30 s.
  expect(await outcome).toMatchObject({ steps: 3, failedCaptures: 1, endedBy: 'duration' });
  expect(byDuration.progress[0]).toMatch(/^capture failed, nothing written for it: connection refused/);

  const oneLine = byDuration.lines[0]?.length ?? 0;
  const bySize = runOptions(clock, { maxBytes: oneLine * 2 + 10 });
  const sized = record(new ScriptedSources(), bySize.options);
  await drive(clock, sized);
  expect(await sized).toMatchObject({ endedBy: 'size' });
  const total = bySize.lines.reduce((n, line) => n + Buffer.byteLength(line), 0);
  expect(total).toBeLessThanOrEqual(oneLine * 2 + 10);
  for (const line of bySize.lines) expect(line.endsWith('\n')).toBe(true);
});

test('an interrupt ends it after the line being written, at once, with every line whole', async () => {
  const clock = new FakeClock();
  const abort = new AbortController();
  const run = runOptions(clock, { signal: abort.signal });
  const outcome = record(new ScriptedSources(), run.options);
  await clock.stepAsync(25_000);
  abort.abort();
  const result = await outcome;
  expect(result).toMatchObject({ steps: 3, endedBy: 'interrupted' });
  expect(result.durationMs).toBe(25_000);
  expect(run.lines.every((line) => line.endsWith('\n') && JSON.parse(line) !== null)).toBe(true);
});

test('record then replay: the recording replays to the decision the engine made live', async () => {
  const clock = new FakeClock();
  const sources = new ScriptedSources();
  // Plenty, then below the 1Gi hard threshold.
  sources.availableBytes = [4 * Gi, 900 * Mi];
  const run = runOptions(clock, { maxSteps: 2 });
  const outcome = record(sources, run.options);
  await drive(clock, outcome);
  expect((await outcome).steps).toBe(2);
  const decisions = (await replayRecorded(run.lines)) as { evictions: { pod: string }[]; nodeConditions: string[] }[];
  expect(decisions).toHaveLength(2);
  expect(decisions.map((d) => d.evictions.map((e) => e.pod))).toEqual([[], ['default/leaky']]);
  expect(decisions[1]?.nodeConditions).toEqual(['MemoryPressure']);
});

test('a mirror pod whose static pod UID the manifest set ("abc") is recorded as it is; its replay refuses it alone and decides on the rest', async () => {
  const clock = new FakeClock();
  const sources = new ScriptedSources();
  const etcd = withVersion(makePod({ name: 'etcd-node-a', namespace: 'kube-system', annotations: { 'kubernetes.io/config.mirror': 'abc', 'kubernetes.io/config.hash': 'abc', 'kubernetes.io/config.source': 'file' } }), '12');
  sources.podLists = [[etcd, leaky, batch]];
  sources.availableBytes = [900 * Mi];
  const run = runOptions(clock, { maxSteps: 1 });
  const outcome = record(sources, run.options);
  await drive(clock, outcome);
  expect(await outcome).toMatchObject({ steps: 1, droppedPods: 0, failedCaptures: 0 });
  const pods = parsed(run)[0]?.pods as Pod[];
  expect(pods.map((p) => p.metadata.name)).toEqual(['etcd-node-a', 'leaky', 'batch']);
  expect(pods[0]).toEqual(withoutManaged(etcd));
  expect(run.progress).toEqual([expect.stringMatching(/^step 1: 0\.0 s, [\d.]+ KiB$/)]);

  const decisions = (await replayRecorded(run.lines)) as { evictions: { pod: string }[]; refusedPods: { pod: string; reason: string }[] }[];
  expect(decisions).toHaveLength(1);
  const decision = decisions[0] as (typeof decisions)[number];
  expect(decision.evictions.map((e) => e.pod)).toEqual(['default/leaky']);
  expect(decision.refusedPods).toEqual([{ pod: 'kube-system/etcd-node-a', reason: 'line 1: pods[0].metadata.annotations["kubernetes.io/config.mirror"]: "abc" is not a static pod UID (32 lowercase hex digits, or a UUID)' }]);
});

function withoutManaged(pod: Pod): Pod {
  const { managedFields: _dropped, ...metadata } = pod.metadata as Pod['metadata'] & { managedFields?: unknown };
  return { ...pod, metadata };
}
