// The cgroup v2 memory the fast check reads, through descriptors kept open: memory.current alone for
// the usage, memory.stat for the working set (memory.current minus inactive_file), and for the root
// cgroup (no memory.current) anon + file - inactive_file of its memory.stat, as runc and the
// observer compute it, against fixture files in the kernel's formats.

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CgroupMemoryReader, cgroupWorkingSetSource, rootWorkingSetSource } from '../../../src/notifier/cgroup-v2-memory.js';
import { FakeNative } from '../../fakes/fake-native.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));

function withFiles(files: Record<string, string>): FakeNative {
  const native = new FakeNative();
  for (const [path, text] of Object.entries(files)) native.setFile(path, text);
  return native;
}

describe('cgroup v2 memory (the PSI fast check)', () => {
  test('memory.current minus inactive_file from a real memory.stat', () => {
    const native = withFiles({ '/cg/memory.current': readFileSync(`${fixtures}memory.current`, 'utf8'), '/cg/memory.stat': readFileSync(`${fixtures}memory.stat`, 'utf8') });
    // 1912602624 - 536870912
    expect(new CgroupMemoryReader(native.files, cgroupWorkingSetSource('/cg')).read()).toEqual({ usageBytes: 1_912_602_624n, workingSetBytes: 1_375_731_712n });
  });

  test('the usage alone reads memory.current only', () => {
    const native = withFiles({ '/cg/memory.current': '4096\n', '/cg/memory.stat': 'inactive_file 1\n' });
    const reader = new CgroupMemoryReader(native.files, cgroupWorkingSetSource('/cg'));
    expect(reader.readUsage()).toEqual({ usageBytes: 4096n, workingSetBytes: null });
    expect(native.reads).toEqual(['/cg/memory.current']);
  });

  test('the root cgroup from its memory.stat: anon + file - inactive_file, not meminfo (which counts kernel memory)', () => {
    const native = withFiles({ '/root/memory.stat': readFileSync(`${fixtures}memory.stat`, 'utf8') });
    // anon 1073741824 + file 805306368 - inactive_file 536870912; kernel 33554432 is left out
    expect(new CgroupMemoryReader(native.files, rootWorkingSetSource('/root')).readUsage()).toEqual({ usageBytes: 1_879_048_192n, workingSetBytes: 1_342_177_280n });
  });

  test('a root memory.stat without anon, file or inactive_file is an error', () => {
    const native = withFiles({ '/cg/memory.stat': 'anon 1\ninactive_file 1\n' });
    expect(() => new CgroupMemoryReader(native.files, rootWorkingSetSource('/cg')).readUsage()).toThrow('/cg/memory.stat lacks anon, file or inactive_file');
  });

  test('descriptors stay open between reads, and close() closes them', () => {
    const native = withFiles({ '/cg/memory.current': '100\n', '/cg/memory.stat': 'inactive_file 1\n' });
    const reader = new CgroupMemoryReader(native.files, cgroupWorkingSetSource('/cg'));
    for (let i = 0; i < 5; i++) reader.read();
    expect(native.files.openCount).toBe(2);
    expect(reader.openCount).toBe(2);
    reader.close();
    expect(native.files.openCount).toBe(0);
  });

  test('a file whose cgroup went away fails (ENODEV), and a cgroup made again is read afresh', () => {
    const native = withFiles({ '/cg/memory.current': '100\n', '/cg/memory.stat': 'inactive_file 1\n' });
    const reader = new CgroupMemoryReader(native.files, cgroupWorkingSetSource('/cg'));
    reader.read();
    native.removeFile('/cg/memory.current');
    expect(() => reader.readUsage()).toThrow('ENODEV');
    expect(reader.openCount).toBe(1);
    native.setFile('/cg/memory.current', '200\n');
    expect(reader.readUsage().usageBytes).toBe(200n);
  });

  const cases: { name: string; files: Record<string, string>; expected: bigint | string }[] = [
    { name: 'floored-at-zero-when-inactive-exceeds-usage', files: { '/cg/memory.current': '100\n', '/cg/memory.stat': 'anon 1\ninactive_file 4096\n' }, expected: 0n },
    { name: 'inactive-file-is-matched-as-a-whole-key', files: { '/cg/memory.current': '10000\n', '/cg/memory.stat': 'total_inactive_file 9999\ninactive_file 1000\n' }, expected: 9000n },
    { name: 'missing-inactive-file-is-an-error', files: { '/cg/memory.current': '100\n', '/cg/memory.stat': 'anon 1\n' }, expected: '/cg/memory.stat has no inactive_file' },
    { name: 'a-non-number-in-memory-current-is-an-error', files: { '/cg/memory.current': 'max\n', '/cg/memory.stat': 'inactive_file 1\n' }, expected: '/cg/memory.current does not hold a byte count' },
    { name: 'a-missing-file-is-an-error', files: { '/cg/memory.stat': 'inactive_file 1\n' }, expected: 'ENOENT: /cg/memory.current' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const reader = new CgroupMemoryReader(withFiles(tc.files).files, cgroupWorkingSetSource('/cg'));
      if (typeof tc.expected === 'bigint') expect(reader.read().workingSetBytes).toBe(tc.expected);
      else expect(() => reader.read()).toThrow(tc.expected);
    });
  }
});
