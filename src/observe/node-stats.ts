// The node-level stats of one observation, computed the way cAdvisor computes them: the node's
// memory (its cgroup's usage and working set against MemTotal, capped by a sandbox's limit), the
// `pods` system container (kubepods against its limit), and the PID limits from /proc. Each
// missing source leaves its stat out and is reported.

import { SYSTEM_CONTAINER_PODS, type MemoryStats, type NodeStats, type SystemContainerStats } from '../api/summary.js';
import type { HostFs } from '../host/host-fs.js';
import { memTotalBytes } from '../host/meminfo.js';
import { parseCounter } from '../host/memory-limit.js';
import { describeError } from '../host/read-result.js';
import { readCgroupMemory, readCgroupMemoryLimit } from './cgroup-memory-reader.js';
import type { ObserverCgroups } from './observer-cgroups.js';
import { maxPid, parseLoadavgTaskCount } from './pid-limits.js';

/** Collects one reason a stat is missing (a short sentence). */
export type Report = (reason: string) => void;

export function toMemoryStats(time: string, usageBytes: bigint, workingSetBytes: bigint, availableBytes?: bigint): MemoryStats {
  const stats: MemoryStats = { time, usageBytes: Number(usageBytes), workingSetBytes: Number(workingSetBytes) };
  if (availableBytes !== undefined) stats.availableBytes = Number(availableBytes);
  return stats;
}

/** Reads one /proc file; undefined (reported) when it cannot be read. */
export function readProcFile(fs: HostFs, path: string, report: Report): string | undefined {
  try {
    return fs.readSingleRecordFile(path);
  } catch (error) {
    report(`cannot read ${path}: ${describeError(error)}`);
    return undefined;
  }
}

// capacity - working set; a working set above capacity is a bogus kernel reading (kubernetes
// issue 114332), reported instead of turned into an eviction.
function availableFrom(what: string, capacityBytes: bigint, workingSetBytes: bigint, report: Report): bigint | undefined {
  if (workingSetBytes <= capacityBytes) return capacityBytes - workingSetBytes;
  report(`${what}: working set ${workingSetBytes} exceeds capacity ${capacityBytes}; availableBytes not reported`);
  return undefined;
}

/** MemTotal of `<procRoot>/meminfo` (cAdvisor's machine memory capacity); undefined, reported, when unreadable. */
export function readMemTotal(fs: HostFs, procRoot: string, report: Report): bigint | undefined {
  const meminfoText = readProcFile(fs, `${procRoot}/meminfo`, report);
  const capacityBytes = meminfoText === undefined ? undefined : memTotalBytes(meminfoText);
  if (meminfoText !== undefined && capacityBytes === undefined) report(`${procRoot}/meminfo has no MemTotal`);
  return capacityBytes;
}

/**
 * `node.memory`: the node cgroup's usage and working set; availableBytes against the machine's
 * memory (`memTotalBytes`, from {@link readMemTotal}).
 */
export function nodeMemory(cgroups: ObserverCgroups, memTotalBytes: bigint | undefined, time: string, report: Report): MemoryStats | undefined {
  const { layout, nodeDir } = cgroups;
  const isV2Root = layout.version === 'v2' && cgroups.nodeIsRoot;
  const reading = readCgroupMemory(cgroups.fs, nodeDir, layout.version, isV2Root);
  if (!reading.ok) {
    report(`node memory not observed: ${reading.reason}`);
    return undefined;
  }
  const { usageBytes, workingSetBytes } = reading.value;
  // The root cgroup's capacity is the machine's memory (cAdvisor MemoryCapacity = MemTotal); a
  // node cgroup with a lower limit (a sandbox) is capped by it.
  let capacityBytes = memTotalBytes;
  if (!isV2Root) {
    const limit = readCgroupMemoryLimit(cgroups.fs, nodeDir, layout.version);
    if (limit.ok && limit.value !== null && (capacityBytes === undefined || limit.value < capacityBytes)) capacityBytes = limit.value;
  }
  if (capacityBytes === undefined) return toMemoryStats(time, usageBytes, workingSetBytes);
  return toMemoryStats(time, usageBytes, workingSetBytes, availableFrom('node memory', capacityBytes, workingSetBytes, report));
}

/** The `pods` system container: kubepods' usage and working set, availableBytes against its limit. */
export function podsSystemContainer(cgroups: ObserverCgroups, time: string, report: Report): SystemContainerStats | undefined {
  const root = cgroups.locator.podCgroupRootDir();
  if (!root.ok) {
    report(`allocatable memory not observed: ${root.reason}`);
    return undefined;
  }
  const reading = readCgroupMemory(cgroups.fs, root.value.dir, cgroups.layout.version);
  if (!reading.ok) {
    report(`allocatable memory not observed: ${reading.reason}`);
    return undefined;
  }
  const { usageBytes, workingSetBytes } = reading.value;
  const limit = readCgroupMemoryLimit(cgroups.fs, root.value.dir, cgroups.layout.version);
  if (!limit.ok) report(`allocatable memory has no availableBytes: ${limit.reason}`);
  // An unlimited kubepods cgroup (pods allocatable not enforced) has no availableBytes, as in the kubelet.
  const availableBytes = limit.ok && limit.value !== null ? availableFrom('pods memory', limit.value, workingSetBytes, report) : undefined;
  return { name: SYSTEM_CONTAINER_PODS, memory: toMemoryStats(time, usageBytes, workingSetBytes, availableBytes) };
}

/** `node.rlimit`: the kernel's PID limit and the number of tasks. */
export function nodeRlimit(fs: HostFs, procRoot: string, time: string, report: Report): NodeStats['rlimit'] {
  const limits = ['pid_max', 'threads-max'].map((name) => {
    const text = readProcFile(fs, `${procRoot}/sys/kernel/${name}`, report);
    return text === undefined ? undefined : parseCounter(text);
  });
  const maxPidCount = maxPid(limits);
  const loadavgText = readProcFile(fs, `${procRoot}/loadavg`, report);
  const taskCount = loadavgText === undefined ? undefined : parseLoadavgTaskCount(loadavgText);
  if (loadavgText !== undefined && taskCount === undefined) report(`${procRoot}/loadavg has no task count`);
  if (maxPidCount === undefined && taskCount === undefined) return undefined;
  const stats: NonNullable<NodeStats['rlimit']> = { time };
  if (maxPidCount !== undefined) stats.maxpid = Number(maxPidCount);
  if (taskCount !== undefined) stats.curproc = Number(taskCount);
  return stats;
}
