// The pods the benchmarks put on their sandbox nodes, as v1.Pod objects for the API stand-in and
// the engine, and where each one's cgroup lives: `kubepods/burstable/pod<uid>/<container id>`
// under the node cgroup, the cgroupfs driver's layout, with the UID the API server assigned.

import { createHash } from 'node:crypto';
import type { Pod } from '../../src/api/pod.js';

export const BENCH_NAMESPACE = 'bench';

/** A stable 64-hex-digit container ID for a pod name, as containerd would show it. */
export function containerIdFor(podName: string): string {
  return createHash('sha256').update(podName).digest('hex');
}

export interface BenchPodSpec {
  readonly name: string;
  readonly nodeName: string;
  /** The memory request of its one container (all bench pods are Burstable). */
  readonly memoryRequest: string;
  readonly namespace?: string;
  /** Set by the API server when created through the stand-in; needed for pods used without it. */
  readonly uid?: string;
}

export function benchPod(spec: BenchPodSpec): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name, namespace: spec.namespace ?? BENCH_NAMESPACE, ...(spec.uid === undefined ? {} : { uid: spec.uid }) },
    spec: {
      nodeName: spec.nodeName,
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'main', resources: { requests: { memory: spec.memoryRequest } } }],
    },
    status: {
      phase: 'Running',
      qosClass: 'Burstable',
      containerStatuses: [{ name: 'main', containerID: `containerd://${containerIdFor(spec.name)}` }],
    },
  };
}

/** The pod's cgroup, relative to the node cgroup. */
export function podCgroup(uid: string): string {
  return `kubepods/burstable/pod${uid}`;
}

/** The pod's one container cgroup, relative to the node cgroup. */
export function containerCgroup(pod: Pod): string {
  return `${podCgroup(pod.metadata.uid ?? '')}/${containerIdFor(pod.metadata.name ?? '')}`;
}

/** A UUID-shaped UID for pods that never go through the stand-in. */
export function syntheticUid(i: number): string {
  return `00000000-0000-4000-8000-${i.toString().padStart(12, '0')}`;
}
