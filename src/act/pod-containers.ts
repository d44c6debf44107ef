// Which of a pod cgroup's children local termination ends: the pod's containers, never its sandbox.
// The kubelet recreates a pod's whole sandbox (and restarts every container in it) when the sandbox
// (pause) process dies, so ending it would turn a local kill into a restart of the pod while the
// API server is slow to take the deletion; ending only the containers frees their memory and leaves
// the kubelet a container restart, with its back-off, and the agent ends a restarted container too.
//
// The runtime names the sandbox's cgroup after the pod sandbox ID, which no pod status lists, so it
// is told apart by what the kernel shows: a child the status lists is a container; among the
// children named like a runtime container (64 hex digits) the status does not list, the sandbox is
// the one holding the pod's oldest process (the runtime starts it before any container, and it lives
// as long as the pod). The others are containers the status does not list yet (started, or
// restarted, after the pod was last seen); the caller ends those only once a listed container was
// found in the same cgroup, so a pod object naming another pod's UID cannot end that pod's
// containers. Anything else (CRI-O's `crio-conmon-<id>` monitor, processes directly in the pod
// cgroup) is left alone.

import type { Pod } from '../api/pod.js';
import { containerIdCandidates, listedContainerIds, runtimeContainerIdOf } from '../api/container-id.js';
import type { HostFs } from '../host/host-fs.js';
import { resolveInside } from '../host/path-safety.js';
import { processStartTicks } from '../host/proc-pid.js';
import { describeError, isNotFound, readFailed, readOk, type ReadResult } from '../host/read-result.js';
import { pidsInCgroupTrees } from './process-signaller.js';

export interface PodContainerCgroups {
  /** The cgroups of the containers the pod's status lists (host directories, each proven inside the pod cgroup). */
  readonly listed: readonly string[];
  /** The cgroups of other containers, the sandbox's excepted (host directories, each proven inside the pod cgroup). */
  readonly unlisted: readonly string[];
  /** The sandbox's child cgroup name, never ended; null when none was told apart. */
  readonly sandbox: string | null;
  /** The child cgroups left alone (the sandbox, a runtime's monitor), by name. */
  readonly spared: readonly string[];
}

/**
 * The pod's container cgroups under `podDir`. `knownSandbox` is the sandbox told apart by an
 * earlier call for the same pod (kept while it exists, so a restarted container never takes its
 * place). Not found when the pod cgroup is gone.
 */
export function podContainerCgroups(fs: HostFs, procRoot: string, podDir: string, pod: Pod, knownSandbox: string | null): ReadResult<PodContainerCgroups> {
  let children: string[];
  try {
    children = fs.subdirectories(podDir);
  } catch (error) {
    return readFailed(`cannot list ${podDir}: ${describeError(error)}`, isNotFound(error));
  }
  const listedIds = listedContainerIds(pod);
  const listed: string[] = [];
  const unlisted: string[] = [];
  const others: string[] = [];
  const spared: string[] = [];
  for (const child of children) {
    // A symlink or a bind mount cannot stand in for a child on cgroupfs; on any other tree it is refused.
    if (!resolveInside(fs, podDir, `${podDir}/${child}`).ok) {
      spared.push(child);
      continue;
    }
    if (containerIdCandidates(child).some((id) => listedIds.has(id))) listed.push(child);
    else if (runtimeContainerIdOf(child) !== undefined) unlisted.push(child);
    else spared.push(child);
  }
  const known = knownSandbox !== null && unlisted.includes(knownSandbox);
  const oldest = known ? { child: knownSandbox, tied: false } : oldestProcessHolder(fs, procRoot, podDir, unlisted);
  for (const child of unlisted) {
    // Two children started in the same clock tick cannot be told apart: both are left alone.
    if (child === oldest.child || oldest.tied) spared.push(child);
    else others.push(child);
  }
  const dirs = (names: readonly string[]): string[] => names.map((child) => `${podDir}/${child}`);
  return readOk({ listed: dirs(listed), unlisted: dirs(others), sandbox: oldest.tied ? null : oldest.child, spared });
}

// The child whose subtree holds the process that started first (null when none holds any), and
// whether another child's oldest process started in the same clock tick.
function oldestProcessHolder(fs: HostFs, procRoot: string, podDir: string, children: readonly string[]): { child: string | null; tied: boolean } {
  let oldest: { child: string; startTicks: bigint } | null = null;
  let tied = false;
  for (const child of children) {
    for (const pid of pidsInCgroupTrees(fs, [`${podDir}/${child}`]).keys()) {
      let startTicks: bigint | undefined;
      try {
        startTicks = processStartTicks(fs.readSmallFile(`${procRoot}/${pid}/stat`));
      } catch {
        continue; // Exited meanwhile.
      }
      if (startTicks === undefined) continue;
      if (oldest === null || startTicks < oldest.startTicks) {
        tied = false;
        oldest = { child, startTicks };
      } else if (startTicks === oldest.startTicks && child !== oldest.child) tied = true;
    }
  }
  return { child: oldest?.child ?? null, tied };
}
