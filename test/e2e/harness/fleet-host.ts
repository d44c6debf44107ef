// One simulated host of the fleet: what the agent's observer, memory notifier and local
// terminator would find on a node, scripted instead of read from cgroupfs and /proc. Everything
// from the observer up is the agent's own code; only the host is simulated. Each pod's working
// set, ephemeral storage and process count move a little over time (a slow wave, different per
// pod), the node's disk and PIDs with them; a storm makes one pod (the node's "leaker") grow past
// the hard memory threshold and fires the notifier as the kernel would. A pod the agent ends
// locally stops using memory at once, as a killed process would.

import type { Clock } from '../../../src/api/clock.js';
import type { HostIdentity } from '../../../src/api/host-identity.js';
import type { Pod } from '../../../src/api/pod.js';
import type { PodStats, Summary } from '../../../src/api/summary.js';
import type { LocalTerminator, MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from '../../../src/daemon/ports.js';
import type { NodeSide } from '../../../src/compose/node-side.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** The node's memory: 8 GiB, of which the system (outside pods) uses 512 MiB. */
export const FLEET_NODE_MEMORY_BYTES = 8 * GiB;
const SYSTEM_BYTES = 512 * MiB;
/** The label of the one pod per node that grows in a storm. */
export const LEAKER_LABEL = 'fleet.kube-eviction-agent.io/leaker';

// How far each pod's working set swings around its base, and how slowly (a period of minutes:
// the figures move on every pass without ever nearing a threshold at rest).
const WAVE_BYTES = 8 * MiB;
const WAVE_PERIOD_MS = 180_000;

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h;
}

export class FleetHost {
  private readonly ended = new Map<string, number>();
  private stormBytes = 0;
  private listener: ((event: NotifierEvent) => void) | null = null;

  constructor(
    readonly nodeName: string,
    private readonly clock: Clock,
    private readonly identity: HostIdentity,
  ) {}

  /** How many times the agent ended each pod's processes locally, by UID. */
  terminations(): ReadonlyMap<string, number> {
    return this.ended;
  }

  /** The leaker grows by `bytes` now and the kernel's threshold notification fires. */
  storm(bytes: number): void {
    this.stormBytes = bytes;
    this.listener?.({ description: 'hard memory eviction threshold (simulated host)', atMs: this.clock.nowMs() });
  }

  /** The storm is over: a leaker started again uses its usual memory. */
  calm(): void {
    this.stormBytes = 0;
  }

  nodeSide(): Partial<NodeSide> {
    return { observer: this.observer(), notifier: this.notifier(), terminator: this.terminator(), identity: this.identity };
  }

  private podWorkingSetBytes(pod: Pod, nowMs: number): number {
    const uid = pod.metadata.uid ?? '';
    if (this.ended.has(uid)) return 0;
    const seed = hash(uid);
    const baseBytes = (64 + (seed % 128)) * MiB;
    const wave = Math.round(WAVE_BYTES * Math.sin((2 * Math.PI * (nowMs + (seed % WAVE_PERIOD_MS))) / WAVE_PERIOD_MS));
    const leaker = pod.metadata.labels?.[LEAKER_LABEL] === 'true';
    return baseBytes + wave + (leaker ? this.stormBytes : 0);
  }

  private observer(): NodeObserver {
    return {
      observe: async (pods: readonly Pod[]): Promise<Observation> => {
        const nowMs = this.clock.nowMs();
        const time = new Date(nowMs).toISOString();
        const stats: PodStats[] = [];
        let podsBytes = 0;
        let processes = 40;
        let podDiskBytes = 0;
        for (const pod of pods) {
          const bytes = this.podWorkingSetBytes(pod, nowMs);
          const running = !this.ended.has(pod.metadata.uid ?? '');
          const diskBytes = running ? (10 + (hash(pod.metadata.uid ?? '') % 20)) * MiB + Math.floor((nowMs / 1000) % 60) * 4096 : 0;
          const podProcesses = running ? 1 + (hash(pod.metadata.uid ?? '') % 4) : 0;
          podsBytes += bytes;
          processes += podProcesses;
          podDiskBytes += diskBytes;
          const memory = { time, workingSetBytes: bytes, usageBytes: bytes + 4 * MiB, rssBytes: bytes };
          stats.push({
            podRef: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: pod.metadata.uid ?? '' },
            memory,
            containers: (pod.spec?.containers ?? []).map((c) => ({ name: c.name, memory, rootfs: { time, usedBytes: diskBytes, inodesUsed: 100 }, logs: { time, usedBytes: 0 } })),
            'ephemeral-storage': { time, usedBytes: diskBytes, inodesUsed: 100 },
            process_stats: { process_count: podProcesses },
          });
        }
        const usedBytes = SYSTEM_BYTES + podsBytes;
        const fsCapacityBytes = 100 * GiB;
        const fsUsedBytes = 20 * GiB + podDiskBytes;
        const fs = { time, capacityBytes: fsCapacityBytes, usedBytes: fsUsedBytes, availableBytes: fsCapacityBytes - fsUsedBytes, inodes: 6_000_000, inodesFree: 5_000_000, inodesUsed: 1_000_000 };
        const summary: Summary = {
          node: {
            nodeName: this.nodeName,
            memory: { time, availableBytes: Math.max(0, FLEET_NODE_MEMORY_BYTES - usedBytes), workingSetBytes: usedBytes, usageBytes: usedBytes + 64 * MiB },
            systemContainers: [{ name: 'pods', memory: { time, availableBytes: Math.max(0, FLEET_NODE_MEMORY_BYTES - SYSTEM_BYTES - podsBytes), workingSetBytes: podsBytes, usageBytes: podsBytes } }],
            fs,
            runtime: { imageFs: fs, containerFs: fs },
            rlimit: { time, maxpid: 4_194_304, curproc: processes },
          },
          pods: stats,
        };
        return { summary, dedicatedImageFs: false, splitContainerFs: false, problems: [] };
      },
    };
  }

  private notifier(): MemoryThresholdNotifier {
    return {
      mode: 'disabled',
      start: (onEvent) => {
        this.listener = onEvent;
      },
      updateThresholds: () => undefined,
      setActing: () => undefined,
      stop: async () => {
        this.listener = null;
      },
    };
  }

  private terminator(): LocalTerminator {
    return {
      terminate: async (pod: Pod) => {
        const uid = pod.metadata.uid ?? '';
        this.ended.set(uid, (this.ended.get(uid) ?? 0) + 1);
        return { signalled: 1 };
      },
    };
  }
}
