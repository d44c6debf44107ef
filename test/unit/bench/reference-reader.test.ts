// The C reference reader of the benchmarks (bench/reference-reader.c, bench/lib/reference-reader.ts)
// on ordinary files: what the recording door notes is what the real door did, and the C program
// built with `cc` repeats exactly those operations, one timed line per pass; a file it cannot keep
// open fails it visibly. Skipped, with the reason, where there is no C compiler.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildReferenceReader, countOps, RecordingHostFs, referenceReaderUnavailable, runReferenceReader } from '../../../bench/lib/reference-reader.js';

const noCompiler = referenceReaderUnavailable();
let dir = '';
let binary = '';

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-reference-reader-'));
  if (noCompiler === null) binary = buildReferenceReader(join(process.cwd(), 'dist', 'bench'), dir);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test('the recording door notes each operation with its path, the reads returning what the files hold', async () => {
  writeFileSync(join(dir, 'usage'), '4096\n');
  writeFileSync(join(dir, 'procs'), '1\n2\n');
  mkdirSync(join(dir, 'child'), { recursive: true });
  const door = new RecordingHostFs();
  const fd = door.openFile(join(dir, 'usage'));
  door.recording = [];
  expect(door.readOpenFile(fd, true)).toBe('4096\n');
  expect(door.readSmallFile(join(dir, 'procs'))).toBe('1\n2\n');
  expect(door.subdirectories(dir)).toEqual(['child']);
  expect(door.exists(join(dir, 'child'))).toBe(true);
  await door.statfs(dir);
  const ops = door.recording;
  door.recording = null;
  door.closeFile(fd);
  expect(ops).toEqual([`P ${join(dir, 'usage')}`, `R ${join(dir, 'procs')}`, `D ${dir}`, `S ${join(dir, 'child')}`, `F ${dir}`]);
  expect(countOps(ops)).toEqual({ P: 1, R: 1, D: 1, S: 1, F: 1 });
  // Nothing is noted once recording stops.
  door.readSmallFile(join(dir, 'procs'));
  expect(ops).toHaveLength(5);
});

test('the C reader repeats the recorded operations, one timed line per pass', () => {
  if (noCompiler !== null) return void console.log(`skipped: ${noCompiler}`);
  writeFileSync(join(dir, 'usage'), '4096\n');
  const ops = [`P ${join(dir, 'usage')}`, `L ${dir}`, `r ${join(dir, 'usage')}`, `D ${dir}`, `S ${dir}`, `F ${dir}`] as const;
  const result = runReferenceReader(binary, ops, 50);
  expect(result.passMs?.count).toBe(50);
  expect(result.passMs?.median).toBeGreaterThan(0);
  expect(result.cpuPerPassMs).toBeGreaterThanOrEqual(0);
});

test('a file the C reader cannot keep open fails it, naming the file', () => {
  if (noCompiler !== null) return void console.log(`skipped: ${noCompiler}`);
  expect(() => runReferenceReader(binary, [`P ${join(dir, 'missing')}`], 1)).toThrow(/missing/);
});
