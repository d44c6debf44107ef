// An in-process stand-in for the few Kubernetes API endpoints the agent uses, for the `demo`
// command and for fast tests. It answers over plain HTTP on 127.0.0.1 with the real API's JSON
// shapes, status codes and Status bodies, so the same adapter code (src/kube) runs against it and
// against a real kube-apiserver: pods and nodes with list, get and watch (field and label
// selectors, resourceVersion semantics, 410 Expired for a compacted history), strategic merge,
// JSON merge and JSON patches with UID and resourceVersion preconditions, graceful DELETE, the
// policy/v1 Eviction subresource checked against PodDisruptionBudgets, and core/v1 Events with the
// API server's validation. It also lets a test break things on purpose: injected faults and
// delays, closed or expired watches, a server that goes down and comes back.

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../api/clock.js';
import type { Node, Pod } from '../api/pod.js';
import { compareQuantity, parseQuantity, type Quantity } from '../api/quantity.js';

type JsonObject = Record<string, unknown>;

export interface ApiStandInOptions {
  /** The port to listen on (default: a free one). */
  readonly port?: number;
  /** Drives timestamps, watch timeouts and injected delays (default: the system clock). */
  readonly clock?: Clock;
  /** Watch events kept for resuming watches; older resourceVersions get 410 Expired (default 1000). */
  readonly historyLimit?: number;
}

/** A fault to inject: requests matching `method` and `pathPattern` wait `delayMs`, then get `status`. */
export interface FaultSpec {
  /** HTTP method, any case (default: any). */
  readonly method?: string;
  /** Tested against the path with its query string, `/api/v1/pods?fieldSelector=...&watch=true` (default: any). */
  readonly pathPattern?: RegExp | string;
  /** The status to answer with, with a matching Status body; absent: only the delay, then the normal answer. */
  readonly status?: 500 | 409 | 429 | 503 | number;
  /** How many requests it applies to (default 1). */
  readonly count?: number;
  /** Wait this long first (on the stand-in's clock); a client that gives up first gets nothing. */
  readonly delayMs?: number;
}

/** One request as the stand-in saw it, for assertions. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** The query string without `?`. */
  readonly query: string;
  /** The answer's status; 0 while unanswered or when the client gave up first. */
  status: number;
  readonly contentType: string;
  readonly userAgent: string;
  /** The parsed JSON body, if any. */
  body?: unknown;
}

/** A PodDisruptionBudget as the stand-in stores it (policy/v1, integer or percentage budgets). */
export interface StandInPdb {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
    readonly minAvailable?: number | string;
    readonly maxUnavailable?: number | string;
  };
}

export interface ApiStandIn {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  readonly port: number;
  injectFault(fault: FaultSpec): void;
  clearFaults(): void;
  /** Ends every open watch cleanly (clients resume from their resourceVersion). */
  closeWatches(): void;
  /** Compacts the history and closes the watches: every resume gets ERROR 410 Expired and must relist. */
  expireWatches(): void;
  /** Sends a BOOKMARK at the current resourceVersion to watches that allow bookmarks. */
  sendBookmarks(): void;
  /** Watches currently open. */
  openWatches(): number;
  /** The API server goes down: connections are cut and new ones refused. */
  stop(): Promise<void>;
  /** Back up on the same port, with the same objects and history. */
  restart(): Promise<void>;
  /** The current (latest) resourceVersion. */
  resourceVersion(): number;

  // The test's (or the demo's) side: what the scheduler and the kubelet would do.
  /** Creates a pod as if scheduled and started: without a status it is Running and Ready. */
  createPod(pod: Pod): Pod;
  /** Changes a pod (labels, phase, conditions...) as its owner would. */
  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod;
  /** Removes a pod at once, as the kubelet does when a terminating pod has stopped. */
  deletePodNow(namespace: string, name: string): boolean;
  pod(namespace: string, name: string): Pod | null;
  pods(): Pod[];
  /** Creates or replaces a node (keeping its UID when it exists). */
  setNode(node: Node): Node;
  deleteNode(name: string): boolean;
  node(name: string): Node | null;
  addPdb(pdb: StandInPdb): void;
  /** The core/v1 Events created so far, in order. */
  events(): JsonObject[];
  /** Every request so far, in arrival order. */
  requests(): RecordedRequest[];
  clearRequests(): void;
}

/** Starts a stand-in on 127.0.0.1. */
export async function startApiStandIn(options: ApiStandInOptions = {}): Promise<ApiStandIn> {
  const standIn = new StandIn(options.clock ?? systemClock, options.historyLimit ?? 1000);
  await standIn.listen(options.port ?? 0);
  return standIn;
}

