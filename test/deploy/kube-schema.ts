// A strict structural check of Kubernetes objects against the API's own types, as published in
// the Kubernetes client's generated models (each model lists its fields and their types): every
// field name must exist where it is written and every scalar must have its field's JSON type.
// A misspelt field (`hostPid`, `mountpropagation`) is silently dropped by a lenient client and
// rejected by a strict server; this finds it without a server.

import * as k8s from '@kubernetes/client-node';

interface AttributeType {
  readonly baseName: string;
  readonly type: string;
}

type ModelClass = { readonly attributeTypeMap: readonly AttributeType[] };

const models = new Map<string, ModelClass>();
for (const [name, value] of Object.entries(k8s)) {
  const candidate = value as Partial<ModelClass> | undefined;
  if (typeof value === 'function' && Array.isArray(candidate?.attributeTypeMap)) models.set(name, value as unknown as ModelClass);
}

/** The model type of a top-level object, from its apiVersion and kind (`apps/v1` DaemonSet -> V1DaemonSet). */
export function modelTypeOf(apiVersion: string, kind: string): string {
  const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
  return `${version.charAt(0).toUpperCase()}${version.slice(1)}${kind}`;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'a map' : `${typeof value} ${JSON.stringify(value)}`;
}

/** Every problem found in `value` read as `type`, each as `path: message`. */
export function schemaProblems(value: unknown, type: string, path = ''): string[] {
  if (value === null || value === undefined) return [];
  const here = path === '' ? '(root)' : path;
  const array = /^Array<(.+)>$/.exec(type);
  if (array !== null) {
    if (!Array.isArray(value)) return [`${here}: expected a list, found ${describe(value)}`];
    return value.flatMap((item, i) => schemaProblems(item, array[1] as string, `${path}[${i}]`));
  }
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (map !== null) {
    if (typeof value !== 'object' || Array.isArray(value)) return [`${here}: expected a map, found ${describe(value)}`];
    return Object.entries(value).flatMap(([key, item]) => schemaProblems(item, map[1] as string, `${path}[${JSON.stringify(key)}]`));
  }
  switch (type) {
    case 'any':
      return [];
    case 'string':
    case 'Date':
      return typeof value === 'string' ? [] : [`${here}: expected a string, found ${describe(value)}`];
    case 'number':
      return typeof value === 'number' && Number.isInteger(value) ? [] : [`${here}: expected an integer, found ${describe(value)}`];
    case 'boolean':
      return typeof value === 'boolean' ? [] : [`${here}: expected true or false, found ${describe(value)}`];
    case 'IntOrString':
      return typeof value === 'string' || (typeof value === 'number' && Number.isInteger(value)) ? [] : [`${here}: expected an integer or a string, found ${describe(value)}`];
  }
  const model = models.get(type);
  if (model === undefined) throw new Error(`${here}: no model for type ${type}`);
  if (typeof value !== 'object' || Array.isArray(value)) return [`${here}: expected a map (${type}), found ${describe(value)}`];
  const fields = new Map(model.attributeTypeMap.map((a) => [a.baseName, a.type]));
  const problems: string[] = [];
  for (const [key, item] of Object.entries(value)) {
    const fieldType = fields.get(key);
    const child = path === '' ? key : `${path}.${key}`;
    if (fieldType === undefined) {
      problems.push(`${child}: unknown field (${type} has ${[...fields.keys()].join(', ')})`);
      continue;
    }
    problems.push(...schemaProblems(item, fieldType, child));
  }
  return problems;
}

/** Problems of a whole object, its model found from its apiVersion and kind. */
export function objectProblems(object: { apiVersion?: unknown; kind?: unknown }): string[] {
  if (typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') return ['(root): apiVersion and kind are required'];
  const type = modelTypeOf(object.apiVersion, object.kind);
  if (!models.has(type)) return [`(root): no Kubernetes type for apiVersion ${object.apiVersion} kind ${object.kind}`];
  return schemaProblems(object, type);
}
