// Builders and small API helpers for the objects the end-to-end tests create as admin: namespaces,
// pods already bound to a node (no scheduler runs), PodDisruptionBudgets with the status the
// disruption controller would have computed (it does not run either), taints, and Event listings.

import { parseQuantity, quantityValue } from '../../../src/api/quantity.js';
import { CONTENT_TYPE, type ApiClient } from './api-client.js';
import { MEMORY_ANNOTATION } from './fake-kubelet.js';

const MiB = 1024 * 1024;

export interface TestPodOptions {
  readonly nodeName: string;
  /** Memory the pod's process holds from the start, beyond Node's own footprint (default 16 MiB). */
  readonly memoryBytes?: number;
  /** The container's memory request (default 16Mi; null for none). */
  readonly requestsMemory?: string | null;
  readonly limitsMemory?: string;
  readonly priorityClassName?: string;
  readonly labels?: Record<string, string>;
  readonly annotations?: Record<string, string>;
  readonly tolerations?: readonly Record<string, unknown>[];
  readonly terminationGracePeriodSeconds?: number;
  readonly ownerReferences?: readonly Record<string, unknown>[];
}

/** A pod bound to `nodeName`, with one container and the fake kubelet's memory annotation. */
export function testPod(name: string, options: TestPodOptions): Record<string, unknown> {
  const requests = options.requestsMemory === null ? undefined : { memory: options.requestsMemory ?? '16Mi' };
  const resources = { ...(requests === undefined ? {} : { requests }), ...(options.limitsMemory === undefined ? {} : { limits: { memory: options.limitsMemory } }) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: name, ...options.labels },
      annotations: { [MEMORY_ANNOTATION]: String(options.memoryBytes ?? 16 * MiB), ...options.annotations },
      ...(options.ownerReferences === undefined ? {} : { ownerReferences: options.ownerReferences }),
    },
    spec: {
      nodeName: options.nodeName,
      containers: [{ name: 'main', image: 'registry.example/e2e-workload:1', resources }],
      terminationGracePeriodSeconds: options.terminationGracePeriodSeconds ?? 30,
      ...(options.priorityClassName === undefined ? {} : { priorityClassName: options.priorityClassName }),
      ...(options.tolerations === undefined ? {} : { tolerations: options.tolerations }),
    },
  };
}

export async function createNamespace(admin: ApiClient, name: string): Promise<void> {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
}

/**
 * What a controller manager publishes in a namespace for its pods to start under ServiceAccount
 * admission: the `default` ServiceAccount, and the kube-root-ca.crt ConfigMap that projected
 * service-account volumes read. For a control plane that runs none (the cgroup v2 guest's).
 */
export async function publishNamespaceDefaults(admin: ApiClient, namespace: string, caPem: string): Promise<void> {
  await admin.create(`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } });
  await admin.create(`/api/v1/namespaces/${namespace}/configmaps`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'kube-root-ca.crt' }, data: { 'ca.crt': caPem } });
}

export interface PodLike {
  metadata: { name: string; namespace: string; uid: string; generation?: number; deletionTimestamp?: string; deletionGracePeriodSeconds?: number; annotations?: Record<string, string>; labels?: Record<string, string> };
  spec: { priority?: number; nodeName?: string };
  status?: { phase?: string; qosClass?: string; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

export async function createPod(api: ApiClient, namespace: string, pod: Record<string, unknown>): Promise<PodLike> {
  return api.create<PodLike>(`/api/v1/namespaces/${namespace}/pods`, pod);
}

/** The pod, or null when it does not exist. */
export async function getPod(api: ApiClient, namespace: string, name: string): Promise<PodLike | null> {
  const answer = await api.request<PodLike>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`);
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw new Error(`GET pod ${namespace}/${name}: ${answer.status} ${answer.text}`);
  return answer.body;
}

export interface PdbStatus {
  readonly disruptionsAllowed: number;
  readonly currentHealthy: number;
  readonly desiredHealthy: number;
  readonly expectedPods: number;
}

