// Counts the processes in a pod's cgroup tree for PID-pressure ranking: the entries of
// cgroup.procs in the pod cgroup and every cgroup below it. cgroup.procs lists processes (thread
// group leaders), which is what cAdvisor's process_count counts; pids.current would count
// threads, and on cgroup v1 it lives in a separate hierarchy that may not be mounted.

import type { HostFs } from '../host/host-fs.js';
import { describeError, isNotFound, readFailed, readOk, type ReadResult } from '../host/read-result.js';

/** The number of non-empty lines (one PID per line). */
export function countPids(text: string): number {
  let count = 0;
  let lineStart = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i === text.length || text.charCodeAt(i) === 10) {
      if (i > lineStart) count++;
      lineStart = i + 1;
    }
  }
  return count;
}

/**
 * Processes in the cgroup at `dir` and all its descendants. `children` may be passed when the
 * caller has already listed the directory. A cgroup removed during the walk counts as empty.
 * Leaf cgroups (almost every container) are recognised by their link count, so the walk lists
 * only directories that have subdirectories.
 */
export function countProcessesInTree(fs: HostFs, dir: string, children?: readonly string[]): ReadResult<number> {
  let total = 0;
  try {
    total += countPids(fs.readSmallFile(`${dir}/cgroup.procs`));
  } catch (error) {
    return readFailed(`cannot read ${dir}/cgroup.procs: ${describeError(error)}`, isNotFound(error));
  }
  let subdirs = children;
  if (subdirs === undefined) {
    try {
      subdirs = fs.subdirectoryCount(dir) === 0 ? [] : fs.subdirectories(dir);
    } catch (error) {
      if (isNotFound(error)) return readOk(total);
      return readFailed(`cannot list ${dir}: ${describeError(error)}`);
    }
  }
  for (const child of subdirs) {
    const below = countProcessesInTree(fs, `${dir}/${child}`);
    if (below.ok) total += below.value;
    else if (!below.notFound) return below;
  }
  return readOk(total);
}
