// The scenario harness for the eviction manager, after the kubelet's `eviction_manager_test.go`:
// a fake clock, a node whose stats a script sets between passes, the node's pods and their stats,
// and one call that runs a pass at the clock's time. Thresholds and configs are built here too.

import type { EvictionConfig } from '../../../src/api/eviction-config.js';
import type { Pod } from '../../../src/api/pod.js';
import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import type { FsStats, MemoryStats, PodStats, Summary } from '../../../src/api/summary.js';
import { percentageRatio, type Threshold, type ThresholdValue } from '../../../src/api/threshold.js';
import { EvictionManager } from '../../../src/eviction/manager.js';
import type { SynchronizeResult } from '../../../src/eviction/types.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { amount, type Amount } from '../../fixtures/pods.js';

export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;

/** A quantity threshold value ('1Gi', '1200'). */
export const quantity = (raw: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(raw) });
/** A percentage threshold value, float32 as the kubelet parses it (10 for "10%"). */
export const percent = (value: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(value) });

export function hardThreshold(signal: Signal, value: ThresholdValue, minReclaim: ThresholdValue | null = null): Threshold {
  return { signal, value, gracePeriodMs: 0, minReclaim };
}

export function softThreshold(signal: Signal, value: ThresholdValue, gracePeriodMs: number, minReclaim: ThresholdValue | null = null): Threshold {
  return { signal, value, gracePeriodMs, minReclaim };
}

/** A compiled config with the kubelet's defaults, local storage isolation off unless asked for. */
export function makeConfig(overrides: Partial<EvictionConfig> & { thresholds: readonly Threshold[] }): EvictionConfig {
  return {
    pressureTransitionPeriodMs: 5 * MINUTE_MS,
    maxPodGracePeriodSeconds: 0,
    localStorageCapacityIsolation: false,
    kernelMemcgNotification: false,
    housekeepingIntervalMs: 10 * SECOND_MS,
    ...overrides,
  };
}

/** A memory cgroup: what is available and its limit (the working set is the difference). */
export interface MemoryState {
  readonly available: Amount;
  readonly capacity?: Amount;
}

/** A filesystem's bytes and inodes; either pair may be left out. */
export interface FsState {
  readonly available?: Amount;
  readonly capacity?: Amount;
  readonly inodesFree?: Amount;
  readonly inodes?: Amount;
}

/** The node's stats; a part left out is absent from the Summary (no observation). */
export interface NodeState {
  readonly memory?: MemoryState;
  /** The `pods` system container (allocatable memory). */
  readonly allocatable?: MemoryState;
  readonly nodefs?: FsState;
  readonly imagefs?: FsState;
  readonly containerfs?: FsState;
  readonly pid?: { readonly maxpid: number; readonly curproc: number };
}

const stamp = (time: string | undefined): { time?: string } => (time === undefined ? {} : { time });

function memoryStats(state: MemoryState, time: string | undefined): MemoryStats {
  const availableBytes = amount(state.available);
  const capacityBytes = amount(state.capacity ?? '8Gi');
  return { ...stamp(time), availableBytes, workingSetBytes: capacityBytes - availableBytes, usageBytes: capacityBytes - availableBytes };
}

function fsStats(state: FsState, time: string | undefined): FsStats {
  const fs: FsStats = stamp(time);
  if (state.available !== undefined) fs.availableBytes = amount(state.available);
  if (state.capacity !== undefined) fs.capacityBytes = amount(state.capacity);
  if (state.inodesFree !== undefined) fs.inodesFree = amount(state.inodesFree);
  if (state.inodes !== undefined) fs.inodes = amount(state.inodes);
  return fs;
}

/** A Summary for the node state and pod stats; every stat stamped with `timeMs` (none when null). */
export function makeSummary(node: NodeState, pods: readonly PodStats[], timeMs: number | null): Summary {
  const time = timeMs === null ? undefined : new Date(timeMs).toISOString();
  const summary: Summary = { node: { nodeName: 'node-a' }, pods: [...pods] };
  if (node.memory !== undefined) summary.node.memory = memoryStats(node.memory, time);
  if (node.allocatable !== undefined) summary.node.systemContainers = [{ name: 'pods', memory: memoryStats(node.allocatable, time) }];
  if (node.nodefs !== undefined) summary.node.fs = fsStats(node.nodefs, time);
  if (node.imagefs !== undefined || node.containerfs !== undefined) {
    summary.node.runtime = {};
    if (node.imagefs !== undefined) summary.node.runtime.imageFs = fsStats(node.imagefs, time);
    if (node.containerfs !== undefined) summary.node.runtime.containerFs = fsStats(node.containerfs, time);
  }
  if (node.pid !== undefined) summary.node.rlimit = { ...stamp(time), maxpid: node.pid.maxpid, curproc: node.pid.curproc };
  return summary;
}

/**
 * One node under test: step the clock, set `node` (and pods), call `sync()`, assert. Stats carry
 * the clock's time unless `statTimeMs` pins them (a number, or null for no time at all).
 */
export class Scenario {
  readonly clock = new FakeClock();
  readonly manager: EvictionManager;
  node: NodeState = {};
  pods: Pod[] = [];
  podStats: PodStats[] = [];
  dedicatedImageFs = false;
  splitContainerFs = false;
  statTimeMs: number | null | 'clock' = 'clock';
  /** Signals whose pods cannot be ranked (the caller found too many without stats). */
  unrankableSignals: ReadonlySet<Signal> = new Set();
  /** When true the pass gets no summary (the stats provider failed). */
  summaryUnavailable = false;

  constructor(config: EvictionConfig) {
    this.manager = new EvictionManager(config);
  }

  step(ms: number): this {
    this.clock.step(ms);
    return this;
  }

  sync(): SynchronizeResult {
    const timeMs = this.statTimeMs === 'clock' ? this.clock.nowMs() : this.statTimeMs;
    return this.manager.synchronize({
      nowMs: this.clock.nowMs(),
      summary: this.summaryUnavailable ? null : makeSummary(this.node, this.podStats, timeMs),
      pods: this.pods,
      dedicatedImageFs: this.dedicatedImageFs,
      splitContainerFs: this.splitContainerFs,
      unrankableSignals: this.unrankableSignals,
    });
  }
}

/** The evicted pods' names, in order. */
export function evictedNames(result: SynchronizeResult): string[] {
  return result.evictions.map((e) => e.pod.metadata.name ?? '');
}

/** The ranked pods' names, in order. */
export function rankedNames(result: SynchronizeResult): string[] {
  return result.ranking.map((r) => r.pod.metadata.name ?? '');
}

/** The signals of a result's thresholds list, for compact assertions. */
export function signalsOf(list: readonly { threshold: Threshold }[]): string[] {
  return list.map((t) => `${t.threshold.signal}${t.threshold.gracePeriodMs === 0 ? '' : '(soft)'}`);
}

/** Priorities of the kubelet's tests. */
export const LOW_PRIORITY = -1;
export const DEFAULT_PRIORITY = 0;
export const HIGH_PRIORITY = 1;

/** The sentences of a pass's notes, in order. */
export function messages(result: SynchronizeResult): string[] {
  return result.notes.map((note) => note.message);
}
