// The stand-in itself: its public handle (ApiStandIn) and a kubeconfig to reach it, the route
// table and the per-request path through faults, log and handlers, and the server that wires the
// store, the watches and the handlers behind one HTTP server on 127.0.0.1. It carries out the
// test's side of the handle (what the scheduler and the kubelet would write) and the server's
// lifecycle (stop, restart on the same port with the same objects and history).

import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../api/clock.js';
import type { Node, Pod } from '../../api/pod.js';
import { errorMessage } from '../../errors.js';
import { faultError, FaultInjector, readBody, RequestLog, send, sendError, type FaultSpec, type RecordedRequest, type RequestContext } from './http.js';
import { clone, metaOf, ObjectStore, rfc3339, StatusError, str, type JsonObject, type Resource } from './objects.js';
import { patchRequest } from './patches.js';
import { getObject, listOrWatch as listOrWatchAs, WatchStreams } from './reads.js';
import { DisruptionBudgets, Events, Evictions, PodWrites, type StandInPdb } from './writes.js';

// The stand-in's public contract: how it is started and the handle a test or the demo drives it
// by, from the API server's side (faults, watches, stop and restart) and from the scheduler's and
// the kubelet's side (pods, nodes, budgets), with what it saw.

export interface ApiStandInOptions {
  /** The port to listen on (default: a free one). */
  readonly port?: number;
  /** Drives timestamps, watch timeouts and injected delays (default: the system clock). */
  readonly clock?: Clock;
  /** Watch events kept for resuming watches; older resourceVersions get 410 Expired (default 1000). */
  readonly historyLimit?: number;
  /**
   * A compromised or broken server: field selectors are accepted and ignored, so a list or watch
   * of one node's pods returns every node's (default false).
   */
  readonly ignoreFieldSelectors?: boolean;
}

/** How a pod is created: a compromised server may hand out a UID of its own making. */
export interface CreatePodOptions {
  /** The pod's `metadata.uid`, as it is, instead of a fresh random UUID. */
  readonly uid?: string;
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
  createPod(pod: Pod, options?: CreatePodOptions): Pod;
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

// The kubeconfig that points the agent's own client at a stand-in, so the adapter code under
// test connects exactly as it would to a real cluster.

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

// HTTP routing: the table of the API paths the stand-in answers, by method, and the API server's
// 405 for a known path with another method and 404 for any other path.

export interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  readonly handle: (ctx: RequestContext, params: string[]) => void;
}

/** What the routes hand requests to. */
export interface RouteTargets {
  readonly store: ObjectStore;
  readonly watches: WatchStreams;
  readonly pods: PodWrites;
  readonly evictions: Evictions;
  readonly events: Events;
  /** Field selectors are ignored (a compromised server). */
  readonly ignoreFieldSelectors: boolean;
}

export function standInRoutes({ store, watches, pods, evictions, events, ignoreFieldSelectors }: RouteTargets): readonly Route[] {
  const ns = '([^/]+)';
  const listOrWatch = (c: RequestContext, resource: Resource, namespace: string | null): void => listOrWatchAs(c, store, watches, resource, namespace, { ignoreFieldSelectors });
  return [
    { method: 'GET', pattern: /^\/api\/v1\/pods$/, handle: (c) => listOrWatch(c, 'pods', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => listOrWatch(c, 'pods', n ?? null) },
    { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => pods.createRequest(c, n ?? '') },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}(?:/status)?$`), handle: (c, [n, name]) => send(c, 200, getObject(store, 'pods', `${n}/${name}`, name ?? '')) },
    { method: 'DELETE', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => pods.deleteRequest(c, n ?? '', name ?? '') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => patchRequest(c, store, 'pods', `${n}/${name}`, name ?? '', 'main') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/status$`), handle: (c, [n, name]) => patchRequest(c, store, 'pods', `${n}/${name}`, name ?? '', 'status') },
    { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/eviction$`), handle: (c, [n, name]) => evictions.request(c, n ?? '', name ?? '') },
    { method: 'GET', pattern: /^\/api\/v1\/nodes$/, handle: (c) => listOrWatch(c, 'nodes', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/nodes/${ns}(?:/status)?$`), handle: (c, [name]) => send(c, 200, getObject(store, 'nodes', name ?? '', name ?? '')) },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}$`), handle: (c, [name]) => patchRequest(c, store, 'nodes', name ?? '', name ?? '', 'main') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}/status$`), handle: (c, [name]) => patchRequest(c, store, 'nodes', name ?? '', name ?? '', 'status') },
    { method: 'GET', pattern: /^\/api\/v1\/events$/, handle: (c) => listOrWatch(c, 'events', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/events$`), handle: (c, [n]) => listOrWatch(c, 'events', n ?? null) },
    { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/events$`), handle: (c, [n]) => events.createRequest(c, n ?? '') },
  ];
}

