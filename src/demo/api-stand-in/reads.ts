// Reads: field and label selectors, GET and LIST, and watches with the API server's
// resourceVersion semantics (bookmarks, 410 Expired for a compacted history).

import type { ServerResponse } from 'node:http';
import type { Clock } from '../../api/clock.js';
import { send, type RequestContext } from './http.js';
import { badRequest, clone, invalid, isObject, KINDS, labelsOf, LIST_KINDS, metaOf, notFound, StatusError, str, type Change, type JsonObject, type ObjectStore, type Resource, type WatchedResource } from './objects.js';

// Selectors: field selectors limited to the fields the API server indexes for each resource (any
// other field is a 400, as it is there), and equality-based label selectors.

export type Matcher = (obj: JsonObject) => boolean;

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

export function fieldMatcher(resource: Resource, selector: string): Matcher {
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

export function labelMatcher(selector: string): Matcher {
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
    const labels = labelsOf(obj);
    return terms.every((term) => term(labels));
  };
}

// Reads: get one object, list a resource (cluster-wide or in a namespace) through its field and
// label selectors, or hand the request to a watch when it asks for one.

export function getObject(store: ObjectStore, resource: Resource, key: string, name: string): JsonObject {
  const obj = store.find(resource, key);
  if (obj === undefined) throw notFound(resource, name);
  return clone(obj);
}

export function listOrWatch(ctx: RequestContext, store: ObjectStore, watches: WatchStreams, resource: Resource, namespace: string | null, options: { ignoreFieldSelectors?: boolean } = {}): void {
  const query = ctx.url.searchParams;
  // A compromised server checks the selector and then ignores it.
  const checked = fieldMatcher(resource, query.get('fieldSelector') ?? '');
  const byField: Matcher = options.ignoreFieldSelectors === true ? () => true : checked;
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

// Watch streaming: a watch opens with the current state (resourceVersion "any") or the history
// since its resourceVersion (one ERROR 410 Expired when that is compacted), then receives every
// change its selectors see, as newline-delimited JSON events, until its timeout, a close or the
// server stopping. Selector-filtered watches see objects enter and leave their selection.

interface Watcher {
  readonly resource: WatchedResource;
  readonly matches: Matcher;
  readonly response: ServerResponse;
  readonly bookmarks: boolean;
  cancelTimeout: () => void;
}

export class WatchStreams {
  private readonly watchers = new Set<Watcher>();

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {
    store.subscribe((change) => this.publish(change));
  }

  open(ctx: RequestContext, resource: WatchedResource, matches: Matcher): void {
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
    const write = (type: string, object: unknown): void => writeWatchEvent(response, type, object);

    const compactedRv = this.store.compactedResourceVersion;
    if (fromRv !== 0 && fromRv < compactedRv) {
      // The watch cache answers a compacted resourceVersion with one ERROR event, then ends.
      write('ERROR', new StatusError(410, 'Expired', `too old resource version: ${fromRv} (${compactedRv})`).body());
      response.end();
      return;
    }
    if (fromRv === 0) {
      // "Any" resourceVersion: the current state as ADDED events, then changes.
      for (const obj of this.store.values(resource)) if (matches(obj)) write('ADDED', obj);
    } else {
      for (const change of this.store.changesSince(resource, fromRv)) {
        const event = watchEvent(change, matches);
        if (event !== null) write(event.type, event.object);
      }
    }
    const watcher: Watcher = { resource, matches, response, bookmarks: query.get('allowWatchBookmarks') === 'true', cancelTimeout: () => {} };
    if (timeoutSeconds > 0) watcher.cancelTimeout = this.clock.after(timeoutSeconds * 1000, () => this.end(watcher));
    this.watchers.add(watcher);
    response.on('close', () => {
      watcher.cancelTimeout();
      this.watchers.delete(watcher);
    });
  }

  /** Ends every open watch cleanly (clients resume from their resourceVersion). */
  closeAll(): void {
    for (const watcher of [...this.watchers]) this.end(watcher);
  }

  /** Sends a BOOKMARK at the current resourceVersion to watches that allow bookmarks. */
  sendBookmarks(): void {
    for (const watcher of this.watchers) {
      if (!watcher.bookmarks) continue;
      const object = { kind: KINDS[watcher.resource], apiVersion: 'v1', metadata: { resourceVersion: String(this.store.resourceVersion) } };
      writeWatchEvent(watcher.response, 'BOOKMARK', object);
    }
  }

  count(): number {
    return this.watchers.size;
  }

  /** Cuts every watch without ending it, as a server that goes down does. */
  cutAll(): void {
    for (const watcher of [...this.watchers]) {
      watcher.cancelTimeout();
      watcher.response.destroy();
    }
    this.watchers.clear();
  }

  private publish(change: Change): void {
    for (const watcher of this.watchers) {
      if (watcher.resource !== change.resource) continue;
      const event = watchEvent(change, watcher.matches);
      if (event !== null) writeWatchEvent(watcher.response, event.type, event.object);
    }
  }

  private end(watcher: Watcher): void {
    watcher.cancelTimeout();
    this.watchers.delete(watcher);
    watcher.response.end();
  }
}

function writeWatchEvent(response: ServerResponse, type: string, object: unknown): void {
  response.write(`${JSON.stringify({ type, object })}\n`);
}

function watchEvent(change: Change, matches: Matcher): { type: string; object: JsonObject } | null {
  const before = change.previous !== null && matches(change.previous);
  if (change.kind === 'delete') return before ? { type: 'DELETED', object: change.object } : null;
  const after = matches(change.object);
  // A selector-filtered watch sees an object enter (ADDED) or leave (DELETED) its selection.
  if (after) return { type: before ? 'MODIFIED' : 'ADDED', object: change.object };
  return before ? { type: 'DELETED', object: change.object } : null;
}
