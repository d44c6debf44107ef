// Disk usage of a directory tree, as the kubelet's `fs.DiskUsage` measures emptyDir volumes, log
// files and writable layers: every entry's allocated blocks (st_blocks * 512) and one inode per
// entry, the top directory included; hard links counted once; subtrees on other devices not
// entered; entries deleted during the walk ignored. The walk is asynchronous and spends a shared
// budget, yielding to the event loop after every batch, so a large tree never stalls the agent.

import type { HostFs, HostLstat } from '../host/host-fs.js';
import { isNotFound } from '../host/read-result.js';

export interface DiskUsage {
  readonly usedBytes: bigint;
  readonly inodesUsed: bigint;
}

export const NO_DISK_USAGE: DiskUsage = Object.freeze({ usedBytes: 0n, inodesUsed: 0n });

/** How many entries are looked at between yields, shared by every walk of one refresh. */
export class WalkBudget {
  private spentSinceYield = 0;
  /** Entries examined in total. */
  entriesExamined = 0;

  constructor(readonly entriesPerBatch: number) {}

  /** Counts `entries`; once a batch is spent, waits for the event loop to run everything else. */
  async spend(entries: number): Promise<void> {
    this.entriesExamined += entries;
    this.spentSinceYield += entries;
    if (this.spentSinceYield < this.entriesPerBatch) return;
    this.spentSinceYield = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

// lstat calls kept in flight at once: enough to overlap disk latency, few enough to leave libuv's
// four pool threads to the rest of the agent.
const LSTAT_PARALLELISM = 8;

async function lstatOrMissing(fs: HostFs, path: string): Promise<HostLstat | undefined> {
  try {
    return await fs.lstat(path);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * The disk usage of `path`. Undefined when `path` does not exist; throws on any other error
 * (the kubelet then reports no stat for that path).
 */
export async function diskUsage(fs: HostFs, path: string, budget: WalkBudget): Promise<DiskUsage | undefined> {
  const top = await lstatOrMissing(fs, path);
  if (top === undefined) return undefined;
  let usedBytes = top.blocks * 512n;
  let inodesUsed = 1n;
  await budget.spend(1);
  if (!top.isDirectory) return { usedBytes, inodesUsed };

  // Inodes with several links, counted at their first sighting only.
  const seenLinkedInodes = new Set<bigint>();
  const pending = [path];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    let names: string[];
    try {
      names = [];
      for await (const entry of fs.readDir(dir)) names.push(entry.name);
    } catch (error) {
      if (isNotFound(error)) continue;
      throw error;
    }
    for (let i = 0; i < names.length; i += LSTAT_PARALLELISM) {
      const batch = names.slice(i, i + LSTAT_PARALLELISM).map((name) => `${dir}/${name}`);
      const stats = await Promise.all(batch.map((entryPath) => lstatOrMissing(fs, entryPath)));
      stats.forEach((s, index) => {
        if (s === undefined || s.dev !== top.dev) return;
        if (s.nlink > 1n) {
          if (seenLinkedInodes.has(s.ino)) return;
          seenLinkedInodes.add(s.ino);
        }
        usedBytes += s.blocks * 512n;
        inodesUsed += 1n;
        if (s.isDirectory) pending.push(batch[index] as string);
      });
      await budget.spend(batch.length);
    }
  }
  return { usedBytes, inodesUsed };
}

/**
 * The usage of the regular files directly inside `dir`, summed (the kubelet's log stats: each file
 * measured on its own, subdirectories skipped). Undefined when `dir` does not exist.
 */
export async function filesUsage(fs: HostFs, dir: string, budget: WalkBudget): Promise<DiskUsage | undefined> {
  const names: string[] = [];
  try {
    for await (const entry of fs.readDir(dir)) if (!entry.isDirectory) names.push(entry.name);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
  let total = NO_DISK_USAGE;
  for (const name of names) {
    const usage = await diskUsage(fs, `${dir}/${name}`, budget);
    if (usage !== undefined) total = addDiskUsage(total, usage);
  }
  return total;
}

export function addDiskUsage(a: DiskUsage, b: DiskUsage): DiskUsage {
  return { usedBytes: a.usedBytes + b.usedBytes, inodesUsed: a.inodesUsed + b.inodesUsed };
}
