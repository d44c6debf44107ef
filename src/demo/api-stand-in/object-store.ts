// The store: every object under its resource and key (`namespace/name`, or the name for a node),
// the cluster-wide resourceVersion every write advances, and the history of changes to pods and
// nodes that watches resume from, compacted to its limit so that older resourceVersions expire.

import { clone, deepEqual, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import type { Resource, WatchedResource } from './resource.js';

export interface Change {
  readonly rv: number;
  readonly resource: WatchedResource;
  readonly kind: 'put' | 'delete';
  /** The state before, or null for a creation. */
  readonly previous: JsonObject | null;
  /** The state after; for a deletion, the final state. */
  readonly object: JsonObject;
}

export class ObjectStore {
  private rv = 1000;
  private compactedRv = 1000;
  private history: Change[] = [];
  private readonly objects: Record<Resource, Map<string, JsonObject>> = { pods: new Map(), nodes: new Map(), events: new Map() };
  private readonly listeners: ((change: Change) => void)[] = [];

  constructor(private readonly historyLimit: number) {}

  /** The current (latest) resourceVersion. */
  get resourceVersion(): number {
    return this.rv;
  }

  /** Resuming from a resourceVersion older than this one is answered 410 Expired. */
  get compactedResourceVersion(): number {
    return this.compactedRv;
  }

  /** The stored object itself, not a copy: callers that hand it out clone it. */
  find(resource: Resource, key: string): JsonObject | undefined {
    return this.objects[resource].get(key);
  }

  has(resource: Resource, key: string): boolean {
    return this.objects[resource].has(key);
  }

  /** The stored objects, in creation order. */
  values(resource: Resource): JsonObject[] {
    return [...this.objects[resource].values()];
  }

  /** The changes to `resource` after `rv`, oldest first. */
  changesSince(resource: WatchedResource, rv: number): Change[] {
    return this.history.filter((change) => change.rv > rv && change.resource === resource);
  }

  /** Called with every change to pods and nodes, after it is stored. */
  subscribe(listener: (change: Change) => void): void {
    this.listeners.push(listener);
  }

  /** Stores `next` (or deletes, when null) under a new resourceVersion and tells the watches. */
  commit(resource: Resource, key: string, next: JsonObject | null): JsonObject {
    const previous = this.objects[resource].get(key) ?? null;
    this.rv++;
    let object: JsonObject;
    if (next === null) {
      object = clone(previous ?? {});
      this.objects[resource].delete(key);
    } else {
      object = next;
      this.objects[resource].set(key, object);
    }
    metaOf(object).resourceVersion = String(this.rv);
    if (resource === 'events') return clone(object);
    const change: Change = { rv: this.rv, resource, kind: next === null ? 'delete' : 'put', previous: previous === null ? null : clone(previous), object: clone(object) };
    this.history.push(change);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift();
      if (dropped !== undefined) this.compactedRv = dropped.rv;
    }
    for (const listener of this.listeners) listener(change);
    return clone(object);
  }

  /** Commits `next` unless it equals `current`: a write that changes nothing keeps the resourceVersion. */
  commitIfChanged(resource: Resource, key: string, current: JsonObject, next: JsonObject): JsonObject {
    if (deepEqual(next, current)) return clone(current);
    return this.commit(resource, key, next);
  }

  /** As if the rest of the cluster had moved on and etcd had been compacted since. */
  compact(): void {
    this.rv++;
    this.compactedRv = this.rv;
    this.history = [];
  }
}
