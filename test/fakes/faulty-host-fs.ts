// A HostFs over the real filesystem that fails chosen calls on chosen paths, to test how the
// observers degrade (an unreadable file, a vanished directory) and that they count their reads.

import { nodeHostFs, type HostDirEntry, type HostFs, type HostLstat, type HostStatfs } from '../../src/host/host-fs.js';

type Method = keyof HostFs;

interface Fault {
  readonly method: Method;
  readonly matches: (path: string) => boolean;
  readonly code: string;
  /** How many more calls fail. */
  remaining: number;
}

function fsError(code: string, path: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${code}: injected, '${path}'`);
  error.code = code;
  return error;
}

export class FaultyHostFs implements HostFs {
  private faults: Fault[] = [];
  readonly calls = new Map<Method, number>();
  /** Every path a call was made on, in order. */
  readonly checkedPaths: string[] = [];
  /** statfs results to report instead of the real ones, by path. */
  readonly statfsOverrides = new Map<string, HostStatfs>();
  /** Device IDs to report instead of the real ones, by path. */
  readonly deviceOverrides = new Map<string, bigint>();
  /** Contents to return from readSmallFile instead of the real ones, by path suffix. */
  readonly contentOverrides = new Map<string, string>();

  constructor(private readonly inner: HostFs = nodeHostFs) {}

  /** Makes `method` fail with `code` (ENOENT, EACCES, ...) for paths ending in `suffix` (or matching it), `times` times. */
  injectError(method: Method, suffix: string | RegExp, code: string, times = Number.POSITIVE_INFINITY): void {
    const matches = typeof suffix === 'string' ? (path: string) => path.endsWith(suffix) : (path: string) => suffix.test(path);
    this.faults.push({ method, matches, code, remaining: times });
  }

  clearErrors(): void {
    this.faults = [];
  }

  private check(method: Method, path: string): void {
    this.calls.set(method, (this.calls.get(method) ?? 0) + 1);
    this.checkedPaths.push(path);
    const fault = this.faults.find((f) => f.method === method && f.remaining > 0 && f.matches(path));
    if (fault === undefined) return;
    fault.remaining--;
    throw fsError(fault.code, path);
  }

  readSmallFile(path: string): string {
    this.check('readSmallFile', path);
    for (const [suffix, text] of this.contentOverrides) if (path.endsWith(suffix)) return text;
    return this.inner.readSmallFile(path);
  }
  readSingleRecordFile(path: string): string {
    this.check('readSingleRecordFile', path);
    for (const [suffix, text] of this.contentOverrides) if (path.endsWith(suffix)) return text;
    return this.inner.readSingleRecordFile(path);
  }
  private readonly pathsByFd = new Map<number, string>();

  /** Descriptors opened through openFile and not closed yet. */
  openDescriptors(): number {
    return this.pathsByFd.size;
  }
  openFile(path: string): number {
    this.check('openFile', path);
    const fd = this.inner.openFile(path);
    this.pathsByFd.set(fd, path);
    return fd;
  }
  readOpenFile(fd: number, singleRecord: boolean): string {
    this.check('readOpenFile', this.pathsByFd.get(fd) ?? `fd:${fd}`);
    return this.inner.readOpenFile(fd, singleRecord);
  }
  linkCountOfOpenFile(fd: number): number {
    this.check('linkCountOfOpenFile', this.pathsByFd.get(fd) ?? `fd:${fd}`);
    return this.inner.linkCountOfOpenFile(fd);
  }
  closeFile(fd: number): void {
    this.calls.set('closeFile', (this.calls.get('closeFile') ?? 0) + 1);
    this.pathsByFd.delete(fd);
    this.inner.closeFile(fd);
  }
  subdirectories(path: string): string[] {
    this.check('subdirectories', path);
    return this.inner.subdirectories(path);
  }
  subdirectoryCount(path: string): number | undefined {
    this.check('subdirectoryCount', path);
    return this.inner.subdirectoryCount(path);
  }
  exists(path: string): boolean {
    this.calls.set('exists', (this.calls.get('exists') ?? 0) + 1);
    if (this.faults.some((f) => f.method === 'exists' && f.remaining > 0 && f.matches(path))) return false;
    return this.inner.exists(path);
  }
  realPath(path: string): string {
    this.check('realPath', path);
    return this.inner.realPath(path);
  }
  writeControlFile(path: string, text: string): void {
    this.check('writeControlFile', path);
    this.inner.writeControlFile(path, text);
  }
  async statfs(path: string): Promise<HostStatfs> {
    this.check('statfs', path);
    return this.statfsOverrides.get(path) ?? this.inner.statfs(path);
  }
  async deviceOf(path: string): Promise<bigint> {
    this.check('deviceOf', path);
    return this.deviceOverrides.get(path) ?? this.inner.deviceOf(path);
  }
  async lstat(path: string): Promise<HostLstat> {
    this.check('lstat', path);
    return this.inner.lstat(path);
  }
  async *readDir(path: string): AsyncIterable<HostDirEntry> {
    this.check('readDir', path);
    yield* this.inner.readDir(path);
  }
  async readTextFile(path: string): Promise<string> {
    this.check('readTextFile', path);
    return this.inner.readTextFile(path);
  }
}
