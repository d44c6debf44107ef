// Hand-written fakes of the node-side ports: an observer whose Summary the test sets, a notifier
// the test fires, and a terminator that records what it was asked to end.

import type { Pod } from '../../src/api/pod.js';
import type { Summary } from '../../src/api/summary.js';
import type { Threshold } from '../../src/api/threshold.js';
import type { LocalTerminator, MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from '../../src/daemon/ports.js';

export class FakeObserver implements NodeObserver {
  summary: Summary = { node: {} };
  dedicatedImageFs = false;
  splitContainerFs = false;
  problems: string[] = [];
  failWith: Error | null = null;
  readonly observedPods: (readonly Pod[])[] = [];
  /** Whether a pod's volumes are still on the kubelet's root; left out, the observer cannot tell. */
  podVolumesPresent?: (pod: Pod) => boolean | undefined;

  async observe(pods: readonly Pod[]): Promise<Observation> {
    this.observedPods.push(pods);
    if (this.failWith !== null) throw this.failWith;
    return { summary: this.summary, dedicatedImageFs: this.dedicatedImageFs, splitContainerFs: this.splitContainerFs, problems: this.problems };
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
  processesPerPod = 2;

  async terminate(pod: Pod, gracePeriodMs: number): Promise<{ signalled: number }> {
    this.calls.push({ uid: pod.metadata.uid ?? '', gracePeriodMs });
    return { signalled: this.processesPerPod };
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
