// Reads a cgroup v2 working set the way cAdvisor computes it (`memory.current` minus
// `inactive_file` from memory.stat, floored at zero), for the PSI notifier's fast check. The root
// cgroup has no memory.current; there, as runc's cgroup library (and so cAdvisor and the
// observer) does, usage is emulated as `anon + file` of its memory.stat. /proc/meminfo's
// `MemTotal - MemFree` would also count kernel memory, so the fast check would see crossings the
// observer does not, and miss the ones it does. The parsers and the formula are src/host's.

import { join } from 'node:path';
import { parseCounter } from '../host/memory-limit.js';
import { inactiveFileKey, memoryStatValue, workingSetBytes } from '../host/memory-stat.js';

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

/** The working set in bytes (`usage - inactive_file`, floored at zero). Rejects with a short reason. */
export async function readWorkingSetBytes(readText: ReadText, source: WorkingSetSource): Promise<bigint> {
  if (source.kind === 'root') {
    const stat = await readText(source.statPath);
    const anonBytes = memoryStatValue(stat, 'anon');
    const fileBytes = memoryStatValue(stat, 'file');
    const inactiveFileBytes = memoryStatValue(stat, inactiveFileKey('v2'));
    if (anonBytes === undefined || fileBytes === undefined || inactiveFileBytes === undefined) throw new Error(`${source.statPath} lacks anon, file or inactive_file`);
    return workingSetBytes(anonBytes + fileBytes, inactiveFileBytes);
  }
  const [current, stat] = await Promise.all([readText(source.currentPath), readText(source.statPath)]);
  const usageBytes = parseCounter(current);
  if (usageBytes === undefined) throw new Error(`${source.currentPath} does not hold a byte count`);
  const inactiveFileBytes = memoryStatValue(stat, inactiveFileKey('v2'));
  if (inactiveFileBytes === undefined) throw new Error(`${source.statPath} has no inactive_file`);
  return workingSetBytes(usageBytes, inactiveFileBytes);
}
