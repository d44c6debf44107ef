// Fresh reads of one node for `record`: its pods and its Node object from the API server, and the
// kubelet's Summary through the API server's node proxy (`nodes/<name>/proxy/stats/summary`, the
// `nodes/proxy` permission). No cache: each call is one bounded request, and a failure rejects.

import type { Node, Pod } from '../api/pod.js';
import { KubeApiError } from '../errors.js';
import type { ApiCaller } from './api-call.js';
import type { CoreV1Api } from './client-library.js';
import { toWire } from './wire.js';

export interface NodeReads {
  /** The pods bound to the node, as `kubectl get pods -o json` prints them. */
  listPods(): Promise<Pod[]>;
  /** The Node object; null when it does not exist (404). */
  getNode(): Promise<Node | null>;
  /** The kubelet's `/stats/summary`, parsed JSON (unvalidated: the caller checks it). */
  kubeletSummary(): Promise<unknown>;
}

export function createNodeReads(deps: { readonly core: CoreV1Api; readonly caller: ApiCaller; readonly nodeName: string }): NodeReads {
  const { core, caller, nodeName } = deps;
  const fail = (what: string, failure: { status: number; message: string }): never => {
    throw new KubeApiError(failure.status, `Reading ${what} failed: ${failure.message}`);
  };
  return {
    async listPods() {
      const fieldSelector = `spec.nodeName=${nodeName}`;
      const result = await caller.call((options) => core.listPodForAllNamespaces({ fieldSelector }, options));
      if (!result.ok) return fail(`the pods of node ${nodeName}`, result.failure);
      return toWire<{ items?: Pod[] }>(result.value).items ?? [];
    },
    async getNode() {
      const result = await caller.call((options) => core.readNode({ name: nodeName }, options));
      if (result.ok) return toWire<Node>(result.value);
      if (result.failure.status === 404) return null;
      return fail(`node ${nodeName}`, result.failure);
    },
    async kubeletSummary() {
      const result = await caller.call((options) => core.connectGetNodeProxyWithPath({ name: nodeName, path: 'stats/summary' }, options));
      if (!result.ok) return fail(`the kubelet's summary of node ${nodeName}`, result.failure);
      const text: unknown = result.value;
      if (typeof text !== 'string') return text;
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new KubeApiError(0, `The kubelet's summary of node ${nodeName} is not JSON: ${text.slice(0, 80)}`);
      }
    },
  };
}
