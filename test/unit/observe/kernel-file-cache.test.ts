// The cache of open cgroup memory files: one open per file across reads, only below the cached
// root, capped, dropped and retried by path when the descriptor fails (a removed cgroup), and
// released for directories the caller stops reading; the cap, from the process's open-file limit.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FaultyHostFs } from '../../fakes/faulty-host-fs.js';
import { ownOpenFileLimit, parseOpenFileLimit } from '../../../src/host/open-file-limit.js';
import { KernelFileCache, keptOpenFileCap, MAX_KEPT_OPEN_FILES } from '../../../src/observe/kernel-file-cache.js';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kea-fdcache-'));
  for (const dir of ['memory/a', 'memory/b', 'other']) {
    mkdirSync(join(root, dir), { recursive: true });
    writeFileSync(join(root, dir, 'memory.usage_in_bytes'), `${dir}\n`);
  }
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function setup(maxOpenFiles = 10) {
  const inner = new FaultyHostFs();
  const cache = new KernelFileCache(inner, join(root, 'memory'), maxOpenFiles);
  return { inner, cache };
}

test('a file is opened once and read at offset 0 afterwards, seeing new content', () => {
  const { inner, cache } = setup();
  const path = join(root, 'memory/a/memory.usage_in_bytes');
  expect(cache.readSingleRecordFile(path)).toBe('memory/a\n');
  writeFileSync(path, '42\n');
  expect(cache.readSingleRecordFile(path)).toBe('42\n');
  expect(cache.readSingleRecordFile(path)).toBe('42\n');
  expect(inner.calls.get('openFile')).toBe(1);
  expect(inner.calls.get('readOpenFile')).toBe(3);
  expect(cache.openCount()).toBe(1);
});

test('files outside the cached root are read the ordinary way', () => {
  const { inner, cache } = setup();
  expect(cache.readSingleRecordFile(join(root, 'other/memory.usage_in_bytes'))).toBe('other\n');
  expect(inner.calls.get('openFile')).toBeUndefined();
  expect(cache.openCount()).toBe(0);
});

test('past the cap, files are read without being kept open', () => {
  const { inner, cache } = setup(1);
  cache.readSingleRecordFile(join(root, 'memory/a/memory.usage_in_bytes'));
  expect(cache.readSingleRecordFile(join(root, 'memory/b/memory.usage_in_bytes'))).toBe('memory/b\n');
  expect(cache.openCount()).toBe(1);
  expect(inner.calls.get('readSingleRecordFile')).toBe(1);
});

