// The ports the core declares and the adapters implement: where observations come from and what
// wakes the loop. Adapters (src/observe, src/notifier, src/kube) implement these; the core never
// imports an adapter.

import type { Pod } from '../api/pod.js';
import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';

/** One observation of the node: the Summary plus the filesystem layout the kubelet would discover. */
export interface Observation {
  readonly summary: Summary;
  /** A dedicated image filesystem (imagefs on another device than nodefs). */
  readonly dedicatedImageFs: boolean;
  /** Container writable layers on a filesystem split from the image filesystem. */
  readonly splitContainerFs: boolean;
  /** Reasons some stats are missing (a file unreadable, a cgroup not found); each a short sentence. */
  readonly problems: readonly string[];
}

/** Produces observations (cgroupfs/proc/statfs, or the kubelet's /stats/summary). */
export interface NodeObserver {
  /** Observes the node now; `pods` are the node's pods, used to find their cgroups and container names. */
  observe(pods: readonly Pod[]): Promise<Observation>;
}

/** What a notifier reports when the kernel says memory crossed an armed threshold. */
export interface NotifierEvent {
  /** Like the kubelet's `Description()`: `hard memory eviction threshold`, `soft allocatable memory eviction threshold`, `psi memory pressure`. */
  readonly description: string;
  /** When the wake-up reached JavaScript (ms since the epoch, from the injected clock). */
  readonly atMs: number;
}

/** Wakes the synchronize loop the moment memory crosses a threshold. */
export interface MemoryThresholdNotifier {
  /** `memcg-v1` (eventfd on cgroup v1), `psi` (cgroup v2 PSI trigger plus a fast check), or `disabled`. */
  readonly mode: 'memcg-v1' | 'psi' | 'disabled';
  /** Starts waiting; `onEvent` is called once per wake-up, never concurrently with itself. */
  start(onEvent: (event: NotifierEvent) => void): void;
  /**
   * Re-arms the memory thresholds from the latest observation (kubelet `UpdateThreshold`):
   * `capacity - threshold + inactive_file` on memory.usage_in_bytes, for `memory.available` on the
   * root cgroup and `allocatableMemory.available` on the kubepods cgroup, hard and soft.
   */
  updateThresholds(summary: Summary, thresholds: readonly Threshold[]): void;
  /** Stops promptly, even while a wait is outstanding; releases every descriptor. Idempotent. */
  stop(): Promise<void>;
}
