// Which of the pods the API server lists for this node the agent takes for its own: a pod counts
// only when it is bound to this node and its identity can name host paths (a UID in the API
// server's form, or a static pod's for a mirror pod; a DNS name and namespace). The field selector
// `spec.nodeName=<node>` is the server's to apply, and a broken or compromised server (or anything
// that injects into the watch) may send other nodes' pods, crafted UIDs or one UID for two pods
// (whose stats, cgroup and processes would be taken for each other's): such a pod is never
// observed, ranked, evicted, signalled or tainted away. Every part of the agent sees the node's
// pods through this one filter. Each refused pod is logged once while the server keeps sending it,
// and counted in the `refused_pods` gauge by reason.

import type { Logger } from '../api/logger.js';
import { nodePodUid } from '../api/node-pod-uid.js';
import { isPodUid, podIdentityProblem, podKey, printableValue, sharedPodUidReason, type Pod } from '../api/pod.js';
import type { ClusterView } from './ports.js';

export type PodRefusalReason = 'uid' | 'name' | 'other-node';
export const POD_REFUSAL_REASONS: readonly PodRefusalReason[] = ['uid', 'name', 'other-node'];

/** Why `pod` is not one of `nodeName`'s pods the agent may act on, or null when it is. */
export function podRefusal(pod: Pod, nodeName: string): { readonly reason: PodRefusalReason; readonly message: string } | null {
  const bound = pod.spec?.nodeName;
  if (bound !== nodeName) return { reason: 'other-node', message: `the pod is bound to ${typeof bound === 'string' && bound !== '' ? printableValue(bound) : 'no node'}, not ${nodeName}` };
  if (!isPodUid(pod.metadata.uid)) return { reason: 'uid', message: `the pod UID ${printableValue(pod.metadata.uid)} is not in the API server's form` };
  const nodeUid = nodePodUid(pod);
  if (!nodeUid.ok) return { reason: 'uid', message: nodeUid.reason };
  const identity = podIdentityProblem(pod);
  if (identity !== null) return { reason: 'name', message: identity };
  return null;
}

// A key within the API server's syntax is shown as it is; any other, bounded and escaped.
const PLAIN_KEY = /^[a-z0-9.-]{1,63}\/[a-z0-9.-]{1,253}$/;
const shownKey = (pod: Pod): string => (PLAIN_KEY.test(podKey(pod)) ? podKey(pod) : printableValue(podKey(pod)));

/** A pod sharing its UID with another listed pod: refused, naming the others (a few). */
function sharedUid(pod: Pod, keysByUid: ReadonlyMap<string, readonly string[]>): ReturnType<typeof podRefusal> {
  const keys = keysByUid.get(pod.metadata.uid ?? '') ?? [];
  if (keys.length < 2) return null;
  const others = keys.filter((key) => key !== podKey(pod));
  return { reason: 'uid', message: sharedPodUidReason(pod.metadata.uid ?? '', others, (key) => printableValue(key)) };
}

const idOf = (pod: Pod): string => `${podKey(pod)}\u0000${String(pod.metadata.uid)}`;

interface PodVerdict {
  readonly refusal: ReturnType<typeof podRefusal>;
  /** Key and UID, as refusals are remembered by. */
  readonly id: string;
  /** The UID when it has the API server's form (only those are compared between pods). */
  readonly uid: string | undefined;
}

/** The view the filter stands in front of, with its lifecycle. */
export type StartableClusterView = ClusterView & { start(): Promise<void>; stop(): Promise<void> };

export interface NodePodFilterDeps {
  readonly nodeName: string;
  readonly cluster: StartableClusterView;
  readonly logger: Logger;
  /** Told the number of refused pods by reason whenever it changes. */
  readonly onRefusedCounts?: (counts: Readonly<Record<PodRefusalReason, number>>) => void;
}

/** The ClusterView with only the pods the agent may act on; the Node passes through as it is. */
export class NodePodFilter implements StartableClusterView {
  private readonly log: Logger;
  private source: readonly Pod[] | null = null;
  private accepted: readonly Pod[] = [];
  // The refused pods of the latest answer (key, UID and reason), so each is logged once.
  private refused = new Set<string>();
  private acceptedIds = new Set<string>();
  private readonly verdicts = new WeakMap<Pod, PodVerdict>();
  private counts = '';

