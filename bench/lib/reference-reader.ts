// The C reference reader (bench/reference-reader.c): the physical floor of one observe pass. A
// recording host door around the real one notes every file operation the cgroup observer makes in
// one pass (a pread at offset 0 of a kept-open file, an fstat, an open-read-close, a readdir, a
// stat, a statfs); the C program, built with `cc -O2` at bench time, repeats exactly those
// operations on the same files, in the same order, with nothing around them, and times each pass.
// Without a C compiler it is skipped, with the reason.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { nodeHostFs, type HostDirEntry, type HostFs } from '../../src/host/host-fs.js';
import { errorMessage } from '../../src/errors.js';
import { distribution, type Distribution } from './stats.js';

/** One operation of the recorded pass, as the C program reads it. */
export type ReferenceOp = `${'P' | 'L' | 'R' | 'r' | 'D' | 'S' | 'F'} ${string}`;

/** The real host door, noting each operation while `recording` is set. */
export class RecordingHostFs implements HostFs {
  recording: ReferenceOp[] | null = null;
  private readonly paths = new Map<number, string>();

  constructor(private readonly inner: HostFs = nodeHostFs) {}

  private note(op: ReferenceOp): void {
    this.recording?.push(op);
  }

  readSmallFile(path: string): string {
    this.note(`R ${path}`);
    return this.inner.readSmallFile(path);
  }
  readSingleRecordFile(path: string): string {
    this.note(`r ${path}`);
    return this.inner.readSingleRecordFile(path);
  }
  openFile(path: string): number {
    const fd = this.inner.openFile(path);
    this.paths.set(fd, path);
    return fd;
  }
  readOpenFile(fd: number, singleRecord: boolean): string {
    this.note(`P ${this.paths.get(fd) ?? ''}`);
    return this.inner.readOpenFile(fd, singleRecord);
  }
  closeFile(fd: number): void {
    this.paths.delete(fd);
    this.inner.closeFile(fd);
  }
  linkCountOfOpenFile(fd: number): number {
    this.note(`L ${this.paths.get(fd) ?? ''}`);
    return this.inner.linkCountOfOpenFile(fd);
  }
  subdirectories(path: string): string[] {
    this.note(`D ${path}`);
    return this.inner.subdirectories(path);
  }
  subdirectoryCount(path: string): number | undefined {
    this.note(`S ${path}`);
    return this.inner.subdirectoryCount(path);
  }
  exists(path: string): boolean {
    this.note(`S ${path}`);
    return this.inner.exists(path);
  }
  realPath(path: string): string {
    this.note(`S ${path}`);
    return this.inner.realPath(path);
  }
  writeControlFile(path: string, text: string): void {
    this.inner.writeControlFile(path, text);
  }
  statfs(path: string): ReturnType<HostFs['statfs']> {
    this.note(`F ${path}`);
    return this.inner.statfs(path);
  }
  deviceOf(path: string): Promise<bigint> {
    this.note(`S ${path}`);
    return this.inner.deviceOf(path);
  }
  lstat(path: string): ReturnType<HostFs['lstat']> {
    this.note(`S ${path}`);
    return this.inner.lstat(path);
  }
  readDir(path: string): AsyncIterable<HostDirEntry> {
    this.note(`D ${path}`);
    return this.inner.readDir(path);
  }
  readTextFile(path: string): Promise<string> {
    this.note(`R ${path}`);
    return this.inner.readTextFile(path);
  }
}

/** How many of each operation one pass made: the files it reads, by the way it reads them. */
export function countOps(ops: readonly ReferenceOp[]): Readonly<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const op of ops) counts[op[0] as string] = (counts[op[0] as string] ?? 0) + 1;
  return counts;
}

export interface ReferencePass {
  /** Wall time of each pass, ms. */
  readonly passMs: Distribution | null;
  /** CPU time (user + system) per pass, ms, averaged over the passes. */
  readonly cpuPerPassMs: number;
}

/** Why the reference reader cannot be built here, or null. */
export function referenceReaderUnavailable(): string | null {
  try {
    execFileSync('cc', ['--version'], { stdio: 'ignore' });
    return null;
  } catch (err) {
    return `no C compiler (cc --version: ${errorMessage(err)})`;
  }
}

/** Builds the reader into `scratchDir`; `benchDir` is the compiled bench directory (dist/bench). */
export function buildReferenceReader(benchDir: string, scratchDir: string): string {
  const source = resolve(benchDir, '..', '..', 'bench', 'reference-reader.c');
  if (!existsSync(source)) throw new Error(`${source} is missing`);
  const binary = join(scratchDir, 'reference-reader');
  execFileSync('cc', ['-O2', '-o', binary, source], { stdio: ['ignore', 'ignore', 'pipe'] });
  return binary;
}

/** Runs `passes` passes of the recorded operations. */
export function runReferenceReader(binary: string, ops: readonly ReferenceOp[], passes: number): ReferencePass {
  const result = spawnSync(binary, [], { input: `${passes}\n${ops.join('\n')}\n`, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (result.status !== 0) throw new Error(`reference reader exited with ${result.status ?? result.signal}: ${result.stderr.trim()}`);
  const lines = result.stdout.trim().split('\n');
  const cpuLine = lines.pop() ?? '';
  const cpuNs = Number(/^cpu (\d+)$/.exec(cpuLine)?.[1] ?? NaN);
  const passMs = lines.map((line) => Number(line) / 1e6);
  if (passMs.length !== passes || passMs.some((ms) => !Number.isFinite(ms)) || !Number.isFinite(cpuNs)) throw new Error(`reference reader printed an unexpected result: ${result.stdout.slice(0, 200)}`);
  return { passMs: distribution(passMs), cpuPerPassMs: cpuNs / 1e6 / passes };
}
