// Keeps cgroup memory files open between syncs. Opening and closing a cgroupfs file costs
// several times what reading it does (about 11 µs against 2 µs for memory.usage_in_bytes), and a
// sync reads four of them per pod, so reading an open descriptor again at offset 0, which makes
// the kernel generate the file afresh, is what keeps a 110-pod sync at a few milliseconds.
//
// Only single-record files are kept open (memory.stat, memory.usage_in_bytes, memory.current,
// memory.limit_in_bytes, memory.max): cgroup v1 serves cgroup.procs from a per-cgroup PID list
// that an open descriptor keeps reusing, so a kept-open cgroup.procs goes stale; it is opened
// afresh every time. A file whose cgroup is removed fails with ENODEV; its descriptor is closed
// and the read retried by path, which then fails with ENOENT like any vanished cgroup.
//
// Directories are kept open too, for their link count (2 + subdirectories on cgroupfs), which
// tells without a path lookup whether a cgroup has children to walk.
//
// Each open descriptor holds a little kernel memory (a seq_file and its page buffer, charged to
// the agent's cgroup: about 2.5 KiB a descriptor on average, 17 KiB a pod, measured with
// memory.kmem.usage_in_bytes on 1,000 pods), so the number kept is capped; past the cap, files are
// read the ordinary way. The cap covers a node of 1,000 pods: past it, the memory shortcut's read of
// every pod's usage opened most files afresh (at 1,000 pods and a 2,048 cap, 25 ms against 8.6 ms
// with every file kept). Descriptors of pods that left are released by the caller.

import type { HostDirEntry, HostFs, HostLstat, HostStatfs } from '../host/host-fs.js';

/** Descriptors kept open at the most: about 1,170 pods' worth at seven each (four files, three directories). */
export const MAX_KEPT_OPEN_FILES = 8192;

/**
 * The cap for a process allowed `openFileLimit` descriptors (undefined: unknown, taken as the
 * common soft limit 1024): at most half of them, so sockets, the kernel log, the notifier's eventfds
 * and the rest always find one.
 */
export function keptOpenFileCap(openFileLimit: number | undefined): number {
  return Math.min(MAX_KEPT_OPEN_FILES, Math.floor((openFileLimit ?? 1024) / 2));
}

/** f_type of cgroup v1 and cgroup2 filesystems (linux/magic.h). */
export const CGROUP_FS_MAGICS: readonly bigint[] = Object.freeze([0x27e0ebn, 0x63677270n]);

// A kept descriptor; `closed` once it is let go, so a caller that remembered it never reads a
// descriptor number the kernel may since have given to another file.
interface KeptFile {
  readonly fd: number;
  closed: boolean;
}

/** Where a caller that reads the same file again and again keeps its descriptor between reads. */
export interface KeptFileSlot {
  kept: KeptFile | undefined;
}

export class KernelFileCache implements HostFs {
  private readonly open = new Map<string, KeptFile>();
  /** `cachedRoot/`, built once: the check runs for every file read. */
  private readonly cachedPrefix: string;

  /**
   * @param inner the host
   * @param cachedRoot only files below this directory are kept open (the memory hierarchy)
   * @param maxOpenFiles the cap on descriptors kept open
   */
  constructor(
    private readonly inner: HostFs,
    private readonly cachedRoot: string,
    private readonly maxOpenFiles = MAX_KEPT_OPEN_FILES,
  ) {
    this.cachedPrefix = `${cachedRoot}/`;
  }

  /** Descriptors currently kept open. */
  openCount(): number {
    return this.open.size;
  }

  readSingleRecordFile(path: string): string {
    if (!this.isCached(path)) return this.inner.readSingleRecordFile(path);
    return this.throughOpenFile(path, (fd) => this.inner.readOpenFile(fd, true), () => this.inner.readSingleRecordFile(path));
  }

