// The memory limit files and their "unlimited" sentinels. The kubelet reports a cgroup's
// availableBytes only when its limit is real, and it calls any limit above 2^62 unlimited because
// the kernel rounds the v1 sentinel down to a page multiple (PAGE_COUNTER_MAX * page size,
// 9223372036854771712 with 4 KiB pages) and v2 writes the word `max`.

/** Limits above this are "unlimited" (kubelet `isMemoryUnlimited`: `v > 1 << 62`). */
export const UNLIMITED_MEMORY_THRESHOLD_BYTES = 1n << 62n;

/**
 * Parses `memory.limit_in_bytes` (v1) or `memory.max` (v2). Returns null for unlimited (`max`, or a
 * number above 2^62) and undefined for text that is neither.
 */
export function parseMemoryLimit(text: string): bigint | null | undefined {
  const raw = text.trim();
  if (raw === 'max') return null;
  if (!/^\d+$/.test(raw)) return undefined;
  const limitBytes = BigInt(raw);
  return isMemoryUnlimited(limitBytes) ? null : limitBytes;
}

export function isMemoryUnlimited(limitBytes: bigint): boolean {
  return limitBytes > UNLIMITED_MEMORY_THRESHOLD_BYTES;
}

/** Parses a single unsigned integer file (`memory.usage_in_bytes`, `memory.current`); undefined if malformed. */
export function parseCounter(text: string): bigint | undefined {
  const raw = text.trim();
  return /^\d+$/.test(raw) ? BigInt(raw) : undefined;
}

/**
 * {@link parseCounter} as a number, for the one file per pod a memory notification's shortcut reads:
 * no regular expression and no BigInt on the way. Exact up to 15 digits (under 1 PB); longer
 * figures go through parseCounter.
 */
export function parseCounterNumber(text: string): number | undefined {
  const raw = text.trim();
  if (raw.length === 0) return undefined;
  if (raw.length > 15) {
    const counter = parseCounter(raw);
    return counter === undefined ? undefined : Number(counter);
  }
  let value = 0;
  for (let i = 0; i < raw.length; i++) {
    const digit = raw.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    value = value * 10 + digit;
  }
  return value;
}
