// Watch streaming: a watch opens with the current state (resourceVersion "any") or the history
// since its resourceVersion (one ERROR 410 Expired when that is compacted), then receives every
// change its selectors see, as newline-delimited JSON events, until its timeout, a close or the
// server stopping. Selector-filtered watches see objects enter and leave their selection.

import type { ServerResponse } from 'node:http';
import type { Clock } from '../../api/clock.js';
import type { JsonObject } from './json.js';
import type { Change, ObjectStore } from './object-store.js';
import { KINDS, type WatchedResource } from './resource.js';
import type { RequestContext } from './responses.js';
import type { Matcher } from './selectors.js';
import { invalid, StatusError } from './status-error.js';

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
