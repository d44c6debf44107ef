// Where the kubelet puts a pod's cgroup, for both cgroup drivers. With cgroupfs the names are plain
// (`kubepods/burstable/pod<uid>`, Guaranteed pods directly under `kubepods/pod<uid>`); with systemd
// every level is a slice whose name repeats its ancestors joined by `-`
// (`kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice`), and since `-` is the
// separator systemd escapes the UID's dashes as `_`.

/** The kubelet's `--cgroup-driver`; `auto` means whichever tree exists on the node. */
export type CgroupDriver = 'cgroupfs' | 'systemd';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** The default pod cgroup root for each driver (kubelet `PodCgroupRoot` with `--cgroup-root=/`). */
export const DEFAULT_POD_CGROUP_ROOT: Readonly<Record<CgroupDriver, string>> = Object.freeze({
  cgroupfs: 'kubepods',
  systemd: 'kubepods.slice',
});

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
