// The agent's token as the kubelet mounts it into the agent's pod: the DaemonSet's own pod template
// bound to a node (no scheduler or DaemonSet controller runs, so the test creates the pod), and a
// TokenRequest bound to that pod. The API server then names the pod's node in the identity of every
// request made with the token (user.extra["authentication.kubernetes.io/node-name"]), which the
// policies of deploy/node-restriction.yaml hold the agent to.

import type { ApiClient } from './api-client.js';
import type { AgentIdentity } from './agent-identity.js';
import type { ControlPlane } from './control-plane.js';
import { loadManifest } from './manifest.js';

export interface AgentPod {
  readonly name: string;
  readonly uid: string;
  readonly nodeName: string;
  /** A token bound to the pod, as the kubelet's projected service-account token volume holds. */
  readonly token: string;
}

/** The DaemonSet's pod, bound to `nodeName`, and a token bound to it. */
export async function agentPodOnNode(admin: ApiClient, identity: AgentIdentity, nodeName: string): Promise<AgentPod> {
  const daemonSet = loadManifest().find((o) => o.kind === 'DaemonSet') as { spec: { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> } } } | undefined;
  if (daemonSet === undefined) throw new Error('deploy/daemonset.yaml holds no DaemonSet');
  const name = `kube-eviction-agent-${nodeName}`;
  const pod = await admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${identity.namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { ...daemonSet.spec.template.metadata, name },
    spec: { ...daemonSet.spec.template.spec, nodeName },
  });
  const answer = await admin.create<{ status: { token: string } }>(`/api/v1/namespaces/${identity.namespace}/serviceaccounts/${identity.serviceAccount}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 3600, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid: pod.metadata.uid } },
  });
  return { name, uid: pod.metadata.uid, nodeName, token: answer.status.token };
}

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups?: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

/** Who the API server says a token is (SelfSubjectReview): what admission sees as request.userInfo. */
export async function whoAmI(plane: ControlPlane, token: string): Promise<UserInfo> {
  const review = await plane.client(token).create<{ status: { userInfo: UserInfo } }>('/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return review.status.userInfo;
}
