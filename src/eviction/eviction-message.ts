// The message and event annotations the kubelet attaches to a threshold eviction
// (`evictionMessage`, `getThresholdMetInfo`): the starved resource, the threshold and what was
// available, and which containers (and, with pod-level resources, the pod) used more than they
// requested. Users grep for these strings, so they match upstream byte for byte, each sentence
// ending in ". " with the trailing space.

import type { Pod } from '../api/pod.js';
import { compareQuantity, formatQuantity, quantityFromInteger, type Quantity } from '../api/quantity.js';
import { signalToResource, type ResourceName, type Signal } from '../api/signals.js';
import type { ContainerStats } from '../api/summary.js';
import { isPodLevelResourcesSet, resourceQuantity } from './pod-resources.js';
import { memoryUsage, type StatsFunc } from './ranking.js';

/** Event annotation keys (kubelet `helpers.go`). */
export const OFFENDING_CONTAINERS_KEY = 'offending_containers';
export const OFFENDING_CONTAINERS_USAGE_KEY = 'offending_containers_usage';
export const OFFENDING_POD_KEY = 'offending_pod';
export const OFFENDING_POD_USAGE_KEY = 'offending_pod_usage';
export const STARVED_RESOURCE_KEY = 'starved_resource';

/** A met threshold as the message prints it: the threshold as a quantity of capacity, and what was available. */
export interface ThresholdMetInfo {
  readonly signal: Signal;
  readonly quantity: Quantity;
  readonly available: Quantity;
}

const ZERO_REQUEST: Quantity = { nanos: 0n, format: 'DecimalSI' };

// What a container used of the starved resource; undefined when its stats cannot say (PIDs and
// inodes are never attributed to containers).
function containerUsage(resource: ResourceName, containerStats: ContainerStats): bigint | undefined {
  if (resource === 'ephemeral-storage') {
    const rootfsBytes = containerStats.rootfs?.usedBytes;
    const logsBytes = containerStats.logs?.usedBytes;
    if (rootfsBytes === undefined || rootfsBytes === null || logsBytes === undefined || logsBytes === null) return undefined;
    return BigInt(Math.trunc(rootfsBytes)) + BigInt(Math.trunc(logsBytes));
  }
  if (resource === 'memory') {
    const workingSetBytes = containerStats.memory?.workingSetBytes;
    return workingSetBytes === undefined || workingSetBytes === null ? undefined : BigInt(Math.trunc(workingSetBytes));
  }
  return undefined;
}

/**
 * The eviction message and annotations for `pod`, evicted to reclaim `resource`.
 *
 * `thresholdsMet` is the pass's list of met thresholds in the order they were sorted, each with
 * its quantity and the observed available amount; the first one whose signal starves `resource`
 * is quoted. Thresholds without an observation must be left out by the caller (the kubelet skips
 * them). A pod without stats gets the node sentences only and no annotations. Container sentences
 * follow the stats order and match app and init containers by name (never ephemeral containers,
 * which cannot set requests). The pod's own sentence needs the `PodLevelResources` gate
 * (`podLevelResources`, on by default since Kubernetes 1.34). `hugepagesSubtractedBytes` is what the
 * observation subtracted from memory.available for hugepages; when not 0, a memory.available
 * eviction says so after the threshold sentence.
 */
export function evictionMessage(
  resource: ResourceName,
  pod: Pod,
  stats: StatsFunc,
  thresholdsMet: readonly ThresholdMetInfo[],
  podLevelResources = true,
  hugepagesSubtractedBytes = 0n,
): { message: string; annotations: Record<string, string> } {
  const annotations: Record<string, string> = {};
  let message = `The node was low on resource: ${resource}. `;
  const met = thresholdsMet.find((threshold) => signalToResource[threshold.signal] === resource);
  if (met !== undefined) {
    message += `Threshold quantity: ${formatQuantity(met.quantity)}, available: ${formatQuantity(met.available)}. `;
    // Beyond the kubelet's wording: the figure a reader would check against free memory left out
    // the hugepage pools (HugepageAwareEviction), and the message says by how much.
    if (met.signal === 'memory.available' && hugepagesSubtractedBytes > 0n) {
      message += `Available excludes ${formatQuantity(quantityFromInteger(hugepagesSubtractedBytes))} of hugepages. `;
    }
  }
  const podStats = stats(pod);
  if (podStats === undefined) return { message, annotations };

  if (resource === 'memory' && podLevelResources && isPodLevelResourcesSet(pod)) {
    const podRequest = resourceQuantity(pod.spec.resources?.requests, resource);
    if (podRequest !== undefined && podStats.memory !== undefined && podStats.memory !== null) {
      // Printed whether or not the pod is over its request, as upstream.
      const podName = pod.metadata.name ?? '';
      const podUsage = formatQuantity(quantityFromInteger(memoryUsage(podStats)));
      message += `Pod ${podName} was using ${podUsage}, request is ${formatQuantity(podRequest)}, has larger consumption of ${resource}. `;
      annotations[OFFENDING_POD_KEY] = podName;
      annotations[OFFENDING_POD_USAGE_KEY] = podUsage;
    }
  }

  const containers = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])];
  const exceededContainers: string[] = [];
  const exceededContainersUsage: string[] = [];
  for (const containerStats of podStats.containers ?? []) {
    const container = containers.find((c) => c.name === containerStats.name);
    if (container === undefined) continue;
    const request = resourceQuantity(container.resources?.requests, resource) ?? ZERO_REQUEST;
    const usageBytes = containerUsage(resource, containerStats);
    if (usageBytes === undefined) continue;
    const usage = quantityFromInteger(usageBytes);
    if (compareQuantity(usage, request) > 0) {
      const printedUsage = formatQuantity(usage);
      message += `Container ${container.name} was using ${printedUsage}, request is ${formatQuantity(request)}, has larger consumption of ${resource}. `;
      exceededContainers.push(container.name);
      exceededContainersUsage.push(printedUsage);
    }
  }
  annotations[OFFENDING_CONTAINERS_KEY] = exceededContainers.join(',');
  annotations[OFFENDING_CONTAINERS_USAGE_KEY] = exceededContainersUsage.join(',');
  annotations[STARVED_RESOURCE_KEY] = resource;
  return { message, annotations };
}
