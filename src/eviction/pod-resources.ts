// A pod's effective requests, limits and priority, computed the way the kubelet's eviction code
// computes them (`v1resource.GetResourceRequestQuantity`, `resourcehelper.PodRequests` /
// `PodLimits`, `corev1helpers.PodPriority`): app containers summed, sidecars (restartable init
// containers) added, init containers by max, pod-level resources, and pod overhead. Quantities are
// exact; the `Quantity` forms keep apimachinery's format so messages print as the kubelet prints.
// A pod's figures depend on its spec alone and every pass asks again for every pod, so each is
// computed once per Pod object: the engine's callers hand it pods they no longer change (an
// informer's or a recording's objects, replaced, never edited, when the pod changes).

import type { Container, Pod, ResourceList } from '../api/pod.js';
import { parseQuantity, quantityValue, type Quantity, type QuantityFormat } from '../api/quantity.js';

/** The resources eviction ranks and limits by. */
export type PodResourceName = 'memory' | 'ephemeral-storage';

type QuantityList = Map<string, Quantity>;

/** `v1.ContainerRestartPolicyAlways` on an init container marks a sidecar. */
const RESTART_POLICY_ALWAYS = 'Always';

/**
 * One entry of a resource list as an exact quantity, or undefined when it is absent. An entry
 * that does not parse counts as absent: the API server never stores one, and a bad entry in a
 * replayed recording must not stop every other decision.
 */
export function resourceQuantity(list: ResourceList | undefined, name: string): Quantity | undefined {
  return optionalQuantity(list?.[name]);
}

/** A quantity field (`sizeLimit`, a resource list entry) as an exact quantity; undefined when absent or malformed. */
export function optionalQuantity(raw: unknown): Quantity | undefined {
  if (raw === undefined || raw === null) return undefined;
  try {
    return parseQuantity(String(raw));
  } catch {
    return undefined;
  }
}

function toQuantityList(list: ResourceList | undefined): QuantityList {
  const result: QuantityList = new Map();
  for (const name of Object.keys(list ?? {})) {
    const quantity = resourceQuantity(list, name);
    if (quantity !== undefined) result.set(name, quantity);
  }
  return result;
}

/** apimachinery `Quantity.Add`: a zero receiver takes the addend's format, otherwise it keeps its own. */
function addQuantities(a: Quantity, b: Quantity): Quantity {
  return { nanos: a.nanos + b.nanos, format: a.nanos === 0n ? b.format : a.format };
}

function addResourceList(list: QuantityList, newList: QuantityList): void {
  for (const [name, quantity] of newList) {
    const value = list.get(name);
    list.set(name, value === undefined ? quantity : addQuantities(value, quantity));
  }
}

/** Keeps the greater of each entry; a tie keeps the existing one (and so its format). */
function maxResourceList(list: QuantityList, newList: QuantityList): void {
  for (const [name, quantity] of newList) {
    const value = list.get(name);
    if (value === undefined || quantity.nanos > value.nanos) list.set(name, quantity);
  }
}

/**
 * `aggregateContainerResourcesByFn`: the sum of app containers and sidecars, raised to the peak an
 * init container needs while it runs. Init container i needs its own resources plus every sidecar
 * started before it (KEP-753), so a sidecar counts both in the sum and in later init peaks.
 */
function aggregateContainerResources(pod: Pod, pick: (container: Container) => ResourceList | undefined): QuantityList {
  const result: QuantityList = new Map();
  for (const container of pod.spec.containers ?? []) addResourceList(result, toQuantityList(pick(container)));

  const restartableInitContainerResources: QuantityList = new Map();
  const initContainerResources: QuantityList = new Map();
  for (const container of pod.spec.initContainers ?? []) {
    const own = toQuantityList(pick(container));
    let peak: QuantityList;
    if (container.restartPolicy === RESTART_POLICY_ALWAYS) {
      addResourceList(result, own);
      addResourceList(restartableInitContainerResources, own);
      peak = restartableInitContainerResources;
    } else {
      peak = new Map();
      addResourceList(peak, own);
      addResourceList(peak, restartableInitContainerResources);
    }
    maxResourceList(initContainerResources, peak);
  }
  maxResourceList(result, initContainerResources);
  return result;
}

// Pod-level resources (`PodLevelResources`) cover cpu, memory and hugepages only; ephemeral-storage
// is never taken from the pod level.
function isSupportedPodLevelResource(name: string): boolean {
  return name === 'cpu' || name === 'memory' || name.startsWith('hugepages-');
}

function hasSupportedEntry(list: ResourceList | undefined): boolean {
  return Object.keys(list ?? {}).some(isSupportedPodLevelResource);
}

/** `resourcehelper.IsPodLevelResourcesSet`: pod-level requests or limits name a supported resource. */
export function isPodLevelResourcesSet(pod: Pod): boolean {
  return hasSupportedEntry(pod.spec.resources?.requests) || hasSupportedEntry(pod.spec.resources?.limits);
}

