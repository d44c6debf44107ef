// The intake filters' notion of "unchanged": apimachinery `equality.Semantic.DeepEqual` restricted
// to the fields the taint logic reads. Like upstream, it is order-sensitive, treats a nil list as
// an empty one and an absent string as "", and compares times as instants (so a `timeAdded` read
// back as a Date equals the RFC 3339 string it came from).

import type { Taint, Toleration } from '../api/pod.js';

function timeInstant(time: string | Date | null | undefined): number | string | null {
  if (time === undefined || time === null) return null;
  if (time instanceof Date) return time.getTime();
  const ms = Date.parse(time);
  // An unparsable time can only equal the same text.
  return Number.isNaN(ms) ? time : ms;
}

function taintEqual(a: Taint, b: Taint): boolean {
  return (
    a.key === b.key &&
    (a.value ?? '') === (b.value ?? '') &&
    a.effect === b.effect &&
    timeInstant(a.timeAdded) === timeInstant(b.timeAdded)
  );
}

function tolerationEqual(a: Toleration, b: Toleration): boolean {
  return (
    (a.key ?? '') === (b.key ?? '') &&
    (a.operator ?? '') === (b.operator ?? '') &&
    (a.value ?? '') === (b.value ?? '') &&
    (a.effect ?? '') === (b.effect ?? '') &&
    // A *int64: unset and 0 differ (forever versus now).
    (a.tolerationSeconds ?? null) === (b.tolerationSeconds ?? null)
  );
}

function listsEqual<T>(a: readonly T[] | null | undefined, b: readonly T[] | null | undefined, equal: (x: T, y: T) => boolean): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((item, i) => equal(item, right[i] as T));
}

/** Two ordered taint lists are semantically equal (key, value, effect, timeAdded). */
export function taintsEqual(a: readonly Taint[] | null | undefined, b: readonly Taint[] | null | undefined): boolean {
  return listsEqual(a, b, taintEqual);
}

/** Two ordered toleration lists are semantically equal (every field, tolerationSeconds included). */
export function tolerationsEqual(a: readonly Toleration[] | null | undefined, b: readonly Toleration[] | null | undefined): boolean {
  return listsEqual(a, b, tolerationEqual);
}
