// The C heap's free pages handed back to the kernel (glibc's malloc_trim). Node's C++ side and V8's
// compiler allocate with malloc, and the start-up (compiling the Kubernetes client's bundle, the
// first list of pods) leaves about ten MiB of it freed but still resident, between allocations
// that live on, where glibc never returns it by itself (docs/benchmarks.md, part 4). Declared apart
// from libc.ts, so that a C library without malloc_trim (musl) costs this call only.

import * as koffi from 'koffi';

let trim: (() => number) | null | undefined;

/** Calls malloc_trim(0); false when this C library has none. */
export function trimCHeap(): boolean {
  if (trim === undefined) {
    try {
      const mallocTrim = koffi.load('libc.so.6').func('int malloc_trim(size_t pad)');
      trim = () => mallocTrim(0) as number;
    } catch {
      trim = null;
    }
  }
  if (trim === null) return false;
  trim();
  return true;
}
