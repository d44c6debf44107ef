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
