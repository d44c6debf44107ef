// Hand-written fakes of the node-side ports: an observer whose Summary the test sets (with, on
// request, the memory reader a memory notification's shortcut and the kill path's arming read), a
// notifier the test fires, a terminator that records what it was asked to end or keep ended, and a
// kill path whose plans the test sees and fires.

import { nodePodUid } from '../../src/api/node-pod-uid.js';
import type { Pod } from '../../src/api/pod.js';
import type { PodMemoryBound, PodMemoryReading } from '../../src/api/pod-memory.js';
import type { PodStats, Summary } from '../../src/api/summary.js';
import type { Threshold } from '../../src/api/threshold.js';
import type { KillPath, KillPathPlan, KillPathReport, LocalTerminator, MemoryReader, MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from '../../src/daemon/ports.js';

export class FakeObserver implements NodeObserver {
  summary: Summary = { node: {} };
  dedicatedImageFs = false;
  splitContainerFs = false;
  problems: string[] = [];
  failWith: Error | null = null;
  readonly observedPods: (readonly Pod[])[] = [];
  /**
   * A pass that does not read the pods (reduced reads): the pods' figures it reports, carried from
   * an earlier reading, in place of the Summary's; the memory reader still reads the Summary's.
   */
  carriedPods: PodStats[] | null = null;
  /** Whether a pod's volumes are still on the kubelet's root; left out, the observer cannot tell. */
  podVolumesPresent?: (pod: Pod) => boolean | undefined;

  /** Set by withMemoryReader(). */
  memory?: MemoryReader;
  /** Processes left in each pod's cgroup by UID (1 when not set), for the memory reader. */
  readonly processes = new Map<string, number>();

  async observe(pods: readonly Pod[]): Promise<Observation> {
    this.observedPods.push(pods);
    if (this.failWith !== null) throw this.failWith;
    const summary = this.carriedPods === null ? this.summary : { ...this.summary, pods: this.carriedPods };
    return { summary, dedicatedImageFs: this.dedicatedImageFs, splitContainerFs: this.splitContainerFs, problems: this.problems };
  }

  /** Gives the observer a memory reader of its current Summary: every pod listed has exact stats, the others none. */
  withMemoryReader(): this {
    const statsOf = (pod: Pod): PodStats | undefined => {
      const id = nodePodUid(pod);
      return id.ok ? this.summary.pods?.find((p) => p.podRef.uid === id.uid) : undefined;
    };
    const reading = (pod: Pod): PodMemoryReading => {
      const bytes = statsOf(pod)?.memory?.workingSetBytes;
      return bytes === undefined ? { kind: 'absent' } : { kind: 'exact', workingSetBytes: bytes };
    };
    this.memory = {
      nodeMemory: () => ({ node: { ...(this.summary.node.memory === undefined ? {} : { memory: this.summary.node.memory }), ...(this.summary.node.systemContainers === undefined ? {} : { systemContainers: this.summary.node.systemContainers }) } }),
      podBounds: (pods) => pods.map((pod): PodMemoryBound => reading(pod)),
      podWorkingSet: reading,
      podStats: statsOf,
      podProcessCount: (pod) => this.processes.get(pod.metadata.uid ?? '') ?? 1,
    };
    return this;
  }
}

export class FakeNotifier implements MemoryThresholdNotifier {
  readonly mode = 'memcg-v1' as const;
  private listener: ((event: NotifierEvent) => void) | null = null;
  readonly updates: { summary: Summary; thresholds: readonly Threshold[] }[] = [];
  stopped = false;

  start(onEvent: (event: NotifierEvent) => void): void {
    this.listener = onEvent;
  }

  updateThresholds(summary: Summary, thresholds: readonly Threshold[]): void {
    this.updates.push({ summary, thresholds });
  }

  /** What the agent said, in order: whether it acts. */
  readonly acting: boolean[] = [];

  setActing(acting: boolean): void {
    this.acting.push(acting);
  }

  /** Simulates a kernel crossing. */
  fire(atMs: number, description = 'hard memory eviction threshold'): void {
    this.listener?.({ description, atMs });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.listener = null;
  }
}

export class FakeTerminator implements LocalTerminator {
  readonly calls: { uid: string; gracePeriodMs: number }[] = [];
  /** The pods the kill path ended, handed over to be kept ended. */
  readonly adopted: { uid: string; gracePeriodMs: number }[] = [];
  processesPerPod = 2;

  async terminate(pod: Pod, gracePeriodMs: number): Promise<{ signalled: number }> {
    this.calls.push({ uid: pod.metadata.uid ?? '', gracePeriodMs });
    return { signalled: this.processesPerPod };
  }

  adopt(pod: Pod, gracePeriodMs: number): void {
    this.adopted.push({ uid: pod.metadata.uid ?? '', gracePeriodMs });
  }
}

/**
 * A kill path that arms what it is given and fires when the test says (as its thread would: the
 * report waits until it is collected, or delivered as the message event would deliver it).
 */
export class FakeKillPath implements KillPath {
  /** Every plan armed, in order. */
  readonly plans: KillPathPlan[] = [];
  private state: 'idle' | 'armed' | 'fired' = 'idle';
  private listener: ((report: KillPathReport) => void) | null = null;
  private readonly undelivered: KillPathReport[] = [];
  /** What arm() answers instead of arming (why it cannot), when set. */
  refuse: string | null = null;
  stopped = false;

  start(onReport: (report: KillPathReport) => void): void {
    this.listener = onReport;
  }

  arm(plan: KillPathPlan): string | null {
    if (this.refuse !== null) return this.refuse;
    this.plans.push(plan);
    this.state = 'armed';
    return null;
  }

  disarm(): boolean {
    if (this.state === 'fired') return false;
    this.state = 'idle';
    return true;
  }

  get armed(): boolean {
    return this.state === 'armed';
  }

  /** The plan armed now, if one is. */
  get plan(): KillPathPlan | undefined {
    return this.state === 'armed' ? this.plans.at(-1) : undefined;
  }

  collect(): void {
    for (const report of this.undelivered.splice(0)) this.listener?.(report);
  }

  /** The fake judges at once: what it fired is delivered. */
  standAside(): void {
    this.collect();
  }

  /** The thread fires the armed plan at this working set: the report waits for collect() or deliver(). */
  fire(atMs: number, workingSetBytes: bigint, termination = { signalled: 2 }): void {
    const plan = this.plan;
    const threshold = plan?.thresholds[0];
    if (plan === undefined || threshold === undefined) throw new Error('nothing armed');
    this.state = 'fired';
    this.undelivered.push({ kind: 'killed', plan, threshold, usageBytes: workingSetBytes, workingSetBytes, wokeAtMs: atMs, issuedAtMs: atMs, wokeAtNs: 0n, issuedAtNs: 0n, termination });
  }

  /** Reports as the thread's message would reach the main thread. */
  report(report: KillPathReport): void {
    this.listener?.(report);
  }

  /** Delivers what was fired, as the message event would when the main thread is free. */
  deliver(): void {
    this.collect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.state = 'idle';
  }
}

/** A Summary with node memory, for `capacityBytes` and `availableBytes`, and pod working sets by UID. */
export function memorySummary(capacityBytes: number, availableBytes: number, podWorkingSets: Record<string, { name: string; namespace?: string; bytes: number }> = {}, timeIso?: string): Summary {
  return {
    node: {
      nodeName: 'node-a',
      memory: { availableBytes, workingSetBytes: capacityBytes - availableBytes, usageBytes: capacityBytes - availableBytes, ...(timeIso === undefined ? {} : { time: timeIso }) },
    },
    pods: Object.entries(podWorkingSets).map(([uid, p]) => ({
      podRef: { uid, name: p.name, namespace: p.namespace ?? 'default' },
      memory: { workingSetBytes: p.bytes, usageBytes: p.bytes },
      containers: [{ name: 'app', memory: { workingSetBytes: p.bytes, usageBytes: p.bytes } }],
    })),
  };
}
