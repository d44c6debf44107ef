// Reads a cgroup v2 working set the way cAdvisor computes it (`memory.current` minus
// `inactive_file` from memory.stat, floored at zero), for the PSI notifier's fast check. The root
// cgroup has no memory.current; there, as runc's cgroup library (and so cAdvisor and the
// observer) does, usage is emulated as `anon + file` of its memory.stat. /proc/meminfo's
// `MemTotal - MemFree` would also count kernel memory, so the fast check would see crossings the
// observer does not, and miss the ones it does.

import { join } from 'node:path';

/** Reads a whole text file; rejects when it cannot (injected so tests can serve fixtures). */
export type ReadText = (path: string) => Promise<string>;

/** Where a cgroup's working set is read from. */
export type WorkingSetSource =
  | { readonly kind: 'cgroup'; readonly currentPath: string; readonly statPath: string }
  | { readonly kind: 'root'; readonly statPath: string };

export function cgroupWorkingSetSource(cgroupDir: string): WorkingSetSource {
  return { kind: 'cgroup', currentPath: join(cgroupDir, 'memory.current'), statPath: join(cgroupDir, 'memory.stat') };
}

/** The v2 root cgroup, which has memory.stat but no memory.current. */
export function rootWorkingSetSource(cgroupRoot: string): WorkingSetSource {
  return { kind: 'root', statPath: join(cgroupRoot, 'memory.stat') };
}

/** One field of a cgroup v2 memory.stat, in bytes; null when absent. */
function memoryStatBytes(memoryStat: string, key: string): bigint | null {
  const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(memoryStat);
  return match === null ? null : BigInt(match[1] as string);
}

/** `inactive_file` from a cgroup v2 memory.stat, in bytes; null when absent. */
export function parseInactiveFileBytes(memoryStat: string): bigint | null {
  return memoryStatBytes(memoryStat, 'inactive_file');
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
    const stat = await readText(source.statPath);
    const anonBytes = memoryStatBytes(stat, 'anon');
    const fileBytes = memoryStatBytes(stat, 'file');
    inactiveFileBytes = parseInactiveFileBytes(stat);
    if (anonBytes === null || fileBytes === null || inactiveFileBytes === null) throw new Error(`${source.statPath} lacks anon, file or inactive_file`);
    usageBytes = anonBytes + fileBytes;
  }
  const workingSetBytes = usageBytes - inactiveFileBytes;
  return workingSetBytes < 0n ? 0n : workingSetBytes;
}
