// The observer's only door to the host: small synchronous reads of kernel pseudo-files for the
// memory hot path, and asynchronous statfs/stat/readdir for filesystems and the disk-usage walk.
// A port, so tests can inject failures; the real implementation uses node:fs.
//
// cgroupfs and procfs files are generated in memory by the kernel and never wait on a disk, so
// they are read synchronously: a few µs per read, against tens of µs through libuv's thread pool,
// which is what keeps a sync over 110 pods at a few milliseconds. Anything that can touch a disk
// (statfs, the usage walk) goes through the asynchronous API instead.

import { closeSync, existsSync, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { lstat, opendir, readFile, stat, statfs } from 'node:fs/promises';

/** statfs(2) figures, exact. `blockSizeBytes` is the unit of every block count. */
export interface HostStatfs {
  /** f_type, the filesystem's magic number (cgroup v1 0x27e0eb, cgroup2 0x63677270). */
  readonly type?: bigint;
  readonly blockSizeBytes: bigint;
  readonly blocks: bigint;
  readonly blocksFree: bigint;
  readonly blocksAvailable: bigint;
  readonly files: bigint;
  readonly filesFree: bigint;
}

/** The lstat(2) fields the disk-usage walk needs. */
export interface HostLstat {
  readonly dev: bigint;
  readonly ino: bigint;
  readonly nlink: bigint;
  /** 512-byte blocks allocated (st_blocks), whatever the filesystem's block size. */
  readonly blocks: bigint;
  readonly isDirectory: boolean;
}

export interface HostDirEntry {
  readonly name: string;
  readonly isDirectory: boolean;
}

export interface HostFs {
  /** Reads a small file whole (to end of file), synchronously; throws the fs error (with `code`). */
  readSmallFile(path: string): string;
  /**
   * Reads a small file the kernel generates in one piece (memory.stat, memory.usage_in_bytes,
   * memory.max, meminfo, loadavg, kernel sysctls), synchronously: one read returns it whole, so
   * the read that would return 0 is skipped. Not for files of many records (cgroup.procs), which
   * the kernel hands out a page at a time. Throws the fs error (with `code`).
   */
  readSingleRecordFile(path: string): string;
  /** Opens a file for repeated reads, synchronously; returns the descriptor. Throws the fs error. */
  openFile(path: string): number;
  /**
   * Reads an open file from offset 0, synchronously: a kernel file is generated afresh on every
   * read at offset 0. `singleRecord` as for {@link HostFs.readSingleRecordFile}. Throws the fs
   * error (ENODEV once the file's cgroup has been removed).
   */
  readOpenFile(fd: number, singleRecord: boolean): string;
  closeFile(fd: number): void;
  /** The link count of an open file or directory (fstat), synchronously. Throws the fs error. */
  linkCountOfOpenFile(fd: number): number;
  /** The names of a directory's subdirectories, synchronously (cgroup trees). Throws the fs error. */
  subdirectories(path: string): string[];
  /**
   * How many subdirectories a directory has, from its link count (2 + subdirectories on cgroupfs,
   * ext4, xfs and tmpfs), synchronously: one stat instead of a listing. Undefined when the
   * filesystem does not count links that way (btrfs reports 1). Throws the fs error.
   */
  subdirectoryCount(path: string): number | undefined;
  /** Whether a path exists, synchronously. */
  exists(path: string): boolean;
  /** The canonical path, every symlink and `..` resolved (realpath(3)), synchronously. Throws the fs error. */
  realPath(path: string): string;
  /** Writes one command to a kernel control file (`cgroup.kill`, `cgroup.freeze`) in one write, synchronously. Throws the fs error. */
  writeControlFile(path: string, text: string): void;
  statfs(path: string): Promise<HostStatfs>;
  /** The device (st_dev) the path lives on, following symlinks. */
  deviceOf(path: string): Promise<bigint>;
  lstat(path: string): Promise<HostLstat>;
  /** A directory's entries, in batches read from the kernel (no full listing held twice). */
  readDir(path: string): AsyncIterable<HostDirEntry>;
  /** Reads a text file asynchronously (mountinfo can be large). */
  readTextFile(path: string): Promise<string>;
}

// One buffer for every small read: the observer is single-threaded and reads one file at a time.
let readBuffer = Buffer.allocUnsafe(64 * 1024);

// Reads from `position` (null: the file's current offset) until the end, or until the first short
// read when the file is generated in one piece.
function readFrom(fd: number, position: number | null, stopAtShortRead: boolean): string {
  let lengthBytes = 0;
  for (;;) {
    if (lengthBytes === readBuffer.length) {
      // A large cgroup.procs or memory.stat: grow and keep reading.
      const larger = Buffer.allocUnsafe(readBuffer.length * 2);
      readBuffer.copy(larger, 0, 0, lengthBytes);
      readBuffer = larger;
    }
    const wantedBytes = readBuffer.length - lengthBytes;
    const readBytes = readSync(fd, readBuffer, lengthBytes, wantedBytes, position === null ? null : position + lengthBytes);
    lengthBytes += readBytes;
    if (readBytes === 0 || (stopAtShortRead && readBytes < wantedBytes)) break;
  }
  return readBuffer.toString('utf8', 0, lengthBytes);
}

function readWhole(path: string, stopAtShortRead: boolean): string {
  const fd = openSync(path, 'r');
  try {
    return readFrom(fd, null, stopAtShortRead);
  } finally {
    closeSync(fd);
  }
}

/** The real host, through node:fs. */
export const nodeHostFs: HostFs = {
  readSmallFile: (path) => readWhole(path, false),
  readSingleRecordFile: (path) => readWhole(path, true),
  openFile: (path) => openSync(path, 'r'),
  readOpenFile: (fd, singleRecord) => readFrom(fd, 0, singleRecord),
  closeFile: (fd) => closeSync(fd),
  linkCountOfOpenFile: (fd) => fstatSync(fd).nlink,
  subdirectories(path) {
    return readdirSync(path, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  },
  subdirectoryCount(path) {
    const links = statSync(path).nlink;
    return links >= 2 ? links - 2 : undefined;
  },
  exists: (path) => existsSync(path),
  realPath: (path) => realpathSync.native(path),
  writeControlFile: (path, text) => writeFileSync(path, text),
  async statfs(path) {
    const s = await statfs(path, { bigint: true });
    return {
      type: s.type,
      blockSizeBytes: s.bsize,
      blocks: s.blocks,
      blocksFree: s.bfree,
      blocksAvailable: s.bavail,
      files: s.files,
      filesFree: s.ffree,
    };
  },
  async deviceOf(path) {
    return (await stat(path, { bigint: true })).dev;
  },
  async lstat(path) {
    const s = await lstat(path, { bigint: true });
    return { dev: s.dev, ino: s.ino, nlink: s.nlink, blocks: s.blocks, isDirectory: s.isDirectory() };
  },
  async *readDir(path) {
    const dir = await opendir(path, { bufferSize: 128 });
    for await (const entry of dir) yield { name: entry.name, isDirectory: entry.isDirectory() };
  },
  readTextFile: (path) => readFile(path, 'utf8'),
};
