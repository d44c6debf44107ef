// The QoS class the API server stamps on a new pod, which the agent ranks pods by.

import { compareQuantity, parseQuantity, type Quantity } from '../../api/quantity.js';
import { isObject, type JsonObject } from './json.js';

/** The QoS class the API server stamps on a new pod (`GetPodQOS`): from cpu and memory only. */
export function qosClassOf(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])].filter(isObject);
  const quantity = (value: unknown): Quantity | null => {
    if (typeof value !== 'string') return null;
    try {
      return parseQuantity(value);
    } catch {
      return null;
    }
  };
  const nonZero = (value: unknown): boolean => (quantity(value)?.nanos ?? 0n) !== 0n;
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const container of containers) {
    const resources = isObject(container.resources) ? container.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    for (const resource of ['cpu', 'memory']) {
      const request = requests[resource];
      const limit = limits[resource];
      if (nonZero(request) || nonZero(limit)) anySet = true;
      // Guaranteed: a limit for both, and any request equal to it (an absent request defaults to the limit).
      const limitQuantity = quantity(limit);
      const requestQuantity = quantity(request);
      if (limitQuantity === null || limitQuantity.nanos === 0n) guaranteed = false;
      else if (requestQuantity !== null && compareQuantity(requestQuantity, limitQuantity) !== 0) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
