// The identity the agent runs with in the end-to-end tests: the Namespace, ServiceAccount,
// ClusterRole and ClusterRoleBinding of deploy/daemonset.yaml applied through the API as admin,
// and a token for that ServiceAccount from the TokenRequest API, exactly what the kubelet would
// mount into the agent's pod. Running as it means a permission missing from the manifest fails the
// tests, and one too many shows up in the ClusterRole check.

import type { ApiClient } from './api-client.js';
import { applyObject, loadManifest, type ManifestObject } from './manifest.js';

/** The kinds of deploy/daemonset.yaml that make up the agent's identity and rights. */
export const RBAC_KINDS: readonly string[] = ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'];

export interface AgentIdentity {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly clusterRole: string;
  /** `system:serviceaccount:<namespace>:<name>`, as authorization sees it. */
  readonly username: string;
  readonly token: string;
}

function single(objects: readonly ManifestObject[], kind: string): ManifestObject {
  const found = objects.filter((o) => o.kind === kind);
  if (found.length !== 1) throw new Error(`deploy/daemonset.yaml holds ${found.length} ${kind} objects, expected one`);
  return found[0] as ManifestObject;
}

/** Applies the RBAC objects (in manifest order: the Namespace first) and requests a token (valid an hour unless told). */
export async function installAgentIdentity(admin: ApiClient, manifest: readonly ManifestObject[] = loadManifest(), tokenExpirationSeconds = 3600): Promise<AgentIdentity> {
  for (const object of manifest.filter((o) => RBAC_KINDS.includes(o.kind))) await applyObject(admin, object);
  const sa = single(manifest, 'ServiceAccount');
  const role = single(manifest, 'ClusterRole');
  const namespace = sa.metadata.namespace ?? 'default';
  const token = await serviceAccountToken(admin, namespace, sa.metadata.name, tokenExpirationSeconds);
  return { namespace, serviceAccount: sa.metadata.name, clusterRole: role.metadata.name, username: `system:serviceaccount:${namespace}:${sa.metadata.name}`, token };
}

/** A token from the TokenRequest API (what a projected service-account token volume holds). */
export async function serviceAccountToken(admin: ApiClient, namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
  const answer = await admin.create<{ status: { token: string } }>(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds },
  });
  return answer.status.token;
}
