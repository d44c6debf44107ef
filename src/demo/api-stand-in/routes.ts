// HTTP routing: the table of the API paths the stand-in answers, by method, and the API server's
// 405 for a known path with another method and 404 for any other path.

import type { Events } from './events.js';
import type { Evictions } from './eviction.js';
import { patchRequest } from './object-patch.js';
import type { ObjectStore } from './object-store.js';
import type { PodWrites } from './pod-writes.js';
import { getObject, listOrWatch } from './reads.js';
import { send, type RequestContext } from './responses.js';
import { StatusError } from './status-error.js';
import type { WatchStreams } from './watch-streams.js';

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
}

export function standInRoutes({ store, watches, pods, evictions, events }: RouteTargets): readonly Route[] {
  const ns = '([^/]+)';
  return [
    { method: 'GET', pattern: /^\/api\/v1\/pods$/, handle: (c) => listOrWatch(c, store, watches, 'pods', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => listOrWatch(c, store, watches, 'pods', n ?? null) },
    { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods$`), handle: (c, [n]) => pods.createRequest(c, n ?? '') },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}(?:/status)?$`), handle: (c, [n, name]) => send(c, 200, getObject(store, 'pods', `${n}/${name}`, name ?? '')) },
    { method: 'DELETE', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => pods.deleteRequest(c, n ?? '', name ?? '') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}$`), handle: (c, [n, name]) => patchRequest(c, store, 'pods', `${n}/${name}`, name ?? '', 'main') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/status$`), handle: (c, [n, name]) => patchRequest(c, store, 'pods', `${n}/${name}`, name ?? '', 'status') },
    { method: 'POST', pattern: new RegExp(`^/api/v1/namespaces/${ns}/pods/${ns}/eviction$`), handle: (c, [n, name]) => evictions.request(c, n ?? '', name ?? '') },
    { method: 'GET', pattern: /^\/api\/v1\/nodes$/, handle: (c) => listOrWatch(c, store, watches, 'nodes', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/nodes/${ns}(?:/status)?$`), handle: (c, [name]) => send(c, 200, getObject(store, 'nodes', name ?? '', name ?? '')) },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}$`), handle: (c, [name]) => patchRequest(c, store, 'nodes', name ?? '', name ?? '', 'main') },
    { method: 'PATCH', pattern: new RegExp(`^/api/v1/nodes/${ns}/status$`), handle: (c, [name]) => patchRequest(c, store, 'nodes', name ?? '', name ?? '', 'status') },
    { method: 'GET', pattern: /^\/api\/v1\/events$/, handle: (c) => listOrWatch(c, store, watches, 'events', null) },
    { method: 'GET', pattern: new RegExp(`^/api/v1/namespaces/${ns}/events$`), handle: (c, [n]) => listOrWatch(c, store, watches, 'events', n ?? null) },
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
