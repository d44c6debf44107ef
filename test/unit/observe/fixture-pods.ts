// The pods that live in the fixture cgroup trees under test/fixtures/cgroup-v1 and cgroup-v2, with
// the UIDs and container IDs the trees are named after.

import type { Pod } from '../../../src/api/pod.js';

export const UID_A = '0a1b2c3d-0000-4000-8000-00000000000a';
export const UID_B = '0a1b2c3d-0000-4000-8000-00000000000b';
export const UID_C = '0a1b2c3d-0000-4000-8000-00000000000c';
export const CID_A = `${'a'.repeat(63)}1`;
export const CID_A_INIT = `${'a'.repeat(63)}2`;
export const CID_B = `${'b'.repeat(63)}1`;
export const CID_C = `${'c'.repeat(63)}1`;

export const fixturesDir = new URL('../../fixtures/', import.meta.url).pathname;

/** A Burstable pod: app container plus an init container whose cgroup is gone. */
export const podA: Pod = {
  metadata: { name: 'web', namespace: 'default', uid: UID_A },
  spec: { containers: [{ name: 'app' }], initContainers: [{ name: 'init' }] },
  status: {
    phase: 'Running',
    qosClass: 'Burstable',
    containerStatuses: [{ name: 'app', containerID: `containerd://${CID_A}` }],
    initContainerStatuses: [{ name: 'init', containerID: `containerd://${CID_A_INIT}` }],
  },
};

/** A BestEffort pod. */
export const podB: Pod = {
  metadata: { name: 'batch', namespace: 'jobs', uid: UID_B },
  spec: { containers: [{ name: 'worker' }] },
  status: { phase: 'Running', qosClass: 'BestEffort', containerStatuses: [{ name: 'worker', containerID: `containerd://${CID_B}` }] },
};

/** A Guaranteed pod (its cgroup sits directly under the pod cgroup root). */
export const podC: Pod = {
  metadata: { name: 'db', namespace: 'default', uid: UID_C },
  spec: { containers: [{ name: 'postgres' }] },
  status: { phase: 'Running', qosClass: 'Guaranteed', containerStatuses: [{ name: 'postgres', containerID: `containerd://${CID_C}` }] },
};

/** A pod not started yet: no containers, so no cgroup is expected. */
export const pendingPod: Pod = {
  metadata: { name: 'pending', namespace: 'default', uid: '0a1b2c3d-0000-4000-8000-0000000000ff' },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Pending' },
};

/** A running pod whose cgroup does not exist in any fixture. */
export const lostPod: Pod = {
  metadata: { name: 'lost', namespace: 'default', uid: '0a1b2c3d-0000-4000-8000-0000000000ee' },
  spec: { containers: [{ name: 'app' }] },
  status: { phase: 'Running', qosClass: 'Burstable', containerStatuses: [{ name: 'app', containerID: 'containerd://0123' }] },
};

/** The same pod with CRI-O container IDs. */
export function withRuntime(pod: Pod, scheme: string): Pod {
  const rewrite = (statuses: { name: string; containerID?: string }[]) =>
    statuses.map((s) => (s.containerID === undefined ? s : { ...s, containerID: s.containerID.replace(/^[a-z-]+:\/\//, `${scheme}://`) }));
  const { containerStatuses, initContainerStatuses } = pod.status ?? {};
  return {
    ...pod,
    status: {
      ...pod.status,
      ...(containerStatuses === undefined ? {} : { containerStatuses: rewrite(containerStatuses) }),
      ...(initContainerStatuses === undefined ? {} : { initContainerStatuses: rewrite(initContainerStatuses) }),
    },
  };
}
