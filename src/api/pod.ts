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
  status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[]; nodeInfo?: NodeSystemInfo };
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
