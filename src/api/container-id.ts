// Container identity: the runtime's container ID from a pod status (`containerd://<id>`), and the
// ID inside a container's cgroup directory name, whose spelling depends on the runtime and the
// cgroup driver (`<id>` with cgroupfs and containerd or docker, `crio-<id>` with cgroupfs and CRI-O,
// `cri-containerd-<id>.scope`, `crio-<id>.scope` or `docker-<id>.scope` with systemd).

import type { Pod } from './pod.js';

/** The runtime prefixes a systemd scope (or a CRI-O cgroupfs directory) puts before the ID. */
export const RUNTIME_CGROUP_PREFIXES = ['cri-containerd-', 'crio-', 'docker-'] as const;

/** `containerd://abc` -> `abc` (any `<runtime>://` scheme); undefined for an empty or missing ID. */
export function parseContainerId(containerId: string | undefined): string | undefined {
  if (containerId === undefined) return undefined;
  const schemeEnd = containerId.indexOf('://');
  const id = schemeEnd === -1 ? containerId : containerId.slice(schemeEnd + 3);
  return id === '' ? undefined : id;
}

/**
 * The container ID a cgroup directory name may stand for: the name without a `.scope` suffix and
 * without one runtime prefix. Both the bare and the stripped forms are returned, because a
 * cgroupfs directory is the bare ID and the caller matches against IDs it knows (so
 * `crio-conmon-<id>.scope`, CRI-O's monitor process, matches nothing).
 */
export function containerIdCandidates(cgroupName: string): string[] {
  const base = cgroupName.endsWith('.scope') ? cgroupName.slice(0, -'.scope'.length) : cgroupName;
  const candidates = [base];
  for (const prefix of RUNTIME_CGROUP_PREFIXES) {
    if (base.startsWith(prefix) && base.length > prefix.length) candidates.push(base.slice(prefix.length));
  }
  return candidates;
}

/**
 * Container ID -> container name for a pod's app and init containers (kubelet names containers
 * from these statuses). Ephemeral containers are left out: the eviction logic never reads them.
 */
export function containerNamesById(pod: Pod): Map<string, string> {
  const names = new Map<string, string>();
  for (const status of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const id = parseContainerId(status.containerID);
    if (id !== undefined) names.set(id, status.name);
  }
  return names;
}

/** The IDs of every container the pod's status lists (app, init and ephemeral): never its sandbox's, which no status carries. */
export function listedContainerIds(pod: Pod): Set<string> {
  const ids = new Set<string>();
  const status = pod.status;
  for (const entry of [...(status?.initContainerStatuses ?? []), ...(status?.containerStatuses ?? []), ...(status?.ephemeralContainerStatuses ?? [])]) {
    const id = parseContainerId(entry.containerID);
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

// containerd, CRI-O and docker name containers (and sandboxes) by 64 hex digits.
const RUNTIME_CONTAINER_ID = /^[0-9a-f]{64}$/;

/**
 * The runtime container ID a cgroup directory is named after (`<id>`, `cri-containerd-<id>.scope`,
 * `crio-<id>`), or undefined when the name is not a container's (CRI-O's `crio-conmon-<id>` monitor).
 */
export function runtimeContainerIdOf(cgroupName: string): string | undefined {
  return containerIdCandidates(cgroupName).find((candidate) => RUNTIME_CONTAINER_ID.test(candidate));
}
