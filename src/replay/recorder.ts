// `record`'s loop: captures a node into the replay format (docs/replay.md), one consistent step per
// interval. A step is the pods, then the summary, then the pods again: a pod that appeared,
// disappeared or changed (resourceVersion) between the two lists is left out of the step, so its
// stats are never paired with a pod object of another moment. The summary is checked as the live
// agent checks its kubelet's (only valid fields are kept), pods and the Node lose their
// managedFields, and `pods`/`node` are written only when they changed (a step that omits a key
// keeps its previous value). Every line is written whole, and the loop stops between lines: a
// recording ended by a bound or by an interrupt is valid JSON Lines.

import type { Clock } from '../api/clock.js';
import type { Node, Pod } from '../api/pod.js';
import { validateSummary } from '../api/summary-validation.js';
import { errorMessage } from '../errors.js';

/** One capture of the node's stats (the kubelet's summary, or the agent's own observer). */
export interface RecordedStats {
  /** A Summary document, validated before it is written. */
  readonly summary: unknown;
  readonly dedicatedImageFs?: boolean;
  readonly splitContainerFs?: boolean;
}

/** Where a recording is read from. Each call is a fresh read; a failure rejects. */
export interface RecordSources {
  listPods(): Promise<readonly Pod[]>;
  getNode(): Promise<Node | null>;
  /** The node's stats now; `pods` are the pods just listed (the observer finds their cgroups with them). */
  stats(pods: readonly Pod[]): Promise<RecordedStats>;
}

export interface RecordOptions {
  readonly intervalMs: number;
  /** Stop after this many steps (null: no limit). */
  readonly maxSteps: number | null;
  /** Stop once this long has passed since the start (null: no limit). */
  readonly maxDurationMs: number | null;
  /** Never write more than this: the step that would pass it is not written. */
  readonly maxBytes: number;
  readonly clock: Clock;
  /** Aborting ends the recording after the line being written, if any. */
  readonly signal: AbortSignal;
  /** Writes one whole line (newline included), synchronously. */
  readonly write: (line: string) => void;
  /** One line of progress for a human (no newline). */
  readonly progress: (text: string) => void;
}

export type RecordEnd = 'count' | 'duration' | 'size' | 'interrupted';

export interface RecordOutcome {
  readonly steps: number;
  readonly bytes: number;
  readonly durationMs: number;
  /** Pods left out of a step because they changed while it was captured. */
  readonly droppedPods: number;
  /** Captures that failed (nothing written for them). */
  readonly failedCaptures: number;
  readonly endedBy: RecordEnd;
}

export interface CapturedStep {
  readonly line: Record<string, unknown>;
  readonly dropped: number;
  readonly problems: readonly string[];
}

function version(pod: Pod): string {
  return `${pod.metadata.uid ?? ''}/${pod.metadata.resourceVersion ?? ''}`;
}

function withoutManagedFields<T extends { metadata: Pod['metadata'] }>(object: T): T {
  const { managedFields: _dropped, ...metadata } = object.metadata as Pod['metadata'] & { managedFields?: unknown };
  return { ...object, metadata };
}

/** The pods of `second` that are in `first` unchanged (same UID and resourceVersion). */
export function unchangedPods(first: readonly Pod[], second: readonly Pod[]): Pod[] {
  const before = new Set(first.map(version));
  return second.filter((pod) => pod.metadata.uid !== undefined && before.has(version(pod)));
}

/** Captures the recorder's steps, remembering what was last written to omit what did not change. */
export class StepCapturer {
  private lastPods: string | null = null;
  private lastNode: string | null = null;

  constructor(private readonly sources: RecordSources, private readonly clock: Clock) {}

