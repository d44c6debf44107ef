// Suggests the field a misspelt key was meant to be (`evictonHard` -> `evictionHard`), so a typo
// is reported as such instead of as a bare "unknown field".

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + cost);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/** The closest candidate, when it is close enough to be a likely typo (case differences always are). */
export function didYouMean(name: string, candidates: Iterable<string>): string | null {
  const lower = name.toLowerCase();
  // Two edits for ordinary names, one for short ones, where two would match unrelated words.
  const maxDistance = name.length <= 4 ? 1 : name.length <= 8 ? 2 : 3;
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const other = candidate.toLowerCase();
    // A word cut short or run on (`warning` for `warn`) counts as one edit.
    const truncated = Math.min(other.length, lower.length) >= 4 && (other.startsWith(lower) || lower.startsWith(other));
    const distance = other === lower ? 0 : truncated ? 1 : editDistance(lower, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= maxDistance ? best : null;
}
