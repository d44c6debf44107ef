// Hand-written in-memory fakes of the four cluster ports (ClusterView, PodActions, EventRecorder,
// NodeReporter) for the run loop's unit tests. They share one state, so an accepted eviction shows
// up in the view the way the API server's answer would, every call is recorded, and
// `injectError(method, outcome)` makes the next calls of a method answer something else.

import type { Clock } from '../../src/api/clock.js';
import type { Node, ObjectRef, Pod, PodCondition, Taint } from '../../src/api/pod.js';
import type { AgentEvent, AgentNodeCondition, ClusterView, DisruptionTargetCondition, EventRecorder, EvictionOutcome, NodeReporter, PodActions } from '../../src/daemon/ports.js';

type PodListener = (oldPod: Pod | null, newPod: Pod | null) => void;
type NodeListener = (oldNode: Node | null, newNode: Node | null) => void;

const PDB_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function keyOf(namespace: string | undefined, name: string | undefined): string {
  return `${namespace ?? ''}/${name ?? ''}`;
}

function iso(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** The node's pods and Node in memory; changes made through it reach listeners as (old, new). */
export class FakeClusterView implements ClusterView {
  synced: boolean;
  startCalls = 0;
  stopCalls = 0;
  private readonly podMap = new Map<string, Pod>();
  private nodeObject: Node | null;
  private snapshot: readonly Pod[] | null = null;
  private readonly podListeners = new Set<PodListener>();
  private readonly nodeListeners = new Set<NodeListener>();

  constructor(init: { pods?: readonly Pod[]; node?: Node | null; synced?: boolean } = {}) {
    for (const pod of init.pods ?? []) this.podMap.set(keyOf(pod.metadata.namespace, pod.metadata.name), clone(pod));
    this.nodeObject = init.node === undefined || init.node === null ? null : clone(init.node);
    this.synced = init.synced ?? true;
  }

  pods(): readonly Pod[] {
    this.snapshot ??= Object.freeze([...this.podMap.values()]);
    return this.snapshot;
  }

  node(): Node | null {
    return this.nodeObject;
  }

  onPodChange(listener: PodListener): () => void {
    this.podListeners.add(listener);
    return () => this.podListeners.delete(listener);
  }

  onNodeChange(listener: NodeListener): () => void {
    this.nodeListeners.add(listener);
    return () => this.nodeListeners.delete(listener);
  }

  // The lifecycle of ClusterViewHandle, counted.
  async start(): Promise<void> {
    this.startCalls++;
  }

  async stop(): Promise<void> {
    this.stopCalls++;
  }

  async whenSynced(): Promise<boolean> {
    return this.synced;
  }

  // ---- the test's side ----

  /** Adds or replaces a pod; listeners get (previous or null, pod). */
  upsertPod(pod: Pod): Pod {
    const key = keyOf(pod.metadata.namespace, pod.metadata.name);
    const old = this.podMap.get(key) ?? null;
    const next = clone(pod);
    this.podMap.set(key, next);
    this.snapshot = null;
    for (const listener of [...this.podListeners]) listener(old, next);
    return next;
  }

  /** Changes a pod in place (a copy, so listeners see old and new); throws when absent. */
  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod {
    const old = this.podMap.get(keyOf(namespace, name));
    if (old === undefined) throw new Error(`no pod ${namespace}/${name} in the fake view`);
    const next = clone(old);
    change(next);
    return this.upsertPod(next);
  }

  /** Removes a pod; listeners get (pod, null). False when it was not there. */
  removePod(namespace: string, name: string): boolean {
    const key = keyOf(namespace, name);
    const old = this.podMap.get(key);
    if (old === undefined) return false;
    this.podMap.delete(key);
    this.snapshot = null;
    for (const listener of [...this.podListeners]) listener(old, null);
    return true;
  }

  findPod(namespace: string, name: string): Pod | null {
    return this.podMap.get(keyOf(namespace, name)) ?? null;
  }

  /** Sets (or, with null, removes) the node; listeners get (old, new). */
  setNode(node: Node | null): void {
    const old = this.nodeObject;
    this.nodeObject = node === null ? null : clone(node);
    for (const listener of [...this.nodeListeners]) listener(old, this.nodeObject);
  }

  listenerCount(): { pods: number; node: number } {
    return { pods: this.podListeners.size, node: this.nodeListeners.size };
  }
}

export type PodActionMethod = 'getPod' | 'evictPod' | 'deletePod' | 'addDisruptionTarget';

/** One call to FakePodActions, as made. */
export interface PodActionCall {
  readonly method: PodActionMethod;
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string | undefined;
  readonly gracePeriodSeconds?: number | null;
  readonly condition?: DisruptionTargetCondition;
  /** What the fake answered (getPod: whether it found the pod, or the error it threw). */
  readonly outcome: EvictionOutcome | { result: 'found' | 'not-found' } | { result: 'threw'; message: string };
}

export interface FakePodActionsOptions {
  /** What an accepted eviction or deletion does to the view (default `terminate`: sets deletionTimestamp). */
  readonly onAccepted?: 'terminate' | 'remove' | 'keep';
  /** Stamps deletionTimestamp and condition times (default: a fixed time). */
  readonly clock?: Pick<Clock, 'nowMs'>;
}

/**
 * PodActions over a FakeClusterView. By default it answers as the API server would: 404 (gone)
 * for a missing pod, 409 (gone) for a UID precondition that fails, accepted otherwise.
 */
export class FakePodActions implements PodActions {
  readonly calls: PodActionCall[] = [];
  private readonly injected = new Map<PodActionMethod, (EvictionOutcome | Error | null)[]>();
  private readonly budgets = new Map<string, string>();

  constructor(
    private readonly view: FakeClusterView,
    private readonly options: FakePodActionsOptions = {},
  ) {}

  /**
   * The next `times` calls of `method` answer `outcome` instead. For getPod the outcome is an
   * Error to throw (the adapter throws a KubeApiError when the API server cannot be reached) or
   * null (not found); for the others an EvictionOutcome.
   */
  injectError(method: 'getPod', outcome: Error | null, times?: number): void;
  injectError(method: Exclude<PodActionMethod, 'getPod'>, outcome: EvictionOutcome, times?: number): void;
  injectError(method: PodActionMethod, outcome: EvictionOutcome | Error | null, times = 1): void {
    const queue = this.injected.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(outcome);
    this.injected.set(method, queue);
  }

  /** Every eviction of this pod is refused by a PodDisruptionBudget until `unblock`. */
  block(namespace: string, name: string, message = PDB_MESSAGE): void {
    this.budgets.set(keyOf(namespace, name), message);
  }

  unblock(namespace: string, name: string): void {
    this.budgets.delete(keyOf(namespace, name));
  }

  callsOf(method: PodActionMethod): PodActionCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  async getPod(namespace: string, name: string): Promise<Pod | null> {
    const injected = this.take('getPod');
    if (injected !== undefined) {
      if (injected instanceof Error) {
        this.calls.push({ method: 'getPod', namespace, name, outcome: { result: 'threw', message: injected.message } });
        throw injected;
      }
      this.calls.push({ method: 'getPod', namespace, name, outcome: { result: 'not-found' } });
      return null;
    }
    const pod = this.view.findPod(namespace, name);
    this.calls.push({ method: 'getPod', namespace, name, outcome: { result: pod === null ? 'not-found' : 'found' } });
    return pod === null ? null : clone(pod);
  }

  async evictPod(pod: Pod, gracePeriodSeconds: number | null): Promise<EvictionOutcome> {
    const { namespace, name } = identity(pod);
    const outcome =
      this.takeOutcome('evictPod') ??
      this.check(pod) ??
      (this.budgets.has(keyOf(namespace, name)) ? { result: 'blocked' as const, message: this.budgets.get(keyOf(namespace, name)) ?? PDB_MESSAGE } : null) ??
      this.accept(pod, gracePeriodSeconds);
    this.calls.push({ method: 'evictPod', namespace, name, uid: pod.metadata.uid, gracePeriodSeconds, outcome });
    return outcome;
  }

  async deletePod(pod: Pod, options: { gracePeriodSeconds: number | null }): Promise<EvictionOutcome> {
    const { namespace, name } = identity(pod);
    const outcome = this.takeOutcome('deletePod') ?? this.check(pod) ?? this.accept(pod, options.gracePeriodSeconds);
    this.calls.push({ method: 'deletePod', namespace, name, uid: pod.metadata.uid, gracePeriodSeconds: options.gracePeriodSeconds, outcome });
    return outcome;
  }

  async addDisruptionTarget(pod: Pod, condition: DisruptionTargetCondition): Promise<EvictionOutcome> {
    const { namespace, name } = identity(pod);
    let outcome = this.takeOutcome('addDisruptionTarget') ?? this.check(pod);
    if (outcome === null) {
      const at = iso(this.nowMs());
      this.view.updatePod(namespace, name, (p) => {
        const conditions: PodCondition[] = (p.status?.conditions ?? []).filter((c) => c.type !== 'DisruptionTarget');
        conditions.push({ type: 'DisruptionTarget', status: 'True', reason: condition.reason, message: condition.message, lastTransitionTime: at });
        p.status = { ...p.status, conditions };
      });
      outcome = { result: 'accepted' };
    }
    this.calls.push({ method: 'addDisruptionTarget', namespace, name, uid: pod.metadata.uid, condition, outcome });
    return outcome;
  }

  private take(method: PodActionMethod): EvictionOutcome | Error | null | undefined {
    const queue = this.injected.get(method);
    return queue === undefined || queue.length === 0 ? undefined : queue.shift();
  }

  private takeOutcome(method: Exclude<PodActionMethod, 'getPod'>): EvictionOutcome | null {
    const injected = this.take(method);
    return injected === undefined || injected === null || injected instanceof Error ? null : injected;
  }

  // The API server's answers for a pod that is gone or is another pod now.
  private check(pod: Pod): EvictionOutcome | null {
    const { namespace, name } = identity(pod);
    const current = this.view.findPod(namespace, name);
    if (current === null) return { result: 'gone', message: `pods "${name}" not found` };
    if (pod.metadata.uid !== undefined && current.metadata.uid !== pod.metadata.uid) {
      return { result: 'gone', message: `Operation cannot be fulfilled on pods "${name}": Precondition failed: UID in precondition: ${pod.metadata.uid}, UID in object meta: ${current.metadata.uid ?? ''}` };
    }
    return null;
  }

  private accept(pod: Pod, gracePeriodSeconds: number | null): EvictionOutcome {
    const { namespace, name } = identity(pod);
    const mode = this.options.onAccepted ?? 'terminate';
    if (mode === 'remove') this.view.removePod(namespace, name);
    if (mode === 'terminate') {
      const current = this.view.findPod(namespace, name);
      const graceSeconds = gracePeriodSeconds ?? current?.spec.terminationGracePeriodSeconds ?? 30;
      if (current !== null && (current.metadata.deletionTimestamp === undefined || current.metadata.deletionTimestamp === null)) {
        this.view.updatePod(namespace, name, (p) => {
          p.metadata.deletionTimestamp = iso(this.nowMs() + graceSeconds * 1000);
        });
      }
    }
    return { result: 'accepted' };
  }

  private nowMs(): number {
    return this.options.clock?.nowMs() ?? Date.UTC(2026, 0, 1);
  }
}

function identity(pod: Pod): { namespace: string; name: string } {
  return { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
}

/** One Event as recorded (or, in `failures`, as attempted when an error was injected). */
export interface RecordedEvent extends AgentEvent {
  readonly object: 'pod' | 'node' | 'other';
  readonly pod: Pod | null;
  /** For an Event on another object (an owner). */
  readonly involved?: ObjectRef;
}

/** EventRecorder that keeps the events; an injected error turns a call into a (logged, never thrown) failure. */
export class FakeEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];
  readonly failures: (RecordedEvent & { readonly error: string })[] = [];
  private readonly injected = new Map<'podEvent' | 'nodeEvent' | 'objectEvent', Error[]>();

  /** The next `times` calls of `method` fail with `outcome` (recorded in `failures`, never thrown). */
  injectError(method: 'podEvent' | 'nodeEvent' | 'objectEvent', outcome: Error = new Error('injected event failure'), times = 1): void {
    const queue = this.injected.get(method) ?? [];
    for (let i = 0; i < times; i++) queue.push(outcome);
    this.injected.set(method, queue);
  }

  async podEvent(pod: Pod, event: AgentEvent): Promise<void> {
    this.record('podEvent', { ...clone(event), object: 'pod', pod: clone(pod) });
  }

  async nodeEvent(event: AgentEvent): Promise<void> {
    this.record('nodeEvent', { ...clone(event), object: 'node', pod: null });
  }

  /** Whether close() was called (the agent stopped its retries). */
  closed = false;

  close(): void {
    this.closed = true;
  }

  async objectEvent(object: ObjectRef, event: AgentEvent): Promise<void> {
    this.record('objectEvent', { ...clone(event), object: 'other', pod: null, involved: { ...object } });
  }

  /** The reasons recorded, in order (handy for `toEqual`). */
  reasons(): string[] {
    return this.events.map((e) => e.reason);
  }

  private record(method: 'podEvent' | 'nodeEvent' | 'objectEvent', event: RecordedEvent): void {
    const error = this.injected.get(method)?.shift();
    if (error !== undefined) this.failures.push({ ...event, error: error.message });
    else this.events.push(event);
  }
}

