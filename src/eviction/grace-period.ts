// The grace period the eviction manager overrides a pod's own with (kubelet `synchronize`, the
// loop that evicts one pod): 1 s for hard thresholds and local-storage limits, the configured
// maximum for soft thresholds, never more than the pod's own terminationGracePeriodSeconds.

import type { Pod } from '../api/pod.js';

/** `immediateEvictionGracePeriodSeconds` (0 in old releases such as v1.14; 1 today). */
export const IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1;

/**
 * Hard: 1. Soft: `maxPodGracePeriodSeconds` (`evictionMaxPodGracePeriod`), lowered to the pod's
 * terminationGracePeriodSeconds when the pod sets one (kubernetes PR #122890), so with the default
 * maximum of 0 a soft eviction asks for 0. A negative maximum is passed through as it is: the
 * documented "negative defers to the pod" was never implemented upstream (issue #118172), and
 * this keeps the kubelet's behaviour rather than the documentation's.
 */
export function evictionGracePeriodSeconds(hard: boolean, maxPodGracePeriodSeconds: number, pod: Pod): number {
  if (hard) return IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS;
  const podGracePeriodSeconds = pod.spec.terminationGracePeriodSeconds;
  if (podGracePeriodSeconds === undefined || podGracePeriodSeconds === null) return maxPodGracePeriodSeconds;
  return Math.min(maxPodGracePeriodSeconds, podGracePeriodSeconds);
}
