// Reads one pod's cgroup subtree on every memory sync: the pod's working set, each container's
// (container cgroups are the pod cgroup's children whose names carry a container ID the pod's
// status lists), and the number of processes in the whole subtree (the sandbox's included).
//
// The children listing is the expensive part (a v1 memory cgroup directory has some thirty
// entries), so it is remembered per pod together with the pod directory's link count, which
// cgroupfs keeps at 2 + subdirectories: a sync costs one stat per pod unless a container cgroup
// came or went. A container replaced by another leaves the count equal, but then a remembered
// child is missing when read, and the pod is listed again at once.

import type { HostFs } from '../host/host-fs.js';
import type { CgroupVersion } from '../host/memory-stat.js';
import { describeError, isNotFound } from '../host/read-result.js';
import { readCgroupMemory, type CgroupMemoryReading } from './cgroup-memory-reader.js';
import { containerIdCandidates } from '../api/container-id.js';
import { countPids, countProcessesInTree } from './process-count.js';

export interface PodCgroupReading {
  /** Absent when the pod cgroup itself could not be read (then nothing else is). */
  readonly memory?: CgroupMemoryReading;
  /** True when the pod cgroup does not exist (any more). */
  readonly notFound: boolean;
  /** By container name, in the order the pod lists its containers. */
  readonly containers: ReadonlyMap<string, CgroupMemoryReading>;
  readonly processCount?: number | undefined;
  /** Reasons some of it is missing (`processes not counted: ...`); the caller names the pod. */
  readonly problems: readonly string[];
}

interface Listing {
  readonly subdirectoryCount: number | undefined;
  readonly children: readonly string[];
}

export class PodCgroupReader {
  private listings = new Map<string, Listing>();

  /**
   * @param release called with a cgroup directory the reader stops reading (a pod that left, a
   *   container cgroup that is gone), so descriptors kept open for it can be closed
   */
  constructor(
    private readonly fs: HostFs,
    private readonly version: CgroupVersion,
    private readonly release: (dir: string) => void = () => {},
  ) {}

  /**
   * Reads the pod cgroup at `podDir`; `namesById` maps the pod's container IDs to container names.
   * Processes are counted only when `countProcesses` (the reading then has no `processCount`).
   */
  read(podDir: string, namesById: ReadonlyMap<string, string>, countProcesses = true): PodCgroupReading {
    const memory = readCgroupMemory(this.fs, podDir, this.version);
    if (!memory.ok) {
      this.forget(podDir);
      return { notFound: memory.notFound, containers: new Map(), problems: memory.notFound ? [] : [`memory not observed: ${memory.reason}`] };
    }
    const listed = this.children(podDir, false);
    if (!listed.ok) return { memory: memory.value, notFound: false, containers: new Map(), problems: [listed.reason] };
    let subtree = this.readChildren(podDir, listed.children, namesById, countProcesses);
    if (subtree.sawMissingChild && listed.fromMemory) {
      const relisted = this.children(podDir, true);
      if (!relisted.ok) return { memory: memory.value, notFound: false, containers: new Map(), problems: [relisted.reason] };
      subtree = this.readChildren(podDir, relisted.children, namesById, countProcesses);
    }
    return { memory: memory.value, notFound: false, containers: subtree.containers, processCount: subtree.processCount, problems: subtree.problems };
  }

  /** Forgets listings of pods no longer read (called with the pod directories still in use). */
  retain(podDirs: ReadonlySet<string>): void {
    for (const dir of [...this.listings.keys()]) if (!podDirs.has(dir)) this.forget(dir);
  }

  private forget(podDir: string): void {
    this.listings.delete(podDir);
    this.release(podDir);
  }

  private children(podDir: string, forceList: boolean): { ok: true; children: readonly string[]; fromMemory: boolean } | { ok: false; reason: string } {
    try {
      const subdirectoryCount = this.fs.subdirectoryCount(podDir);
      const known = this.listings.get(podDir);
      if (!forceList && known !== undefined && subdirectoryCount !== undefined && known.subdirectoryCount === subdirectoryCount) {
        return { ok: true, children: known.children, fromMemory: true };
      }
      const children = this.fs.subdirectories(podDir);
      const current = new Set(children);
      for (const gone of known?.children ?? []) if (!current.has(gone)) this.release(`${podDir}/${gone}`);
      this.listings.set(podDir, { subdirectoryCount, children });
      return { ok: true, children, fromMemory: false };
    } catch (error) {
      this.forget(podDir);
      return { ok: false, reason: `containers and processes not observed: cannot list ${podDir}: ${describeError(error)}` };
    }
  }

  private readChildren(
    podDir: string,
    children: readonly string[],
    namesById: ReadonlyMap<string, string>,
    countProcesses: boolean,
  ): { containers: Map<string, CgroupMemoryReading>; processCount?: number; problems: string[]; sawMissingChild: boolean } {
    const problems: string[] = [];
    const found = new Map<string, CgroupMemoryReading>();
    let sawMissingChild = false;
    let processCount: number | undefined;
    if (countProcesses) {
      try {
        processCount = countPids(this.fs.readSmallFile(`${podDir}/cgroup.procs`));
      } catch (error) {
        if (!isNotFound(error)) problems.push(`processes not counted: cannot read ${podDir}/cgroup.procs: ${describeError(error)}`);
      }
    }
    for (const child of children) {
      const childDir = `${podDir}/${child}`;
      if (countProcesses) {
        const processes = countProcessesInTree(this.fs, childDir);
        if (processes.ok) {
          if (processCount !== undefined) processCount += processes.value;
        } else if (processes.notFound) {
          sawMissingChild = true;
          continue;
        } else {
          problems.push(`processes not counted: ${processes.reason}`);
          processCount = undefined;
        }
      }
      const name = containerIdCandidates(child)
        .map((id) => namesById.get(id))
        .find((n) => n !== undefined);
      if (name === undefined) continue;
      const memory = readCgroupMemory(this.fs, childDir, this.version);
      if (memory.ok) found.set(name, memory.value);
      else if (memory.notFound) sawMissingChild = true;
      else problems.push(`memory of container ${name} not observed: ${memory.reason}`);
    }
    // Without a count, nothing above noticed a container cgroup replaced under the same number
    // of subdirectories: a running container whose cgroup was not found asks for a fresh listing.
    if (!countProcesses && [...namesById.values()].some((name) => !found.has(name))) sawMissingChild = true;
    // Containers in the pod's own order, not the directory's.
    const containers = new Map<string, CgroupMemoryReading>();
    for (const name of namesById.values()) {
      const reading = found.get(name);
      if (reading !== undefined) containers.set(name, reading);
    }
    return { containers, ...(processCount === undefined ? {} : { processCount }), problems, sawMissingChild };
  }
}
