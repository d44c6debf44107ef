// What a synchronize pass asks its caller to log (the pure engine never logs), as typed records:
// a code to match on, the fields to log, and the kubelet's own sentence as the message.

import { podKey, type Pod } from '../api/pod.js';
import type { Signal } from '../api/signals.js';
import type { SynchronizeNote } from './types.js';

export function noObservationNote(signal: Signal): SynchronizeNote {
  return { code: 'no-observation', signal, message: `no observation found for eviction signal ${signal}` };
}

export function criticalPodNote(pod: Pod): SynchronizeNote {
  const key = podKey(pod);
  return { code: 'critical-pod', pod: key, message: `cannot evict a critical pod ${key}` };
}

export function noActivePodsNote(): SynchronizeNote {
  return { code: 'no-active-pods', message: 'eviction thresholds have been met, but no pods are active to evict' };
}

export function unableToEvictNote(): SynchronizeNote {
  return { code: 'unable-to-evict', message: 'unable to evict any pods from the node' };
}

export function containerFsIgnoredNote(signal: Signal, hard: boolean): SynchronizeNote {
  return { code: 'containerfs-threshold-ignored', signal, hard, message: `found ${signal} for ${hard ? 'hard' : 'soft'} eviction. ignoring` };
}

/**
 * The kubelet with KubeletSeparateDiskGC off on a node whose container filesystem is split from
 * the image filesystem: its first pass fails ("KubeletSeparateDiskGC is turned off but we still
 * have a split filesystem") and every later one finds no rank function, so no threshold evicts.
 */
export function noRankingFunctionNote(signal: Signal): SynchronizeNote {
  return {
    code: 'no-ranking-function',
    signal,
    message: `no ranking function for signal ${signal}: KubeletSeparateDiskGC is turned off but we still have a split filesystem`,
  };
}