  /**
   * readSingleRecordFile for a caller that reads `path` over and over (the memory shortcut reads one
   * usage file per pod): `slot` remembers the descriptor, so the next read needs no lookup by path.
   * One let go since (its cgroup released or gone) is looked up, or opened, again.
   */
  readSingleRecordFileVia(path: string, slot: KeptFileSlot): string {
    const kept = slot.kept;
    if (kept !== undefined && !kept.closed) {
      try {
        return this.inner.readOpenFile(kept.fd, true);
      } catch {
        this.dropFailed(path);
      }
    }
    const text = this.readSingleRecordFile(path);
    slot.kept = this.open.get(path);
    return text;
  }

  subdirectoryCount(path: string): number | undefined {
    if (!this.isCached(path)) return this.inner.subdirectoryCount(path);
    return this.throughOpenFile(
      path,
      (fd) => {
        const links = this.inner.linkCountOfOpenFile(fd);
        return links >= 2 ? links - 2 : undefined;
      },
      () => this.inner.subdirectoryCount(path),
    );
  }

  private isCached(path: string): boolean {
    return path.startsWith(this.cachedPrefix);
  }

  // Uses the kept descriptor; on its failure (ENODEV: the cgroup is gone) drops it and opens the
  // path again; past the cap, falls back to the uncached operation.
  private throughOpenFile<T>(path: string, use: (fd: number) => T, uncached: () => T): T {
    const kept = this.open.get(path);
    if (kept !== undefined) {
      try {
        return use(kept.fd);
      } catch {
        this.dropFailed(path);
      }
    }
    if (this.open.size >= this.maxOpenFiles) return uncached();
    const opened = this.inner.openFile(path);
    try {
      const result = use(opened);
      this.open.set(path, { fd: opened, closed: false });
      return result;
    } catch (error) {
      this.inner.closeFile(opened);
      throw error;
    }
  }

  // A kept descriptor failed (its cgroup is gone): it is closed, with its directory's, since a
  // removed directory still answers fstat.
  private dropFailed(path: string): void {
    this.forgetPath(path);
    this.forgetPath(path.slice(0, path.lastIndexOf('/')));
  }

  /** Closes the descriptors of `dir` and everything below it (a pod that left, a cgroup that vanished). */
  release(dir: string): void {
    const prefix = `${dir}/`;
    for (const path of [...this.open.keys()]) if (path === dir || path.startsWith(prefix)) this.forgetPath(path);
  }

  /** Closes every descriptor. */
  closeAll(): void {
    for (const path of [...this.open.keys()]) this.forgetPath(path);
  }

  private forgetPath(path: string): void {
    const kept = this.open.get(path);
    this.open.delete(path);
    if (kept === undefined) return;
    kept.closed = true;
    try {
      this.inner.closeFile(kept.fd);
    } catch {
      // Already closed or invalid: nothing is held any more either way.
    }
  }

  readSmallFile(path: string): string {
    return this.inner.readSmallFile(path);
  }
  openFile(path: string): number {
    return this.inner.openFile(path);
  }
  readOpenFile(fd: number, singleRecord: boolean): string {
    return this.inner.readOpenFile(fd, singleRecord);
  }
  closeFile(fd: number): void {
    this.inner.closeFile(fd);
  }
  linkCountOfOpenFile(fd: number): number {
    return this.inner.linkCountOfOpenFile(fd);
  }
  subdirectories(path: string): string[] {
    return this.inner.subdirectories(path);
  }
  exists(path: string): boolean {
    return this.inner.exists(path);
  }
  realPath(path: string): string {
    return this.inner.realPath(path);
  }
  writeControlFile(path: string, text: string): void {
    this.inner.writeControlFile(path, text);
  }
  statfs(path: string): Promise<HostStatfs> {
    return this.inner.statfs(path);
  }
  deviceOf(path: string): Promise<bigint> {
    return this.inner.deviceOf(path);
  }
  lstat(path: string): Promise<HostLstat> {
    return this.inner.lstat(path);
  }
  readDir(path: string): AsyncIterable<HostDirEntry> {
    return this.inner.readDir(path);
  }
  readTextFile(path: string): Promise<string> {
    return this.inner.readTextFile(path);
  }
}