  async capture(): Promise<CapturedStep> {
    const first = await this.sources.listPods();
    const timeMs = this.clock.nowMs();
    const stats = await this.sources.stats(first);
    const second = await this.sources.listPods();
    const node = await this.sources.getNode();
    const { summary, problems } = validateSummary(stats.summary);
    if (summary === null) throw new Error(problems.join('; '));
    const pods = unchangedPods(first, second).map(withoutManagedFields);
    const line: Record<string, unknown> = { time: new Date(timeMs).toISOString(), summary };
    const podsKey = pods.map(version).sort().join(',');
    if (podsKey !== this.lastPods) line.pods = pods;
    const nodeLine = node === null ? null : { apiVersion: 'v1', kind: 'Node', metadata: withoutManagedFields(node).metadata, spec: node.spec ?? {} };
    // The Node's status changes with every heartbeat; replay reads its name and taints only.
    const nodeKey = JSON.stringify(nodeLine === null ? null : { name: nodeLine.metadata.name, spec: nodeLine.spec });
    if (nodeKey !== this.lastNode) line.node = nodeLine;
    if (stats.dedicatedImageFs !== undefined) line.dedicatedImageFs = stats.dedicatedImageFs;
    if (stats.splitContainerFs !== undefined) line.splitContainerFs = stats.splitContainerFs;
    return {
      line,
      // Pods seen in either list (by UID) but not kept.
      dropped: new Set([...first, ...second].map((pod) => pod.metadata.uid)).size - pods.length,
      problems,
    };
  }

  /** Marks a captured step as written: later steps omit its pods and node when unchanged. */
  written(step: CapturedStep): void {
    const pods = step.line.pods as Pod[] | undefined;
    if (pods !== undefined) this.lastPods = pods.map(version).sort().join(',');
    if ('node' in step.line) {
      const node = step.line.node as { metadata: { name?: string }; spec: unknown } | null;
      this.lastNode = JSON.stringify(node === null ? null : { name: node.metadata.name, spec: node.spec });
    }
  }
}

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KiB`;
}

/** Records until a bound is reached or the signal aborts; never rejects for a failed capture. */
export async function record(sources: RecordSources, options: RecordOptions): Promise<RecordOutcome> {
  const { clock, signal } = options;
  const capturer = new StepCapturer(sources, clock);
  const startedMs = clock.nowMs();
  let steps = 0;
  let bytes = 0;
  let droppedPods = 0;
  let failedCaptures = 0;
  let endedBy: RecordEnd | null = null;
  const elapsedMs = (): number => clock.nowMs() - startedMs;
  while (endedBy === null) {
    if (signal.aborted) endedBy = 'interrupted';
    else if (options.maxSteps !== null && steps >= options.maxSteps) endedBy = 'count';
    else if (options.maxDurationMs !== null && elapsedMs() >= options.maxDurationMs) endedBy = 'duration';
    if (endedBy !== null) break;
    const dueMs = clock.nowMs() + options.intervalMs;
    try {
      const step = await capturer.capture();
      if (signal.aborted) {
        endedBy = 'interrupted';
        break;
      }
      const text = `${JSON.stringify(step.line)}\n`;
      const size = Buffer.byteLength(text);
      if (bytes + size > options.maxBytes) {
        endedBy = 'size';
        break;
      }
      options.write(text);
      capturer.written(step);
      steps++;
      bytes += size;
      droppedPods += step.dropped;
      const notes = [step.dropped > 0 ? `${step.dropped} pod(s) changed while captured, left out` : '', ...step.problems.map((p) => `summary: ${p} (left out)`)].filter((n) => n !== '');
      options.progress(`step ${steps}: ${(elapsedMs() / 1000).toFixed(1)} s, ${kib(bytes)}${notes.length > 0 ? `; ${notes.join('; ')}` : ''}`);
    } catch (err) {
      failedCaptures++;
      options.progress(`capture failed, nothing written for it: ${errorMessage(err)}`);
    }
    if (options.maxSteps !== null && steps >= options.maxSteps) continue;
    const waitMs = options.maxDurationMs === null ? dueMs - clock.nowMs() : Math.min(dueMs - clock.nowMs(), startedMs + options.maxDurationMs - clock.nowMs());
    if (waitMs > 0) await clock.sleep(waitMs, signal);
  }
  return { steps, bytes, durationMs: elapsedMs(), droppedPods, failedCaptures, endedBy };
}
