// The stand-in's object model: JSON helpers, RFC 3339 times, the resources it serves, object
// metadata, the API's Status errors, and the versioned object store every handler reads and writes.

import { randomUUID } from 'node:crypto';

// The JSON vocabulary of the stand-in: objects travel and are stored as plain parsed JSON, so
// copying is a JSON round trip and equality ignores fields that are present but undefined.

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (isObject(a) && isObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

// Timestamps as the API server writes them: RFC 3339 in UTC, to the second.

export function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

// The resources the stand-in serves and the kinds it names them by; pods and nodes can be
// watched, Events only listed.

export type Resource = 'pods' | 'nodes' | 'events';
export type WatchedResource = 'pods' | 'nodes';

export const KINDS: Readonly<Record<Resource, string>> = { pods: 'Pod', nodes: 'Node', events: 'Event' };
export const LIST_KINDS: Readonly<Record<Resource, string>> = { pods: 'PodList', nodes: 'NodeList', events: 'EventList' };

// Reading the parts of a stored object that every handler needs (metadata, labels, a pod's
// phase) without trusting its shape, and naming an object from its generateName.

export function metaOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

export function labelsOf(obj: JsonObject): JsonObject {
  const labels = metaOf(obj).labels;
  return isObject(labels) ? labels : {};
}

export function phaseOf(pod: JsonObject): string {
  return str(isObject(pod.status) ? pod.status.phase : undefined);
}

/** Gives an unnamed object a name from its generateName, with a random suffix as the API server does. */
export function applyGenerateName(meta: JsonObject): void {
  if (str(meta.name) === '' && str(meta.generateName) !== '') meta.name = `${str(meta.generateName)}${randomUUID().slice(0, 5)}`;
}

// Status bodies and errors, as the API server writes them: every refusal the stand-in makes is
// a StatusError, answered with the code, reason, message and details a real client would see.

/** An error answered with a Status body. */
export class StatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string | undefined,
    message: string,
    readonly details?: JsonObject,
  ) {
    super(message);
  }

  body(): JsonObject {
    return {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      ...(this.details === undefined ? {} : { details: this.details }),
      code: this.code,
    };
  }
}

export const notFound = (resource: string, name: string): StatusError => new StatusError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
export const alreadyExists = (resource: string, name: string): StatusError => new StatusError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
export const conflict = (resource: string, name: string, why: string): StatusError =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${why}`, { name, kind: resource });
export const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** A failed UID precondition, in the storage layer's words (as the API server passes them on). */
export function uidPreconditionFailed(resource: 'pods' | 'nodes', key: string, name: string, wanted: string, actual: string): StatusError {
  const storageKey = `/registry/${resource === 'nodes' ? 'minions' : 'pods'}/${key}`;
  return conflict(resource, name, `StorageError: invalid object, Code: 4, Key: ${storageKey}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${actual}`);
}
export const badRequest = (message: string): StatusError => new StatusError(400, 'BadRequest', message);
export const namespaceMismatch = (): StatusError => badRequest('the namespace of the provided object does not match the namespace sent on the request');
/** A request the API server understood but could not apply (a failed patch). */
export const rejected = (why: string): StatusError => new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: ${why}`);

export interface FieldError {
  readonly field: string;
  readonly type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported';
  readonly detail: string;
}

export function invalid(kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const texts = errors.map((e) => `${e.field}: ${e.detail}`);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
    name,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}

// The store: every object under its resource and key (`namespace/name`, or the name for a node),
// the cluster-wide resourceVersion every write advances, and the history of changes to pods and
// nodes that watches resume from, compacted to its limit so that older resourceVersions expire.

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
