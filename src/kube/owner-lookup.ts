// The OwnerLookup port over the API server: a ReplicaSet's controlling owner (its Deployment), so
// the eviction storm guard counts a Deployment's evictions across its ReplicaSets. One GET of the
// ReplicaSet; a failure is answered as a sentence, and the caller falls back to the names.

import type { ObjectRef } from '../api/pod.js';
import type { OwnerLookup } from '../daemon/ports.js';
import type { ApiCaller } from './api-call.js';
import type { AppsV1Api } from './client-library.js';

export function createOwnerLookup(deps: { readonly apps: AppsV1Api; readonly caller: ApiCaller }): OwnerLookup {
  return {
    async replicaSetOwner(namespace: string, name: string): Promise<ObjectRef | null | string> {
      const result = await deps.caller.call((options) => deps.apps.readNamespacedReplicaSet({ name, namespace }, options));
      if (!result.ok) return `reading ReplicaSet ${namespace}/${name} failed (${result.failure.status}): ${result.failure.message}`;
      const ref = result.value.metadata?.ownerReferences?.find((r) => r.controller === true);
      if (ref === undefined || typeof ref.kind !== 'string' || typeof ref.name !== 'string' || ref.kind === '' || ref.name === '') return null;
      return { apiVersion: String(ref.apiVersion), kind: ref.kind, namespace, name: ref.name, uid: typeof ref.uid === 'string' && ref.uid !== '' ? ref.uid : null };
    },
  };
}
