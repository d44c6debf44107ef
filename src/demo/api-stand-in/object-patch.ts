// PATCH on a pod or a node, main resource or status subresource: the patch is applied, then
// stored as an update with the API server's rules (UID and resourceVersion preconditions,
// identity fields kept, each subresource changing only its own part, no-op writes not stored).

import { applyPatch } from './apply-patch.js';
import { clone, isObject, str, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { parseJson } from './request-body.js';
import { send, type RequestContext } from './responses.js';
import { conflict, notFound, OBJECT_MODIFIED, rejected, uidPreconditionFailed } from './status-error.js';

export function patchRequest(ctx: RequestContext, store: ObjectStore, resource: 'pods' | 'nodes', key: string, name: string, subresource: 'main' | 'status'): void {
  const current = store.find(resource, key);
  if (current === undefined) throw notFound(resource, name);
  const patch = parseJson(ctx.body);
  const contentType = ctx.entry.contentType.split(';')[0]?.trim() ?? '';
  const patched = applyPatch(contentType, current, patch);
  if (!isObject(patched)) throw rejected('the patched object is not an object');
  send(ctx, 200, update(store, resource, key, name, current, patched, subresource));
}

/** An update with the API server's rules: UID and resourceVersion preconditions, identity kept, subresource scope. */
function update(store: ObjectStore, resource: 'pods' | 'nodes', key: string, name: string, current: JsonObject, next: JsonObject, subresource: 'main' | 'status'): JsonObject {
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
  return store.commitIfChanged(resource, key, current, next);
}
