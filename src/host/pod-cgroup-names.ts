// Where the kubelet puts a pod's cgroup, for both cgroup drivers. With cgroupfs the names are plain
// (`kubepods/burstable/pod<uid>`, Guaranteed pods directly under `kubepods/pod<uid>`); with systemd
// every level is a slice whose name repeats its ancestors joined by `-`
// (`kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice`), and since `-` is the
// separator systemd escapes the UID's dashes as `_`.

import type { CgroupDriver, CgroupDriverSetting } from '../api/agent-settings.js';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** A pod cgroup root to look for, and the driver that names the pods under it. */
export interface PodCgroupRootCandidate {
  /** Relative to the node cgroup (`kubepods`, `kubepods.slice`). */
  readonly relativePath: string;
  readonly driver: CgroupDriver;
}

/**
 * The pods' parent cgroup for a cgroup driver, as the kubelet names it: unchanged for cgroupfs;
 * for systemd, each path component becomes a slice nested in its parent's (`kubepods` ->
 * `kubepods.slice`, `a/kubepods` -> `a.slice/a-kubepods.slice`, dashes in names escaped to `_`),
 * and a name already in slice form is kept.
 */
export function podCgroupRootForDriver(podCgroupRoot: string, driver: CgroupDriver): string {
  if (driver === 'cgroupfs') return podCgroupRoot;
  const parts = podCgroupRoot.split('/').filter((p) => p !== '');
  if (parts.length === 0 || parts.some((p) => p.endsWith('.slice'))) return podCgroupRoot;
  const slices: string[] = [];
  let prefix = '';
  for (const part of parts) {
    const escaped = part.replaceAll('-', '_');
    prefix = prefix === '' ? escaped : `${prefix}-${escaped}`;
    slices.push(`${prefix}.slice`);
  }
  return slices.join('/');
}

/**
 * Where to look for the pod cgroup root, in order. A known driver names one place; with `auto`,
 * the systemd form first and then the cgroupfs one (a root written in slice form is systemd's).
 */
export function podCgroupRootCandidates(podCgroupRoot: string, driver: CgroupDriverSetting): PodCgroupRootCandidate[] {
  const relativePath = podCgroupRoot.replace(/^\/+|\/+$/g, '');
  if (driver !== 'auto') return [{ relativePath: podCgroupRootForDriver(relativePath, driver), driver }];
  if (driverForPodCgroupRoot(relativePath) === 'systemd') return [{ relativePath, driver: 'systemd' }];
  return [
    { relativePath: podCgroupRootForDriver(relativePath, 'systemd'), driver: 'systemd' },
    { relativePath, driver: 'cgroupfs' },
  ];
}

/** A pod UID as a systemd unit name part: `-` is systemd's hierarchy separator, so it becomes `_`. */
export function escapeSystemdUid(uid: string): string {
  return uid.replaceAll('-', '_');
}

/** The driver a pod cgroup root implies: a `.slice` is systemd's. */
export function driverForPodCgroupRoot(podCgroupRoot: string): CgroupDriver {
  return lastSegment(podCgroupRoot).endsWith('.slice') ? 'systemd' : 'cgroupfs';
}

// The QoS tier a pod's cgroup sits under; Guaranteed pods sit directly under the root.
function qosSegment(qos: QosClass): 'burstable' | 'besteffort' | null {
  return qos === 'Burstable' ? 'burstable' : qos === 'BestEffort' ? 'besteffort' : null;
}

function lastSegment(path: string): string {
  const parts = path.split('/').filter((part) => part !== '');
  return parts[parts.length - 1] ?? '';
}

/**
 * The pod cgroup's path relative to the pod cgroup root's parent hierarchy, for one QoS class:
 * `kubepods/burstable/pod<uid>` or
 * `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid_>.slice`.
 */
export function podCgroupPath(podCgroupRoot: string, driver: CgroupDriver, qos: QosClass, uid: string): string {
  const root = podCgroupRoot.replace(/^\/+|\/+$/g, '');
  const tier = qosSegment(qos);
  if (driver === 'cgroupfs') return [root, ...(tier === null ? [] : [tier]), `pod${uid}`].join('/');
  // systemd: each slice is named after the full chain of its ancestors.
  const prefix = lastSegment(root).replace(/\.slice$/, '');
  const parentPrefix = tier === null ? prefix : `${prefix}-${tier}`;
  const podSlice = `${parentPrefix}-pod${escapeSystemdUid(uid)}.slice`;
  return [root, ...(tier === null ? [] : [`${parentPrefix}.slice`]), podSlice].join('/');
}

/** The order to try QoS classes in: the pod's own class first (when known), then the rest. */
export function qosSearchOrder(qosClass: string | undefined): QosClass[] {
  const all: QosClass[] = ['Burstable', 'BestEffort', 'Guaranteed'];
  const own = all.find((qos) => qos === qosClass);
  return own === undefined ? all : [own, ...all.filter((qos) => qos !== own)];
}

/** Where a memory cgroup sits in the kubelet's pod tree. */
export interface PodTreePlace {
  /** The pod cgroup root itself (`kubepods`), a QoS tier under it, a pod, or a container of a pod (or deeper). */
  readonly level: 'pods' | 'qos' | 'pod' | 'container';
  /** The UID in the pod cgroup's name (a static pod's is its config hash), for `pod` and `container`. */
  readonly podUid: string | null;
  /** The container cgroup's directory name (`<id>`, `cri-containerd-<id>.scope`), for `container`. */
  readonly containerCgroup: string | null;
}

const CGROUPFS_POD = /^pod([0-9a-fA-F-]{1,64})$/;
const SYSTEMD_POD = /-pod([0-9a-fA-F_]{1,64})\.slice$/;
const QOS_TIERS = new Set(['burstable', 'besteffort']);

/**
 * Where `cgroup` sits relative to the pod cgroup root `podCgroupRoot`, both relative to the same
 * hierarchy root (leading and trailing slashes ignored), for either driver; null outside the tree.
 */
export function placeInPodTree(podCgroupRoot: string, cgroup: string): PodTreePlace | null {
  const root = podCgroupRoot.split('/').filter((p) => p !== '');
  const parts = cgroup.split('/').filter((p) => p !== '');
  if (parts.length < root.length || root.some((segment, i) => parts[i] !== segment)) return null;
  let rest = parts.slice(root.length);
  if (rest.length === 0) return { level: 'pods', podUid: null, containerCgroup: null };
  const first = rest[0] as string;
  const rootPrefix = (root[root.length - 1] ?? '').replace(/\.slice$/, '');
  const isTier = QOS_TIERS.has(first) || [...QOS_TIERS].some((tier) => first === `${rootPrefix}-${tier}.slice`);
  if (isTier) {
    rest = rest.slice(1);
    if (rest.length === 0) return { level: 'qos', podUid: null, containerCgroup: null };
  }
  const podName = rest[0] as string;
  const uid = CGROUPFS_POD.exec(podName)?.[1] ?? SYSTEMD_POD.exec(podName)?.[1]?.replaceAll('_', '-');
  if (uid === undefined) return null;
  return { level: rest.length === 1 ? 'pod' : 'container', podUid: uid, containerCgroup: rest[1] ?? null };
}
