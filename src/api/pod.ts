// The subset of core/v1 Pod and Node the engine reads, structurally compatible with the
// Kubernetes client's types and with `kubectl get -o json` output. The core never depends on
// the client library, so a change there cannot change a decision here.

export type ResourceList = Record<string, string>;

export interface ResourceRequirements {
  requests?: ResourceList;
  limits?: ResourceList;
}

export interface Container {
  name: string;
  resources?: ResourceRequirements;
  /** `Always` marks a restartable init container (a sidecar). */
  restartPolicy?: string;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string } | null;
  hostPath?: { path: string; type?: string } | null;
  configMap?: unknown;
  gitRepo?: unknown;
  [source: string]: unknown;
}

export interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | null;
}

export interface Taint {
  key: string;
  value?: string;
  effect: string;
  timeAdded?: string | Date | null;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** A namespaced object an Event can be about besides a pod or the Node: an owning controller (a Deployment, a StatefulSet, ...). */
export interface ObjectRef {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  /** Null when only the name is known; `kubectl describe` finds an Event by it, so it is set whenever it can be. */
  readonly uid: string | null;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string | Date | null;
  /** The grace period of a deletion under way, in seconds (set with deletionTimestamp). */
  deletionGracePeriodSeconds?: number | null;
  creationTimestamp?: string | Date | null;
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string | Date;
}

export interface ContainerStatus {
  name: string;
  containerID?: string;
  state?: { running?: unknown; terminated?: unknown; waiting?: unknown };
}

export interface PodSpec {
  nodeName?: string;
  priority?: number | null;
  priorityClassName?: string;
  containers: Container[];
  initContainers?: Container[];
  overhead?: ResourceList;
  /** Pod-level resources (`PodLevelResources`). */
  resources?: ResourceRequirements;
  volumes?: Volume[];
  terminationGracePeriodSeconds?: number | null;
  tolerations?: Toleration[];
}

export interface PodStatus {
  phase?: string;
  reason?: string;
  qosClass?: string;
  conditions?: PodCondition[];
  containerStatuses?: ContainerStatus[];
  initContainerStatuses?: ContainerStatus[];
  ephemeralContainerStatuses?: ContainerStatus[];
}

export interface Pod {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: PodSpec;
  status?: PodStatus;
}

export interface Node {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: { taints?: Taint[]; unschedulable?: boolean };
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
    nodeInfo?: NodeSystemInfo;
    /** Resource quantities as the kubelet registered them (`hugepages-2Mi`, `memory`, ...). */
    capacity?: Record<string, string>;
  };
}

/** The part of a Node's `status.nodeInfo` that names the machine (the kubelet fills it at registration and after a reboot). */
export interface NodeSystemInfo {
  bootID?: string;
  machineID?: string;
  systemUUID?: string;
}

/** `namespace/name`, the key the kubelet and the taint manager print. */
export function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

// The API server names every object with a random UUID (8-4-4-4-12 lowercase hex digits); the
// kubelet names a static pod after a hash of its manifest (32 lowercase hex digits), which its mirror
// pod carries in the `kubernetes.io/config.mirror` annotation (node-pod-uid.ts). Nothing else may
// become part of a cgroup path: a UID is spliced into `kubepods/<qos>/pod<uid>`, so `..` or a `/` in
// it would point anywhere on the host.

/** Whether a pod UID has the API server's UUID form or a static pod's hash form (the only ones a pod cgroup is named after). */
const UUID_FORM = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// `hex.EncodeToString(fnv.New128a().Sum(nil))` in the kubelet's `applyDefaults`.
const GENERATED_STATIC_POD_UID = /^[0-9a-f]{32}$/;

export function isPodUid(uid: unknown): uid is string {
  return typeof uid === 'string' && (UUID_FORM.test(uid) || GENERATED_STATIC_POD_UID.test(uid));
}

/**
 * Why a pod whose UID another listed pod also has is refused: the API server gives every pod its
 * own, and two pods under one UID would have their stats, cgroup and processes taken for each
 * other's, so none of them is trusted. The first three of `others` are named, as `show` writes
 * them (only those: a thousand pods may share one UID); the rest of `otherCount` are counted.
 */
export function sharedPodUidReason<T>(uid: string, others: readonly T[], show: (other: T) => string, otherCount = others.length): string {
  const named = others.slice(0, 3).map(show).join(', ');
  return `the pod UID ${uid} is also listed for ${named}${otherCount > 3 ? ` and ${otherCount - 3} more` : ''}: the API server gives every pod its own`;
}

/** An outside value (a UID, a name) as it may be shown in a log line: bounded, quoted, control characters escaped. */
export function printableValue(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  const shown = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
  return `${shown} (${text.length} characters)`;
}

// The API server's own syntax for the names that reach host paths (`<namespace>_<name>_<uid>` of a
// pod's log directory): a DNS-1123 label for a namespace, a DNS-1123 subdomain for a pod name.
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Why a pod's identity cannot be used to find its files on the host (a UID not in the API server's
 * form, a name or namespace outside the Kubernetes syntax), or null when it can.
 */
export function podIdentityProblem(pod: Pod): string | null {
  const { uid, name, namespace } = pod.metadata;
  if (!isPodUid(uid)) return `the pod UID ${printableValue(uid)} is not in the API server's form`;
  if (typeof name !== 'string' || name.length > 253 || !DNS_SUBDOMAIN.test(name)) return `the pod name ${printableValue(name)} is not a DNS-1123 subdomain`;
  if (typeof namespace !== 'string' || namespace.length > 63 || !DNS_LABEL.test(namespace)) return `the namespace ${printableValue(namespace)} is not a DNS-1123 label`;
  return null;
}
