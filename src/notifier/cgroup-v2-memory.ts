// Reads a cgroup v2 cgroup's memory for the PSI notifier's fast check, through files kept open
// (src/host/kept-open-file.ts). The usage alone (memory.current) is the cheap read: the working
// set, `usage - inactive_file` as cAdvisor computes it (floored at zero), is never above it, so a
// usage below a crossing point proves the working set is too, and memory.stat is read only when
// the usage is past one. The root cgroup has no memory.current; there, as runc's cgroup library
// (and so cAdvisor and the observer) does, usage is emulated as `anon + file` of its memory.stat,
// read each time. /proc/meminfo's `MemTotal - MemFree` would also count kernel memory, so the
// fast check would see crossings the observer does not, and miss the ones it does. The parsers
// and the formula are src/host's.

import { join } from 'node:path';
import { KeptOpenFile, type OpenFileDoor } from '../host/kept-open-file.js';
import { parseCounter } from '../host/memory-limit.js';
import { inactiveFileKey, memoryStatValue, workingSetBytes } from '../host/memory-stat.js';

/** Where a cgroup's memory is read from. */
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

/** One read: the usage, and the working set when memory.stat was read too. */
export interface CgroupMemoryReading {
  readonly usageBytes: bigint;
  readonly workingSetBytes: bigint | null;
}

/** Reads one cgroup's usage and working set through descriptors it keeps open until close(). */
export class CgroupMemoryReader {
  private readonly current: KeptOpenFile | null;
  private readonly stat: KeptOpenFile;

  constructor(
    door: OpenFileDoor,
    readonly source: WorkingSetSource,
  ) {
    this.current = source.kind === 'cgroup' ? new KeptOpenFile(door, source.currentPath) : null;
    this.stat = new KeptOpenFile(door, source.statPath);
  }

  /**
   * The usage: memory.current (working set not read), or for the root cgroup `anon + file` of
   * memory.stat (working set read with it). Throws with a short reason.
   */
  readUsage(): CgroupMemoryReading {
    if (this.current === null) return this.readRoot();
    const usageBytes = parseCounter(this.current.read());
    if (usageBytes === undefined) throw new Error(`${this.current.path} does not hold a byte count`);
    return { usageBytes, workingSetBytes: null };
  }

  /** The working set for a usage just read: reads memory.stat. Throws with a short reason. */
  readWorkingSet(usage: CgroupMemoryReading): bigint {
    if (usage.workingSetBytes !== null) return usage.workingSetBytes;
    const inactiveFileBytes = memoryStatValue(this.stat.read(), inactiveFileKey('v2'));
    if (inactiveFileBytes === undefined) throw new Error(`${this.stat.path} has no inactive_file`);
    return workingSetBytes(usage.usageBytes, inactiveFileBytes);
  }

  /** Both reads at once. */
  read(): { readonly usageBytes: bigint; readonly workingSetBytes: bigint } {
    const usage = this.readUsage();
    return { usageBytes: usage.usageBytes, workingSetBytes: this.readWorkingSet(usage) };
  }

  /** How many descriptors it holds. */
  get openCount(): number {
    return (this.current?.isOpen === true ? 1 : 0) + (this.stat.isOpen ? 1 : 0);
  }

  close(): void {
    this.current?.close();
    this.stat.close();
  }

  private readRoot(): CgroupMemoryReading {
    const stat = this.stat.read();
    const anonBytes = memoryStatValue(stat, 'anon');
    const fileBytes = memoryStatValue(stat, 'file');
    const inactiveFileBytes = memoryStatValue(stat, inactiveFileKey('v2'));
    if (anonBytes === undefined || fileBytes === undefined || inactiveFileBytes === undefined) throw new Error(`${this.stat.path} lacks anon, file or inactive_file`);
    const usageBytes = anonBytes + fileBytes;
    return { usageBytes, workingSetBytes: workingSetBytes(usageBytes, inactiveFileBytes) };
  }
}
