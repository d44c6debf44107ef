// What the cgroup observer knows once the memory hierarchy has been found: its layout, the host
// door to read it through (memory files kept open on a real cgroup filesystem), where the pods'
// cgroups are, and the reader of each pod's subtree. Found on the first observation that can, and
// looked for again on every later one until then (the hierarchy may be mounted later).

import type { ObserveSettings } from '../api/agent-settings.js';
import { detectCgroupLayout, type CgroupLayout } from '../host/cgroup-layout.js';
import type { HostFs } from '../host/host-fs.js';
import { ownOpenFileLimit } from '../host/open-file-limit.js';
import { PodCgroupLocator } from '../host/pod-cgroup-locator.js';
import { readOk, type ReadResult } from '../host/read-result.js';
import { CGROUP_FS_MAGICS, KernelFileCache, keptOpenFileCap } from './kernel-file-cache.js';
import { PodCgroupReader } from './pod-cgroup-reader.js';

export interface ObserverCgroups {
  readonly layout: CgroupLayout;
  /** The node cgroup's directory in the memory hierarchy. */
  readonly nodeDir: string;
  /** Whether the node is the hierarchy's root (cgroup v2 has no memory.current there). */
  readonly nodeIsRoot: boolean;
  /** The host, with memory files kept open when the hierarchy is a real cgroup filesystem. */
  readonly fs: HostFs;
  readonly locator: PodCgroupLocator;
  readonly reader: PodCgroupReader;
}

/** Finds the memory hierarchy under `cgroupRoot` (host-resolved) and the node cgroup in it. */
export async function openObserverCgroups(
  fs: HostFs,
  cgroupRoot: string,
  nodeCgroup: string,
  settings: Pick<ObserveSettings, 'cgroupDriver' | 'podCgroupRoot'>,
  maxOpenCgroupFiles: number | undefined,
): Promise<ReadResult<ObserverCgroups>> {
  const detected = detectCgroupLayout(fs, cgroupRoot);
  if (!detected.ok) return detected;
  const layout = detected.value;
  const nodeDir = nodeCgroup === '' ? layout.memoryRoot : `${layout.memoryRoot}/${nodeCgroup}`;
  // Files are kept open only on a real cgroup filesystem, where a removed cgroup's files fail
  // (ENODEV) instead of reading on as a renamed regular file would.
  const fsType = await fs.statfs(layout.memoryRoot).then(
    (s) => s.type,
    () => undefined,
  );
  const cgroupFs = fsType !== undefined && CGROUP_FS_MAGICS.includes(fsType) ? new KernelFileCache(fs, layout.memoryRoot, maxOpenCgroupFiles ?? keptOpenFileCap(ownOpenFileLimit())) : fs;
  return readOk({
    layout,
    nodeDir,
    nodeIsRoot: nodeCgroup === '',
    fs: cgroupFs,
    locator: new PodCgroupLocator(fs, nodeDir, settings.cgroupDriver, settings.podCgroupRoot),
    reader: new PodCgroupReader(cgroupFs, layout.version, (dir) => (cgroupFs instanceof KernelFileCache ? cgroupFs.release(dir) : undefined)),
  });
}

/** Closes the memory files kept open; a later observation reopens them. */
export function closeObserverCgroups(cgroups: ObserverCgroups | undefined): void {
  if (cgroups?.fs instanceof KernelFileCache) cgroups.fs.closeAll();
}