export type NodeReporterCall =
  | { readonly method: 'setConditions'; readonly conditions: readonly AgentNodeCondition[]; readonly result: boolean }
  | { readonly method: 'setTaint'; readonly taint: { key: string; value: string; effect: 'NoSchedule' }; readonly present: boolean; readonly result: boolean };

/**
 * NodeReporter that keeps the conditions and the taint list. Linked to a FakeClusterView, both
 * land on the view's node (as the API server's watch would deliver them).
 */
export class FakeNodeReporter implements NodeReporter {
  readonly calls: NodeReporterCall[] = [];
  readonly conditions = new Map<string, AgentNodeCondition>();
  taints: Taint[] = [];
  private readonly injected = new Map<'setConditions' | 'setTaint', number>();

  constructor(private readonly view: FakeClusterView | null = null) {
    this.taints = clone(view?.node()?.spec?.taints ?? []);
  }

  /** The next `times` calls of `method` answer `outcome` (false: the API call failed) and change nothing. */
  injectError(method: 'setConditions' | 'setTaint', outcome: false = false, times = 1): void {
    void outcome;
    this.injected.set(method, (this.injected.get(method) ?? 0) + times);
  }

  async setConditions(conditions: readonly AgentNodeCondition[]): Promise<boolean> {
    const result = !this.takeFailure('setConditions');
    if (result) for (const condition of conditions) this.conditions.set(condition.type, clone(condition));
    const node = this.view?.node() ?? null;
    if (result && node !== null && this.view !== null) {
      // Merged by type, as the strategic merge patch does; the watch then delivers the new Node.
      const written = new Set(conditions.map((c) => c.type));
      const kept = (node.status?.conditions ?? []).filter((c) => !written.has(c.type));
      this.view.setNode({ ...node, status: { ...node.status, conditions: [...kept, ...clone(conditions)] } });
    }
    this.calls.push({ method: 'setConditions', conditions: clone(conditions), result });
    return result;
  }

