// The C heap's freed pages go back to the kernel: blocks malloc'd and touched, then freed below
// one still in use (so glibc cannot simply shrink the heap's top), stay resident until trimCHeap
// returns them. Needs Linux with glibc; no privileges.

import { readFileSync } from 'node:fs';
import * as koffi from 'koffi';
import { trimCHeap } from '../../native/heap-trim.js';

const skip = process.platform !== 'linux' ? 'not Linux' : null;
if (skip !== null) console.log(`skipping the C heap trim test: ${skip}`);
const maybe = skip === null ? test : test.skip;

const residentBytes = (): number => Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) * 1024;

maybe('freed blocks stay resident until trimCHeap gives them back', () => {
  const lib = koffi.load('libc.so.6');
  const malloc = lib.func('void *malloc(size_t size)');
  const memset = lib.func('void *memset(void *s, int c, size_t n)');
  const free = lib.func('void free(void *ptr)');
  // 40 MiB in 16 KiB blocks, under glibc's mmap threshold: they come from the heap itself.
  const blockBytes = 16 * 1024;
  const blocks = Array.from({ length: 2560 }, () => {
    const block = malloc(blockBytes) as unknown;
    memset(block, 1, blockBytes);
    return block;
  });
  const keep = malloc(blockBytes) as unknown;
  memset(keep, 1, blockBytes);
  for (const block of blocks) free(block);
  const before = residentBytes();
  expect(trimCHeap()).toBe(true);
  const after = residentBytes();
  free(keep);
  // Most of the 40 MiB: some of it may have been reused by other allocations meanwhile.
  expect(before - after).toBeGreaterThan(20 * 1024 * 1024);
});
