// The node's pods under the UIDs the node knows them by (src/api/node-pod-uid.ts): a static pod's
// cgroup, log directory, `pods/<uid>` and Summary entry are under its own UID, not its mirror
// pod's. A mirror pod whose annotation is refused, or that claims a UID another pod of the node
// already has, is left out with the reason, so it is never read under someone else's name.

import { nodePodUid } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';

export interface NodePod {
  readonly pod: Pod;
  /** The UID the node knows it by. */
  readonly uid: string;
}

function podLabel(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

/**
 * The pods with their node UIDs, in their order; pods without a UID are left out silently (the
 * API server gives every pod one), refused mirror pods with a sentence each in `refused`.
 */
export function nodePods(pods: readonly Pod[]): { readonly pods: readonly NodePod[]; readonly refused: readonly string[] } {
  const refused: string[] = [];
  const ids = pods.map((pod) => ({ pod, id: nodePodUid(pod) }));
  // API UIDs are the API server's own and come first: a mirror pod cannot take one over.
  const taken = new Set<string>();
  for (const { id } of ids) if (id.ok && !id.mirror) taken.add(id.uid);
  const found: NodePod[] = [];
  for (const { pod, id } of ids) {
    if (!id.ok) {
      if (pod.metadata.uid !== undefined && pod.metadata.uid !== '') refused.push(`pod ${podLabel(pod)} not observed: ${id.reason}`);
      continue;
    }
    if (id.mirror) {
      if (taken.has(id.uid)) {
        refused.push(`pod ${podLabel(pod)} not observed: its static pod UID ${id.uid} is another pod's UID on this node`);
        continue;
      }
      taken.add(id.uid);
    }
    found.push({ pod, uid: id.uid });
  }
  return { pods: found, refused };
}
