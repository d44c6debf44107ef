// Which pods the eviction manager must never evict: mirror pods and pods at system-critical
// priority (kubelet `pkg/kubelet/types/pod_update.go`). Ranking still places them; the caller
// skips them, exactly as the kubelet's `evictPod` refuses them.
//
// Every pod the agent sees came from the API server, and whoever writes a pod writes its
// annotations. The kubelet's `IsStaticPod` reads `kubernetes.io/config.source`, but for a pod
// from the API server the kubelet has overwritten that annotation with `api` first
// (`pkg/kubelet/config/config.go`), so to the kubelet no such pod is static, whatever its author
// wrote there (or in `config.hash`, `config.seen`). What the kubelet does trust on such a pod is
// what is trusted here: the `kubernetes.io/config.mirror` annotation (its presence marks the
// mirror of a static pod) and the priority the API server admitted.

import { CONFIG_MIRROR_ANNOTATION_KEY } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';

export { CONFIG_MIRROR_ANNOTATION_KEY };

/** `scheduling.SystemCriticalPriority`: twice the highest user-definable priority (1 000 000 000). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** The API-server copy of a static pod: the mirror annotation is present, whatever its value. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY] !== undefined;
}

/** `system-cluster-critical` (2 000 000 000) and `system-node-critical` (2 000 001 000) qualify. */
export function isCriticalPodBasedOnPriority(priority: number): boolean {
  return priority >= SYSTEM_CRITICAL_PRIORITY;
}

/**
 * A mirror pod, or system-critical priority. The namespace plays no part (very old kubelets
 * required `kube-system` plus an annotation; current ones do not). An unset priority is not
 * critical, even though it ranks as 0.
 */
export function isCriticalPod(pod: Pod): boolean {
  if (isMirrorPod(pod)) return true;
  const priority = pod.spec.priority;
  return priority !== undefined && priority !== null && isCriticalPodBasedOnPriority(priority);
}
