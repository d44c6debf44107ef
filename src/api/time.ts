// RFC 3339 timestamps, as the Kubernetes API and the Summary API write them.

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

// A Summary repeats one timestamp in every pod's and container's stats (221 times a step at 110
// pods), and a replay parses it again at every one: the last few strings are remembered. Small, so
// a stream of distinct timestamps costs a bounded map, never a growing one.
const RECENT_LIMIT = 64;
const recent = new Map<string, number | null>();
let lastText: string | null = null;
let lastMs: number | null = null;

/** Milliseconds since the epoch, or null when `value` is not an RFC 3339 timestamp. */
export function parseRfc3339(value: string): number | null {
  // Equal to the last one more often than not: a string comparison, cheaper than hashing it.
  if (value === lastText) return lastMs;
  const known = recent.get(value);
  lastText = value;
  if (known !== undefined) return (lastMs = known);
  const ms = RFC3339.test(value) ? Date.parse(value) : Number.NaN;
  const result = Number.isNaN(ms) ? null : ms;
  if (recent.size >= RECENT_LIMIT) recent.clear();
  recent.set(value, result);
  return (lastMs = result);
}

// The last instant RFC 3339 can write. A toleration of int64's largest count of seconds (written to
// mean "forever") schedules its deletion far past it, where Date's toISOString throws.
const LATEST_RFC3339_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * RFC 3339 in UTC, without fractional seconds when they are zero (`2026-01-01T00:00:10Z`); an
 * instant past the year 9999 is shown as its last millisecond.
 */
export function formatRfc3339(ms: number): string {
  return new Date(Math.min(ms, LATEST_RFC3339_MS)).toISOString().replace('.000Z', 'Z');
}