test('a descriptor that fails (ENODEV: the cgroup was removed) is closed and the path asked again', () => {
  const { inner, cache } = setup();
  const path = join(root, 'memory/a/memory.usage_in_bytes');
  cache.readSingleRecordFile(path);
  inner.injectError('readOpenFile', path, 'ENODEV');
  rmSync(join(root, 'memory/a'), { recursive: true });
  expect(() => cache.readSingleRecordFile(path)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
  expect(cache.openCount()).toBe(0);
  expect(inner.openDescriptors()).toBe(0);
});

test('a cgroup recreated at the same path is read afresh', () => {
  const { inner, cache } = setup();
  const path = join(root, 'memory/a/memory.usage_in_bytes');
  cache.readSingleRecordFile(path);
  rmSync(join(root, 'memory/a'), { recursive: true });
  mkdirSync(join(root, 'memory/a'));
  writeFileSync(path, 'new\n');
  // The old descriptor fails once, as the removed cgroup's file does.
  inner.injectError('readOpenFile', path, 'ENODEV', 1);
  expect(cache.readSingleRecordFile(path)).toBe('new\n');
  expect(inner.calls.get('openFile')).toBe(2);
  expect([cache.openCount(), inner.openDescriptors()]).toEqual([1, 1]);
});

test('release closes the descriptors below a directory only; closeAll closes the rest', () => {
  const { inner, cache } = setup();
  cache.readSingleRecordFile(join(root, 'memory/a/memory.usage_in_bytes'));
  cache.readSingleRecordFile(join(root, 'memory/b/memory.usage_in_bytes'));
  cache.release(join(root, 'memory/a'));
  expect(cache.openCount()).toBe(1);
  expect(inner.openDescriptors()).toBe(1);
  cache.closeAll();
  cache.closeAll();
  expect([cache.openCount(), inner.openDescriptors()]).toEqual([0, 0]);
});

describe('a caller that remembers the descriptor in a slot', () => {
  test('reads it again without a lookup by path, seeing new content', () => {
    const { inner, cache } = setup();
    const path = join(root, 'memory/a/memory.usage_in_bytes');
    const slot = { kept: undefined };
    expect(cache.readSingleRecordFileVia(path, slot)).toBe('memory/a\n');
    writeFileSync(path, '42\n');
    expect(cache.readSingleRecordFileVia(path, slot)).toBe('42\n');
    expect([inner.calls.get('openFile'), inner.calls.get('readOpenFile'), cache.openCount()]).toEqual([1, 2, 1]);
  });

  test('never reads a descriptor let go since, even when the kernel has given its number to another file', () => {
    const { inner, cache } = setup();
    const a = join(root, 'memory/a/memory.usage_in_bytes');
    const slot = { kept: undefined };
    cache.readSingleRecordFileVia(a, slot);
    cache.release(join(root, 'memory/a'));
    // The lowest free number: the one a's descriptor had.
    expect(cache.readSingleRecordFile(join(root, 'memory/b/memory.usage_in_bytes'))).toBe('memory/b\n');
    expect(cache.readSingleRecordFileVia(a, slot)).toBe('memory/a\n');
    expect(cache.readSingleRecordFileVia(a, slot)).toBe('memory/a\n');
    expect([inner.calls.get('openFile'), cache.openCount(), inner.openDescriptors()]).toEqual([3, 2, 2]);
  });

  test('a descriptor that fails (the cgroup was removed) is dropped, and the path asked again', () => {
    const { inner, cache } = setup();
    const path = join(root, 'memory/a/memory.usage_in_bytes');
    const slot = { kept: undefined };
    cache.readSingleRecordFileVia(path, slot);
    inner.injectError('readOpenFile', path, 'ENODEV');
    rmSync(join(root, 'memory/a'), { recursive: true });
    expect(() => cache.readSingleRecordFileVia(path, slot)).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    expect([cache.openCount(), inner.openDescriptors()]).toEqual([0, 0]);
  });

  test('past the cap, the file is read the ordinary way every time', () => {
    const { inner, cache } = setup(0);
    const path = join(root, 'memory/a/memory.usage_in_bytes');
    const slot = { kept: undefined };
    expect(cache.readSingleRecordFileVia(path, slot)).toBe('memory/a\n');
    expect(cache.readSingleRecordFileVia(path, slot)).toBe('memory/a\n');
    expect([inner.calls.get('openFile'), inner.calls.get('readSingleRecordFile'), slot.kept]).toEqual([undefined, 2, undefined]);
  });
});

test('a file that cannot be read on first open is not kept', () => {
  const { inner, cache } = setup();
  const path = join(root, 'memory/a/memory.usage_in_bytes');
  inner.injectError('readOpenFile', path, 'EIO');
  expect(() => cache.readSingleRecordFile(path)).toThrow(expect.objectContaining({ code: 'EIO' }));
  expect([cache.openCount(), inner.openDescriptors()]).toEqual([0, 0]);
});

describe('the cap on kept-open files', () => {
  test.each([
    ['a container runtime\'s 1048576: the fixed cap', 1_048_576, MAX_KEPT_OPEN_FILES],
    ['unlimited', Number.POSITIVE_INFINITY, MAX_KEPT_OPEN_FILES],
    ['exactly twice the cap', 2 * MAX_KEPT_OPEN_FILES, MAX_KEPT_OPEN_FILES],
    ['a low soft limit of 1024: half of it', 1024, 512],
    ['an odd limit: half, rounded down', 4095, 2047],
    ['unknown: taken as 1024', undefined, 512],
  ])('%s', (_name, limit, cap) => {
    expect(keptOpenFileCap(limit)).toBe(cap);
  });

  test('covers a node of 1,000 pods at seven descriptors a pod', () => {
    expect(MAX_KEPT_OPEN_FILES).toBeGreaterThanOrEqual(7 * 1000);
  });
});

describe('the open-file limit from /proc/<pid>/limits', () => {
  const limits = (line: string): string =>
    ['Limit                     Soft Limit           Hard Limit           Units     ', 'Max processes             63556                63556                processes ', line, 'Max locked memory         8388608              8388608              bytes     ', ''].join('\n');

  test.each([
    ['the soft value, not the hard one', 'Max open files            1024                 524288               files     ', 1024],
    ['unlimited', 'Max open files            unlimited            unlimited            files     ', Number.POSITIVE_INFINITY],
    ['no such line', 'Max msgqueue size         819200               819200               bytes     ', undefined],
    ['not a number', 'Max open files            lots                 lots                 files     ', undefined],
  ])('%s', (_name, line, want) => {
    expect(parseOpenFileLimit(limits(line))).toBe(want);
  });

  test('this process\'s own, as the kernel reports it', () => {
    const own = ownOpenFileLimit();
    expect(own).toBe(parseOpenFileLimit(readFileSync('/proc/self/limits', 'utf8')));
    expect(own).toBeGreaterThan(0);
    expect(ownOpenFileLimit(join(root, 'no-such-file'))).toBeUndefined();
  });
});
