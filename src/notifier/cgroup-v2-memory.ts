// Reads a cgroup v2 working set the way cAdvisor computes it (`memory.current` minus
// `inactive_file` from memory.stat, floored at zero), for the PSI notifier's fast check. The root
// cgroup has no memory.current; there, as runc does, usage is `MemTotal - MemFree` from
// /proc/meminfo and the inactive page cache is its `Inactive(file)`.

import { join } from 'node:path';

/** Reads a whole text file; rejects when it cannot (injected so tests can serve fixtures). */
export type ReadText = (path: string) => Promise<string>;

/** Where a cgroup's working set is read from. */
export type WorkingSetSource =
  | { readonly kind: 'cgroup'; readonly currentPath: string; readonly statPath: string }
  | { readonly kind: 'meminfo'; readonly meminfoPath: string };

export function cgroupWorkingSetSource(cgroupDir: string): WorkingSetSource {
  return { kind: 'cgroup', currentPath: join(cgroupDir, 'memory.current'), statPath: join(cgroupDir, 'memory.stat') };
}

/** `inactive_file` from a cgroup v2 memory.stat, in bytes; null when absent. */
export function parseInactiveFileBytes(memoryStat: string): bigint | null {
  const match = /^inactive_file (\d+)$/m.exec(memoryStat);
  return match === null ? null : BigInt(match[1] as string);
}

/** `MemTotal - MemFree` and `Inactive(file)` from /proc/meminfo, in bytes; null when a field is missing. */
export function parseMeminfo(meminfo: string): { readonly usageBytes: bigint; readonly inactiveFileBytes: bigint } | null {
  const kib = (field: string): bigint | null => {
    const match = new RegExp(`^${field.replace(/[()]/g, '\\$&')}:\\s+(\\d+) kB$`, 'm').exec(meminfo);
    return match === null ? null : BigInt(match[1] as string) * 1024n;
  };
  const totalBytes = kib('MemTotal');
  const freeBytes = kib('MemFree');
  const inactiveFileBytes = kib('Inactive(file)');
  if (totalBytes === null || freeBytes === null || inactiveFileBytes === null) return null;
  return { usageBytes: totalBytes - freeBytes, inactiveFileBytes };
}

/** The working set in bytes (`usage - inactive_file`, floored at zero). Rejects with a short reason. */
export async function readWorkingSetBytes(readText: ReadText, source: WorkingSetSource): Promise<bigint> {
  let usageBytes: bigint;
  let inactiveFileBytes: bigint | null;
  if (source.kind === 'cgroup') {
    const [current, stat] = await Promise.all([readText(source.currentPath), readText(source.statPath)]);
    const trimmed = current.trim();
    if (!/^\d+$/.test(trimmed)) throw new Error(`${source.currentPath} does not hold a byte count`);
    usageBytes = BigInt(trimmed);
    inactiveFileBytes = parseInactiveFileBytes(stat);
    if (inactiveFileBytes === null) throw new Error(`${source.statPath} has no inactive_file`);
  } else {
    const parsed = parseMeminfo(await readText(source.meminfoPath));
    if (parsed === null) throw new Error(`${source.meminfoPath} lacks MemTotal, MemFree or Inactive(file)`);
    ({ usageBytes, inactiveFileBytes } = parsed);
  }
  const workingSetBytes = usageBytes - inactiveFileBytes;
  return workingSetBytes < 0n ? 0n : workingSetBytes;
}