export function route(routes: readonly Route[], ctx: RequestContext, method: string): void {
  let pathMatched = false;
  for (const candidate of routes) {
    const match = candidate.pattern.exec(ctx.url.pathname);
    if (match === null) continue;
    pathMatched = true;
    if (candidate.method !== method) continue;
    candidate.handle(ctx, match.slice(1).map((p) => decodeURIComponent(p)));
    return;
  }
  if (pathMatched) throw new StatusError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  throw new StatusError(404, 'NotFound', 'the server could not find the requested resource', {});
}

// The way of one request through the stand-in: recorded on arrival, its body read, an injected
// fault applied first, then the token check a real API server makes, then its route; a refusal
// is answered with its Status body.

export interface Serving {
  readonly log: RequestLog;
  readonly faults: FaultInjector;
  readonly routes: readonly Route[];
}

export async function serveRequest(request: IncomingMessage, response: ServerResponse, { log, faults, routes }: Serving): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://stand-in');
  const method = (request.method ?? 'GET').toUpperCase();
  const entry = log.record(request, method, url);
  const body = await readBody(request);
  log.recordBody(entry, body);
  const ctx: RequestContext = { request, response, entry, url, body };

  const fault = faults.take(method, `${url.pathname}${url.search}`);
  if (fault !== null) {
    if (fault.delayMs !== undefined && fault.delayMs > 0 && !(await faults.delay(fault.delayMs, response))) return;
    if (fault.status !== undefined) {
      sendError(ctx, faultError(fault.status, url.pathname));
      return;
    }
  }
  if (!/^Bearer \S+/.test(String(request.headers.authorization ?? ''))) {
    sendError(ctx, new StatusError(401, 'Unauthorized', 'Unauthorized'));
    return;
  }
  try {
    route(routes, ctx, method);
  } catch (err) {
    if (err instanceof StatusError) sendError(ctx, err);
    else throw err;
  }
}

/** Starts a stand-in on 127.0.0.1. */
export async function startApiStandIn(options: ApiStandInOptions = {}): Promise<ApiStandIn> {
  const standIn = new StandIn(options.clock ?? systemClock, options.historyLimit ?? 1000, options.ignoreFieldSelectors ?? false);
  await standIn.listen(options.port ?? 0);
  return standIn;
}

class StandIn implements ApiStandIn {
  private server: Server | null = null;
  private portNumber = 0;
  private readonly store: ObjectStore;
  private readonly watches: WatchStreams;
  private readonly faults: FaultInjector;
  private readonly log = new RequestLog();
  private readonly podWrites: PodWrites;
  private readonly budgets: DisruptionBudgets;
  private readonly eventRecords: Events;
  private readonly routes: readonly Route[];

  constructor(
    private readonly clock: Clock,
    historyLimit: number,
    ignoreFieldSelectors: boolean,
  ) {
    this.store = new ObjectStore(historyLimit);
    this.watches = new WatchStreams(this.store, clock);
    this.faults = new FaultInjector(clock);
    this.podWrites = new PodWrites(this.store, clock);
    this.budgets = new DisruptionBudgets(this.store);
    this.eventRecords = new Events(this.store, clock);
    const evictions = new Evictions(this.store, this.budgets, this.podWrites, clock);
    this.routes = standInRoutes({ store: this.store, watches: this.watches, pods: this.podWrites, evictions, events: this.eventRecords, ignoreFieldSelectors });
  }

