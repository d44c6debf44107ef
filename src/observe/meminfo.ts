// Parsing of /proc/meminfo. The node's memory capacity is MemTotal, as cAdvisor's machine info
// reports it (the kubelet's root-cgroup "limit" is that capacity).

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