  constructor(private readonly deps: NodePodFilterDeps) {
    this.log = deps.logger.child({ component: 'node-pods' });
  }

  get synced(): boolean {
    return this.deps.cluster.synced;
  }

  pods(): readonly Pod[] {
    const all = this.deps.cluster.pods();
    // The view hands out the same array until its pods change: filter each answer once.
    if (all !== this.source) {
      this.source = all;
      this.accepted = this.filter(all);
    }
    return this.accepted;
  }

  node(): ReturnType<ClusterView['node']> {
    return this.deps.cluster.node();
  }

  onPodChange(listener: (oldPod: Pod | null, newPod: Pod | null) => void): () => void {
    return this.deps.cluster.onPodChange((oldPod, newPod) => {
      // A refused state is no pod at all: a pod that leaves the node is deleted, one that comes
      // back added. The new state is judged among all the pods (the view holds it already).
      const before = oldPod !== null && podRefusal(oldPod, this.deps.nodeName) === null ? oldPod : null;
      this.pods();
      const after = newPod !== null && this.acceptedIds.has(idOf(newPod)) ? newPod : null;
      if (before !== null || after !== null) listener(before, after);
    });
  }

  onNodeChange(listener: Parameters<ClusterView['onNodeChange']>[0]): () => void {
    return this.deps.cluster.onNodeChange(listener);
  }

  async start(): Promise<void> {
    await this.deps.cluster.start();
  }

  async stop(): Promise<void> {
    await this.deps.cluster.stop();
  }

  private filter(all: readonly Pod[]): readonly Pod[] {
    const accepted: Pod[] = [];
    const refused = new Set<string>();
    const counts: Record<PodRefusalReason, number> = { uid: 0, name: 0, 'other-node': 0 };
    // The API server gives every pod its own UID: pods that share one are none of them trusted.
    const podsByUid = new Map<string, number>();
    for (const pod of all) {
      const { uid } = this.verdictOf(pod);
      if (uid !== undefined) podsByUid.set(uid, (podsByUid.get(uid) ?? 0) + 1);
    }
    // The keys of the pods sharing a UID, for the refusal's message (none on a sane node).
    const keysByUid = new Map<string, string[]>();
    for (const pod of all) {
      const { uid } = this.verdictOf(pod);
      if (uid === undefined || (podsByUid.get(uid) ?? 0) < 2) continue;
      const keys = keysByUid.get(uid);
      if (keys === undefined) keysByUid.set(uid, [podKey(pod)]);
      else keys.push(podKey(pod));
    }
    this.acceptedIds = new Set();
    for (const pod of all) {
      const verdict = this.verdictOf(pod);
      const refusal = verdict.refusal ?? sharedUid(pod, keysByUid);
      if (refusal === null) {
        accepted.push(pod);
        this.acceptedIds.add(verdict.id);
        continue;
      }
      counts[refusal.reason]++;
      const key = `${refusal.reason}\u0000${verdict.id}`;
      refused.add(key);
      if (!this.refused.has(key)) {
        this.log.warn('pod refused: the API server listed it for this node, but the agent never acts on it', { pod: shownKey(pod), reason: refusal.message });
      }
    }
    this.refused = refused;
    const shown = JSON.stringify(counts);
    if (shown !== this.counts) {
      this.counts = shown;
      this.deps.onRefusedCounts?.(counts);
    }
    return Object.freeze(accepted);
  }

  // What is judged of a pod by itself, once per pod object (the watch replaces the object when the
  // pod changes): filtering a large node again after one pod changed is then a few lookups a pod,
  // not its regular expressions, on the way to a memory notification's kill.
  private verdictOf(pod: Pod): PodVerdict {
    let verdict = this.verdicts.get(pod);
    if (verdict === undefined) {
      const uid = pod.metadata.uid;
      verdict = { refusal: podRefusal(pod, this.deps.nodeName), id: idOf(pod), uid: isPodUid(uid) ? uid : undefined };
      this.verdicts.set(pod, verdict);
    }
    return verdict;
  }
}
