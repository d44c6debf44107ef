// What is known of a pod's working set before it is read: the vocabulary between the memory
// notification's shortcut in the engine (src/eviction/memory-shortcut.ts) and the observer that reads
// the figures (src/observe/memory-reader.ts).

export type PodMemoryBound =
  /** No stats at all (no cgroup found, unreadable): the kubelet ranks such a pod first. */
  | { readonly kind: 'absent' }
  /** The working set, exactly (0 for a pod with disk stats but no memory stats). */
  | { readonly kind: 'exact'; readonly workingSetBytes: number }
  /** At least the working set: the pod cgroup's memory usage (working set = usage - inactive page cache). */
  | { readonly kind: 'bounded'; readonly usageBytes: number };

/** A working set once read: exact, or no stats after all. */
export type PodMemoryReading = Exclude<PodMemoryBound, { readonly kind: 'bounded' }>;