  get url(): string {
    return `http://127.0.0.1:${this.portNumber}`;
  }

  get port(): number {
    return this.portNumber;
  }

  async listen(port: number): Promise<void> {
    const server = createServer((request, response) => {
      serveRequest(request, response, { log: this.log, faults: this.faults, routes: this.routes }).catch((err: unknown) => {
        if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'application/json' });
        response.end(JSON.stringify(new StatusError(500, 'InternalError', `Internal error occurred: ${errorMessage(err)}`).body()));
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
    this.faults.inject(fault);
  }

  clearFaults(): void {
    this.faults.clear();
  }

  closeWatches(): void {
    this.watches.closeAll();
  }

  expireWatches(): void {
    this.store.compact();
    this.closeWatches();
  }

  sendBookmarks(): void {
    this.watches.sendBookmarks();
  }

  openWatches(): number {
    return this.watches.count();
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === null) return;
    this.server = null;
    this.faults.abandonDelays();
    this.watches.cutAll();
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
    return this.store.resourceVersion;
  }

  // ---- the test's side ----------------------------------------------------------------------

  createPod(pod: Pod, options: CreatePodOptions = {}): Pod {
    const obj = clone(pod) as unknown as JsonObject;
    const namespace = str(metaOf(obj).namespace) || 'default';
    if (obj.status === undefined) {
      const nowIso = rfc3339(this.clock.nowMs());
      obj.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: nowIso }], startTime: nowIso };
    }
    return this.podWrites.create(obj, namespace, options.uid) as unknown as Pod;
  }

  updatePod(namespace: string, name: string, change: (pod: Pod) => void): Pod {
    const current = this.store.find('pods', `${namespace}/${name}`);
    if (current === undefined) throw new Error(`pods "${name}" not found in namespace ${namespace}`);
    const next = clone(current);
    change(next as unknown as Pod);
    const meta = metaOf(next);
    meta.name = name;
    meta.namespace = namespace;
    return this.store.commitIfChanged('pods', `${namespace}/${name}`, current, next) as unknown as Pod;
  }

  deletePodNow(namespace: string, name: string): boolean {
    if (!this.store.has('pods', `${namespace}/${name}`)) return false;
    this.store.commit('pods', `${namespace}/${name}`, null);
    return true;
  }

  pod(namespace: string, name: string): Pod | null {
    const pod = this.store.find('pods', `${namespace}/${name}`);
    return pod === undefined ? null : (clone(pod) as unknown as Pod);
  }

  pods(): Pod[] {
    return this.store.values('pods').map((p) => clone(p) as unknown as Pod);
  }

  setNode(node: Node): Node {
    const obj = clone(node) as unknown as JsonObject;
    const meta = metaOf(obj);
    const name = str(meta.name);
    if (name === '') throw new Error('a node needs metadata.name');
    const existing = this.store.find('nodes', name);
    obj.kind = 'Node';
    obj.apiVersion = 'v1';
    meta.uid = existing === undefined ? (str(meta.uid) || randomUUID()) : metaOf(existing).uid;
    meta.creationTimestamp = existing === undefined ? rfc3339(this.clock.nowMs()) : metaOf(existing).creationTimestamp;
    delete meta.resourceVersion;
    return this.store.commit('nodes', name, obj) as unknown as Node;
  }

  deleteNode(name: string): boolean {
    if (!this.store.has('nodes', name)) return false;
    this.store.commit('nodes', name, null);
    return true;
  }

  node(name: string): Node | null {
    const node = this.store.find('nodes', name);
    return node === undefined ? null : (clone(node) as unknown as Node);
  }

  addPdb(pdb: StandInPdb): void {
    this.budgets.add(pdb);
  }

  events(): JsonObject[] {
    return this.eventRecords.list();
  }

  requests(): RecordedRequest[] {
    return this.log.all();
  }

  clearRequests(): void {
    this.log.clear();
  }
}
