// Reads one cgroup's memory the way cAdvisor does, for the kubelet Summary: usage from
// memory.usage_in_bytes (v1) or memory.current (v2), working set = usage - inactive file pages from
// memory.stat, and the limit from memory.limit_in_bytes (v1) or memory.max (v2).
//
// The v2 root cgroup has no memory.current or memory.max. runc's cgroup library (which cAdvisor
// uses) then emulates usage as memory.stat `anon + file` of the root, "to report the same value as
// usage_in_bytes in v1", and so does this reader when `isV2Root` is set.

import type { HostFs } from '../host/host-fs.js';
import { parseCounter, parseMemoryLimit } from '../host/memory-limit.js';
import { inactiveFileKey, memoryStatValue, workingSetBytes, type CgroupVersion } from '../host/memory-stat.js';
import { describeError, isNotFound, readFailed, readOk, type ReadResult } from '../host/read-result.js';

export interface CgroupMemoryReading {
  readonly usageBytes: bigint;
  readonly workingSetBytes: bigint;
}

function readFile(fs: HostFs, path: string): ReadResult<string> {
  try {
    return readOk(fs.readSingleRecordFile(path));
  } catch (error) {
    return readFailed(`cannot read ${path}: ${describeError(error)}`, isNotFound(error));
  }
}

/** Usage and working set of the cgroup at `dir` (an absolute path in the memory hierarchy). */
export function readCgroupMemory(fs: HostFs, dir: string, version: CgroupVersion, isV2Root = false): ReadResult<CgroupMemoryReading> {
  const statPath = `${dir}/memory.stat`;
  const stat = readFile(fs, statPath);
  if (!stat.ok) return stat;
  let usageBytes: bigint | undefined;
  if (version === 'v2' && isV2Root) {
    const anonBytes = memoryStatValue(stat.value, 'anon');
    const fileBytes = memoryStatValue(stat.value, 'file');
    if (anonBytes === undefined || fileBytes === undefined) return readFailed(`${statPath} has no anon or file field`);
    usageBytes = anonBytes + fileBytes;
  } else {
    const usagePath = `${dir}/${version === 'v1' ? 'memory.usage_in_bytes' : 'memory.current'}`;
    const usage = readFile(fs, usagePath);
    if (!usage.ok) return usage;
    usageBytes = parseCounter(usage.value);
    if (usageBytes === undefined) return readFailed(`${usagePath} is not a number`);
  }
  // cAdvisor leaves the working set equal to usage when the key is missing.
  const inactiveFileBytes = memoryStatValue(stat.value, inactiveFileKey(version)) ?? 0n;
  return readOk({ usageBytes, workingSetBytes: workingSetBytes(usageBytes, inactiveFileBytes) });
}

/** The cgroup's memory limit in bytes, or null when it is unlimited. */
export function readCgroupMemoryLimit(fs: HostFs, dir: string, version: CgroupVersion): ReadResult<bigint | null> {
  const path = `${dir}/${version === 'v1' ? 'memory.limit_in_bytes' : 'memory.max'}`;
  const text = readFile(fs, path);
  if (!text.ok) return text;
  const limitBytes = parseMemoryLimit(text.value);
  return limitBytes === undefined ? readFailed(`${path} is not a limit`) : readOk(limitBytes);
}
