// Parsing of /proc/meminfo. The node's memory capacity is MemTotal, as cAdvisor's machine info
// reports it (the kubelet's root-cgroup "limit" is that capacity); the root cgroup's usage, where
// a cgroup v2 host has no memory.current, is MemTotal - MemFree with Inactive(file) as its
// inactive page cache.

/** Parses `/proc/meminfo` into bytes per field (`kB` values multiplied by 1024; unitless ones kept as is). */
export function parseMeminfo(text: string): Map<string, bigint> {
  const values = new Map<string, bigint>();
  for (const line of text.split('\n')) {
    const match = /^([^:\s]+):\s+(\d+)(?:\s+(kB))?\s*$/.exec(line);
    if (match === null) continue;
    const [, key, amount, unit] = match as unknown as [string, string, string, string | undefined];
    values.set(key, unit === 'kB' ? BigInt(amount) * 1024n : BigInt(amount));
  }
  return values;
}

/** MemTotal in bytes, or undefined when the file has none. */
export function memTotalBytes(text: string): bigint | undefined {
  return parseMeminfo(text).get('MemTotal');
}

/** The whole machine as one cgroup: usage `MemTotal - MemFree` and `Inactive(file)`, in bytes; undefined when a field is missing. */
export function machineMemoryUsage(text: string): { readonly usageBytes: bigint; readonly inactiveFileBytes: bigint } | undefined {
  const values = parseMeminfo(text);
  const totalBytes = values.get('MemTotal');
  const freeBytes = values.get('MemFree');
  const inactiveFileBytes = values.get('Inactive(file)');
  if (totalBytes === undefined || freeBytes === undefined || inactiveFileBytes === undefined) return undefined;
  return { usageBytes: totalBytes - freeBytes, inactiveFileBytes };
}
