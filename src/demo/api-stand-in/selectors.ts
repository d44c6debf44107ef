// Selectors: field selectors limited to the fields the API server indexes for each resource (any
// other field is a 400, as it is there), and equality-based label selectors.

import { isObject, str, type JsonObject } from './json.js';
import { labelsOf } from './object-meta.js';
import type { Resource } from './resource.js';
import { badRequest } from './status-error.js';

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
