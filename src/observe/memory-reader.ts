// The cgroup observer's memory shortcut (the MemoryReader port): what a memory notification's pass
// reads, each figure exactly as `observe` computes it, through the same kept-open cgroup files, and
// synchronously, so it never waits for a thread-pool slot. The node's and the `pods` cgroup's
// memory (MemTotal as the last full observation read it: the kubelet reads the machine's capacity
// once, at start), each pod's usage as an upper bound of its working set, and on demand a pod's
// working set, its containers' memory, and the processes left in it (on cgroup v2, a cgroup still
// populated counts one: an exiting process may still hold its memory).
//
// A pod has stats here exactly when `observe` would give it stats: its cgroup's memory can be read,
// or the disk-usage walk has figures for it (then, without memory, its working set counts as 0).

import { nodePodUid } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';
import type { PodMemoryBound, PodMemoryReading } from '../api/pod-memory.js';
import type { ContainerStats, MemoryStats, PodStats, Summary } from '../api/summary.js';
import type { MemoryReader } from '../daemon/ports.js';
import { parseCounterNumber } from '../host/memory-limit.js';
import { isNotFound } from '../host/read-result.js';
import { readCgroupMemory } from './cgroup-memory-reader.js';
import { containerNamesById } from '../api/container-id.js';
import { nodeMemory, podsSystemContainer, toMemoryStats } from './node-stats.js';
import type { ObserverCgroups } from './observer-cgroups.js';
import { countProcessesInTree } from './process-count.js';
import { KernelFileCache, type KeptFileSlot } from './kernel-file-cache.js';

export interface MemoryReaderSources {
  /** The memory hierarchy, once found (by a full observation). */
  cgroups(): ObserverCgroups | undefined;
  /** MemTotal as the last full observation read it. */
  memTotalBytes(): bigint | undefined;
  /** Whether the disk-usage walk has figures for this pod UID. */
  hasDiskStats(uid: string): boolean;
  /**
   * The node's memory as the full observation would report it: less the hugepage capacity that
   * observation subtracted (HugepageAwareEviction), so a notification's pass decides on the same signal.
   */
  adjustNodeMemory?(memory: MemoryStats): MemoryStats;
  nowMs(): number;
}

/** A pod's usage file, found through the locator once, and where its kept descriptor is remembered. */
interface UsageFile {
  readonly cgroups: ObserverCgroups;
  readonly dir: string;
  readonly path: string;
  readonly slot: KeptFileSlot;
}

const ABSENT: PodMemoryReading = Object.freeze({ kind: 'absent' });
const NO_MEMORY: PodMemoryReading = Object.freeze({ kind: 'exact', workingSetBytes: 0 });
const ignore = (): void => undefined;

// The UID the node knows the pod by (a static pod's own for a mirror pod); '' when refused, and
// such a pod has no stats here, as in `observe`.
function uidOf(pod: Pod): string {
  const id = nodePodUid(pod);
  return id.ok ? id.uid : '';
}

