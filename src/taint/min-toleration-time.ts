// How long a pod may stay once every NoExecute taint is tolerated: upstream
// `getMinTolerationTime`, in milliseconds. -1 means forever, 0 means now.

import type { Toleration } from '../api/pod.js';

/** The "tolerate forever" answer. */
export const TOLERATE_FOREVER = -1;

const MS_PER_SECOND = 1000;

/**
 * The smallest `tolerationSeconds` among the tolerations used, in ms. An unset value is ignored
 * (forever); a value <= 0 answers 0 at once; nothing finite answers -1. An empty list answers 0,
 * as upstream does (quirk Q2): callers must never reach here without taints. Upstream multiplies
 * into an int64 Duration that overflows past ~292 years; here the delay is capped at the largest
 * exact millisecond count instead, which is never reached in practice but never wraps negative.
 */
export function getMinTolerationTimeMs(used: readonly Toleration[]): number {
  if (used.length === 0) return 0;
  let minSeconds = Number.POSITIVE_INFINITY;
  for (const toleration of used) {
    const seconds = toleration.tolerationSeconds;
    if (seconds === undefined || seconds === null) continue;
    if (seconds <= 0) return 0;
    if (seconds < minSeconds) minSeconds = seconds;
  }
  if (minSeconds === Number.POSITIVE_INFINITY) return TOLERATE_FOREVER;
  return Math.min(minSeconds * MS_PER_SECOND, Number.MAX_SAFE_INTEGER);
}
