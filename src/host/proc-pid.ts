// What /proc/<pid> says about one process: when it started (`stat`), and which cgroup it is in
// (`cgroup`), as a path of the memory hierarchy the agent reads (from its root:
// `/kubepods/burstable/pod<uid>/<id>`). The kernel shows that path relative to the reader's cgroup
// namespace: in the host's namespace it is the hierarchy path itself; in a container's private
// namespace (the default for containers on cgroup v2) it is relative to the agent's own cgroup, with
// a `/..` for each level above it. The namespace's root is found once, from the agent's own
// `/proc/self/cgroup` and the cgroup that lists the agent's PID.

import type { HostFs } from './host-fs.js';
import type { CgroupVersion } from './memory-stat.js';
import { describeError, readFailed, readOk, type ReadResult } from './read-result.js';

/** The memory hierarchy's line of a `/proc/<pid>/cgroup` text: the `0::` line on v2, the line naming `memory` on v1. */
export function memoryCgroupOf(text: string, version: CgroupVersion): string | undefined {
  for (const line of text.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const id = line.slice(0, first);
    const controllers = line.slice(first + 1, second);
    const path = line.slice(second + 1);
    if (version === 'v2' ? id === '0' && controllers === '' : controllers.split(',').includes('memory')) return path;
  }
  return undefined;
}

/**
 * `shown` (a path as /proc shows it, relative to the namespace root, `/..` allowed) as a path from
 * the hierarchy's root, given that root's path; null when it climbs above the hierarchy's root.
 */
export function hierarchyPath(namespaceRoot: string, shown: string): string | null {
  const parts: string[] = namespaceRoot.split('/').filter((p) => p !== '');
  for (const part of shown.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return `/${parts.join('/')}`;
}

/** Whether hierarchy path `path` is `dir` or lies below it. */
export function isWithinCgroup(path: string, dir: string): boolean {
  const base = dir.endsWith('/') ? dir.slice(0, -1) : dir;
  return base === '' || path === base || path.startsWith(`${base}/`);
}

// A bound on the search for the agent's own cgroup (a node has a few thousand cgroups at most).
const MAX_SEARCHED_CGROUPS = 50_000;

/**
 * The root of the reader's cgroup namespace as a hierarchy path: '/' in the host's namespace; the
 * agent's own cgroup (less what /proc/self/cgroup shows) in a private one. `selfText` is the
 * agent's `/proc/self/cgroup`; `memoryRoot` the hierarchy's directory on the host.
 */
export function findNamespaceRoot(fs: HostFs, memoryRoot: string, version: CgroupVersion, selfText: string, selfPid: number): ReadResult<string> {
  const shown = memoryCgroupOf(selfText, version);
  if (shown === undefined) return readFailed(`/proc/self/cgroup has no ${version === 'v2' ? 'cgroup v2' : 'memory'} line`);
  const lists = (dir: string): boolean => {
    try {
      return fs
        .readSmallFile(`${dir}/cgroup.procs`)
        .split('\n')
        .some((line) => Number(line) === selfPid);
    } catch {
      return false;
    }
  };
  // The host's namespace: what /proc shows is where the agent is.
  if (!shown.includes('/..') && lists(shown === '/' ? memoryRoot : `${memoryRoot}${shown}`)) return readOk('/');
  // A private namespace: look for the cgroup that lists the agent, breadth first.
  const queue: string[] = [''];
  let searched = 0;
  while (queue.length > 0 && searched < MAX_SEARCHED_CGROUPS) {
    const relative = queue.shift() as string;
    searched++;
    const dir = relative === '' ? memoryRoot : `${memoryRoot}${relative}`;
    if (lists(dir)) {
      // `relative` is the namespace root joined with what /proc shows.
      const suffix = shown === '/' ? '' : shown;
      if (suffix !== '' && !relative.endsWith(suffix)) return readFailed(`the agent's cgroup ${relative} does not end with ${shown}, which /proc/self/cgroup shows`);
      const root = relative.slice(0, relative.length - suffix.length);
      return readOk(root === '' ? '/' : root);
    }
    let children: string[];
    try {
      children = fs.subdirectories(dir);
    } catch (error) {
      if (relative === '') return readFailed(`cannot list ${dir}: ${describeError(error)}`);
      continue;
    }
    for (const child of children) queue.push(`${relative}/${child}`);
  }
  return readFailed(`the agent's own cgroup (pid ${selfPid}) was not found under ${memoryRoot}`);
}

/**
 * When the process started, in clock ticks after boot (field 22 of `/proc/<pid>/stat`); undefined
 * when the text is not a stat line. The command name (field 2) may hold spaces and parentheses, so
 * the fields are counted from its closing parenthesis.
 */
export function processStartTicks(statText: string): bigint | undefined {
  const end = statText.lastIndexOf(')');
  if (end < 0) return undefined;
  // After ") ": field 3 (state) is the first; field 22 is the twentieth.
  const field = statText.slice(end + 2).split(' ')[19];
  return field !== undefined && /^\d+$/.test(field) ? BigInt(field) : undefined;
}
