// The ClusterView port over the API server: this node's pods (a field selector on spec.nodeName,
// which the agent checks again in src/daemon/node-pod-filter.ts) and this node's object, each
// kept by a reflector that relists and reconnects on its own. It never throws on API errors; it
// logs and retries.

import type { ConfigurationOptions } from '@kubernetes/client-node';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node, Pod } from '../api/pod.js';
import type { ClusterView } from '../daemon/ports.js';
import { errorMessage, KubeApiError } from '../errors.js';
import type { ApiCaller } from './api-call.js';
import type { BackoffPolicy } from '../api/backoff.js';
import type { ClientLibrary, CoreV1Api, KubeConfig } from './client-library.js';
import { Reflector } from './reflector.js';
import { toWire } from './wire.js';

/** A ClusterView with its lifecycle. */
export interface ClusterViewHandle extends ClusterView {
  /** Starts both watches; resolves after the first list attempts (check `synced`). Never rejects. */
  start(): Promise<void>;
  /** Stops both watches for good; idempotent. */
  stop(): Promise<void>;
  /** Resolves true once synced, false if stopped first. */
  whenSynced(): Promise<boolean>;
}

export interface KubeClusterViewDeps {
  readonly lib: ClientLibrary;
  readonly kubeConfig: KubeConfig;
  readonly core: CoreV1Api;
  readonly caller: ApiCaller;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly backoff?: BackoffPolicy | undefined;
  readonly random?: (() => number) | undefined;
  readonly minWatchTimeoutSeconds?: number | undefined;
}

type PodListener = (oldPod: Pod | null, newPod: Pod | null) => void;
type NodeListener = (oldNode: Node | null, newNode: Node | null) => void;

export class KubeClusterView implements ClusterViewHandle {
  private readonly podReflector: Reflector<Pod>;
  private readonly nodeReflector: Reflector<Node>;
  private readonly podListeners = new Set<PodListener>();
  private readonly nodeListeners = new Set<NodeListener>();

  constructor(private readonly deps: KubeClusterViewDeps) {
    const { lib, kubeConfig, core, caller, nodeName, clock, logger } = deps;
    const common = { lib, kubeConfig, clock, logger, backoff: deps.backoff, random: deps.random, minWatchTimeoutSeconds: deps.minWatchTimeoutSeconds };
    // One reflector per resource: a list through the bounded caller (`what` names it when it
    // fails), then a watch of the same selection.
    const reflector = <T extends Pod | Node>(
      resource: string,
      path: string,
      fieldSelector: string,
      what: string,
      list: (options: ConfigurationOptions) => Promise<{ metadata?: { resourceVersion?: string }; items: unknown[] }>,
      onChange: (oldObject: T | null, newObject: T | null) => void,
    ): Reflector<T> =>
      new Reflector<T>({
        ...common,
        resource,
        path,
        fieldSelector,
        list: async () => {
          const result = await caller.call(list);
          if (!result.ok) throw new KubeApiError(result.failure.status, `${what} failed: ${result.failure.message}`);
          return { resourceVersion: result.value.metadata?.resourceVersion ?? '', items: result.value.items.map((item) => toWire<T>(item)) };
        },
        onChange,
      });
    const podSelector = `spec.nodeName=${nodeName}`;
    const nodeSelector = `metadata.name=${nodeName}`;
    this.podReflector = reflector<Pod>(
      'pods',
      '/api/v1/pods',
      podSelector,
      `Listing the pods of node ${nodeName}`,
      (options) => core.listPodForAllNamespaces({ fieldSelector: podSelector }, options),
      (oldPod, newPod) => this.emit(this.podListeners, oldPod, newPod),
    );
    this.nodeReflector = reflector<Node>(
      'node',
      '/api/v1/nodes',
      nodeSelector,
      `Reading node ${nodeName}`,
      (options) => core.listNode({ fieldSelector: nodeSelector }, options),
      (oldNode, newNode) => this.emit(this.nodeListeners, oldNode, newNode),
    );
  }

  get synced(): boolean {
    return this.podReflector.synced && this.nodeReflector.synced;
  }

  pods(): readonly Pod[] {
    return this.podReflector.items();
  }

  node(): Node | null {
    return this.nodeReflector.items().find((node) => node.metadata.name === this.deps.nodeName) ?? null;
  }

  onPodChange(listener: PodListener): () => void {
    this.podListeners.add(listener);
    return () => this.podListeners.delete(listener);
  }

  onNodeChange(listener: NodeListener): () => void {
    this.nodeListeners.add(listener);
    return () => this.nodeListeners.delete(listener);
  }

  async start(): Promise<void> {
    await Promise.all([this.podReflector.start(), this.nodeReflector.start()]);
  }

  async whenSynced(): Promise<boolean> {
    const [pods, node] = await Promise.all([this.podReflector.whenSynced(), this.nodeReflector.whenSynced()]);
    return pods && node;
  }

  async stop(): Promise<void> {
    await Promise.all([this.podReflector.stop(), this.nodeReflector.stop()]);
  }

  private emit<T>(listeners: Set<(oldObject: T | null, newObject: T | null) => void>, oldObject: T | null, newObject: T | null): void {
    for (const listener of [...listeners]) {
      try {
        listener(oldObject, newObject);
      } catch (err) {
        this.deps.logger.error('a cluster view listener failed', { error: errorMessage(err) });
      }
    }
  }
}
