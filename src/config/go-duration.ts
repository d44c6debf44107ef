// Go's time.ParseDuration and Duration.String(), reproduced exactly: every duration in the
// configuration (`evictionSoftGracePeriod`, `evictionPressureTransitionPeriod`, the agent's
// intervals) is written in Go syntax, so a value the kubelet accepts must be accepted here with
// the same meaning, and a value it rejects must be rejected with the same wording.

/** Thrown by {@link parseGoDuration}; the message is Go's own (`time: invalid duration "1x"`). */
export class GoDurationError extends Error {
  override readonly name = 'GoDurationError';
}

const NS_PER_MS = 1_000_000;

// Go's unitMap, in nanoseconds. Both micro signs are accepted, as upstream.
const unitToNanos: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n],
  ['\u03bcs', 1_000n],
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

// 1<<63: Go accumulates the magnitude in a uint64 and allows exactly this much for "-" values.
const TWO_POW_63 = 1n << 63n;

// Go's strconv.Quote for the strings a duration can hold (printable ASCII and the micro signs).
function quote(s: string): string {
  return JSON.stringify(s);
}

function isDigit(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '9';
}

/**
 * Parses a Go duration (`300ms`, `1.5h`, `1h30m`, `-1s`, a bare `0`) to milliseconds, which may be
 * fractional (`1ns` is 0.000001). Fractions are truncated to whole nanoseconds the way Go does it
 * (in float64). Throws {@link GoDurationError} with Go's message for anything Go rejects.
 */
export function parseGoDuration(text: string): number {
  return Number(parseGoDurationNanos(text)) / NS_PER_MS;
}

/** Like {@link parseGoDuration}, in exact nanoseconds (Go's int64 `Duration`). */
export function parseGoDurationNanos(text: string): bigint {
  const invalid = (): GoDurationError => new GoDurationError(`time: invalid duration ${quote(text)}`);
  let s = text;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s[0] === '-';
    s = s.slice(1);
  }
  // The one unit-less form Go allows.
  if (s === '0') return 0n;
  if (s === '') throw invalid();

  let totalNanos = 0n;
  while (s !== '') {
    if (!(s[0] === '.' || isDigit(s[0]))) throw invalid();

    // The integer part: Go's leadingInt, which fails past 1<<63.
    let whole = 0n;
    let i = 0;
    for (; i < s.length && isDigit(s[i]); i++) {
      if (whole > TWO_POW_63 / 10n) throw invalid();
      whole = whole * 10n + BigInt(s.charCodeAt(i) - 48);
      if (whole > TWO_POW_63) throw invalid();
    }
    const hasWhole = i > 0;
    s = s.slice(i);

    // The fraction: Go's leadingFraction keeps consuming digits after it stops accumulating.
    let fraction = 0n;
    let fractionScale = 1;
    let hasFraction = false;
    if (s.startsWith('.')) {
      s = s.slice(1);
      let overflow = false;
      let j = 0;
      for (; j < s.length && isDigit(s[j]); j++) {
        if (overflow) continue;
        if (fraction > (TWO_POW_63 - 1n) / 10n) {
          overflow = true;
          continue;
        }
        const next = fraction * 10n + BigInt(s.charCodeAt(j) - 48);
        if (next > TWO_POW_63) {
          overflow = true;
          continue;
        }
        fraction = next;
        fractionScale *= 10;
      }
      hasFraction = j > 0;
      s = s.slice(j);
    }
    // "." alone, or ".s", has no digits at all.
    if (!hasWhole && !hasFraction) throw invalid();

    let unitEnd = 0;
    while (unitEnd < s.length && !(s[unitEnd] === '.' || isDigit(s[unitEnd]))) unitEnd++;
    if (unitEnd === 0) throw new GoDurationError(`time: missing unit in duration ${quote(text)}`);
    const unitName = s.slice(0, unitEnd);
    s = s.slice(unitEnd);
    const unitNanos = unitToNanos.get(unitName);
    if (unitNanos === undefined) {
      throw new GoDurationError(`time: unknown unit ${quote(unitName)} in duration ${quote(text)}`);
    }

    if (whole > TWO_POW_63 / unitNanos) throw invalid();
    let termNanos = whole * unitNanos;
    if (fraction > 0n) {
      // float64(f) * (float64(unit) / scale), truncated: Go's arithmetic, kept for exact results.
      termNanos += BigInt(Math.trunc(Number(fraction) * (Number(unitNanos) / fractionScale)));
      if (termNanos > TWO_POW_63) throw invalid();
    }
    totalNanos += termNanos;
    if (totalNanos > TWO_POW_63) throw invalid();
  }
  if (negative) return -totalNanos;
  if (totalNanos > TWO_POW_63 - 1n) throw invalid();
  return totalNanos;
}

/**
 * Go's `Duration.String()` for a whole number of nanoseconds given in milliseconds:
 * `5m0s`, `10s`, `1h30m0s`, `100ms`, `1.5µs`, `0s`. Used when printing effective settings, so
 * they read the way the kubelet prints them.
 */
export function formatGoDuration(durationMs: number): string {
  let nanos = BigInt(Math.round(durationMs * NS_PER_MS));
  if (nanos === 0n) return '0s';
  const sign = nanos < 0n ? '-' : '';
  if (nanos < 0n) nanos = -nanos;

  if (nanos < 1_000_000_000n) {
    // Below a second Go picks the largest unit that keeps an integer part: ns, µs or ms.
    const [unitNanos, unit] = nanos < 1_000n ? [1n, 'ns'] : nanos < 1_000_000n ? [1_000n, '\u00b5s'] : [1_000_000n, 'ms'];
    return `${sign}${decimal(nanos, unitNanos)}${unit}`;
  }
  const hours = nanos / 3_600_000_000_000n;
  const minutes = (nanos / 60_000_000_000n) % 60n;
  const secondsNanos = nanos % 60_000_000_000n;
  let out = `${decimal(secondsNanos, 1_000_000_000n)}s`;
  if (hours > 0n || minutes > 0n) out = `${minutes}m${out}`;
  if (hours > 0n) out = `${hours}h${out}`;
  return `${sign}${out}`;
}

/** A duration in milliseconds as the shortest Go duration that says it in one unit: `10m`, `500ms`, `1us`. */
export function formatShortDuration(ms: number): string {
  if (ms === 0) return '0s';
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]] as const) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms * 1000)}us`;
}

// value / unit as a decimal with trailing zeros dropped (Go's fmtFrac + fmtInt).
function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const rest = value % unit;
  if (rest === 0n) return `${whole}`;
  const digits = unit.toString().length - 1;
  return `${whole}.${rest.toString().padStart(digits, '0').replace(/0+$/, '')}`;
}
