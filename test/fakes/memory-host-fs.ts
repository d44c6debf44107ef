// A host filesystem held in memory, for tests that generate many nodes: files by absolute path,
// directories implied by them (or made explicitly). Paths under `cgroupRoot` answer statfs with the
// cgroup v1 magic, so the observer keeps their files open (kernel-file-cache.ts) as on a real node,
// and a kept-open file reads its current content at every read, as a kernel file does.

import type { HostDirEntry, HostFs, HostLstat, HostStatfs } from '../../src/host/host-fs.js';
import { CGROUP_FS_MAGICS } from '../../src/observe/kernel-file-cache.js';

function fsError(code: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: '${path}'`);
  error.code = code;
  return error;
}

const parentOf = (path: string): string => path.slice(0, Math.max(1, path.lastIndexOf('/')));
const nameIn = (parent: string, path: string): string => path.slice(parent === '/' ? 1 : parent.length + 1);

export class MemoryHostFs implements HostFs {
  private readonly files = new Map<string, string>();
  private readonly dirs = new Set<string>(['/']);
  // Each directory's direct children, so a listing or a removal costs what is under it only.
  private readonly childFiles = new Map<string, Set<string>>([['/', new Set()]]);
  private readonly childDirs = new Map<string, Set<string>>([['/', new Set()]]);
  private readonly fds = new Map<number, string>();
  private nextFd = 100;
  // statfs and device answers set for particular paths; others get a fixed half-full filesystem on device 1.
  private readonly statfsByPath = new Map<string, HostStatfs>();
  private readonly deviceByPath = new Map<string, bigint>();

  constructor(private readonly cgroupRoot = '/sys/fs/cgroup') {}

  /** Writes a file, making its directories. */
  write(path: string, content: string): this {
    const parent = parentOf(path);
    this.mkdir(parent);
    this.files.set(path, content);
    this.childFiles.get(parent)?.add(nameIn(parent, path));
    return this;
  }

  mkdir(path: string): this {
    if (this.dirs.has(path)) return this;
    const parent = parentOf(path);
    this.mkdir(parent);
    this.dirs.add(path);
    this.childFiles.set(path, new Set());
    this.childDirs.set(path, new Set());
    this.childDirs.get(parent)?.add(nameIn(parent, path));
    return this;
  }

  /** What statfs answers for `path` from now on (its magic number stays the fake's). */
  setStatfs(path: string, figures: Omit<HostStatfs, 'type'>): this {
    this.statfsByPath.set(path, figures);
    return this;
  }

  /** The device `path` is on (st_dev), as deviceOf answers it. */
  setDevice(path: string, device: bigint): this {
    this.deviceByPath.set(path, device);
    return this;
  }

  /** Removes a file or a directory and everything below it. */
  remove(path: string): void {
    const parent = parentOf(path);
    const name = nameIn(parent, path);
    if (this.files.delete(path)) this.childFiles.get(parent)?.delete(name);
    if (!this.dirs.has(path)) return;
    for (const dir of [...(this.childDirs.get(path) ?? [])]) this.remove(`${path}/${dir}`);
    for (const file of this.childFiles.get(path) ?? []) this.files.delete(`${path}/${file}`);
    this.dirs.delete(path);
    this.childFiles.delete(path);
    this.childDirs.delete(path);
    this.childDirs.get(parent)?.delete(name);
  }

  private content(path: string): string {
    const text = this.files.get(path);
    if (text === undefined) throw fsError(this.dirs.has(path) ? 'EISDIR' : 'ENOENT', path);
    return text;
  }

  private children(path: string): { files: string[]; dirs: string[] } {
    if (!this.dirs.has(path)) throw fsError(this.files.has(path) ? 'ENOTDIR' : 'ENOENT', path);
    return { files: [...(this.childFiles.get(path) ?? [])], dirs: [...(this.childDirs.get(path) ?? [])] };
  }

  readSmallFile(path: string): string {
    return this.content(path);
  }
  readSingleRecordFile(path: string): string {
    return this.content(path);
  }
  openFile(path: string): number {
    if (!this.files.has(path) && !this.dirs.has(path)) throw fsError('ENOENT', path);
    const fd = this.nextFd++;
    this.fds.set(fd, path);
    return fd;
  }
  readOpenFile(fd: number): string {
    const path = this.fds.get(fd);
    if (path === undefined) throw fsError('EBADF', String(fd));
    // A removed cgroup's kept-open file fails as the kernel's does.
    if (!this.files.has(path)) throw fsError('ENODEV', path);
    return this.content(path);
  }
  closeFile(fd: number): void {
    this.fds.delete(fd);
  }
  linkCountOfOpenFile(fd: number): number {
    const path = this.fds.get(fd);
    if (path === undefined) throw fsError('EBADF', String(fd));
    if (!this.dirs.has(path)) return this.files.has(path) ? 1 : 0;
    return 2 + this.children(path).dirs.length;
  }
  subdirectories(path: string): string[] {
    return this.children(path).dirs;
  }
  subdirectoryCount(path: string): number | undefined {
    return this.children(path).dirs.length;
  }
  exists(path: string): boolean {
    return this.files.has(path) || this.dirs.has(path);
  }
  // No symlinks in memory: a path that exists is its own real path.
  realPath(path: string): string {
    if (!this.exists(path)) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    return path;
  }
  writeControlFile(path: string, text: string): void {
    if (!this.exists(path)) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
    this.files.set(path, text);
  }
  async statfs(path: string): Promise<HostStatfs> {
    if (!this.exists(path)) throw fsError('ENOENT', path);
    const type = path === this.cgroupRoot || path.startsWith(`${this.cgroupRoot}/`) ? (CGROUP_FS_MAGICS[0] as bigint) : 0xef53n;
    return { type, ...(this.statfsByPath.get(path) ?? { blockSizeBytes: 4096n, blocks: 1_000_000n, blocksFree: 500_000n, blocksAvailable: 450_000n, files: 100_000n, filesFree: 90_000n }) };
  }
  async deviceOf(path: string): Promise<bigint> {
    if (!this.exists(path)) throw fsError('ENOENT', path);
    return this.deviceByPath.get(path) ?? 1n;
  }
  async lstat(path: string): Promise<HostLstat> {
    if (this.dirs.has(path)) return { dev: 1n, ino: BigInt(path.length), nlink: 2n, blocks: 8n, isDirectory: true };
    const text = this.content(path);
    return { dev: 1n, ino: BigInt(path.length) * 7919n, nlink: 1n, blocks: BigInt(Math.ceil(text.length / 512)), isDirectory: false };
  }
  async *readDir(path: string): AsyncIterable<HostDirEntry> {
    const { files, dirs } = this.children(path);
    for (const name of dirs) yield { name, isDirectory: true };
    for (const name of files) yield { name, isDirectory: false };
  }
  async readTextFile(path: string): Promise<string> {
    return this.content(path);
  }
}
