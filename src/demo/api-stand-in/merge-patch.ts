// The RFC 7386 JSON merge patch: objects merge recursively, null removes a field, anything else
// (lists included) replaces.

import { clone, isObject, type JsonObject } from './json.js';

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return clone(patch);
  const out: JsonObject = isObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