/** A kubeconfig for the stand-in, with token auth, so `connect({ kubeconfig })` uses it as it would a real cluster. */
export function kubeconfigFor(standIn: Pick<ApiStandIn, 'url'>, token = 'stand-in-token'): string {
  // The client library refuses plain http unless TLS verification is explicitly off.
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '- name: stand-in',
    '  cluster:',
    `    server: ${standIn.url}`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: stand-in',
    '  user:',
    `    token: ${token}`,
    'contexts:',
    '- name: stand-in',
    '  context:',
    '    cluster: stand-in',
    '    user: stand-in',
    'current-context: stand-in',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Status bodies and errors, as the API server writes them.

/** An error answered with a Status body. */
class StatusError extends Error {
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

const notFound = (resource: string, name: string): StatusError => new StatusError(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource });
const alreadyExists = (resource: string, name: string): StatusError => new StatusError(409, 'AlreadyExists', `${resource} "${name}" already exists`, { name, kind: resource });
const conflict = (resource: string, name: string, why: string): StatusError =>
  new StatusError(409, 'Conflict', `Operation cannot be fulfilled on ${resource} "${name}": ${why}`, { name, kind: resource });
const OBJECT_MODIFIED = 'the object has been modified; please apply your changes to the latest version and try again';

/** A failed UID precondition, in the storage layer's words (as the API server passes them on). */
function uidPreconditionFailed(resource: 'pods' | 'nodes', key: string, name: string, wanted: string, actual: string): StatusError {
  const storageKey = `/registry/${resource === 'nodes' ? 'minions' : 'pods'}/${key}`;
  return conflict(resource, name, `StorageError: invalid object, Code: 4, Key: ${storageKey}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: ${wanted}, UID in object meta: ${actual}`);
}
const badRequest = (message: string): StatusError => new StatusError(400, 'BadRequest', message);

interface FieldError {
  readonly field: string;
  readonly type: 'FieldValueRequired' | 'FieldValueInvalid' | 'FieldValueNotSupported';
  readonly detail: string;
}

function invalid(kind: string, name: string, errors: readonly FieldError[]): StatusError {
  const texts = errors.map((e) => `${e.field}: ${e.detail}`);
  const summary = texts.length === 1 ? texts[0] : `[${texts.join(', ')}]`;
  return new StatusError(422, 'Invalid', `${kind} "${name}" is invalid: ${summary}`, {
    name,
    kind,
    causes: errors.map((e) => ({ reason: e.type, message: e.detail, field: e.field })),
  });
}

function faultError(status: number, path: string): StatusError {
  switch (status) {
    case 409:
      return conflict(resourceOfPath(path), nameOfPath(path), OBJECT_MODIFIED);
    case 429:
      return new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
    case 503:
      return new StatusError(503, 'ServiceUnavailable', 'The server is currently unable to handle the request');
    case 500:
      return new StatusError(500, 'InternalError', 'Internal error occurred: injected fault');
    default:
      return new StatusError(status, undefined, `injected fault ${status}`);
  }
}

function resourceOfPath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  const index = parts.findIndex((p) => p === 'pods' || p === 'nodes' || p === 'events');
  return index === -1 ? 'resource' : (parts[index] ?? 'resource');
}

function nameOfPath(path: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  const index = parts.findIndex((p) => p === 'pods' || p === 'nodes' || p === 'events');
  return index === -1 ? '' : (parts[index + 1] ?? '');
}

