// Adding or removing one taint in a node's taint list without disturbing the others: a taint is
// identified by key and effect (as the API validates them), so a new value replaces the old one
// in place and the order of everyone else's taints is kept.

import type { Taint } from '../api/pod.js';

/** The taint list with `taint` present or absent, or null when it already is so (nothing to write). */
export function withTaint(taints: readonly Taint[], taint: { key: string; value: string; effect: string }, present: boolean): Taint[] | null {
  const index = taints.findIndex((t) => t.key === taint.key && t.effect === taint.effect);
  if (!present) return index === -1 ? null : taints.filter((_, i) => i !== index);
  if (index === -1) return [...taints, { key: taint.key, value: taint.value, effect: taint.effect }];
  if ((taints[index]?.value ?? '') === taint.value) return null;
  return taints.map((t, i) => (i === index ? { ...t, value: taint.value } : t));
}
