// Reading the parts of a stored object that every handler needs (metadata, labels, a pod's
// phase) without trusting its shape, and naming an object from its generateName.

import { randomUUID } from 'node:crypto';
import { isObject, str, type JsonObject } from './json.js';

export function metaOf(obj: JsonObject): JsonObject {
  if (!isObject(obj.metadata)) obj.metadata = {};
  return obj.metadata as JsonObject;
}

export function labelsOf(obj: JsonObject): JsonObject {
  const labels = metaOf(obj).labels;
  return isObject(labels) ? labels : {};
}

export function phaseOf(pod: JsonObject): string {
  return str(isObject(pod.status) ? pod.status.phase : undefined);
}

/** Gives an unnamed object a name from its generateName, with a random suffix as the API server does. */
export function applyGenerateName(meta: JsonObject): void {
  if (str(meta.name) === '' && str(meta.generateName) !== '') meta.name = `${str(meta.generateName)}${randomUUID().slice(0, 5)}`;
}
