// The kubelet's part when the agent acts only through the API server: it notices that a pod was
// marked for deletion (polling the API stand-in every 5 ms, about what a watch costs), waits a
// stated kill delay (the time a real kubelet takes to see the change, sync the pod and have the
// runtime stop its containers), sends SIGTERM to the pod's processes (SIGKILL after the pod's
// 1 s grace period), and removes the pod. In the local-termination variants it does the same,
// but the processes are usually gone before it gets there.

import type { ApiStandIn } from '../../src/demo/api-stand-in.js';
import type { CgroupProcess } from './bench-cgroup.js';

export interface KubeletWatch {
  /** When the deletion was seen, and when the kill was sent (process.hrtime ns). */
  readonly seenNs: bigint | null;
  readonly killedNs: bigint | null;
  stop(): void;
}

export const KUBELET_POLL_MS = 5;
const HARD_EVICTION_GRACE_MS = 1000;

/**
 * Watches one pod until it is deleted or `stop()` is called. `onKill` runs just before the
 * processes are signalled (to sample the node's usage at that moment).
 */
export function watchPodDeletion(
  standIn: ApiStandIn,
  pod: { namespace: string; name: string },
  processes: readonly CgroupProcess[],
  killDelayMs: number,
  onKill: (atNs: bigint) => void,
): KubeletWatch {
  let seenNs: bigint | null = null;
  let killedNs: bigint | null = null;
  let stopped = false;
  const timers: NodeJS.Timeout[] = [];
  const alive = (): CgroupProcess[] => processes.filter((p) => p.child.exitCode === null && p.child.signalCode === null);
  const poll = setInterval(() => {
    const current = standIn.pod(pod.namespace, pod.name);
    if (current === null) {
      clearInterval(poll);
      return;
    }
    if (current.metadata.deletionTimestamp === undefined || current.metadata.deletionTimestamp === null) return;
    clearInterval(poll);
    seenNs = process.hrtime.bigint();
    timers.push(
      setTimeout(() => {
        if (stopped) return;
        const left = alive();
        if (left.length > 0) {
          killedNs = process.hrtime.bigint();
          onKill(killedNs);
          for (const p of left) p.child.kill('SIGTERM');
          timers.push(setTimeout(() => alive().forEach((p) => p.child.kill('SIGKILL')), HARD_EVICTION_GRACE_MS));
        }
        standIn.deletePodNow(pod.namespace, pod.name);
      }, killDelayMs),
    );
  }, KUBELET_POLL_MS);
  return {
    get seenNs() {
      return seenNs;
    },
    get killedNs() {
      return killedNs;
    },
    stop() {
      stopped = true;
      clearInterval(poll);
      for (const timer of timers) clearTimeout(timer);
    },
  };
}
