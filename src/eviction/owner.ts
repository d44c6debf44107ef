// The controller a pod's evictions are counted against: its controlling owner reference, and for a
// ReplicaSet the Deployment that owns it. Pure: here the Deployment is named from the ReplicaSet
// the way the Deployment controller names it (`<deployment>-<pod-template-hash>`, the hash also on
// the pod's `pod-template-hash` label); the running agent asks the API server for the ReplicaSet's
// own owner first, and falls back to this where it cannot.

import type { ObjectRef, Pod } from '../api/pod.js';

/** An owning controller: `Deployment`, `StatefulSet`, `DaemonSet`, `Job`, `ReplicaSet`, ...; the UID is null for a Deployment named from its ReplicaSet. */
export type OwnerRef = ObjectRef;

export const POD_TEMPLATE_HASH_LABEL = 'pod-template-hash';

/** `Deployment shop/leaky`. */
export function ownerKey(owner: Pick<OwnerRef, 'kind' | 'namespace' | 'name'>): string {
  return `${owner.kind} ${owner.namespace}/${owner.name}`;
}

/** The pod's controlling owner reference, as it is; null for a bare pod. */
export function controllerOf(pod: Pod): OwnerRef | null {
  const ref = pod.metadata.ownerReferences?.find((r) => r.controller === true);
  if (ref === undefined || ref.kind === '' || ref.name === '') return null;
  return { apiVersion: ref.apiVersion, kind: ref.kind, namespace: pod.metadata.namespace ?? '', name: ref.name, uid: ref.uid === '' ? null : ref.uid };
}

/**
 * The Deployment a ReplicaSet-owned pod belongs to, named from the ReplicaSet and the pod's
 * `pod-template-hash`; null when the names do not follow the Deployment controller's pattern.
 */
export function deploymentByName(pod: Pod, replicaSet: OwnerRef): OwnerRef | null {
  const hash = pod.metadata.labels?.[POD_TEMPLATE_HASH_LABEL];
  if (replicaSet.kind !== 'ReplicaSet' || hash === undefined || hash === '' || !replicaSet.name.endsWith(`-${hash}`)) return null;
  const name = replicaSet.name.slice(0, -(hash.length + 1));
  return name === '' ? null : { apiVersion: 'apps/v1', kind: 'Deployment', namespace: replicaSet.namespace, name, uid: null };
}

/** The owner to count against without asking the API server: the Deployment of a ReplicaSet when named so, else the controller. */
export function ownerByName(pod: Pod): OwnerRef | null {
  const controller = controllerOf(pod);
  if (controller === null) return null;
  return deploymentByName(pod, controller) ?? controller;
}
