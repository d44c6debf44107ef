// A hand-written stand-in for the informer caches and the API around one TaintHandler: the test
// changes the node and pods as the API server would, each change is fed to the handler as an
// informer event and processed, and every report and deletion is recorded against the fake clock.

import { podKey, type Node, type Pod, type Taint, type Toleration } from '../../src/api/pod.js';
import type { TaintEvent } from '../../src/taint/taint-event.js';
import { TaintHandler, type TaintHandlerActions } from '../../src/taint/taint-handler.js';
import type { TaintOptions } from '../../src/taint/taint-options.js';
import { FakeClock } from './fake-clock.js';

export const T0_MS = Date.UTC(2026, 0, 1);
export const NODE_NAME = 'node-a';
export const SECOND_MS = 1000;
export const MINUTE_MS = 60 * SECOND_MS;
export const DAY_MS = 24 * 60 * MINUTE_MS;

export function noExecute(key: string, value?: string, timeAdded?: string): Taint {
  return { key, effect: 'NoExecute', ...(value === undefined ? {} : { value }), ...(timeAdded === undefined ? {} : { timeAdded }) };
}

export function noSchedule(key: string, value?: string): Taint {
  return { key, effect: 'NoSchedule', ...(value === undefined ? {} : { value }) };
}

/** `{key, operator: Exists, effect: NoExecute, tolerationSeconds}`; seconds null = forever. */
export function tolerate(key: string, seconds: number | null = null, extra: Partial<Toleration> = {}): Toleration {
  return { key, operator: 'Exists', effect: 'NoExecute', ...(seconds === null ? {} : { tolerationSeconds: seconds }), ...extra };
}

export function makeNode(taints: Taint[], extra: { labels?: Record<string, string>; name?: string; ready?: string } = {}): Node {
  return {
    metadata: { name: extra.name ?? NODE_NAME, ...(extra.labels === undefined ? {} : { labels: extra.labels }) },
    spec: { taints },
    status: { conditions: [{ type: 'Ready', status: extra.ready ?? 'True' }] },
  };
}

export function makePod(name: string, tolerations: Toleration[] = [], extra: { namespace?: string; nodeName?: string; uid?: string; deletionTimestamp?: string; labels?: Record<string, string>; phase?: string } = {}): Pod {
  return {
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      uid: extra.uid ?? `uid-${name}`,
      ...(extra.deletionTimestamp === undefined ? {} : { deletionTimestamp: extra.deletionTimestamp }),
      ...(extra.labels === undefined ? {} : { labels: extra.labels }),
    },
    spec: { nodeName: extra.nodeName ?? NODE_NAME, containers: [{ name: 'app' }], tolerations },
    status: { phase: extra.phase ?? 'Running' },
  };
}

/** One line of the replay output, with times relative to T0 in ms. */
export interface TimelineEntry {
  pod: string;
  action: TaintEvent['type'];
  atMs: number;
  fireAtMs?: number;
}

export interface DeletionCall {
  podKey: string;
  pod: Pod | null;
  fireAtMs: number;
  atMs: number;
}

export class FakeTaintCluster {
  readonly clock = new FakeClock(T0_MS);
  readonly events: TaintEvent[] = [];
  readonly deletions: DeletionCall[] = [];
  readonly failures: { podKey: string; error: unknown }[] = [];
  readonly handler: TaintHandler;
  node: Node | null = null;
  readonly pods = new Map<string, Pod>();
  getNodeCalls = 0;
  /** Set to make deletePod slow or failing. */
  deleteImpl: ((call: DeletionCall) => Promise<void> | void) | null = null;

  constructor(options: Partial<TaintOptions> = {}, hooks: { listPods?: (cluster: FakeTaintCluster) => void } = {}) {
    const actions: TaintHandlerActions = {
      deletePod: (key, pod, fireAtMs) => {
        const call = { podKey: key, pod, fireAtMs, atMs: this.clock.nowMs() };
        this.deletions.push(call);
        return this.deleteImpl?.(call);
      },
      emit: (event) => this.events.push(event),
      deleteFailed: (key, error) => this.failures.push({ podKey: key, error }),
    };
    this.handler = new TaintHandler({
      nodeName: NODE_NAME,
      clock: this.clock,
      options,
      actions,
      listPods: () => {
        hooks.listPods?.(this);
        return [...this.pods.values()].filter((pod) => pod.spec.nodeName === NODE_NAME);
      },
      getPod: (namespace, name) => this.pods.get(`${namespace}/${name}`) ?? null,
      getNode: () => {
        this.getNodeCalls++;
        return this.node;
      },
    });
  }

  /** Changes the node in the cache and delivers the informer event (add, update or delete). */
  setNode(node: Node | null, process = true): boolean {
    const old = this.node;
    this.node = node;
    const queued = this.handler.nodeUpdated(old, node);
    if (process) this.handler.processPending();
    return queued;
  }

  setTaints(taints: Taint[]): boolean {
    return this.setNode(makeNode(taints));
  }

  /** Adds or updates a pod in the cache and delivers the informer event. */
  setPod(pod: Pod, process = true): boolean {
    const key = podKey(pod);
    const old = this.pods.get(key) ?? null;
    this.pods.set(key, pod);
    const queued = this.handler.podUpdated(old, pod);
    if (process) this.handler.processPending();
    return queued;
  }

  removePod(key: string, process = true): boolean {
    const old = this.pods.get(key) ?? null;
    this.pods.delete(key);
    const queued = this.handler.podUpdated(old, null);
    if (process) this.handler.processPending();
    return queued;
  }

  /** Moves the clock forward by `ms` (firing due timers), relative to now. */
  step(ms: number): void {
    this.clock.step(ms);
  }

  /** Moves the clock to `ms` after T0. */
  stepTo(msAfterT0: number): void {
    this.clock.step(T0_MS + msAfterT0 - this.clock.nowMs());
  }

  /** The reports as replay lines, times relative to T0. */
  timeline(): TimelineEntry[] {
    return this.events.map((event) => ({
      pod: event.podKey,
      action: event.type,
      atMs: event.atMs - T0_MS,
      ...(event.type === 'cancelled' ? {} : { fireAtMs: event.fireAtMs - T0_MS }),
    }));
  }

  /** Deleted pod keys with the time (relative to T0) the deletion started. */
  deleted(): { pod: string; atMs: number }[] {
    return this.deletions.map((call) => ({ pod: call.podKey, atMs: call.atMs - T0_MS }));
  }
}
