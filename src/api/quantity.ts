// Kubernetes resource quantities, exact: parsing (the apimachinery grammar), comparison and the
// canonical string form the kubelet prints in its eviction messages (`1536Mi`, `2Gi`, `1200`).
// Values are held as BigInt nano-units, so decimal comparisons are exact, never floating point.

/** How a quantity prints, as in apimachinery: the suffix family of the string it was parsed from. */
export type QuantityFormat = 'BinarySI' | 'DecimalSI' | 'DecimalExponent';

/** An exact quantity: `nanos` is the value times 10^9. */
export interface Quantity {
  readonly nanos: bigint;
  readonly format: QuantityFormat;
}

const NANOS_PER_UNIT = 1_000_000_000n;

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
  const [whole, fraction = ''] = digits.split('.');
  // The number as an integer mantissa and a power-of-ten scale: 1.25 -> 125, -2.
  const mantissa = BigInt((whole ?? '') + fraction || '0') * (sign === '-' ? -1n : 1n);
  const scale = -fraction.length;

  let format: QuantityFormat;
  let nanos: bigint;
  if (suffix in binarySuffixes) {
    format = 'BinarySI';
    nanos = scaleToNanos(mantissa * (binarySuffixes[suffix] as bigint), scale);
  } else if (suffix in decimalSuffixes) {
    format = 'DecimalSI';
    nanos = scaleToNanos(mantissa, scale + (decimalSuffixes[suffix] as number));
  } else if (/^[eE][+-]?\d+$/.test(suffix)) {
    format = 'DecimalExponent';
    nanos = scaleToNanos(mantissa, scale + Number(suffix.slice(1)));
  } else {
    throw new QuantityParseError('unable to parse quantity\'s suffix');
  }
  return { nanos, format };
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