// ---------------------------------------------------------------------------------------------
// JSON utilities.

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  if (isObject(a) && isObject(b)) {
    const keysA = Object.keys(a).filter((k) => a[k] !== undefined);
    const keysB = Object.keys(b).filter((k) => b[k] !== undefined);
    return keysA.length === keysB.length && keysA.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

function metaOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function rfc3339(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${err instanceof Error ? err.message : String(err)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Patches: strategic merge (merge keys of the fields the agent touches), RFC 7386 merge patch and
// RFC 6902 JSON patch.

/** Lists the strategic merge patch merges by key, by field path (list indices omitted). */
const MERGE_KEYS: Readonly<Record<string, string>> = {
  'status.conditions': 'type',
  'status.addresses': 'type',
  'metadata.ownerReferences': 'uid',
  'spec.containers': 'name',
  'spec.initContainers': 'name',
  'spec.ephemeralContainers': 'name',
  'spec.volumes': 'name',
  'spec.containers.env': 'name',
  'spec.containers.ports': 'containerPort',
  'spec.containers.volumeMounts': 'mountPath',
};

const DELETE_MARK = Symbol('delete');

function strategicMerge(target: unknown, patch: unknown, path: string): unknown {
  if (!isObject(patch)) return clone(patch);
  if (patch.$patch === 'delete') return DELETE_MARK;
  if (patch.$patch === 'replace') {
    const copy = { ...patch };
    delete copy.$patch;
    return clone(copy);
  }
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (key === '$patch' || key === '$retainKeys' || key.startsWith('$setElementOrder/') || key.startsWith('$deleteFromPrimitiveList/')) continue;
    const childPath = path === '' ? key : `${path}.${key}`;
    const mergeKey = MERGE_KEYS[childPath];
    if (value === null) {
      delete out[key];
    } else if (Array.isArray(value) && mergeKey !== undefined) {
      out[key] = mergeList(out[key], value, mergeKey, childPath);
    } else if (isObject(value)) {
      const merged = strategicMerge(out[key], value, childPath);
      if (merged === DELETE_MARK) delete out[key];
      else out[key] = merged;
    } else {
      out[key] = clone(value);
    }
  }
  return out;
}

function mergeList(current: unknown, items: readonly unknown[], mergeKey: string, path: string): unknown[] {
  const list: unknown[] = Array.isArray(current) ? clone(current) : [];
  for (const item of items) {
    if (!isObject(item)) continue;
    const index = list.findIndex((e) => isObject(e) && deepEqual(e[mergeKey], item[mergeKey]));
    if (item.$patch === 'delete') {
      if (index !== -1) list.splice(index, 1);
      continue;
    }
    const merged = strategicMerge(index === -1 ? {} : list[index], item, path);
    if (index === -1) list.push(merged);
    else list[index] = merged;
  }
  return list;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

function jsonPatch(document: unknown, operations: unknown): unknown {
  if (!Array.isArray(operations)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  let doc = clone(document);
  for (const raw of operations) {
    if (!isObject(raw)) throw badRequest('invalid JSON patch operation');
    const op = str(raw.op);
    const path = str(raw.path);
    switch (op) {
      case 'add':
        doc = pointerSet(doc, path, clone(raw.value), 'add');
        break;
      case 'replace':
        pointerGet(doc, path);
        doc = pointerSet(doc, path, clone(raw.value), 'replace');
        break;
      case 'remove':
        doc = pointerRemove(doc, path);
        break;
      case 'test':
        if (!deepEqual(pointerGet(doc, path), raw.value)) throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: testing value ${path} failed: test failed`);
        break;
      case 'copy':
        doc = pointerSet(doc, path, clone(pointerGet(doc, str(raw.from))), 'add');
        break;
      case 'move': {
        const value = pointerGet(doc, str(raw.from));
        doc = pointerSet(pointerRemove(doc, str(raw.from)), path, value, 'add');
        break;
      }
      default:
        throw badRequest(`unexpected JSON patch operation "${op}"`);
    }
  }
  return doc;
}

function pointerTokens(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: invalid JSON pointer ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(path: string): StatusError {
  return new StatusError(422, 'Invalid', `the server rejected our request due to an error in our request: path ${path} does not exist`);
}

function pointerGet(doc: unknown, path: string): unknown {
  let node: unknown = doc;
  for (const token of pointerTokens(path)) {
    if (Array.isArray(node)) node = node[Number(token)];
    else if (isObject(node)) node = node[token];
    else throw missing(path);
    if (node === undefined) throw missing(path);
  }
  return node;
}

function pointerSet(doc: unknown, path: string, value: unknown, mode: 'add' | 'replace'): unknown {
  const tokens = pointerTokens(path);
  if (tokens.length === 0) return value;
  const last = tokens.pop() as string;
  const parent = pointerGet(doc, tokens.length === 0 ? '' : `/${tokens.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);
  if (Array.isArray(parent)) {
    const index = last === '-' ? parent.length : Number(last);
    if (!Number.isInteger(index) || index < 0 || index > parent.length) throw missing(path);
    if (mode === 'add') parent.splice(index, 0, value);
    else parent[index] = value;
  } else if (isObject(parent)) {
    parent[last] = value;
  } else {
    throw missing(path);
  }
  return doc;
}

function pointerRemove(doc: unknown, path: string): unknown {
  const tokens = pointerTokens(path);
  const last = tokens.pop();
  if (last === undefined) return undefined;
  const parent = pointerGet(doc, tokens.length === 0 ? '' : `/${tokens.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);
  if (Array.isArray(parent)) {
    const index = Number(last);
    if (!Number.isInteger(index) || index < 0 || index >= parent.length) throw missing(path);
    parent.splice(index, 1);
  } else if (isObject(parent) && last in parent) {
    delete parent[last];
  } else {
    throw missing(path);
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Selectors.

type Matcher = (obj: JsonObject) => boolean;

const SELECTABLE_FIELDS: Readonly<Record<Resource, readonly string[]>> = {
  pods: ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.phase', 'status.podIP', 'status.nominatedNodeName'],
  nodes: ['metadata.name', 'spec.unschedulable'],
  events: ['metadata.name', 'metadata.namespace', 'involvedObject.kind', 'involvedObject.name', 'involvedObject.namespace', 'involvedObject.uid', 'reason', 'type', 'source'],
};

function fieldValue(obj: JsonObject, field: string): string {
  let node: unknown = obj;
  for (const part of field.split('.')) node = isObject(node) ? node[part] : undefined;
  if (typeof node === 'boolean' || typeof node === 'number') return String(node);
  return str(node);
}

function fieldMatcher(resource: Resource, selector: string): Matcher {
  if (selector.trim() === '') return () => true;
  const terms = selector.split(',').map((term) => {
    const match = /^\s*([^!=\s]+)\s*(==|=|!=)\s*(.*?)\s*$/.exec(term);
    if (match === null) throw badRequest(`invalid field selector: ${term}`);
    const [, field = '', op = '', value = ''] = match;
    if (!SELECTABLE_FIELDS[resource].includes(field)) throw badRequest(`field label not supported: ${field}`);
    return { field, negate: op === '!=', value };
  });
  return (obj) => terms.every((t) => (fieldValue(obj, t.field) === t.value) !== t.negate);
}

function labelMatcher(selector: string): Matcher {
  if (selector.trim() === '') return () => true;
  if (selector.includes('(')) throw badRequest('set-based label selectors are not supported by this stand-in');
  const terms = selector.split(',').map((term) => {
    const t = term.trim();
    if (t.startsWith('!')) return (labels: JsonObject) => !(t.slice(1) in labels);
    const match = /^([^!=]+)(==|=|!=)(.*)$/.exec(t);
    if (match === null) return (labels: JsonObject) => t in labels;
    const [, key = '', op = '', value = ''] = match;
    return (labels: JsonObject) => (str(labels[key]) === value && key in labels) !== (op === '!=');
  });
  return (obj) => {
    const labels = isObject(metaOf(obj).labels) ? (metaOf(obj).labels as JsonObject) : {};
    return terms.every((term) => term(labels));
  };
}

// ---------------------------------------------------------------------------------------------
// The store.

type Resource = 'pods' | 'nodes' | 'events';
type WatchedResource = 'pods' | 'nodes';

interface Change {
  readonly rv: number;
  readonly resource: WatchedResource;
  readonly kind: 'put' | 'delete';
  /** The state before, or null for a creation. */
  readonly previous: JsonObject | null;
  /** The state after; for a deletion, the final state. */
  readonly object: JsonObject;
}

interface Watcher {
  readonly resource: WatchedResource;
  readonly matches: Matcher;
  readonly response: ServerResponse;
  readonly bookmarks: boolean;
  cancelTimeout: () => void;
}

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly handle: (ctx: RequestContext, params: string[]) => void;
}

interface RequestContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly entry: RecordedRequest;
  readonly url: URL;
  readonly body: string;
}

const KINDS: Readonly<Record<Resource, string>> = { pods: 'Pod', nodes: 'Node', events: 'Event' };
const LIST_KINDS: Readonly<Record<Resource, string>> = { pods: 'PodList', nodes: 'NodeList', events: 'EventList' };

class StandIn implements ApiStandIn {
  private server: Server | null = null;
  private portNumber = 0;
  private rv = 1000;
  private compactedRv = 1000;
  private history: Change[] = [];
  private readonly store: Record<Resource, Map<string, JsonObject>> = { pods: new Map(), nodes: new Map(), events: new Map() };
  private readonly pdbs = new Map<string, StandInPdb>();
  private readonly eventOrder: string[] = [];
  private log: RecordedRequest[] = [];
  private faults: { spec: FaultSpec; remaining: number }[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly delayed = new Set<() => void>();
  private readonly routes: readonly Route[];

  constructor(
    private readonly clock: Clock,
    private readonly historyLimit: number,
  ) {
    const ns = '([^/]+)';
    this.routes = [
      { method: 'GET', pattern: /^\/api\/v1\/pods$/, handle: (c) => this.listOrWatch(c, 'pods', null) },
      { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => this.listOrWatch(c, 'pods', n ?? null) },
      { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => this.createPodRequest(c, n ?? '') },
      { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}(?:/status)?$`), handle: (c, [n, name]) => this.send(c, 200, this.get('pods', `${n}/${name}`, name ?? '')) },
      { method: 'DELETE', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => this.deletePodRequest(c, n ?? '', name ?? '') },
      { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => this.patchRequest(c, 'pods', `${n}/${name}`, name ?? '', 'main') },
      { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/status$`), handle: (c, [n, name]) => this.patchRequest(c, 'pods', `${n}/${name}`, name ?? '', 'status') },
      { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/eviction$`), handle: (c, [n, name]) => this.evictRequest(c, n ?? '', name ?? '') },
      { method: 'GET', pattern: /^\/api\/v1\/nodes$/, handle: (c) => this.listOrWatch(c, 'nodes', null) },
      { method: 'GET', pattern: new RegExp(`^/api/v1/nodes/${ns}(?:/status)?$`), handle: (c, [name]) => this.send(c, 200, this.get('nodes', name ?? '', name ?? '')) },
      { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}$`), handle: (c, [name]) => this.patchRequest(c, 'nodes', name ?? '', name ?? '', 'main') },
      { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}/status$`), handle: (c, [name]) => this.patchRequest(c, 'nodes', name ?? '', name ?? '', 'status') },
      { method: 'GET', pattern: /^\/api\/v1\/events$/, handle: (c) => this.listOrWatch(c, 'events', null) },
      { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/events$`), handle: (c, [n]) => this.listOrWatch(c, 'events', n ?? null) },
      { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/events$`), handle: (c, [n]) => this.createEventRequest(c, n ?? '') },
    ];
  }

  get url(): string {
    return `http://127.0.0.1:${this.portNumber}`;
  }

  get port(): number {
    return this.portNumber;
  }

  async listen(port: number): Promise<void> {
    const server = createServer((request, response) => {
      this.handle(request, response).catch((err: unknown) => {
        if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(new StatusError(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`).body()));
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.portNumber = (server.address() as AddressInfo).port;
    this.server = server;
  }

  // ---- fault injection and lifecycle --------------------------------------------------------

  injectFault(fault: FaultSpec): void {
    this.faults.push({ spec: fault, remaining: fault.count ?? 1 });
  }

  clearFaults(): void {
    this.faults = [];
  }

  closeWatches(): void {
    for (const watcher of [...this.watchers]) this.endWatch(watcher);
  }

  expireWatches(): void {
    // As if the rest of the cluster had moved on and etcd had been compacted since.
    this.rv++;
    this.compactedRv = this.rv;
    this.history = [];
    this.closeWatches();
  }

  sendBookmarks(): void {
    for (const watcher of this.watchers) {
      if (!watcher.bookmarks) continue;
      const object = { kind: KINDS[watcher.resource], apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) } };
      watcher.response.write(`${JSON.stringify({ type: 'BOOKMARK', object })}\n`);
    }
  }

  openWatches(): number {
    return this.watchers.size;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    for (const cancel of [...this.delayed]) cancel();
    for (const watcher of [...this.watchers]) {
      watcher.cancelTimeout();
      watcher.response.destroy();
    }
    this.watchers.clear();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async restart(): Promise<void> {
    if (this.server !== null) return;
    await this.listen(this.portNumber);
  }

  resourceVersion(): number {
    return this.rv;
  }

  // ---- the test's side ----------------------------------------------------------------------

  createPod(pod: Pod): Pod {
    const obj = clone(pod) as unknown as JsonObject;
    const namespace = str(metaOf(obj).namespace) || 'default';
    if (obj.status === undefined) {
      const nowIso = rfc3339(this.clock.nowMs());
      obj.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: nowIso }], startTime: nowIso };
    }
    return this.createPodObject(obj, namespace) as unknown as Pod;
  }

  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod {
    const current = this.store.pods.get(`${namespace}/${name}`);
    if (current === undefined) throw new Error(`pods "${name}" not found in namespace ${namespace}`);
    const next = clone(current);
    change(next as unknown as Pod);
    const meta = metaOf(next);
    meta.name = name;
    meta.namespace = namespace;
    if (deepEqual(next, current)) return clone(current) as unknown as Pod;
    return this.commit('pods', `${namespace}/${name}`, next) as unknown as Pod;
  }

  deletePodNow(namespace: string, name: string): boolean {
    if (!this.store.pods.has(`${namespace}/${name}`)) return false;
    this.commit('pods', `${namespace}/${name}`, null);
    return true;
  }

  pod(namespace: string, name: string): Pod | null {
    const pod = this.store.pods.get(`${namespace}/${name}`);
    return pod === undefined ? null : (clone(pod) as unknown as Pod);
  }

  pods(): Pod[] {
    return [...this.store.pods.values()].map((p) => clone(p) as unknown as Pod);
  }

  setNode(node: Node): Node {
    const obj = clone(node) as unknown as JsonObject;
    const meta = metaOf(obj);
    const name = str(meta.name);
    if (name === '') throw new Error('a node needs metadata.name');
    const existing = this.store.nodes.get(name);
    obj.kind = 'Node';
    obj.apiVersion = 'v1';
    meta.uid = existing === undefined ? (str(meta.uid) || randomUUID()) : metaOf(existing).uid;
    meta.creationTimestamp = existing === undefined ? rfc3339(this.clock.nowMs()) : metaOf(existing).creationTimestamp;
    delete meta.resourceVersion;
    return this.commit('nodes', name, obj) as unknown as Node;
  }

  deleteNode(name: string): boolean {
    if (!this.store.nodes.has(name)) return false;
    this.commit('nodes', name, null);
    return true;
  }

  node(name: string): Node | null {
    const node = this.store.nodes.get(name);
    return node === undefined ? null : (clone(node) as unknown as Node);
  }

  addPdb(pdb: StandInPdb): void {
    const namespace = pdb.metadata.namespace ?? 'default';
    this.pdbs.set(`${namespace}/${pdb.metadata.name}`, clone({ ...pdb, metadata: { ...pdb.metadata, namespace } }));
  }

  events(): JsonObject[] {
    return this.eventOrder.map((key) => this.store.events.get(key)).filter((e): e is JsonObject => e !== undefined).map((e) => clone(e));
  }

  requests(): RecordedRequest[] {
    return this.log.map((entry) => ({ ...entry }));
  }

  clearRequests(): void {
    this.log = [];
  }

  // ---- HTTP ---------------------------------------------------------------------------------

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://stand-in');
    const method = (request.method ?? 'GET').toUpperCase();
    const entry: RecordedRequest = {
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      status: 0,
      contentType: String(request.headers['content-type'] ?? ''),
      userAgent: String(request.headers['user-agent'] ?? ''),
    };
    this.log.push(entry);
    const body = await readBody(request);
    if (body !== '') {
      try {
        entry.body = JSON.parse(body) as unknown;
      } catch {
        entry.body = body;
      }
    }
    const ctx: RequestContext = { request, response, entry, url, body };

    const fault = this.takeFault(method, `${url.pathname}${url.search}`);
    if (fault !== null) {
      if (fault.delayMs !== undefined && fault.delayMs > 0 && !(await this.delay(fault.delayMs, response))) return;
      if (fault.status !== undefined) {
        this.sendError(ctx, faultError(fault.status, url.pathname));
        return;
      }
    }
    if (!/^Bearer \S+/.test(String(request.headers.authorization ?? ''))) {
      this.sendError(ctx, new StatusError(401, 'Unauthorized', 'Unauthorized'));
      return;
    }
    try {
      this.route(ctx, method);
    } catch (err) {
      if (err instanceof StatusError) this.sendError(ctx, err);
      else throw err;
    }
  }

  private route(ctx: RequestContext, method: string): void {
    let pathMatched = false;
    for (const route of this.routes) {
      const match = route.pattern.exec(ctx.url.pathname);
      if (match === null) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      route.handle(ctx, match.slice(1).map((p) => decodeURIComponent(p)));
      return;
    }
    if (pathMatched) throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
    throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
  }

  private takeFault(method: string, pathAndQuery: string): FaultSpec | null {
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.spec.method !== undefined && fault.spec.method.toUpperCase() !== method) continue;
      const pattern = fault.spec.pathPattern;
      if (pattern !== undefined && !(typeof pattern === 'string' ? pathAndQuery.includes(pattern) : pattern.test(pathAndQuery))) continue;
      fault.remaining--;
      this.faults = this.faults.filter((f) => f.remaining > 0);
      return fault.spec;
    }
    return null;
  }

  /** Resolves true after `ms`, or false as soon as the client goes away or the server stops. */
  private delay(ms: number, response: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (waited: boolean): void => {
        cancelTimer();
        this.delayed.delete(abandon);
        response.off('close', abandon);
        resolve(waited);
      };
      const abandon = (): void => finish(false);
      const cancelTimer = this.clock.after(ms, () => finish(true));
      this.delayed.add(abandon);
      response.on('close', abandon);
    });
  }

  private send(ctx: RequestContext, status: number, body: unknown): void {
    ctx.entry.status = status;
    const text = JSON.stringify(body);
    ctx.response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
    ctx.response.end(text);
  }

  private sendError(ctx: RequestContext, err: StatusError): void {
    if (err.code === 429) ctx.response.setHeader('Retry-After', '1');
    this.send(ctx, err.code, err.body());
  }

  // ---- reads and watches --------------------------------------------------------------------

  private get(resource: Resource, key: string, name: string): JsonObject {
    const obj = this.store[resource].get(key);
    if (obj === undefined) throw notFound(resource, name);
    return clone(obj);
  }

  private listOrWatch(ctx: RequestContext, resource: Resource, namespace: string | null): void {
    const query = ctx.url.searchParams;
    const byField = fieldMatcher(resource, query.get('fieldSelector') ?? '');
    const byLabel = labelMatcher(query.get('labelSelector') ?? '');
    const matches: Matcher = (obj) => (namespace === null || str(metaOf(obj).namespace) === namespace) && byField(obj) && byLabel(obj);
    const watch = query.get('watch');
    if (watch === 'true' || watch === '1') {
      if (resource === 'events') throw new StatusError(405, 'MethodNotAllowed', 'this stand-in does not watch events');
      this.watch(ctx, resource, matches);
      return;
    }
    const items = [...this.store[resource].values()].filter(matches).map((obj) => {
      // The API server leaves kind and apiVersion out of list items.
      const item = clone(obj);
      delete item.kind;
      delete item.apiVersion;
      return item;
    });
    this.send(ctx, 200, { kind: LIST_KINDS[resource], apiVersion: 'v1', metadata: { resourceVersion: String(this.rv) }, items });
  }

  private watch(ctx: RequestContext, resource: WatchedResource, matches: Matcher): void {
    const query = ctx.url.searchParams;
    const fromParam = query.get('resourceVersion') ?? '';
    const fromRv = fromParam === '' ? 0 : Number(fromParam);
    if (!Number.isInteger(fromRv) || fromRv < 0) throw invalid('resourceVersion', fromParam, [{ field: 'resourceVersion', type: 'FieldValueInvalid', detail: `Invalid value: "${fromParam}": must be an integer` }]);
    const timeoutSeconds = Number(query.get('timeoutSeconds') ?? '0');
    const response = ctx.response;
    ctx.entry.status = 200;
    response.writeHead(200, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked', 'Cache-Control': 'no-cache, private' });
    // The API server sends the headers at once: a client waits for them before it reads events.
    response.flushHeaders();
    const write = (type: string, object: unknown): void => {
      response.write(`${JSON.stringify({ type, object })}\n`);
    };

    if (fromRv !== 0 && fromRv < this.compactedRv) {
      // The watch cache answers a compacted resourceVersion with one ERROR event, then ends.
      write('ERROR', new StatusError(410, 'Expired', `too old resource version: ${fromRv} (${this.compactedRv})`).body());
      response.end();
      return;
    }
    if (fromRv === 0) {
      // "Any" resourceVersion: the current state as ADDED events, then changes.
      for (const obj of this.store[resource].values()) if (matches(obj)) write('ADDED', obj);
    } else {
      for (const change of this.history) {
        if (change.rv <= fromRv || change.resource !== resource) continue;
        const event = watchEvent(change, matches);
        if (event !== null) write(event.type, event.object);
      }
    }
    const watcher: Watcher = { resource, matches, response, bookmarks: query.get('allowWatchBookmarks') === 'true', cancelTimeout: () => {} };
    if (timeoutSeconds > 0) watcher.cancelTimeout = this.clock.after(timeoutSeconds * 1000, () => this.endWatch(watcher));
    this.watchers.add(watcher);
    response.on('close', () => {
      watcher.cancelTimeout();
      this.watchers.delete(watcher);
    });
  }

  private endWatch(watcher: Watcher): void {
    watcher.cancelTimeout();
    this.watchers.delete(watcher);
    watcher.response.end();
  }

  // ---- writes -------------------------------------------------------------------------------

  /** Stores `next` (or deletes, when null) under a new resourceVersion and tells the watches. */
  private commit(resource: Resource, key: string, next: JsonObject | null): JsonObject {
    const previous = this.store[resource].get(key) ?? null;
    this.rv++;
    let object: JsonObject;
    if (next === null) {
      object = clone(previous ?? {});
      this.store[resource].delete(key);
    } else {
      object = next;
      this.store[resource].set(key, object);
    }
    metaOf(object).resourceVersion = String(this.rv);
    if (resource === 'events') return clone(object);
    const change: Change = { rv: this.rv, resource, kind: next === null ? 'delete' : 'put', previous: previous === null ? null : clone(previous), object: clone(object) };
    this.history.push(change);
    while (this.history.length > this.historyLimit) {
      const dropped = this.history.shift();
      if (dropped !== undefined) this.compactedRv = dropped.rv;
    }
    for (const watcher of this.watchers) {
      if (watcher.resource !== resource) continue;
      const event = watchEvent(change, watcher.matches);
      if (event !== null) watcher.response.write(`${JSON.stringify(event)}\n`);
    }
    return clone(object);
  }

  private createPodRequest(ctx: RequestContext, namespace: string): void {
    const body = parseJson(ctx.body);
    if (!isObject(body)) throw badRequest('the body of the request must be a Pod');
    const meta = metaOf(body);
    if (meta.namespace !== undefined && meta.namespace !== namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    delete body.status;
    this.send(ctx, 201, this.createPodObject(body, namespace));
  }

  private createPodObject(obj: JsonObject, namespace: string): JsonObject {
    const meta = metaOf(obj);
    if (str(meta.name) === '' && str(meta.generateName) !== '') meta.name = `${str(meta.generateName)}${randomUUID().slice(0, 5)}`;
    const name = str(meta.name);
    const spec = isObject(obj.spec) ? obj.spec : {};
    const errors: FieldError[] = [];
    if (name === '') errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'Required value: name or generateName is required' });
    if (!Array.isArray(spec.containers) || spec.containers.length === 0) errors.push({ field: 'spec.containers', type: 'FieldValueRequired', detail: 'Required value' });
    if (errors.length > 0) throw invalid('Pod', name, errors);
    const key = `${namespace}/${name}`;
    if (this.store.pods.has(key)) throw alreadyExists('pods', name);
    obj.kind = 'Pod';
    obj.apiVersion = 'v1';
    obj.spec = { terminationGracePeriodSeconds: 30, restartPolicy: 'Always', ...spec };
    meta.namespace = namespace;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.nowMs());
    if (meta.generation === undefined) meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    if (obj.status === undefined) obj.status = { phase: 'Pending' };
    const status = obj.status as JsonObject;
    if (status.qosClass === undefined) status.qosClass = qosClassOf(obj.spec as JsonObject);
    return this.commit('pods', key, obj);
  }

  private patchRequest(ctx: RequestContext, resource: 'pods' | 'nodes', key: string, name: string, subresource: 'main' | 'status'): void {
    const current = this.store[resource].get(key);
    if (current === undefined) throw notFound(resource, name);
    const patch = parseJson(ctx.body);
    const contentType = ctx.entry.contentType.split(';')[0]?.trim() ?? '';
    let patched: unknown;
    switch (contentType) {
      case 'application/strategic-merge-patch+json':
        if (!isObject(patch)) throw badRequest('a strategic merge patch must be a JSON object');
        patched = strategicMerge(clone(current), patch, '');
        break;
      case 'application/merge-patch+json':
        if (!isObject(patch)) throw badRequest('a merge patch must be a JSON object');
        patched = mergePatch(clone(current), patch);
        break;
      case 'application/json-patch+json':
        patched = jsonPatch(current, patch);
        break;
      default:
        throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
    }
    if (!isObject(patched)) throw new StatusError(422, 'Invalid', 'the server rejected our request due to an error in our request: the patched object is not an object');
    this.send(ctx, 200, this.update(resource, key, name, current, patched, subresource));
  }

  /** An update with the API server's rules: UID and resourceVersion preconditions, identity kept, subresource scope. */
  private update(resource: 'pods' | 'nodes', key: string, name: string, current: JsonObject, next: JsonObject, subresource: 'main' | 'status'): JsonObject {
    const currentMeta = metaOf(current);
    const nextMeta = metaOf(next);
    if (nextMeta.uid !== undefined && nextMeta.uid !== currentMeta.uid) throw uidPreconditionFailed(resource, key, name, str(nextMeta.uid), str(currentMeta.uid));
    if (nextMeta.resourceVersion !== undefined && nextMeta.resourceVersion !== currentMeta.resourceVersion) throw conflict(resource, name, OBJECT_MODIFIED);
    for (const field of ['name', 'namespace', 'uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'resourceVersion']) {
      if (currentMeta[field] === undefined) delete nextMeta[field];
      else nextMeta[field] = clone(currentMeta[field]);
    }
    next.kind = current.kind;
    next.apiVersion = current.apiVersion;
    // The status subresource changes only status (and metadata); the main resource never status.
    const kept = subresource === 'status' ? 'spec' : 'status';
    if (current[kept] === undefined) delete next[kept];
    else next[kept] = clone(current[kept]);
    if (deepEqual(next, current)) return clone(current);
    return this.commit(resource, key, next);
  }

  private deletePodRequest(ctx: RequestContext, namespace: string, name: string): void {
    const body = parseJson(ctx.body);
    const options: JsonObject = isObject(body) ? body : {};
    const queryGrace = ctx.url.searchParams.get('gracePeriodSeconds');
    if (options.gracePeriodSeconds === undefined && queryGrace !== null) options.gracePeriodSeconds = Number(queryGrace);
    this.send(ctx, 200, this.deletePod(namespace, name, options));
  }

  /** DELETE with DeleteOptions: preconditions, then a graceful or immediate deletion. */
  private deletePod(namespace: string, name: string, options: JsonObject): JsonObject {
    const key = `${namespace}/${name}`;
    const pod = this.store.pods.get(key);
    if (pod === undefined) throw notFound('pods', name);
    const meta = metaOf(pod);
    const preconditions = isObject(options.preconditions) ? options.preconditions : {};
    if (typeof preconditions.uid === 'string' && preconditions.uid !== meta.uid) throw uidPreconditionFailed('pods', key, name, preconditions.uid, str(meta.uid));
    if (typeof preconditions.resourceVersion === 'string' && preconditions.resourceVersion !== meta.resourceVersion) {
      throw conflict('pods', name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${str(meta.resourceVersion)}`);
    }
    const spec = isObject(pod.spec) ? pod.spec : {};
    const phase = str(isObject(pod.status) ? pod.status.phase : undefined);
    let graceSeconds = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
    // The pod strategy: an unscheduled or finished pod has nothing to stop, so it goes at once.
    if (str(spec.nodeName) === '' || phase === 'Succeeded' || phase === 'Failed') graceSeconds = 0;
    if (graceSeconds <= 0) return this.commit('pods', key, null);
    const currentGrace = meta.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp !== undefined && typeof currentGrace === 'number' && currentGrace <= graceSeconds) return clone(pod);
    const next = clone(pod);
    metaOf(next).deletionTimestamp = rfc3339(this.clock.nowMs() + graceSeconds * 1000);
    metaOf(next).deletionGracePeriodSeconds = graceSeconds;
    return this.commit('pods', key, next);
  }

  private evictRequest(ctx: RequestContext, namespace: string, name: string): void {
    const eviction = parseJson(ctx.body);
    if (!isObject(eviction)) throw badRequest('the body of the request must be an Eviction');
    if (eviction.kind !== undefined && eviction.kind !== 'Eviction') throw badRequest(`expected an Eviction, got ${str(eviction.kind)}`);
    const evictionName = str(metaOf(eviction).name);
    if (evictionName !== name) throw badRequest('name in URL does not match name in Eviction object');
    const key = `${namespace}/${name}`;
    const pod = this.store.pods.get(key);
    if (pod === undefined) throw notFound('pods', name);
    if (!canIgnorePdb(pod)) this.checkDisruptionBudgets(pod, namespace);
    const options = isObject(eviction.deleteOptions) ? clone(eviction.deleteOptions) : {};
    const preconditions = isObject(options.preconditions) ? options.preconditions : {};
    if (typeof preconditions.uid === 'string' && preconditions.uid !== metaOf(pod).uid) throw uidPreconditionFailed('pods', key, name, preconditions.uid, str(metaOf(pod).uid));
    // The API server marks a pod it evicts before deleting it (PodDisruptionConditions).
    if (metaOf(pod).deletionTimestamp === undefined) {
      const marked = strategicMerge(clone(pod), { status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: rfc3339(this.clock.nowMs()) }] } }, '') as JsonObject;
      this.commit('pods', key, marked);
    }
    this.deletePod(namespace, name, options);
    this.send(ctx, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  }

  /** Refuses (429) when the pod's PodDisruptionBudget has no disruption left, as the eviction REST does. */
  private checkDisruptionBudgets(pod: JsonObject, namespace: string): void {
    const labels = isObject(metaOf(pod).labels) ? (metaOf(pod).labels as JsonObject) : {};
    const budgets = [...this.pdbs.values()].filter((pdb) => pdb.metadata.namespace === namespace && selects(pdb, labels));
    if (budgets.length === 0) return;
    if (budgets.length > 1) throw new StatusError(500, undefined, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const pdb = budgets[0] as StandInPdb;
    const covered = [...this.store.pods.values()].filter((p) => str(metaOf(p).namespace) === namespace && selects(pdb, isObject(metaOf(p).labels) ? (metaOf(p).labels as JsonObject) : {}));
    const expected = covered.length;
    const healthy = covered.filter((p) => metaOf(p).deletionTimestamp === undefined && isReady(p)).length;
    const desiredHealthy = desiredHealthyPods(pdb, expected);
    // An unready pod may go whenever the budget is met without it (the IfHealthyBudget policy).
    if (!isReady(pod) && healthy >= desiredHealthy) return;
    if (healthy - desiredHealthy > 0) return;
    throw new StatusError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [{ reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata.name} needs ${desiredHealthy} healthy pods and has ${healthy} currently` }],
    });
  }

  private createEventRequest(ctx: RequestContext, namespace: string): void {
    const event = parseJson(ctx.body);
    if (!isObject(event)) throw badRequest('the body of the request must be an Event');
    const meta = metaOf(event);
    if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== namespace) throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    meta.namespace = namespace;
    if (str(meta.name) === '' && str(meta.generateName) !== '') meta.name = `${str(meta.generateName)}${randomUUID().slice(0, 5)}`;
    const name = str(meta.name);
    const errors = validateEvent(event, namespace);
    if (errors.length > 0) throw invalid('Event', name, errors);
    const key = `${namespace}/${name}`;
    if (this.store.events.has(key)) throw alreadyExists('events', name);
    event.kind = 'Event';
    event.apiVersion = 'v1';
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.nowMs());
    this.eventOrder.push(key);
    this.send(ctx, 201, this.commit('events', key, event));
  }
}

function watchEvent(change: Change, matches: Matcher): { type: string; object: JsonObject } | null {
  const before = change.previous !== null && matches(change.previous);
  if (change.kind === 'delete') return before ? { type: 'DELETED', object: change.object } : null;
  const after = matches(change.object);
  // A selector-filtered watch sees an object enter (ADDED) or leave (DELETED) its selection.
  if (after) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: change.object } : null;
}

/** The QoS class the API server stamps on a new pod (`GetPodQOS`): from cpu and memory only. */
function qosClassOf(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])].filter(isObject);
  const quantity = (value: unknown): Quantity | null => {
    if (typeof value !== 'string') return null;
    try {
      return parseQuantity(value);
    } catch {
      return null;
    }
  };
  const nonZero = (value: unknown): boolean => (quantity(value)?.nanos ?? 0n) !== 0n;
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const container of containers) {
    const resources = isObject(container.resources) ? container.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    for (const resource of ['cpu', 'memory']) {
      const request = requests[resource];
      const limit = limits[resource];
      if (nonZero(request) || nonZero(limit)) anySet = true;
      // Guaranteed: a limit for both, and any request equal to it (an absent request defaults to the limit).
      const limitQuantity = quantity(limit);
      const requestQuantity = quantity(request);
      if (limitQuantity === null || limitQuantity.nanos === 0n) guaranteed = false;
      else if (requestQuantity !== null && compareQuantity(requestQuantity, limitQuantity) !== 0) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

function canIgnorePdb(pod: JsonObject): boolean {
  const phase = str(isObject(pod.status) ? pod.status.phase : undefined);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || metaOf(pod).deletionTimestamp !== undefined;
}

function isReady(pod: JsonObject): boolean {
  const conditions = isObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

function selects(pdb: StandInPdb, labels: JsonObject): boolean {
  const wanted = pdb.spec.selector?.matchLabels ?? {};
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

/** The disruption controller's desiredHealthy: percentages of the expected count round up. */
function desiredHealthyPods(pdb: StandInPdb, expected: number): number {
  const scaled = (value: number | string): number => (typeof value === 'number' ? value : Math.ceil((expected * Number.parseFloat(value)) / 100));
  if (pdb.spec.minAvailable !== undefined) return scaled(pdb.spec.minAvailable);
  if (pdb.spec.maxUnavailable !== undefined) return Math.max(0, expected - scaled(pdb.spec.maxUnavailable));
  return expected;
}

/** core/v1 Event validation: the legacy rules without eventTime, the new ones with it. */
function validateEvent(event: JsonObject, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const meta = metaOf(event);
  if (str(meta.name) === '') errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'Required value: name or generateName is required' });
  const ref = isObject(event.involvedObject) ? event.involvedObject : null;
  if (ref === null) {
    errors.push({ field: 'involvedObject', type: 'FieldValueRequired', detail: 'Required value' });
  } else {
    if (str(ref.kind) === '') errors.push({ field: 'involvedObject.kind', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(ref.name) === '') errors.push({ field: 'involvedObject.name', type: 'FieldValueRequired', detail: 'Required value' });
  }
  const refNamespace = str(ref?.namespace);
  const hasEventTime = event.eventTime !== undefined && event.eventTime !== null;
  if (!hasEventTime) {
    if (refNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== refNamespace) {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
  } else {
    if (refNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
    if (str(event.reportingComponent) === '') errors.push({ field: 'reportingComponent', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.reportingInstance) === '') errors.push({ field: 'reportingInstance', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.action) === '') errors.push({ field: 'action', type: 'FieldValueRequired', detail: 'Required value' });
  }
  if (str(event.reason) === '') errors.push({ field: 'reason', type: 'FieldValueRequired', detail: 'Required value' });
  if (str(event.message) === '') errors.push({ field: 'message', type: 'FieldValueRequired', detail: 'Required value' });
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    errors.push({ field: 'type', type: 'FieldValueNotSupported', detail: `Unsupported value: "${str(event.type)}": supported values: "Normal", "Warning"` });
  }
  return errors;
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
