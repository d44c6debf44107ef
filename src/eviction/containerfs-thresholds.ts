// The `containerfs.*` thresholds (kubelet `UpdateContainerFsThresholds`). The container writable
// layers live on nodefs or on the image filesystem, never on a filesystem of their own with its
// own settings, so their thresholds are copied from whichever of the two holds them, once the
// filesystem layout is known. User-given `containerfs.*` entries are overwritten.

import type { Signal } from '../api/signals.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import { containerFsIgnoredNote } from './notes.js';
import type { SynchronizeNote } from './types.js';

type Kind = 'available' | 'inodesFree';

// The four synthesized thresholds, in the order the kubelet appends them.
const TARGETS: readonly { readonly kind: Kind; readonly hard: boolean }[] = [
  { kind: 'available', hard: true },
  { kind: 'available', hard: false },
  { kind: 'inodesFree', hard: true },
  { kind: 'inodesFree', hard: false },
];

/**
 * The thresholds with the four `containerfs.*` thresholds (hard/soft × available/inodesFree)
 * synthesized from the filesystem that holds the container writable layers:
 * - nodefs when `dedicatedImageFs === splitContainerFs` (one filesystem; or images on their own
 *   disk and writable layers on nodefs);
 * - imagefs when `dedicatedImageFs && !splitContainerFs` (one runtime filesystem).
 * The impossible `!dedicatedImageFs && splitContainerFs` adds nothing and changes nothing.
 *
 * A user-given `containerfs.*` threshold is replaced in place, with a note such as
 * `found containerfs.available for hard eviction. ignoring` (the kubelet keeps only the last such
 * message; every one is returned here). A threshold synthesized from a source that does not exist
 * has no operator, a zero value and no grace period, so it is never met (`operatorSet: false`).
 * The input is not modified.
 */
export function updateContainerFsThresholds(
  thresholds: readonly Threshold[],
  dedicatedImageFs: boolean,
  splitContainerFs: boolean,
): { thresholds: Threshold[]; notes: SynchronizeNote[] } {
  const results = [...thresholds];
  const notes: SynchronizeNote[] = [];
  const userGivenIndex = new Map<string, number>();
  results.forEach((threshold, index) => {
    const kind = containerFsKind(threshold.signal);
    if (kind === undefined) return;
    const hard = isHardEvictionThreshold(threshold);
    notes.push(containerFsIgnoredNote(threshold.signal, hard));
    // The last one of a kind wins, as in the kubelet's loop.
    userGivenIndex.set(key(kind, hard), index);
  });

  const source: 'nodefs' | 'imagefs' | null =
    dedicatedImageFs === splitContainerFs ? 'nodefs' : dedicatedImageFs && !splitContainerFs ? 'imagefs' : null;
  if (source === null) return { thresholds: results, notes };

  for (const target of TARGETS) {
    const synthesized = synthesize(thresholds, source, target.kind, target.hard);
    const index = userGivenIndex.get(key(target.kind, target.hard));
    if (index === undefined) results.push(synthesized);
    else results[index] = synthesized;
  }
  return { thresholds: results, notes };
}

function key(kind: Kind, hard: boolean): string {
  return `${kind}/${hard ? 'hard' : 'soft'}`;
}

function containerFsKind(signal: Signal): Kind | undefined {
  if (signal === 'containerfs.available') return 'available';
  if (signal === 'containerfs.inodesFree') return 'inodesFree';
  return undefined;
}

function synthesize(thresholds: readonly Threshold[], source: 'nodefs' | 'imagefs', kind: Kind, hard: boolean): Threshold {
  const sourceSignal = `${source}.${kind}` as Signal;
  const signal = `containerfs.${kind}` as Signal;
  // The kubelet keeps the last matching source threshold.
  const found = thresholds.filter((t) => t.signal === sourceSignal && isHardEvictionThreshold(t) === hard).at(-1);
  if (found === undefined) {
    // Go's zero Threshold: empty operator, no value, no grace period, no min-reclaim.
    return { signal, value: { kind: 'percentage', ratio: 0 }, gracePeriodMs: 0, minReclaim: null, operatorSet: false };
  }
  const synthesized: Threshold = {
    signal,
    value: found.value,
    gracePeriodMs: hard ? 0 : found.gracePeriodMs,
    minReclaim: found.minReclaim,
  };
  return found.operatorSet === false ? { ...synthesized, operatorSet: false } : synthesized;
}
