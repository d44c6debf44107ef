// RFC 3339 timestamps, as the Kubernetes API and the Summary API write them.

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Milliseconds since the epoch, or null when `value` is not an RFC 3339 timestamp. */
export function parseRfc3339(value: string): number | null {
  if (!RFC3339.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/** RFC 3339 in UTC, without fractional seconds when they are zero (`2026-01-01T00:00:10Z`). */
export function formatRfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
