// A memory notification's shortcut to the kubelet's decision, for hard memory thresholds. Which
// threshold is met is the kubelet's `thresholdsMet` on fresh node figures; which pod goes is the
// first non-critical pod of `rankMemoryPressure` (pods without stats first, then those over their
// request, then lowest priority, then the largest working set above the request, then the node's
// order), found while reading as few working sets as that order allows.
//
// A pod's memory.usage_in_bytes bounds its working set from above (working set = usage − inactive
// page cache), and the memory ranking never puts a pod later for a larger working set. So a pod
// ranked on its usage is ranked as early as it can ever be: once the best pod found on exact
// working sets ranks strictly before every other pod's bound, no other pod can come first, and
// their working sets need not be read. Reading a usage costs a fraction of reading a memory.stat.
//
// The shortcut changes no state of the engine: the full pass that follows commits node conditions,
// grace periods and min-reclaim as always.

import type { Pod } from '../api/pod.js';
import type { PodMemoryBound, PodMemoryReading } from '../api/pod-memory.js';
import type { ResourceName } from '../api/signals.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import type { Summary } from '../api/summary.js';
import { isCriticalPod } from './critical.js';
import { makeSignalObservations } from './observations.js';
import { podPriority, podRequest } from './pod-resources.js';
import { getReclaimableThreshold, sortByEvictionPriority, thresholdsMet } from './thresholds.js';
import type { SignalObservations } from './types.js';

/** What the shortcut found: the hard memory threshold to act on, with the observations it was met on. */
export interface HardMemoryPressure {
  readonly reclaim: { readonly threshold: Threshold; readonly resource: ResourceName };
  /** Every hard memory threshold met, in the order synchronize acts on them. */
  readonly thresholds: readonly Threshold[];
  readonly observations: SignalObservations;
}

/**
 * The hard memory thresholds `summary` meets (its node memory and `pods` system container), first
 * the one synchronize would act on; null when none is met. Soft thresholds wait for their grace
 * period, which only the full pass tracks; min-reclaim only prolongs a threshold already acted on.
 */
export function hardMemoryPressure(thresholds: readonly Threshold[], summary: Summary): HardMemoryPressure | null {
  const memory = thresholds.filter((t) => (t.signal === 'memory.available' || t.signal === 'allocatableMemory.available') && isHardEvictionThreshold(t));
  if (memory.length === 0) return null;
  const { observations } = makeSignalObservations({ node: { ...(summary.node.memory === undefined ? {} : { memory: summary.node.memory }), ...(summary.node.systemContainers === undefined ? {} : { systemContainers: summary.node.systemContainers }) } });
  const met = sortByEvictionPriority(thresholdsMet(memory, observations, false), thresholds);
  const reclaim = getReclaimableThreshold(met);
  return reclaim === null ? null : { reclaim, thresholds: met, observations };
}

// The ranking's figures of a pod that do not depend on its stats, computed once per pod object
// (the watch replaces the object when the pod changes).
interface PodFigures {
  readonly requestBytes: bigint;
  readonly priority: number;
  readonly critical: boolean;
}

// One cache per PodLevelResources setting: the gate decides what a pod requests.
const figuresByPod = new WeakMap<Pod, PodFigures>();
const containerLevelFiguresByPod = new WeakMap<Pod, PodFigures>();

function figuresOf(pod: Pod, podLevelResources: boolean): PodFigures {
  const cache = podLevelResources ? figuresByPod : containerLevelFiguresByPod;
  let figures = cache.get(pod);
  if (figures === undefined) {
    figures = { requestBytes: podRequest(pod, 'memory', podLevelResources), priority: podPriority(pod), critical: isCriticalPod(pod) };
    cache.set(pod, figures);
  }
  return figures;
}

// A pod's place in rankMemoryPressure for one working set; index is its place in the node's list
// (the stable sort's last tie-break).
interface RankKey {
  readonly index: number;
  readonly exceeds: boolean;
  readonly priority: number;
  readonly excessBytes: bigint;
  /** The working set (or the usage bounding it) the key was made with. */
  readonly workingSetBytes: bigint;
}

