// Toleration matching exactly as upstream: `Toleration.ToleratesTaint` (core/v1), the pod-order
// `GetMatchingTolerations`, the NoExecute filter, and the strict integer parsing the
// `Gt`/`Lt` operators use. Only NoExecute taints ever evict, so everything else filters them out.

import type { Taint, Toleration } from '../api/pod.js';

export const TAINT_EFFECT_NO_EXECUTE = 'NoExecute';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * apimachinery `content.IsDecimalInteger`: `0`, or an optional `-` then a digit 1-9 and more
 * digits. A sign-less canonical form keeps `Gt`/`Lt` from depending on how a number was spelled,
 * so `-0`, `0100`, `+1`, ` 1` and `1.5` are all refused.
 */
export function isDecimalInteger(s: string): boolean {
  return /^(?:0|-?[1-9][0-9]*)$/.test(s);
}

/** The value as an int64, or null when it is not a canonical decimal integer or overflows int64. */
export function parseInt64(s: string): bigint | null {
  if (!isDecimalInteger(s)) return null;
  const value = BigInt(s);
  return value < INT64_MIN || value > INT64_MAX ? null : value;
}

function comparesNumerically(operator: 'Gt' | 'Lt', tolerationValue: string, taintValue: string): boolean {
  const tolerationInt = parseInt64(tolerationValue);
  const taintInt = parseInt64(taintValue);
  // Upstream answers "no match" on any parse failure; the API server's validation is what
  // reports the bad value, not the matcher.
  if (tolerationInt === null || taintInt === null) return false;
  return operator === 'Gt' ? taintInt > tolerationInt : taintInt < tolerationInt;
}

/**
 * core/v1 `Toleration.ToleratesTaint`, checks in upstream's order: effect (empty matches every
 * effect), key (empty matches every key), then the operator. Gt/Lt never match while
 * `comparisonOperators` (the `TaintTolerationComparisonOperators` gate) is off.
 */
export function toleratesTaint(toleration: Toleration, taint: Taint, comparisonOperators: boolean): boolean {
  const effect = toleration.effect ?? '';
  if (effect !== '' && effect !== taint.effect) return false;
  const key = toleration.key ?? '';
  if (key !== '' && key !== taint.key) return false;
  switch (toleration.operator ?? '') {
    case '':
    case 'Equal':
      return (toleration.value ?? '') === (taint.value ?? '');
    case 'Exists':
      return true;
    case 'Gt':
    case 'Lt':
      if (!comparisonOperators) return false;
      return comparesNumerically(toleration.operator as 'Gt' | 'Lt', toleration.value ?? '', taint.value ?? '');
    default:
      return false;
  }
}

/** What `GetMatchingTolerations` returns: `used[i]` is the toleration that tolerates `taints[i]`. */
export interface MatchingTolerations {
  readonly allTolerated: boolean;
  readonly used: Toleration[];
}

/**
 * pkg/apis/core/v1/helper `GetMatchingTolerations`: for each taint in order, the first toleration
 * in pod order that tolerates it. The first listed wins even when a later one tolerates longer,
 * which is what decides the eviction time; a single untolerated taint answers `(false, [])`.
 */
export function getMatchingTolerations(
  taints: readonly Taint[],
  tolerations: readonly Toleration[] | null | undefined,
  comparisonOperators: boolean,
): MatchingTolerations {
  if (taints.length === 0) return { allTolerated: true, used: [] };
  const list = tolerations ?? [];
  if (list.length === 0) return { allTolerated: false, used: [] };
  const used: Toleration[] = [];
  for (const taint of taints) {
    const match = list.find((toleration) => toleratesTaint(toleration, taint, comparisonOperators));
    if (match === undefined) return { allTolerated: false, used: [] };
    used.push(match);
  }
  return { allTolerated: true, used };
}

/** The NoExecute taints, in the node's order (upstream `getNoExecuteTaints`). */
export function getNoExecuteTaints(taints: readonly Taint[] | null | undefined): Taint[] {
  return (taints ?? []).filter((taint) => taint.effect === TAINT_EFFECT_NO_EXECUTE);
}
