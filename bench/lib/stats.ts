// Summaries of measured samples: nearest-rank percentiles (no interpolation, so every figure
// quoted is a value that was actually measured), medians, and the formatting used on the page.

/** The nearest-rank p-th percentile (0 < p ≤ 100) of unsorted values; null when there are none. */
export function percentile(values: readonly number[], p: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] as number;
}

export function median(values: readonly number[]): number | null {
  return percentile(values, 50);
}

export interface Distribution {
  readonly count: number;
  readonly min: number;
  readonly median: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function distribution(values: readonly number[]): Distribution | null {
  if (values.length === 0) return null;
  return {
    count: values.length,
    min: Math.min(...values),
    median: percentile(values, 50) as number,
    p90: percentile(values, 90) as number,
    p99: percentile(values, 99) as number,
    max: Math.max(...values),
    mean: values.reduce((a, b) => a + b, 0) / values.length,
  };
}

/** A number with enough significant digits for a table: 0.0123, 1.23, 12.3, 123. */
export function fmt(value: number | null | undefined, unit = ''): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  const digits = abs === 0 ? 0 : abs < 0.1 ? 3 : abs < 10 ? 2 : abs < 100 ? 1 : 0;
  return `${value.toFixed(digits)}${unit}`;
}

export const MiB = 1024 * 1024;

export function fmtMiB(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '–' : fmt(bytes / MiB);
}

export function fmtDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
