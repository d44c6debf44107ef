// Which cgroup hierarchy holds memory on this host. A unified (v2) host has cgroup.controllers at
// the top of the cgroup mount; a legacy or hybrid (v1) host has a separate memory hierarchy at
// <cgroupRoot>/memory. A hybrid host's v2 mount (/sys/fs/cgroup/unified) has no memory controller,
// so it is never taken for the memory hierarchy.

import type { HostFs } from './host-fs.js';
import type { CgroupVersion } from './memory-stat.js';
import { describeError, readFailed, readOk, type ReadResult } from './read-result.js';

export interface CgroupLayout {
  readonly version: CgroupVersion;
  /** The memory hierarchy's root directory: `<cgroupRoot>/memory` on v1, `<cgroupRoot>` on v2. */
  readonly memoryRoot: string;
}

export function detectCgroupLayout(fs: HostFs, cgroupRoot: string): ReadResult<CgroupLayout> {
  const controllersPath = `${cgroupRoot}/cgroup.controllers`;
  if (fs.exists(controllersPath)) {
    let controllers: string;
    try {
      controllers = fs.readSingleRecordFile(controllersPath);
    } catch (error) {
      return readFailed(`cannot read ${controllersPath}: ${describeError(error)}`);
    }
    if (!controllers.split(/\s+/).includes('memory')) return readFailed(`the cgroup v2 hierarchy at ${cgroupRoot} has no memory controller`);
    return readOk({ version: 'v2', memoryRoot: cgroupRoot });
  }
  if (fs.exists(`${cgroupRoot}/memory/memory.usage_in_bytes`)) return readOk({ version: 'v1', memoryRoot: `${cgroupRoot}/memory` });
  return readFailed(`no memory cgroup found at ${cgroupRoot} (neither cgroup.controllers nor memory/memory.usage_in_bytes)`, true);
}
