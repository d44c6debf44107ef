// Kubernetes resource quantities, exact: parsing (the apimachinery grammar), comparison and the
// canonical string form the kubelet prints in its eviction messages (`1536Mi`, `2Gi`, `1200`).
// Values are held as BigInt nano-units, so decimal comparisons are exact, never floating point.
// Parsing is bounded in cost: a quantity's digits and magnitude are checked before any power of
// ten is computed, so no string (`1e400000000`) can hold the loop that reloads and evicts.

/** How a quantity prints, as in apimachinery: the suffix family of the string it was parsed from. */
export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** An exact quantity: `nanos` is the value times 10^9. */
export interface Quantity {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

const NANOS_PER_UNIT = 1_000_000_000n;

/**
 * The largest magnitude a quantity may have, in units (bytes, inodes, PIDs): 2^63-1, the int64
 * that apimachinery's `Value()` returns and that it caps every parsed quantity at. A larger one is
 * refused rather than capped: a threshold silently turned into 2^63-1 bytes would be met always.
 */
export const MAX_QUANTITY_VALUE = (1n << 63n) - 1n;
const MAX_QUANTITY_NANOS = MAX_QUANTITY_VALUE * NANOS_PER_UNIT;
/** The most digits a quantity's number may have as written (a 2^63-1 with nano precision has 28). */
export const MAX_QUANTITY_DIGITS = 64;
// apimachinery reads an `e` exponent as an int32; a longer one is a suffix error there too.
const INT32_MAX = 2 ** 31 - 1;
// 2^63-1 has 19 integer digits: a number with more is out of range whatever its binary suffix.
const MAX_INTEGER_DIGITS = MAX_QUANTITY_VALUE.toString().length;
// Below 10^-(9+19), even times 2^60 (Ei), a value is under a nano: it rounds without being computed.
const MIN_SIGNIFICANT_POSITION = -(9 + 19);

const binarySuffixes: Readonly<Record<string, bigint>> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};

// Decimal suffixes as powers of ten.
const decimalSuffixes: Readonly<Record<string, number>> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};

// apimachinery's own splitting regex: what fails it is a format error, what passes it but has
// an unknown suffix is a suffix error.
const apimachineryPattern = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const quantityPattern = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(.*)$/;
const FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/** Thrown by {@link parseQuantity}; the caller adds the field path. */
export class QuantityParseError extends Error {
  override readonly name = 'QuantityParseError';
}

function pow10(exponent: number): bigint {
  return 10n ** BigInt(exponent);
}

// Divides and rounds away from zero... apimachinery rounds fractions below a nano up (toward
// +infinity for positives), which is what this does for the values eviction config can hold.
function divCeil(numerator: bigint, denominator: bigint): bigint {
  const q = numerator / denominator;
  return numerator % denominator === 0n ? q : numerator > 0n ? q + 1n : q;
}

// The engine reads the same few request and limit strings of every pod at every pass: parsed
// once, shared frozen (so no caller can change another's), and forgotten in bulk past the limit.
const PARSED_LIMIT = 4096;
const parsed = new Map<string, Quantity>();

/**
 * Parses a Kubernetes quantity string (`100Mi`, `1.5Gi`, `10k`, `1e3`, `250m`).
 * Throws {@link QuantityParseError} with apimachinery's wording for a malformed string.
 */
export function parseQuantity(raw: string): Quantity {
  const known = parsed.get(raw);
  if (known !== undefined) return known;
  const quantity = Object.freeze(parseQuantityText(raw));
  if (parsed.size >= PARSED_LIMIT) parsed.clear();
  parsed.set(raw, quantity);
  return quantity;
}

