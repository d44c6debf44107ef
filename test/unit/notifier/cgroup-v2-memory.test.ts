// The cgroup v2 working set the psi fast check reads: memory.current minus inactive_file, and for
// the root cgroup (no memory.current) anon + file - inactive_file of its memory.stat, as runc and
// the observer compute it, against fixture files in the kernel's formats.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { readWorkingSetBytes, cgroupWorkingSetSource, rootWorkingSetSource, type ReadText } from '../../../src/notifier/cgroup-v2-memory.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const readFixture: ReadText = (path) => readFile(path, 'utf8');

describe('cgroup v2 working set (the PSI fast check)', () => {
  test('memory.current minus inactive_file from a real memory.stat', async () => {
    // 1912602624 - 536870912
    expect(await readWorkingSetBytes(readFixture, cgroupWorkingSetSource(fixtures))).toBe(1_375_731_712n);
  });

  test('the root cgroup from its memory.stat: anon + file - inactive_file, not meminfo (which counts kernel memory)', async () => {
    // anon 1073741824 + file 805306368 - inactive_file 536870912; kernel 33554432 is left out
    expect(await readWorkingSetBytes(readFixture, rootWorkingSetSource(fixtures))).toBe(1_342_177_280n);
  });

  test('a root memory.stat without anon, file or inactive_file is an error', async () => {
    const readText: ReadText = async () => 'anon 1\ninactive_file 1\n';
    await expect(readWorkingSetBytes(readText, rootWorkingSetSource('/cg'))).rejects.toThrow('/cg/memory.stat lacks anon, file or inactive_file');
  });

  const cases: { name: string; files: Record<string, string>; expected: bigint | string }[] = [
    { name: 'floored-at-zero-when-inactive-exceeds-usage', files: { '/cg/memory.current': '100\n', '/cg/memory.stat': 'anon 1\ninactive_file 4096\n' }, expected: 0n },
    { name: 'inactive-file-is-matched-as-a-whole-key', files: { '/cg/memory.current': '10000\n', '/cg/memory.stat': 'total_inactive_file 9999\ninactive_file 1000\n' }, expected: 9000n },
    { name: 'missing-inactive-file-is-an-error', files: { '/cg/memory.current': '100\n', '/cg/memory.stat': 'anon 1\n' }, expected: '/cg/memory.stat has no inactive_file' },
    { name: 'a-non-number-in-memory-current-is-an-error', files: { '/cg/memory.current': 'max\n', '/cg/memory.stat': 'inactive_file 1\n' }, expected: '/cg/memory.current does not hold a byte count' },
    { name: 'a-missing-file-is-an-error', files: { '/cg/memory.stat': 'inactive_file 1\n' }, expected: 'ENOENT /cg/memory.current' },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const readText: ReadText = async (path) => {
        const text = tc.files[path];
        if (text === undefined) throw new Error(`ENOENT ${path}`);
        return text;
      };
      const result = readWorkingSetBytes(readText, cgroupWorkingSetSource('/cg'));
      if (typeof tc.expected === 'bigint') await expect(result).resolves.toBe(tc.expected);
      else await expect(result).rejects.toThrow(tc.expected);
    });
  }
});
