// The demo's node where real cgroups are not available (not root, or no cgroup v1 memory
// controller): the pods are still real processes, but the node's memory is simulated: a fixed
// capacity, used by the pods' resident memory (from /proc/<pid>/status). A poller stands in for
// the kernel notification, and a simulated OOM killer kills the largest process if usage ever
// reaches the capacity, so the race the agent runs is the same one.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Clock } from '../api/clock.js';
import { nodePodUid } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';
import { quantityValue } from '../api/quantity.js';
import type { PodStats, Summary } from '../api/summary.js';
import { getThresholdQuantity, type Threshold } from '../api/threshold.js';
import type { LocalTerminator, MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from '../daemon/ports.js';
import { ALLOCATOR, type AllocationPlan } from './sandbox-node.js';

// The UID the node knows a pod by (a static pod's own, for its mirror pod), as its processes were started under.
function nodeUidOf(pod: Pod): string {
  const id = nodePodUid(pod);
  return id.ok ? id.uid : '';
}

// How often the simulated kernel checks usage against the armed threshold and the capacity.
const POLL_MS = 20;

function residentBytes(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0; // exited
  }
}

interface SimPod {
  readonly uid: string;
  readonly containerName: string;
  readonly child: ChildProcess;
}

export class SimulatedNode {
  private readonly pods = new Map<string, SimPod>();
  private oomKillCount = 0;
  private peakBytes = 0;
  private readonly timer: NodeJS.Timeout;
  private armedBytes: number | null = null;
  private above = false;
  private listener: ((event: NotifierEvent) => void) | null = null;

  constructor(
    readonly capacityBytes: number,
    private readonly clock: Clock,
  ) {
    this.timer = setInterval(() => this.poll(), POLL_MS);
    this.timer.unref();
  }

  startPod(uid: string, _containerId: string, containerName: string, plan: AllocationPlan): ChildProcess {
    const child = spawn(process.execPath, ['-e', ALLOCATOR, String(plan.initialBytes), String(plan.stepBytes), String(plan.intervalMs)], { stdio: 'ignore' });
    this.pods.set(uid, { uid, containerName, child });
    child.once('exit', () => this.pods.delete(uid));
    return child;
  }

  usageBytes(): number {
    let total = 0;
    for (const pod of this.pods.values()) total += residentBytes(pod.child.pid);
    return total;
  }

  oomKills(): number {
    return this.oomKillCount;
  }

  maxUsageBytes(): number {
    return this.peakBytes;
  }

  private poll(): void {
    const usage = this.usageBytes();
    this.peakBytes = Math.max(this.peakBytes, usage);
    if (usage >= this.capacityBytes) {
      // The simulated kernel OOM killer: the largest process goes, whatever its priority.
      let largest: SimPod | null = null;
      for (const pod of this.pods.values()) if (largest === null || residentBytes(pod.child.pid) > residentBytes(largest.child.pid)) largest = pod;
      largest?.child.kill('SIGKILL');
      this.oomKillCount++;
    }
    if (this.armedBytes !== null) {
      const above = usage > this.armedBytes;
      if (above !== this.above) {
        this.above = above;
        this.listener?.({ description: 'hard memory eviction threshold (simulated)', atMs: this.clock.nowMs() });
      }
    }
  }

  adapters(): { observer: NodeObserver; notifier: MemoryThresholdNotifier; terminator: LocalTerminator } {
    return { observer: this.observer(), notifier: this.notifier(), terminator: this.terminator() };
  }

  observer(): NodeObserver {
    return {
      observe: async (pods: readonly Pod[]): Promise<Observation> => {
        const time = new Date(this.clock.nowMs()).toISOString();
        const podStats: PodStats[] = [];
        let total = 0;
        for (const pod of pods) {
          const sim = this.pods.get(nodeUidOf(pod));
          if (sim === undefined) continue;
          const bytes = residentBytes(sim.child.pid);
          total += bytes;
          podStats.push({
            podRef: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: sim.uid },
            memory: { time, workingSetBytes: bytes, usageBytes: bytes },
            containers: [{ name: sim.containerName, memory: { time, workingSetBytes: bytes, usageBytes: bytes } }],
          });
        }
        const summary: Summary = {
          node: { nodeName: 'demo-node', memory: { time, availableBytes: Math.max(0, this.capacityBytes - total), workingSetBytes: total, usageBytes: total } },
          pods: podStats,
        };
        return { summary, dedicatedImageFs: false, splitContainerFs: false, problems: [] };
      },
    };
  }

  notifier(): MemoryThresholdNotifier {
    return {
      mode: 'disabled',
      start: (onEvent) => {
        this.listener = onEvent;
      },
      updateThresholds: (_summary: Summary, thresholds: readonly Threshold[]) => {
        const hard = thresholds.find((t) => t.signal === 'memory.available' && t.gracePeriodMs === 0);
        this.armedBytes = hard === undefined ? null : this.capacityBytes - Number(quantityValue(getThresholdQuantity(hard.value, BigInt(this.capacityBytes))));
      },
      setActing: () => undefined,
      stop: async () => {
        this.listener = null;
      },
    };
  }

  terminator(): LocalTerminator {
    return {
      terminate: async (pod: Pod) => {
        const sim = this.pods.get(nodeUidOf(pod));
        if (sim === undefined) return { signalled: 0 };
        // The pod's program exits on SIGTERM; a second signal is never needed here.
        sim.child.kill('SIGTERM');
        return { signalled: 1 };
      },
    };
  }

  async destroy(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(
      [...this.pods.values()].map(
        ({ child }) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || child.signalCode !== null) return resolve();
            child.once('exit', () => resolve());
            child.kill('SIGKILL');
          }),
      ),
    );
  }
}