function keyFor(index: number, figures: PodFigures, workingSetBytes: number): RankKey {
  const workingSet = BigInt(Math.trunc(workingSetBytes));
  return { index, exceeds: workingSet > figures.requestBytes, priority: figures.priority, excessBytes: workingSet - figures.requestBytes, workingSetBytes: workingSet };
}

/**
 * The least growth of `other`'s working set that puts it before `first` (which ranks before it
 * now), `first` unchanged; null when no growth can (a higher priority value than a pod over its
 * request). Growing past its request puts a pod before every pod that is not over its own; among
 * pods alike in that and in priority, the larger excess comes first, then the node's order.
 */
function overtakingGrowthBytes(first: RankKey, other: RankKey): bigint | null {
  const tie = other.index < first.index ? 0n : 1n;
  const toExceed = other.exceeds ? 0n : 1n - other.excessBytes;
  const atLeastZero = (bytes: bigint): bigint => (bytes < 0n ? 0n : bytes);
  if (first.exceeds) {
    if (other.priority > first.priority) return null;
    if (other.priority < first.priority) return toExceed;
    const past = first.excessBytes - other.excessBytes + tie;
    return atLeastZero(past > toExceed ? past : toExceed);
  }
  if (other.priority < first.priority) return 0n;
  if (other.priority > first.priority) return toExceed;
  const past = atLeastZero(first.excessBytes - other.excessBytes + tie);
  return past < toExceed ? past : toExceed;
}

/** A pod that would rank before the victim once its working set reached `overtakingWorkingSetBytes`. */
export interface VictimRival {
  readonly pod: Pod;
  readonly overtakingWorkingSetBytes: bigint;
}

/** How the victim leads the other candidates, for a kill planned ahead of the crossing. */
export interface VictimLead {
  /** The victim's working set. */
  readonly workingSetBytes: bigint;
  /**
   * Every other candidate that can rank first by growing, with the working set at which it would
   * (the victim unchanged). That point depends on the victim's figures and the pod's request,
   * priority and place, not on the pod's own working set, so it is exact for a pod not read too.
   */
  readonly rivals: readonly VictimRival[];
  /** How far the victim's working set may shrink and still exceed its request; null when it does not exceed it. */
  readonly shrinkAllowanceBytes: bigint | null;
}

/** Negative when `a` ranks before `b` (exceedMemoryRequests, priority, memory, then node order). */
function compareKeys(a: RankKey, b: RankKey): number {
  if (a.exceeds !== b.exceeds) return a.exceeds ? -1 : 1;
  if (a.priority !== b.priority) return a.priority < b.priority ? -1 : 1;
  if (a.excessBytes !== b.excessBytes) return a.excessBytes > b.excessBytes ? -1 : 1;
  return a.index - b.index;
}

/** A binary heap of keys, least (first-ranked) on top: the next pod to read is always its top. */
class KeyHeap {
  private readonly items: RankKey[];

  constructor(items: RankKey[]) {
    this.items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Every key left, in no order. */
  get remaining(): readonly RankKey[] {
    return this.items;
  }

  peek(): RankKey | undefined {
    return this.items[0];
  }

  pop(): RankKey | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (this.items.length > 0 && last !== undefined) {
      this.items[0] = last;
      this.down(0);
    }
    return top;
  }

  private down(start: number): void {
    const items = this.items;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < items.length && compareKeys(items[left] as RankKey, items[least] as RankKey) < 0) least = left;
      if (right < items.length && compareKeys(items[right] as RankKey, items[least] as RankKey) < 0) least = right;
      if (least === i) return;
      [items[i], items[least]] = [items[least] as RankKey, items[i] as RankKey];
      i = least;
    }
  }
}

/**
 * Finds the pod rankMemoryPressure puts first among the non-critical pods (critical pods are never
 * evicted, and leaving them out keeps the others' order), reading working sets lazily:
 *
 * ```
 * const search = new MemoryVictimSearch(pods, bounds);
 * for (let pod = search.next(); pod !== null; pod = search.next()) search.settle(readWorkingSet(pod));
 * search.victim;
 * ```
 */
