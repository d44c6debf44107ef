// The files an OOM kill leaves its marks in, for both cgroup versions: the `oom_kill` counter
// (v1 memory.oom_control, Linux 4.13 and later, counted in the victim's own cgroup only; v2
// memory.events, counted up the tree), the limit, the usage and the highest usage recorded, and
// the kubelet's pod tree walked down to its container cgroups. Reads go through the host door, a
// few µs each; a cgroup removed meanwhile reads as absent, never as an error.

import type { CgroupMemoryFigures } from '../daemon/ports.js';
import type { HostFs } from '../host/host-fs.js';
import { parseOomKillCount } from '../host/kernel-log.js';
import { placeInPodTree } from '../host/pod-cgroup-names.js';

export type CgroupVersionOfMemory = 'v1' | 'v2';

/** v1 reports "no limit" as the largest page-aligned value (9223372036854771712 on 4 KiB pages). */
const V1_UNLIMITED_BYTES = 1n << 62n;

/** The file holding `oom_kill`. */
export function oomCounterFile(version: CgroupVersionOfMemory): string {
  return version === 'v1' ? 'memory.oom_control' : 'memory.events';
}

function readOrNull(fs: HostFs, path: string): string | null {
  try {
    return fs.readSingleRecordFile(path);
  } catch {
    return null;
  }
}

/** The cgroup's `oom_kill` count; null when the cgroup is gone or the kernel has no counter. */
export function readOomKillCount(fs: HostFs, version: CgroupVersionOfMemory, dir: string): bigint | null {
  const text = readOrNull(fs, `${dir}/${oomCounterFile(version)}`);
  return text === null ? null : parseOomKillCount(text);
}

function bytesOrNull(text: string | null): bigint | null {
  const trimmed = text?.trim();
  return trimmed !== undefined && /^\d{1,20}$/.test(trimmed) ? BigInt(trimmed) : null;
}

/** Limit, usage and peak of a memory cgroup; null when it is gone. */
export function readCgroupMemory(fs: HostFs, version: CgroupVersionOfMemory, dir: string): CgroupMemoryFigures | null {
  const [limitFile, usageFile, peakFile] = version === 'v1' ? ['memory.limit_in_bytes', 'memory.usage_in_bytes', 'memory.max_usage_in_bytes'] : ['memory.max', 'memory.current', 'memory.peak'];
  const usageBytes = bytesOrNull(readOrNull(fs, `${dir}/${usageFile}`));
  const limitText = readOrNull(fs, `${dir}/${limitFile}`);
  if (usageBytes === null && limitText === null) return null;
  const limit = bytesOrNull(limitText);
  return { limitBytes: limit === null || limit >= V1_UNLIMITED_BYTES ? null : limit, usageBytes, peakBytes: bytesOrNull(readOrNull(fs, `${dir}/${peakFile}`)) };
}

/** A container cgroup found under a pod cgroup. */
export interface ContainerCgroup {
  /** Absolute within the hierarchy, as the kernel names it (`/kubepods/burstable/pod<uid>/<id>`). */
  readonly path: string;
  readonly podUid: string;
  /** The directory name (`<id>`, `cri-containerd-<id>.scope`). */
  readonly name: string;
}

/**
 * Every container cgroup under the pod cgroup root (`podCgroupRoot`, relative to `memoryRoot`):
 * pods directly under it (Guaranteed) and under its QoS tiers, for either driver.
 */
export function listContainerCgroups(fs: HostFs, memoryRoot: string, podCgroupRoot: string): ContainerCgroup[] {
  const rootPath = `/${podCgroupRoot.replace(/^\/+|\/+$/g, '')}`;
  const found: ContainerCgroup[] = [];
  const subdirectories = (path: string): string[] => {
    try {
      return fs.subdirectories(`${memoryRoot}${path}`);
    } catch {
      return [];
    }
  };
  const visitPod = (podPath: string, podUid: string): void => {
    for (const name of subdirectories(podPath)) found.push({ path: `${podPath}/${name}`, podUid, name });
  };
  for (const name of subdirectories(rootPath)) {
    const path = `${rootPath}/${name}`;
    const place = placeInPodTree(rootPath, path);
    if (place?.level === 'pod' && place.podUid !== null) visitPod(path, place.podUid);
    else if (place?.level === 'qos') {
      // A QoS tier: its pods one level down.
      for (const podName of subdirectories(path)) {
        const podPath = `${path}/${podName}`;
        const podPlace = placeInPodTree(rootPath, podPath);
        if (podPlace?.level === 'pod' && podPlace.podUid !== null) visitPod(podPath, podPlace.podUid);
      }
    }
  }
  return found;
}

/** What the kernel OOM killer has taken so far, by its own counters (for `explain`). */
export interface OomKillCounts {
  readonly version: CgroupVersionOfMemory;
  /** The node cgroup's `oom_kill` (v1: kills of its own processes only; v2: of the whole tree); null without a counter. */
  readonly nodeKills: bigint | null;
  /** Every container cgroup with kills, in the order the tree is walked. */
  readonly containers: readonly (ContainerCgroup & { readonly kills: bigint })[];
}

/** The node cgroup's OOM kill count and each container cgroup's non-zero one. */
export function readOomKillCounts(fs: HostFs, version: CgroupVersionOfMemory, memoryRoot: string, nodeCgroup: string, podCgroupRoot: string): OomKillCounts {
  const containers = listContainerCgroups(fs, memoryRoot, podCgroupRoot).flatMap((container) => {
    const kills = readOomKillCount(fs, version, `${memoryRoot}${container.path}`);
    return kills === null || kills === 0n ? [] : [{ ...container, kills }];
  });
  const nodeDir = nodeCgroup === '' ? memoryRoot : `${memoryRoot}/${nodeCgroup}`;
  return { version, nodeKills: readOomKillCount(fs, version, nodeDir), containers };
}
