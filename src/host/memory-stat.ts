// Parsing of cgroup `memory.stat` and the working-set arithmetic cAdvisor applies to it, so the
// numbers match what the kubelet puts in the Summary: working set = usage - inactive file pages,
// floored at 0 (inactive page cache is reclaimable, so it does not count as pressure).

/** Which cgroup hierarchy a file came from: v1 (legacy, one hierarchy per controller) or v2 (unified). */
export type CgroupVersion = 'v1' | 'v2';

/**
 * The `memory.stat` key cAdvisor subtracts from usage: on v1 the hierarchical `total_inactive_file`
 * (the cgroup and all its descendants, like `memory.usage_in_bytes`), on v2 `inactive_file`, which
 * is always hierarchical there.
 */
export function inactiveFileKey(version: CgroupVersion): 'total_inactive_file' | 'inactive_file' {
  return version === 'v1' ? 'total_inactive_file' : 'inactive_file';
}

/** Parses `memory.stat` (`key value` lines) into exact byte and page counts. Malformed lines are skipped. */
export function parseMemoryStat(text: string): Map<string, bigint> {
  const values = new Map<string, bigint>();
  for (const line of text.split('\n')) {
    const space = line.indexOf(' ');
    if (space <= 0) continue;
    const raw = line.slice(space + 1).trim();
    if (!/^\d+$/.test(raw)) continue;
    values.set(line.slice(0, space), BigInt(raw));
  }
  return values;
}

/**
 * One key of `memory.stat` without parsing the rest (the hot path reads one key per cgroup).
 * Undefined when the key is absent or its value is not a number.
 */
export function memoryStatValue(text: string, key: string): bigint | undefined {
  const prefix = `${key} `;
  let at = 0;
  if (!text.startsWith(prefix)) {
    // Anchored at a line start, so `inactive_file` never matches inside `total_inactive_file`.
    const newlineAt = text.indexOf(`\n${prefix}`);
    if (newlineAt === -1) return undefined;
    at = newlineAt + 1;
  }
  const start = at + prefix.length;
  const end = text.indexOf('\n', start);
  const raw = text.slice(start, end === -1 ? undefined : end).trim();
  return /^\d+$/.test(raw) ? BigInt(raw) : undefined;
}

/** cAdvisor's working set: usage minus inactive file pages, never below zero. */
export function workingSetBytes(usageBytes: bigint, inactiveFileBytes: bigint): bigint {
  return usageBytes > inactiveFileBytes ? usageBytes - inactiveFileBytes : 0n;
}