/**
 * Creates a policy/v1 PodDisruptionBudget and sets the status the disruption controller would
 * have computed, with observedGeneration = generation, so the Eviction API enforces it.
 */
export async function createPdb(admin: ApiClient, namespace: string, name: string, spec: Record<string, unknown>, status: PdbStatus): Promise<void> {
  const created = await admin.create<{ metadata: { generation: number } }>(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets`, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name },
    spec,
  });
  await admin.patch(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/${name}/status`, { status: { ...status, observedGeneration: created.metadata.generation, disruptedPods: {} } }, CONTENT_TYPE.mergePatch);
}

export async function getPdbStatus(admin: ApiClient, namespace: string, name: string): Promise<{ disruptionsAllowed: number; disruptedPods?: Record<string, string> }> {
  return (await admin.get<{ status: { disruptionsAllowed: number; disruptedPods?: Record<string, string> } }>(`/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/${name}`)).status;
}

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: string;
  readonly timeAdded?: string;
}

interface NodeLike {
  metadata: { resourceVersion: string };
  spec?: { taints?: Taint[] };
}

/**
 * Adds or removes a taint on a node as an admin would, keeping the node's other taints; sets
 * timeAdded on a NoExecute taint as the node lifecycle controller would (nothing else does here).
 * Guarded by the resourceVersion, retried on a conflict.
 */
export async function setTaint(admin: ApiClient, nodeName: string, taint: Taint, present: boolean): Promise<void> {
  for (let attempt = 0; attempt < 10; attempt++) {
    const node = await admin.get<NodeLike>(`/api/v1/nodes/${nodeName}`);
    const others = (node.spec?.taints ?? []).filter((t) => !(t.key === taint.key && t.effect === taint.effect));
    const taints = present ? [...others, { ...taint, ...(taint.effect === 'NoExecute' && taint.timeAdded === undefined ? { timeAdded: new Date().toISOString().replace(/\.\d+Z$/, 'Z') } : {}) }] : others;
    const answer = await admin.request('PATCH', `/api/v1/nodes/${nodeName}`, {
      contentType: CONTENT_TYPE.mergePatch,
      body: { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints } },
    });
    if (answer.status === 200) return;
    if (answer.status !== 409) throw new Error(`tainting ${nodeName}: ${answer.status} ${answer.text}`);
  }
  throw new Error(`tainting ${nodeName}: kept conflicting`);
}

export interface EventLike {
  metadata: { name: string; namespace: string; annotations?: Record<string, string> };
  involvedObject: { kind: string; name: string; namespace?: string; uid?: string };
  reason: string;
  message: string;
  type: string;
  count?: number;
  source?: { component?: string; host?: string };
  reportingComponent?: string;
  reportingInstance?: string;
  firstTimestamp?: string;
}

/**
 * The offending containers' usage an Evicted Event carries, in bytes: a Quantity as the kubelet
 * prints it (in Ki, or in Mi when that is exact, about one figure in 256); NaN when it has none.
 */
export function offendingUsageBytes(event: Pick<EventLike, 'metadata'> | undefined): number {
  const usage = event?.metadata.annotations?.offending_containers_usage;
  if (usage === undefined) return Number.NaN;
  try {
    return Number(quantityValue(parseQuantity(usage)));
  } catch {
    return Number.NaN;
  }
}

/** Core/v1 Events in a namespace, optionally only those with this reason. */
export async function listEvents(admin: ApiClient, namespace: string, reason?: string): Promise<EventLike[]> {
  const list = await admin.get<{ items: EventLike[] }>(`/api/v1/namespaces/${namespace}/events`, reason === undefined ? undefined : { fieldSelector: `reason=${reason}` });
  return list.items;
}

/** One condition of a node's status. */
export async function nodeCondition(admin: ApiClient, nodeName: string, type: string): Promise<{ status: string; reason?: string; lastTransitionTime?: string } | undefined> {
  const node = await admin.get<{ status?: { conditions?: { type: string; status: string; reason?: string; lastTransitionTime?: string }[] } }>(`/api/v1/nodes/${nodeName}`);
  return node.status?.conditions?.find((c) => c.type === type);
}
