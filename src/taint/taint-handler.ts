// The NoExecute taint-eviction controller for one node, the agent's own: upstream's
// `tainteviction.Controller` with its shards collapsed to one node queue and one pod queue.
// It decides when each pod on the node is deleted and reports what it did; the caller watches
// the API, feeds the events in, and performs the deletion.

import type { Clock } from '../api/clock.js';
import { podKey, type Node, type Pod, type Taint } from '../api/pod.js';
import { taintsEqual, tolerationsEqual } from './semantic-equal.js';
import { decideTaintEviction, isTerminating } from './taint-decision.js';
import { cancellingDeletionMessage, markingForDeletionMessage, TAINT_EVICTION_REASON, type TaintEvent } from './taint-event.js';
import { resolveTaintOptions, type TaintOptions } from './taint-options.js';
import { TimedWorkerQueue, type PendingWork } from './timed-worker-queue.js';
import { getNoExecuteTaints } from './tolerations.js';

/** What the handler asks its caller to do. */
export interface TaintHandlerActions {
  /**
   * Deletes the pod (upstream: DisruptionTarget condition, then DELETE, 5 attempts). `pod` is the
   * latest cached pod, null when the cache no longer has it (upstream still tries the API).
   */
  deletePod(podKey: string, pod: Pod | null, fireAtMs: number): Promise<void> | void;
  /** Reports a scheduling fact or a Kubernetes Event to record (see TaintEvent). */
  emit(event: TaintEvent): void;
  /** A deletePod that threw or rejected; upstream logs it and does not retry. */
  deleteFailed?(podKey: string, error: unknown): void;
}

export interface TaintHandlerDeps {
  readonly nodeName: string;
  readonly clock: Clock;
  readonly options?: Partial<TaintOptions>;
  readonly actions: TaintHandlerActions;
  /** The pods bound to the node, from the informer cache. */
  readonly listPods: () => readonly Pod[];
  /** One pod from the informer cache, null when absent. */
  readonly getPod: (namespace: string, name: string) => Pod | null;
  /** The node from the informer cache, null once it is deleted. */
  readonly getNode: () => Node | null;
}

/** Upstream `podUpdateItem`. */
export interface PodUpdateItem {
  readonly namespace: string;
  readonly name: string;
  readonly nodeName: string;
}

export class TaintHandler {
  readonly options: TaintOptions;
  private readonly nodeName: string;
  private readonly clock: Clock;
  private readonly actions: TaintHandlerActions;
  private readonly listPods: () => readonly Pod[];
  private readonly getPod: (namespace: string, name: string) => Pod | null;
  private readonly getNode: () => Node | null;
  private readonly queue: TimedWorkerQueue;
  /** Upstream `taintedNodes[nodeName]`: null when the node has no NoExecute taint or is gone. */
  private taints: Taint[] | null = null;
  /** The node queue holds at most this one node, and a work queue collapses repeats. */
  private nodeWorkPending = false;
  /** The pod work queue: insertion-ordered, an item already waiting is not added twice. */
  private readonly podWork = new Map<string, PodUpdateItem>();
  private processing = false;
  private stopped = false;

  constructor(deps: TaintHandlerDeps) {
    this.nodeName = deps.nodeName;
    this.clock = deps.clock;
    this.options = resolveTaintOptions(deps.options);
    this.actions = deps.actions;
    this.listPods = deps.listPods;
    this.getPod = deps.getPod;
    this.getNode = deps.getNode;
    this.queue = new TimedWorkerQueue(
      deps.clock,
      (key, fireAtMs) => this.deletePodHandler(key, fireAtMs),
      (key, error) => this.actions.deleteFailed?.(key, error),
    );
  }

  /**
   * Informer intake for the node (add: `oldNode` null; delete: `newNode` null). Answers whether
   * work was queued: an update that leaves the ordered NoExecute taints semantically equal is
   * ignored (labels, status, other effects), and so is any node but this one.
   */
  nodeUpdated(oldNode: Node | null, newNode: Node | null): boolean {
    if (this.stopped) return false;
    const name = newNode?.metadata.name ?? oldNode?.metadata.name;
    if (name !== this.nodeName) return false;
    if (oldNode !== null && newNode !== null && taintsEqual(getNoExecuteTaints(oldNode.spec?.taints), getNoExecuteTaints(newNode.spec?.taints))) {
      return false;
    }
    this.nodeWorkPending = true;
    return true;
  }

  /**
   * Informer intake for a pod (add: `oldPod` null; delete: `newPod` null, tombstone unwrapped).
   * Answers whether work was queued: an update that keeps the tolerations and `spec.nodeName`
   * is ignored (status, labels, even deletionTimestamp).
   */
  podUpdated(oldPod: Pod | null, newPod: Pod | null): boolean {
    if (this.stopped) return false;
    const pod = newPod ?? oldPod;
    if (pod === null) return false;
    if (
      oldPod !== null &&
      newPod !== null &&
      tolerationsEqual(oldPod.spec.tolerations, newPod.spec.tolerations) &&
      (oldPod.spec.nodeName ?? '') === (newPod.spec.nodeName ?? '')
    ) {
      return false;
    }
    // A delete carries the old pod's node; an unscheduled pod is queued and dropped later, as upstream.
    const item: PodUpdateItem = { namespace: pod.metadata.namespace ?? '', name: pod.metadata.name ?? '', nodeName: pod.spec.nodeName ?? '' };
    const itemKey = JSON.stringify([item.namespace, item.name, item.nodeName]);
    if (!this.podWork.has(itemKey)) this.podWork.set(itemKey, item);
    return true;
  }

