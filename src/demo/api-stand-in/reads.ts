// Reads: get one object, list a resource (cluster-wide or in a namespace) through its field and
// label selectors, or hand the request to a watch when it asks for one.

import { clone, str, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { LIST_KINDS, type Resource } from './resource.js';
import { send, type RequestContext } from './responses.js';
import { fieldMatcher, labelMatcher, type Matcher } from './selectors.js';
import { notFound, StatusError } from './status-error.js';
import type { WatchStreams } from './watch-streams.js';

export function getObject(store: ObjectStore, resource: Resource, key: string, name: string): JsonObject {
  const obj = store.find(resource, key);
  if (obj === undefined) throw notFound(resource, name);
  return clone(obj);
}

export function listOrWatch(ctx: RequestContext, store: ObjectStore, watches: WatchStreams, resource: Resource, namespace: string | null): void {
  const query = ctx.url.searchParams;
  const byField = fieldMatcher(resource, query.get('fieldSelector') ?? '');
  const byLabel = labelMatcher(query.get('labelSelector') ?? '');
  const matches: Matcher = (obj) => (namespace === null || str(metaOf(obj).namespace) === namespace) && byField(obj) && byLabel(obj);
  const watch = query.get('watch');
  if (watch === 'true' || watch === '1') {
    if (resource === 'events') throw new StatusError(405, 'MethodNotAllowed', 'this stand-in does not watch events');
    watches.open(ctx, resource, matches);
    return;
  }
  const items = store.values(resource).filter(matches).map((obj) => {
    // The API server leaves kind and apiVersion out of list items.
    const item = clone(obj);
    delete item.kind;
    delete item.apiVersion;
    return item;
  });
  send(ctx, 200, { kind: LIST_KINDS[resource], apiVersion: 'v1', metadata: { resourceVersion: String(store.resourceVersion) }, items });
}