/** `resourcehelper.IsPodLevelRequestsSet`. */
export function isPodLevelRequestsSet(pod: Pod): boolean {
  return hasSupportedEntry(pod.spec.resources?.requests);
}

function applyPodLevelResources(result: QuantityList, podLevel: ResourceList | undefined): void {
  for (const [name, quantity] of toQuantityList(podLevel)) {
    if (isSupportedPodLevelResource(name)) result.set(name, quantity);
  }
}

// The zero value GetResourceRequestQuantity starts from; it only decides how a zero request prints.
function zeroQuantity(resourceName: string): Quantity {
  const format: QuantityFormat = resourceName === 'memory' || resourceName === 'storage' || resourceName === 'ephemeral-storage' ? 'BinarySI' : 'DecimalSI';
  return { nanos: 0n, format };
}

/**
 * The pod's effective request for one resource, exact (kubelet `GetResourceRequestQuantity`).
 * With pod-level resources set and the `PodLevelResources` gate on (its default since Kubernetes
 * 1.34), container requests are ignored and only the pod-level cpu/memory requests count, so such
 * a pod requests no ephemeral-storage at all; with the gate off, the containers' requests are summed
 * and pod-level requests replace the sum for the resources they name. Overhead is added only to a non-zero
 * total. Resources nobody can request (`inodes`) come out as 0.
 */
export function podRequestQuantity(pod: Pod, resourceName: string, podLevelResources = true): Quantity {
  // The gate is part of the key: the same pod may be ranked under both settings (a reload).
  return remembered(requestsByPod, pod, podLevelResources ? resourceName : `${resourceName}\u0000container-level`, (p) => computePodRequestQuantity(p, resourceName, podLevelResources));
}

const requestsByPod = new WeakMap<Pod, Map<string, Quantity>>();
const limitsByPod = new WeakMap<Pod, Map<string, Quantity | null>>();

function remembered<T>(cache: WeakMap<Pod, Map<string, T>>, pod: Pod, resourceName: string, compute: (pod: Pod, resourceName: string) => T): T {
  let figures = cache.get(pod);
  if (figures === undefined) {
    figures = new Map();
    cache.set(pod, figures);
  }
  if (figures.has(resourceName)) return figures.get(resourceName) as T;
  const value = compute(pod, resourceName);
  figures.set(resourceName, value);
  return value;
}

// With the gate off the kubelet still applies pod-level requests over the containers' sum
// (`PodRequests` skips them only when asked to), but no longer ignores the containers' own.
function computePodRequestQuantity(pod: Pod, resourceName: string, podLevelResources: boolean): Quantity {
  const skipContainers = podLevelResources && isPodLevelResourcesSet(pod);
  const requests: QuantityList = skipContainers ? new Map() : aggregateContainerResources(pod, (c) => c.resources?.requests);
  if (isPodLevelRequestsSet(pod)) applyPodLevelResources(requests, pod.spec.resources?.requests);

  let request = zeroQuantity(resourceName);
  const summed = requests.get(resourceName);
  if (summed !== undefined) request = addQuantities(request, summed);
  const overhead = resourceQuantity(pod.spec.overhead, resourceName);
  if (overhead !== undefined && request.nanos !== 0n) request = addQuantities(request, overhead);
  return request;
}

/** {@link podRequestQuantity} in whole units (bytes), rounded up as apimachinery's `Value()`. */
export function podRequest(pod: Pod, resource: PodResourceName, podLevelResources = true): bigint {
  return quantityValue(podRequestQuantity(pod, resource, podLevelResources));
}

/**
 * The pod's effective limit (`resourcehelper.PodLimits` with default options): containers that
 * set it summed, sidecars added, init containers by max, pod-level limits for the resources they
 * support, and overhead added to a non-zero limit. Null when no container sets it.
 */
export function podLimitQuantity(pod: Pod, resourceName: string): Quantity | null {
  return remembered(limitsByPod, pod, resourceName, computePodLimitQuantity);
}

function computePodLimitQuantity(pod: Pod, resourceName: string): Quantity | null {
  const limits = aggregateContainerResources(pod, (c) => c.resources?.limits);
  if (isPodLevelResourcesSet(pod)) applyPodLevelResources(limits, pod.spec.resources?.limits);
  const limit = limits.get(resourceName);
  if (limit === undefined) return null;
  const overhead = resourceQuantity(pod.spec.overhead, resourceName);
  return overhead !== undefined && limit.nanos !== 0n ? addQuantities(limit, overhead) : limit;
}

/** {@link podLimitQuantity} in whole units (bytes); null when no container sets the limit. */
export function podLimit(pod: Pod, resource: PodResourceName): bigint | null {
  const limit = podLimitQuantity(pod, resource);
  return limit === null ? null : quantityValue(limit);
}

/** `corev1helpers.PodPriority`: `spec.priority`, or 0 when it is unset. */
export function podPriority(pod: Pod): number {
  return pod.spec.priority ?? 0;
}