  /**
   * Handles the queued work serially, taking pending node work before every pod item (upstream
   * drains its node channel before each pod item, so a pod is judged against current taints).
   * Answers how many items were handled. A handler that throws loses its item, as upstream does
   * not re-queue; the rest stay queued for the next call. Re-entrant calls do nothing.
   */
  processPending(): number {
    if (this.processing || this.stopped) return 0;
    this.processing = true;
    let handled = 0;
    try {
      for (;;) {
        if (this.stopped) break;
        if (this.nodeWorkPending) {
          this.nodeWorkPending = false;
          handled++;
          this.handleNodeUpdate();
          continue;
        }
        const next = this.podWork.entries().next();
        if (next.done === true) break;
        const [itemKey, item] = next.value;
        this.podWork.delete(itemKey);
        handled++;
        this.handlePodUpdate(item);
      }
    } finally {
      this.processing = false;
    }
    return handled;
  }

  /**
   * Upstream `handleNodeUpdate`, from the cached node rather than the event. The taint state is
   * stored before the pods are listed: a pod the list misses is judged by its own pod event,
   * which reads that state.
   */
  handleNodeUpdate(): void {
    const node = this.getNode();
    if (node === null) {
      // Node deleted: forget its taints, but pending timers still fire (upstream); pods that
      // disappear cancel their own through the pod path.
      this.taints = null;
      return;
    }
    const taints = getNoExecuteTaints(node.spec?.taints);
    this.taints = taints.length === 0 ? null : taints;
    const pods = this.listPods().filter((pod) => (pod.spec.nodeName ?? '') === this.nodeName);
    if (pods.length === 0) return;
    if (taints.length === 0) {
      for (const pod of pods) this.cancelWorkWithEvent(podKey(pod));
      return;
    }
    const nowMs = this.clock.nowMs();
    for (const pod of pods) this.processPodOnNode(pod, taints, nowMs);
  }

  /** Upstream `handlePodUpdate`, from the cached pod rather than the event. */
  handlePodUpdate(item: PodUpdateItem): void {
    const pod = this.getPod(item.namespace, item.name);
    if (pod === null) {
      this.cancelWorkWithEvent(`${item.namespace}/${item.name}`);
      return;
    }
    const nodeName = pod.spec.nodeName ?? '';
    // A stale item: a newer one for the pod's current node exists.
    if (nodeName !== item.nodeName) return;
    if (nodeName === '') return;
    // Other nodes have no taint state here, as a node without NoExecute taints has none upstream.
    if (nodeName !== this.nodeName || this.taints === null) return;
    this.processPodOnNode(pod, this.taints, this.clock.nowMs());
  }

  /**
   * Upstream `processPodOnNode`. An untolerated taint replaces any timer with an immediate
   * deletion; tolerating forever cancels; otherwise an existing timer is kept with its original
   * fire time whether the new minimum is longer or shorter (upstream compares
   * `createdAt + min < now + min`, that is `createdAt < now`), and is only replaced when it was
   * created in this same millisecond.
   */
  processPodOnNode(pod: Pod, noExecuteTaints: readonly Taint[], nowMs: number): void {
    const key = podKey(pod);
    const decision = decideTaintEviction(pod, noExecuteTaints, nowMs, this.options);
    switch (decision.kind) {
      case 'terminating':
        return;
      case 'untainted':
      case 'forever':
        this.cancelWorkWithEvent(key);
        return;
      case 'untolerated':
        this.cancelWorkWithEvent(key);
        this.addWork(key, nowMs, nowMs, nowMs);
        return;
      case 'timed': {
        let createdAtMs = nowMs;
        const existing = this.queue.getWorker(key);
        if (existing !== null) {
          createdAtMs = existing.createdAtMs;
          if (createdAtMs < nowMs) return;
          this.cancelWorkWithEvent(key);
        }
        this.addWork(key, createdAtMs, decision.fireAtMs, nowMs);
        return;
      }
    }
  }

  /** The node's NoExecute taints as last handled; null when it has none or is gone. */
  noExecuteTaints(): readonly Taint[] | null {
    return this.taints;
  }

  /** The pending evictions, earliest first. */
  pending(): PendingWork[] {
    return this.queue.pending();
  }

  /** Stops every timer and drops queued work; nothing fires afterwards. Idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.queue.stop();
    this.podWork.clear();
    this.nodeWorkPending = false;
  }

  private addWork(key: string, createdAtMs: number, fireAtMs: number, nowMs: number): void {
    if (this.queue.addWork(key, createdAtMs, fireAtMs)) {
      this.actions.emit({ type: 'scheduled', podKey: key, atMs: nowMs, createdAtMs, fireAtMs });
    }
  }

  /** Upstream `cancelWorkWithEvent`: the Event only when a timer was actually stopped. */
  private cancelWorkWithEvent(key: string): void {
    if (this.queue.cancelWork(key)) {
      this.actions.emit({ type: 'cancelled', podKey: key, atMs: this.clock.nowMs(), reason: TAINT_EVICTION_REASON, message: cancellingDeletionMessage(key) });
    }
  }

  /** The work a fired entry runs (upstream `deletePodHandler`, minus the API calls). */
  private deletePodHandler(key: string, fireAtMs: number): Promise<void> | void {
    const slash = key.indexOf('/');
    const pod = this.getPod(key.slice(0, slash), key.slice(slash + 1));
    if (this.options.skipTerminatingPods && pod !== null && isTerminating(pod)) return;
    this.actions.emit({ type: 'deleted', podKey: key, atMs: this.clock.nowMs(), fireAtMs, reason: TAINT_EVICTION_REASON, message: markingForDeletionMessage(key) });
    return this.actions.deletePod(key, pod, fireAtMs);
  }
}
