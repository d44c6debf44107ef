// Go's strconv.ParseFloat(s, 32), reproduced exactly: the kubelet parses eviction percentages
// with it, so the accepted syntax, the error wording and the float32 rounding (straight from the
// decimal string, not through float64) must match for thresholds to be the same to the bit.

/** Thrown by {@link parseGoFloat32} with Go's message (`strconv.ParseFloat: parsing "foo": invalid syntax`). */
export class GoFloatError extends Error {
  override readonly name = 'GoFloatError';
}

// float32: 24-bit significand, normal binary exponents -126..127, subnormals down to 2^-149.
const SIGNIFICAND_BITS = 24;
const MIN_SCALE = -149;
const MAX_SCALE = 127 - (SIGNIFICAND_BITS - 1);

function syntaxError(s: string): GoFloatError {
  return new GoFloatError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
}

function rangeError(s: string): GoFloatError {
  return new GoFloatError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: value out of range`);
}

// Go's special(): inf, infinity (with a sign) and nan (without one), in any case.
function special(s: string): number | null {
  const lower = s.toLowerCase();
  const sign = lower.startsWith('-') ? -1 : 1;
  const body = lower.startsWith('-') || lower.startsWith('+') ? lower.slice(1) : lower;
  if (body === 'inf' || body === 'infinity') return sign * Infinity;
  if (lower === 'nan') return NaN;
  return null;
}

interface Mantissa {
  readonly negative: boolean;
  /** The digits as an integer. */
  readonly digits: bigint;
  /** value = digits * base^exponent, base 10 (decimal) or 2 (hexadecimal). */
  readonly exponent: number;
  readonly base: 2 | 10;
}

// Go's readFloat grammar: [+-] (digits [. digits] | . digits) [e [+-] digits], or the hexadecimal
// form 0x mantissa p exponent, where underscores may separate digits only after a base prefix.
function readFloat(s: string): Mantissa | null {
  let i = 0;
  let negative = false;
  if (s[i] === '+' || s[i] === '-') {
    negative = s[i] === '-';
    i++;
  }
  let base: 2 | 10 = 10;
  let digitBase = 10;
  if (s[i] === '0' && (s[i + 1] === 'x' || s[i + 1] === 'X')) {
    base = 2;
    digitBase = 16;
    i += 2;
  }
  const underscoresAllowed = base === 2;
  let digits = 0n;
  let exponent = 0;
  let sawDigits = false;
  let sawDot = false;
  let sawUnderscore = false;
  for (; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '_') {
      sawUnderscore = true;
      continue;
    }
    if (c === '.') {
      if (sawDot) break;
      sawDot = true;
      continue;
    }
    const value = Number.parseInt(c, digitBase);
    if (Number.isNaN(value)) break;
    sawDigits = true;
    digits = digits * BigInt(digitBase) + BigInt(value);
    if (sawDot) exponent -= base === 2 ? 4 : 1;
  }
  if (!sawDigits) return null;
  if (sawUnderscore && !underscoresAllowed) return null;

  const marker = s[i]?.toLowerCase();
  if (marker === (base === 2 ? 'p' : 'e')) {
    i++;
    let exponentSign = 1;
    if (s[i] === '+' || s[i] === '-') {
      exponentSign = s[i] === '-' ? -1 : 1;
      i++;
    }
    let written = 0;
    let sawExponentDigit = false;
    for (; i < s.length; i++) {
      const c = s[i] as string;
      if (c === '_' && underscoresAllowed) continue;
      if (c < '0' || c > '9') break;
      sawExponentDigit = true;
      // Go stops growing the exponent at 10000; anything that large is out of range anyway.
      if (written < 10000) written = written * 10 + (c.charCodeAt(0) - 48);
    }
    if (!sawExponentDigit) return null;
    exponent += exponentSign * written;
  } else if (base === 2) {
    // A hexadecimal mantissa requires a 'p' exponent.
    return null;
  }
  if (i !== s.length) return null;
  return { negative, digits, exponent, base };
}

function bitLength(n: bigint): number {
  return n === 0n ? 0 : n.toString(2).length;
}

// Rounds numerator/denominator (both > 0) to the nearest float32, ties to even; Infinity on overflow.
function roundToFloat32(numerator: bigint, denominator: bigint): number {
  // Pick the scale so the quotient has exactly 24 bits (or fewer, for subnormals).
  let scale = bitLength(numerator) - bitLength(denominator) - SIGNIFICAND_BITS;
  const quotientAt = (k: number): [bigint, bigint, bigint] => {
    const num = k >= 0 ? numerator : numerator << BigInt(-k);
    const den = k >= 0 ? denominator << BigInt(k) : denominator;
    return [num / den, num % den, den];
  };
  let [quotient, remainder, divisor] = quotientAt(scale);
  if (quotient >= 1n << BigInt(SIGNIFICAND_BITS)) {
    scale++;
    [quotient, remainder, divisor] = quotientAt(scale);
  }
  if (scale < MIN_SCALE) {
    scale = MIN_SCALE;
    [quotient, remainder, divisor] = quotientAt(scale);
  }
  const twiceRemainder = remainder * 2n;
  if (twiceRemainder > divisor || (twiceRemainder === divisor && (quotient & 1n) === 1n)) quotient++;
  if (quotient === 1n << BigInt(SIGNIFICAND_BITS)) {
    quotient >>= 1n;
    scale++;
  }
  if (scale > MAX_SCALE) return Infinity;
  return Number(quotient) * 2 ** scale;
}

/**
 * Parses `s` as Go's `strconv.ParseFloat(s, 32)` does and returns the float32 value (as a JS
 * number). Throws {@link GoFloatError}: `invalid syntax`, or `value out of range` past float32's
 * largest value (Go returns ±Inf with that error). Values too small to represent become zero.
 */
export function parseGoFloat32(s: string): number {
  const specialValue = special(s);
  if (specialValue !== null) return specialValue;
  const mantissa = readFloat(s);
  if (mantissa === null) throw syntaxError(s);
  const sign = mantissa.negative ? -1 : 1;
  if (mantissa.digits === 0n) return sign * 0;

  // Cheap bounds first, so `1e99999` never builds a huge BigInt.
  const magnitude =
    mantissa.base === 10
      ? mantissa.digits.toString().length + mantissa.exponent
      : Math.ceil((bitLength(mantissa.digits) + mantissa.exponent) * Math.LOG10E * Math.LN2);
  if (magnitude > 40) throw rangeError(s);
  if (magnitude < -50) return sign * 0;

  const base = BigInt(mantissa.base);
  let numerator = mantissa.digits;
  let denominator = 1n;
  if (mantissa.exponent >= 0) numerator *= base ** BigInt(mantissa.exponent);
  else denominator = base ** BigInt(-mantissa.exponent);
  const value = roundToFloat32(numerator, denominator);
  if (value === Infinity) throw rangeError(s);
  return sign * value;
}
