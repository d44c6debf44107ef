// Which pods the eviction manager must never evict: static pods, mirror pods and pods at system
// critical priority (kubelet `pkg/kubelet/types/pod_update.go`). Ranking still places them; the
// caller skips them, exactly as the kubelet's `evictPod` refuses them.

import { CONFIG_MIRROR_ANNOTATION_KEY } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';

export { CONFIG_MIRROR_ANNOTATION_KEY };

/** `scheduling.SystemCriticalPriority`: twice the highest user-definable priority (1 000 000 000). */
export const SYSTEM_CRITICAL_PRIORITY = 2_000_000_000;

/** Where the kubelet recorded that a pod came from (`file`, `http` or `api`). */
export const CONFIG_SOURCE_ANNOTATION_KEY = 'kubernetes.io/config.source';
/** The source value of pods that came from the API server. */
export const API_SERVER_SOURCE = 'api';

/**
 * A pod the kubelet read from a manifest file or URL: its source annotation is present and is not
 * `api`. A node agent rarely sees these directly; it sees their mirror pods.
 */
export function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.[CONFIG_SOURCE_ANNOTATION_KEY];
  return source !== undefined && source !== API_SERVER_SOURCE;
}

/** The API-server copy of a static pod: the mirror annotation is present, whatever its value. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY] !== undefined;
}

/** `system-cluster-critical` (2 000 000 000) and `system-node-critical` (2 000 001 000) qualify. */
export function isCriticalPodBasedOnPriority(priority: number): boolean {
  return priority >= SYSTEM_CRITICAL_PRIORITY;
}

/**
 * Static, mirror, or system-critical priority. The namespace plays no part (very old kubelets
 * required `kube-system` plus an annotation; current ones do not). An unset priority is not
 * critical, even though it ranks as 0.
 */
export function isCriticalPod(pod: Pod): boolean {
  if (isStaticPod(pod) || isMirrorPod(pod)) return true;
  const priority = pod.spec.priority;
  return priority !== undefined && priority !== null && isCriticalPodBasedOnPriority(priority);
}
