// The stand-in itself: it wires the store, the watches, the handlers and the fault injector
// behind one HTTP server on 127.0.0.1, and carries out the test's side of the ApiStandIn handle
// (what the scheduler and the kubelet would write) and the server's lifecycle (stop, restart on
// the same port with the same objects and history).

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../api/clock.js';
import type { Node, Pod } from '../../api/pod.js';
import { errorMessage } from '../../errors.js';
import { DisruptionBudgets, type StandInPdb } from './disruption-budgets.js';
import { Events } from './events.js';
import { Evictions } from './eviction.js';
import { FaultInjector, type FaultSpec } from './fault-injection.js';
import { clone, str, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import { ObjectStore } from './object-store.js';
import { PodWrites } from './pod-writes.js';
import type { ApiStandIn, ApiStandInOptions } from './public-api.js';
import { RequestLog, type RecordedRequest } from './request-log.js';
import { rfc3339 } from './rfc3339.js';
import { standInRoutes, type Route } from './routes.js';
import { serveRequest } from './serve-request.js';
import { StatusError } from './status-error.js';
import { WatchStreams } from './watch-streams.js';

/** Starts a stand-in on 127.0.0.1. */
export async function startApiStandIn(options: ApiStandInOptions = {}): Promise<ApiStandIn> {
  const standIn = new StandIn(options.clock ?? systemClock, options.historyLimit ?? 1000);
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
  ) {
    this.store = new ObjectStore(historyLimit);
    this.watches = new WatchStreams(this.store, clock);
    this.faults = new FaultInjector(clock);
    this.podWrites = new PodWrites(this.store, clock);
    this.budgets = new DisruptionBudgets(this.store);
    this.eventRecords = new Events(this.store, clock);
    const evictions = new Evictions(this.store, this.budgets, this.podWrites, clock);
    this.routes = standInRoutes({ store: this.store, watches: this.watches, pods: this.podWrites, evictions, events: this.eventRecords });
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

  createPod(pod: Pod): Pod {
    const obj = clone(pod) as unknown as JsonObject;
    const namespace = str(metaOf(obj).namespace) || 'default';
    if (obj.status === undefined) {
      const nowIso = rfc3339(this.clock.nowMs());
      obj.status = { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: nowIso }], startTime: nowIso };
    }
    return this.podWrites.create(obj, namespace) as unknown as Pod;
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
