// Patches as the API server applies them: JSON patch, JSON merge patch, strategic merge patch,
// and the PATCH handler with UID and resourceVersion preconditions.

import { parseJson, send, type RequestContext } from './http.js';
import { badRequest, clone, conflict, deepEqual, isObject, metaOf, notFound, OBJECT_MODIFIED, rejected, StatusError, str, uidPreconditionFailed, type JsonObject, type ObjectStore } from './objects.js';

// The RFC 6902 JSON patch and the RFC 6901 JSON pointers it addresses fields with; a failed
// operation or a missing path refuses the whole patch with the API server's 422.

export function jsonPatch(document: unknown, operations: unknown): unknown {
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
        if (!deepEqual(pointerGet(doc, path), raw.value)) throw rejected(`testing value ${path} failed: test failed`);
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
  if (!path.startsWith('/')) throw rejected(`invalid JSON pointer ${path}`);
  return path
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function missing(path: string): StatusError {
  return rejected(`path ${path} does not exist`);
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

/** The container of the field the tokens name (the tokens without their last one, re-escaped). */
function pointerParent(doc: unknown, parentTokens: readonly string[]): unknown {
  return pointerGet(doc, parentTokens.length === 0 ? '' : `/${parentTokens.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`);
}

function pointerSet(doc: unknown, path: string, value: unknown, mode: 'add' | 'replace'): unknown {
  const tokens = pointerTokens(path);
  if (tokens.length === 0) return value;
  const last = tokens.pop() as string;
  const parent = pointerParent(doc, tokens);
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
  const parent = pointerParent(doc, tokens);
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

// The RFC 7386 JSON merge patch: objects merge recursively, null removes a field, anything else
// (lists included) replaces.

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

// The strategic merge patch, for the fields the agent touches: lists with a merge key (pod and
// node conditions, addresses, containers...) merge element by element, and `$patch: delete` or
// `$patch: replace` directives are honoured; other lists are replaced whole.

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

export function strategicMerge(target: unknown, patch: unknown, path: string): unknown {
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

// Patches: strategic merge (merge keys of the fields the agent touches), RFC 7386 merge patch and
// RFC 6902 JSON patch, chosen by the request's Content-Type as the API server does, with its 415
// for any other type.

/** The object `current` would become under `patch`; `current` itself is left as it is. */
export function applyPatch(contentType: string, current: JsonObject, patch: unknown): unknown {
  switch (contentType) {
    case 'application/strategic-merge-patch+json':
      if (!isObject(patch)) throw badRequest('a strategic merge patch must be a JSON object');
      return strategicMerge(clone(current), patch, '');
    case 'application/merge-patch+json':
      if (!isObject(patch)) throw badRequest('a merge patch must be a JSON object');
      return mergePatch(clone(current), patch);
    case 'application/json-patch+json':
      return jsonPatch(current, patch);
    default:
      throw new StatusError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`);
  }
}

// PATCH on a pod or a node, main resource or status subresource: the patch is applied, then
// stored as an update with the API server's rules (UID and resourceVersion preconditions,
// identity fields kept, each subresource changing only its own part, no-op writes not stored).

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