  async setTaint(taint: { key: string; value: string; effect: 'NoSchedule' }, present: boolean): Promise<boolean> {
    const result = !this.takeFailure('setTaint');
    if (result) {
      const others = this.taints.filter((t) => !(t.key === taint.key && t.effect === taint.effect));
      const next = present ? [...others, { key: taint.key, value: taint.value, effect: taint.effect }] : others;
      const changed = JSON.stringify(next) !== JSON.stringify(this.taints);
      this.taints = next;
      const node = this.view?.node() ?? null;
      if (changed && node !== null && this.view !== null) this.view.setNode({ ...node, spec: { ...node.spec, taints: clone(next) } });
    }
    this.calls.push({ method: 'setTaint', taint: { ...taint }, present, result });
    return result;
  }

  hasTaint(key: string): boolean {
    return this.taints.some((t) => t.key === key);
  }

  private takeFailure(method: 'setConditions' | 'setTaint'): boolean {
    const remaining = this.injected.get(method) ?? 0;
    if (remaining <= 0) return false;
    this.injected.set(method, remaining - 1);
    return true;
  }
}

/** The four fakes over one shared state. */
export interface FakeCluster {
  readonly view: FakeClusterView;
  readonly actions: FakePodActions;
  readonly events: FakeEventRecorder;
  readonly reporter: FakeNodeReporter;
}

export function fakeCluster(init: { pods?: readonly Pod[]; node?: Node | null; synced?: boolean } & FakePodActionsOptions = {}): FakeCluster {
  const view = new FakeClusterView(init);
  return { view, actions: new FakePodActions(view, init), events: new FakeEventRecorder(), reporter: new FakeNodeReporter(view) };
}
