// deploy/daemonset.yaml as the API server sees it: the documents parsed with `yaml`, each one's
// REST path found through API discovery (so a kind added to the manifest later needs no table
// here), and server-side apply, for real or as a dry run (`dryRun=All`: admission and validation
// run, nothing is stored).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CONTENT_TYPE, type ApiClient } from './api-client.js';
import { REPO_ROOT } from './binaries.js';

export const DAEMONSET_MANIFEST = join(REPO_ROOT, 'deploy', 'daemonset.yaml');
export const FIELD_MANAGER = 'kea-e2e';

export interface ManifestObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly [key: string]: unknown };
  readonly [key: string]: unknown;
}

/** Every document of a manifest file (empty documents left out); throws on a YAML error. */
export function loadManifest(path: string = DAEMONSET_MANIFEST): ManifestObject[] {
  const docs = parseAllDocuments(readFileSync(path, 'utf8'));
  const objects: ManifestObject[] = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) throw new Error(`${path}: ${doc.errors.map((e) => e.message).join('; ')}`);
    const value = doc.toJS() as ManifestObject | null;
    if (value !== null && value !== undefined) objects.push(value);
  }
  return objects;
}

interface ApiResourceList {
  readonly resources: readonly { readonly name: string; readonly kind: string; readonly namespaced: boolean }[];
}

const discoveryCache = new WeakMap<ApiClient, Map<string, ApiResourceList>>();

/** The plural resource name and scope of a kind, from the API server's discovery document. */
export async function resourceOf(api: ApiClient, apiVersion: string, kind: string): Promise<{ readonly plural: string; readonly namespaced: boolean; readonly base: string }> {
  const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  let cache = discoveryCache.get(api);
  if (cache === undefined) {
    cache = new Map();
    discoveryCache.set(api, cache);
  }
  let list = cache.get(base);
  if (list === undefined) {
    list = await api.get<ApiResourceList>(base);
    cache.set(base, list);
  }
  const resource = list.resources.find((r) => r.kind === kind && !r.name.includes('/'));
  if (resource === undefined) throw new Error(`the API server serves no ${kind} in ${apiVersion}`);
  return { plural: resource.name, namespaced: resource.namespaced, base };
}

/** The object's REST path (`/apis/apps/v1/namespaces/ns/daemonsets/name`). */
export async function objectPath(api: ApiClient, object: ManifestObject): Promise<string> {
  const { plural, namespaced, base } = await resourceOf(api, object.apiVersion, object.kind);
  if (namespaced && object.metadata.namespace === undefined) throw new Error(`${object.kind} ${object.metadata.name} has no namespace`);
  return namespaced ? `${base}/namespaces/${object.metadata.namespace}/${plural}/${object.metadata.name}` : `${base}/${plural}/${object.metadata.name}`;
}

/** Server-side apply; with `dryRun`, nothing is stored. Resolves with the object the server returned. */
export async function applyObject<T = ManifestObject>(api: ApiClient, object: ManifestObject, options: { readonly dryRun?: boolean } = {}): Promise<T> {
  const path = await objectPath(api, object);
  // JSON is YAML: the apply content type takes it as is.
  return api.patch<T>(path, object, CONTENT_TYPE.applyPatch, { fieldManager: FIELD_MANAGER, force: true, ...(options.dryRun === true ? { dryRun: 'All' } : {}) });
}

/** `Kind/name` (with the namespace when there is one), for messages. */
export function describeObject(object: ManifestObject): string {
  return `${object.kind}/${object.metadata.namespace === undefined ? '' : `${object.metadata.namespace}/`}${object.metadata.name}`;
}
