// The strategic merge patch, for the fields the agent touches: lists with a merge key (pod and
// node conditions, addresses, containers...) merge element by element, and `$patch: delete` or
// `$patch: replace` directives are honoured; other lists are replaced whole.

import { clone, deepEqual, isObject, type JsonObject } from './json.js';

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