function parseQuantityText(raw: string): Quantity {
  const match = quantityPattern.exec(raw);
  if (raw.length === 0 || match === null || !apimachineryPattern.test(raw)) throw new QuantityParseError(FORMAT_ERROR);
  const [, sign, digits, suffix] = match as unknown as [string, string, string, string];
  const [whole = '', fraction = ''] = digits.split('.');
  if (whole.length + fraction.length > MAX_QUANTITY_DIGITS) throw new QuantityParseError(`quantities may have at most ${MAX_QUANTITY_DIGITS} digits`);

  // The suffix as a binary factor and a power of ten, checked before anything is computed.
  let format: QuantityFormat;
  let factor = 1n;
  let exponent10: number;
  if (suffix in binarySuffixes) {
    format = 'BinarySI';
    factor = binarySuffixes[suffix] as bigint;
    exponent10 = 0;
  } else if (suffix in decimalSuffixes) {
    format = 'DecimalSI';
    exponent10 = decimalSuffixes[suffix] as number;
  } else if (/^[eE][+-]?\d+$/.test(suffix) && Math.abs(Number(suffix.slice(1))) <= INT32_MAX) {
    format = 'DecimalExponent';
    exponent10 = Number(suffix.slice(1));
  } else {
    throw new QuantityParseError('unable to parse quantity\'s suffix');
  }

  // The number as an integer mantissa and a power-of-ten scale: 1.25 -> 125, -2.
  const significant = (whole + fraction).replace(/^0+/, '');
  const scale = exponent10 - fraction.length;
  // How many integer digits the value has before the binary factor (0.05 -> -1, 123 -> 3).
  const position = significant.length + scale;
  if (significant !== '' && position > MAX_INTEGER_DIGITS) throw tooLarge();
  const negative = sign === '-';
  let nanos: bigint;
  if (significant === '') nanos = 0n;
  // Far below a nano: rounded as the exact division would round it, without computing 10^-scale.
  else if (position < MIN_SIGNIFICANT_POSITION) nanos = negative ? 0n : 1n;
  else nanos = scaleToNanos(BigInt(significant) * factor * (negative ? -1n : 1n), scale);
  if (nanos > MAX_QUANTITY_NANOS || nanos < -MAX_QUANTITY_NANOS) throw tooLarge();
  return { nanos, format };
}

function tooLarge(): QuantityParseError {
  return new QuantityParseError(`quantity too large: at most ${MAX_QUANTITY_VALUE} (2^63-1, the int64 a Kubernetes quantity's value is held in)`);
}

function scaleToNanos(mantissa: bigint, exponent: number): bigint {
  const nanoExponent = exponent + 9;
  return nanoExponent >= 0 ? mantissa * pow10(nanoExponent) : divCeil(mantissa, pow10(-nanoExponent));
}

/** An integer quantity (bytes, inodes, PIDs) in the given format. */
export function quantityFromInteger(value: bigint, format: QuantityFormat = 'BinarySI'): Quantity {
  return { nanos: value * NANOS_PER_UNIT, format };
}

/** The value rounded up to an integer, as apimachinery's `Value()`. */
export function quantityValue(q: Quantity): bigint {
  return divCeil(q.nanos, NANOS_PER_UNIT);
}

/** -1, 0 or 1, exactly. */
export function compareQuantity(a: Quantity, b: Quantity): -1 | 0 | 1 {
  return a.nanos < b.nanos ? -1 : a.nanos > b.nanos ? 1 : 0;
}

/** The sum; the format of the first operand, as `Quantity.Add`. */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos + b.nanos, format: a.format };
}

/** The canonical string, as apimachinery's `Quantity.String()`. */
export function formatQuantity(q: Quantity): string {
  let format = q.format;
  if (format === 'BinarySI') {
    // Small or fractional binary values print in decimal, to avoid rounding.
    const small = q.nanos > -1024n * NANOS_PER_UNIT && q.nanos < 1024n * NANOS_PER_UNIT;
    if (small || q.nanos % NANOS_PER_UNIT !== 0n) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let amount = q.nanos / NANOS_PER_UNIT;
    let exponent = 0;
    while (exponent < 6 && amount !== 0n && amount % 1024n === 0n) {
      amount /= 1024n;
      exponent++;
    }
    return `${amount}${['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'][exponent]}`;
  }
  // Decimal: strip factors of ten, then move to an exponent that is a multiple of three.
  let amount = q.nanos;
  let exponent = -9;
  if (amount === 0n) return '0';
  while (amount % 10n === 0n) {
    amount /= 10n;
    exponent++;
  }
  const remainder = ((exponent % 3) + 3) % 3;
  amount *= pow10(remainder);
  exponent -= remainder;
  if (format === 'DecimalExponent') return exponent === 0 ? `${amount}` : `${amount}e${exponent}`;
  const suffix = Object.entries(decimalSuffixes).find(([, e]) => e === exponent)?.[0];
  return suffix === undefined ? `${amount}e${exponent}` : `${amount}${suffix}`;
}