export class MemoryVictimSearch {
  private readonly pods: readonly Pod[];
  private readonly heap: KeyHeap;
  private best: RankKey | null = null;
  /** Every exact key but the best. */
  private readonly others: RankKey[] = [];
  /** The first-ranked pod without stats: it beats every pod with stats. */
  private absent: { readonly index: number; readonly priority: number } | null = null;
  private asked: RankKey | null = null;
  private done = false;
  private reads = 0;

  /** `bounds[i]` is what is known of `pods[i]`; `podLevelResources` is the kubelet's PodLevelResources gate. */
  constructor(
    pods: readonly Pod[],
    bounds: readonly PodMemoryBound[],
    private readonly podLevelResources = true,
  ) {
    this.pods = pods;
    const bounded: RankKey[] = [];
    for (let index = 0; index < pods.length; index++) {
      const figures = figuresOf(pods[index] as Pod, podLevelResources);
      if (figures.critical) continue;
      const bound = bounds[index] ?? { kind: 'absent' };
      if (bound.kind === 'absent') this.noteAbsent(index, figures.priority);
      else if (bound.kind === 'exact') this.noteExact(keyFor(index, figures, bound.workingSetBytes));
      else bounded.push(keyFor(index, figures, bound.usageBytes));
    }
    this.heap = new KeyHeap(bounded);
  }

  /** The next pod whose working set must be read before the victim is known; null once it is. */
  next(): Pod | null {
    if (this.asked !== null) throw new Error('settle() the pod next() returned first');
    const top = this.heap.peek();
    // A pod without stats ranks before every pod with stats; the best exact pod ranks before
    // every bound left: either way no pod left to read can come first.
    if (this.absent !== null || top === undefined || (this.best !== null && compareKeys(this.best, top) < 0)) {
      this.done = true;
      return null;
    }
    this.heap.pop();
    this.asked = top;
    this.reads++;
    return this.pods[top.index] as Pod;
  }

  /** The exact working set of the pod next() returned, or what it is now (no stats any more, disk only). */
  settle(bound: PodMemoryReading): void {
    const asked = this.asked;
    if (asked === null) throw new Error('settle() without next()');
    this.asked = null;
    const figures = figuresOf(this.pods[asked.index] as Pod, this.podLevelResources);
    if (bound.kind === 'absent') this.noteAbsent(asked.index, figures.priority);
    else this.noteExact(keyFor(asked.index, figures, bound.workingSetBytes));
  }

  /** The pod to evict: the first non-critical pod in rank order; null when every pod is critical. */
  get victim(): Pod | null {
    if (!this.done) throw new Error('the search is not finished: call next() until it returns null');
    if (this.absent !== null) return this.pods[this.absent.index] as Pod;
    return this.best === null ? null : (this.pods[this.best.index] as Pod);
  }

  /**
   * How the victim leads every other candidate (the pods not read are keyed on their usage, which
   * moves no pod's overtaking point); null when there is no victim, or it is a pod without stats.
   */
  get lead(): VictimLead | null {
    const victim = this.victim;
    const first = this.best;
    if (victim === null || this.absent !== null || first === null) return null;
    const rivals: VictimRival[] = [];
    for (const other of [...this.others, ...this.heap.remaining]) {
      const growth = overtakingGrowthBytes(first, other);
      if (growth !== null) rivals.push({ pod: this.pods[other.index] as Pod, overtakingWorkingSetBytes: other.workingSetBytes + growth });
    }
    return { workingSetBytes: first.workingSetBytes, rivals, shrinkAllowanceBytes: first.exceeds ? first.excessBytes : null };
  }

  /** How many working sets were read (for the metrics and the benchmarks). */
  get workingSetsRead(): number {
    return this.reads;
  }

  // Pods without stats are ordered among themselves by priority alone, then node order.
  private noteAbsent(index: number, priority: number): void {
    const current = this.absent;
    if (current === null || priority < current.priority || (priority === current.priority && index < current.index)) this.absent = { index, priority };
  }

  private noteExact(key: RankKey): void {
    if (this.best === null || compareKeys(key, this.best) < 0) {
      if (this.best !== null) this.others.push(this.best);
      this.best = key;
    } else this.others.push(key);
  }
}
