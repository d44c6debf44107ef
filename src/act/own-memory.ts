// The agent's own memory: what its start-up freed is given back to the kernel, so that the
// resident size the node sees is what the agent holds, not what it once held (native/heap-trim.ts).

import { trimCHeap } from '../../native/heap-trim.js';

/** Returns the freed pages of the C heap to the kernel; a no-op where the C library cannot. */
export function releaseFreedMemory(): void {
  trimCHeap();
}
