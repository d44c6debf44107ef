// The two ways the kubelet names pod cgroups, as the suites build them by hand, and pod objects
// whose UIDs and container IDs point at those cgroups.

import type { Pod } from '../../../../src/api/pod.js';

export interface PodLayout {
  readonly driver: 'cgroupfs' | 'systemd';
  readonly kubepods: string;
  readonly burstablePod: (uid: string) => string;
  readonly guaranteedPod: (uid: string) => string;
  readonly container: (id: string) => string;
}

export const POD_LAYOUTS: readonly PodLayout[] = [
  {
    driver: 'cgroupfs',
    kubepods: 'kubepods',
    burstablePod: (uid) => `kubepods/burstable/pod${uid}`,
    guaranteedPod: (uid) => `kubepods/pod${uid}`,
    container: (id) => id,
  },
  {
    driver: 'systemd',
    kubepods: 'kubepods.slice',
    burstablePod: (uid) => `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid.replaceAll('-', '_')}.slice`,
    guaranteedPod: (uid) => `kubepods.slice/kubepods-pod${uid.replaceAll('-', '_')}.slice`,
    container: (id) => `cri-containerd-${id}.scope`,
  },
];

/** A 64-hex-digit container ID made of one repeated digit. */
export const containerId = (digit: string): string => digit.repeat(64);

/** A running pod whose containers (name → container ID) are all started. */
export function runningPod(name: string, uid: string, qosClass: 'Guaranteed' | 'Burstable' | 'BestEffort', containers: Record<string, string>, extra: Partial<Pod['spec']> = {}): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'cgroup-v2', uid },
    spec: { ...extra, containers: Object.keys(containers).map((n) => ({ name: n })) },
    status: { phase: 'Running', qosClass, containerStatuses: Object.entries(containers).map(([n, id]) => ({ name: n, containerID: `containerd://${id}` })) },
  };
}