export function createMemoryReader(sources: MemoryReaderSources): MemoryReader {
  // A pod without memory stats still has stats when the walk measured its disk: working set 0.
  const withoutMemory = (uid: string): PodMemoryReading => (sources.hasDiskStats(uid) ? NO_MEMORY : ABSENT);

  // The pod's cgroup directory; with `retry`, the cgroup is looked for again (it may have moved QoS
  // tier), as observe does when a remembered cgroup is gone.
  const podDir = (cgroups: ObserverCgroups, pod: Pod, uid: string, retry: boolean): string | undefined => {
    if (retry) cgroups.locator.forget(uid);
    return cgroups.locator.locate(uid, pod.status?.qosClass);
  };

  // `read` on the pod's cgroup; a cgroup that is gone is looked for once more.
  function withPodDir<T>(pod: Pod, read: (cgroups: ObserverCgroups, dir: string) => T | 'not-found', otherwise: (uid: string) => T): T {
    const uid = uidOf(pod);
    const cgroups = sources.cgroups();
    if (uid === '' || cgroups === undefined) return otherwise(uid);
    for (const retry of [false, true]) {
      const dir = podDir(cgroups, pod, uid, retry);
      if (dir === undefined) return otherwise(uid);
      const result = read(cgroups, dir);
      if (result !== 'not-found') return result;
    }
    return otherwise(uid);
  }

  // Each pod's usage file, remembered with its kept descriptor (the hot path of a memory
  // notification reads it for every pod; the pod object is replaced when the pod changes).
  const usageFiles = new WeakMap<Pod, UsageFile>();
  const usageFileOf = (cgroups: ObserverCgroups, pod: Pod, dir: string): UsageFile => {
    const known = usageFiles.get(pod);
    if (known !== undefined && known.cgroups === cgroups && known.dir === dir) return known;
    const file: UsageFile = { cgroups, dir, path: `${dir}/${cgroups.layout.version === 'v1' ? 'memory.usage_in_bytes' : 'memory.current'}`, slot: { kept: undefined } };
    usageFiles.set(pod, file);
    return file;
  };

  // The pod's usage as a bound of its working set, from its remembered usage file; 'not-found'
  // when its cgroup is gone.
  const readBound = (pod: Pod, file: UsageFile): PodMemoryBound | 'not-found' => {
    const fs = file.cgroups.fs;
    let text: string;
    try {
      text = fs instanceof KernelFileCache ? fs.readSingleRecordFileVia(file.path, file.slot) : fs.readSingleRecordFile(file.path);
    } catch (error) {
      return isNotFound(error) ? 'not-found' : withoutMemory(uidOf(pod));
    }
    const usageBytes = parseCounterNumber(text);
    return usageBytes === undefined ? withoutMemory(uidOf(pod)) : { kind: 'bounded', usageBytes };
  };

  return {
    nodeMemory(): Summary {
      const cgroups = sources.cgroups();
      if (cgroups === undefined) return { node: {} };
      const time = new Date(sources.nowMs()).toISOString();
      const read = nodeMemory(cgroups, sources.memTotalBytes(), time, ignore);
      const memory = read === undefined || sources.adjustNodeMemory === undefined ? read : sources.adjustNodeMemory(read);
      const pods = podsSystemContainer(cgroups, time, ignore);
      return { node: { ...(memory === undefined ? {} : { memory }), ...(pods === undefined ? {} : { systemContainers: [pods] }) } };
    },

    podBounds(pods: readonly Pod[]): PodMemoryBound[] {
      const cgroups = sources.cgroups();
      return pods.map((pod) => {
        // The file read last time, without looking the pod's cgroup up again; once that cgroup is
        // gone, it is looked for as on a first read.
        const known = usageFiles.get(pod);
        if (known !== undefined && known.cgroups === cgroups) {
          const bound = readBound(pod, known);
          if (bound !== 'not-found') return bound;
        }
        return withPodDir<PodMemoryBound>(pod, (found, dir) => readBound(pod, usageFileOf(found, pod, dir)), withoutMemory);
      });
    },

    podWorkingSet(pod: Pod): PodMemoryReading {
      return withPodDir<PodMemoryReading>(
        pod,
        (cgroups, dir) => {
          const reading = readCgroupMemory(cgroups.fs, dir, cgroups.layout.version);
          if (reading.ok) return { kind: 'exact', workingSetBytes: Number(reading.value.workingSetBytes) };
          return reading.notFound ? 'not-found' : withoutMemory(uidOf(pod));
        },
        withoutMemory,
      );
    },

    podStats(pod: Pod): PodStats | undefined {
      const uid = uidOf(pod);
      const podRef = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid };
      return withPodDir<PodStats | undefined>(
        pod,
        (cgroups, dir) => {
          const reading = cgroups.reader.read(dir, containerNamesById(pod), false);
          if (reading.notFound) return 'not-found';
          if (reading.memory === undefined) return sources.hasDiskStats(uid) ? { podRef } : undefined;
          const time = new Date(sources.nowMs()).toISOString();
          const containers: ContainerStats[] = [...reading.containers].map(([name, memory]) => ({ name, memory: toMemoryStats(time, memory.usageBytes, memory.workingSetBytes) }));
          return { podRef, memory: toMemoryStats(time, reading.memory.usageBytes, reading.memory.workingSetBytes), ...(containers.length === 0 ? {} : { containers }) };
        },
        (id) => (sources.hasDiskStats(id) ? { podRef } : undefined),
      );
    },

    podProcessCount(pod: Pod): number | undefined {
      const uid = uidOf(pod);
      const cgroups = sources.cgroups();
      if (uid === '' || cgroups === undefined || !cgroups.locator.podCgroupRootDir().ok) return undefined;
      // A pod cgroup that is gone holds no process.
      const dir = cgroups.locator.locate(uid, pod.status?.qosClass);
      if (dir === undefined) return 0;
      const counted = countProcessesInTree(cgroups.fs, dir);
      if (!counted.ok) return counted.notFound ? 0 : undefined;
      // A killed process leaves cgroup.procs as soon as its last thread starts exiting (its thread
      // group is no longer live), while that thread may still be giving its memory back; on cgroup
      // v2 the cgroup stays populated until it has left. Such a cgroup counts one.
      if (counted.value === 0 && cgroups.layout.version === 'v2' && stillPopulated(cgroups, dir)) return 1;
      return counted.value;
    },
  };
}

// Whether a cgroup v2 cgroup's `cgroup.events` says a task is still in it or below it; false when
// it is gone or unreadable (the process count stands).
function stillPopulated(cgroups: ObserverCgroups, dir: string): boolean {
  try {
    return /^populated 1$/m.test(cgroups.fs.readSmallFile(`${dir}/cgroup.events`));
  } catch {
    return false;
  }
}
