// Connecting to a cluster: finds the credentials (a kubeconfig path, in-cluster service account,
// KUBECONFIG, ~/.kube/config, in that order), loads the client library on first use, and builds
// the four cluster ports on one shared client. Connecting makes no request: the agent starts even
// while the API server is down, and the view catches up when it comes back.

import { existsSync } from 'node:fs';
import type { RequestOptions as HttpsRequestOptions } from 'node:https';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { RequestContext } from '@kubernetes/client-node';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { EventRecorder, NodeReporter, OwnerLookup, PodActions } from '../daemon/ports.js';
import { errorMessage, KubeApiError } from '../errors.js';
import { createApiCaller, DEFAULT_REQUEST_TIMEOUT_MS, type ApiCaller } from './api-call.js';
import type { BackoffPolicy } from '../api/backoff.js';
import { loadClientLibrary, type ClientLibrary, type CoreV1Api, type KubeConfig } from './client-library.js';
import { KubeClusterView, type ClusterViewHandle } from './cluster-view.js';
import { KubeEventRecorder } from './event-recorder.js';
import { KeptConnections } from './kept-connections.js';
import { createNodeCleaner, type NodeCleaner } from './node-cleaner.js';
import { createNodeReads, type NodeReads } from './node-reads.js';
import { KubeNodeReporter } from './node-reporter.js';
import { createOwnerLookup } from './owner-lookup.js';
import { KubePodActions } from './pod-actions.js';

export interface ConnectOptions {
  /** A kubeconfig file. Without it: in-cluster when KUBERNETES_SERVICE_HOST is set, else KUBECONFIG, else ~/.kube/config. */
  readonly kubeconfig?: string;
  /** A kubeconfig document itself, for a cluster started in this process (the demo's stand-in). */
  readonly kubeconfigYaml?: string;
  /** This node: the pods watched are the ones bound to it. */
  readonly nodeName: string;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly userAgent?: string;
  /** The bound on every request (default 10 s). */
  readonly requestTimeoutMs?: number;
  /** How long a watch may take to answer before it is given up (default 30 s). */
  readonly watchConnectTimeoutMs?: number;
  /** Each watch asks the server to end it after `min * (1 + random)` seconds (default 300). */
  readonly minWatchTimeoutSeconds?: number;
  readonly watchBackoff?: BackoffPolicy;
  /** The environment and home directory consulted for credentials (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly homeDir?: string;
  readonly random?: () => number;
}

/** One connection to the API server, and the cluster ports built on it. */
export interface KubeClient {
  /** The API server's URL. */
  readonly server: string;
  /** The node's pods and Node object, watched. One per client. */
  clusterView(): ClusterViewHandle;
  /** Evictions, deletions, the DisruptionTarget condition, fresh reads. One per client. */
  podActions(): PodActions;
  /** Events reported as `source.component = component`, `source.host = nodeName`. */
  eventRecorder(component: string): EventRecorder;
  /** The agent's node conditions and taint. One per client. */
  nodeReporter(): NodeReporter;
  /** Fresh reads of the node's pods, Node and kubelet summary (for `record`). */
  nodeReads(): NodeReads;
  /** A ReplicaSet's owner (the eviction storm guard counts evictions by Deployment). */
  ownerLookup(): OwnerLookup;
  /** Takes the agent's conditions and taint off Nodes (for `cleanup`). */
  nodeCleaner(): NodeCleaner;
}

export const DEFAULT_USER_AGENT = 'kube-eviction-agent';
const DEFAULT_WATCH_CONNECT_TIMEOUT_MS = 30_000;

export async function connect(options: ConnectOptions): Promise<KubeClient> {
  const lib = await loadClientLibrary();
  const kubeConfig = makeKubeConfig(lib, options.userAgent ?? DEFAULT_USER_AGENT, options.watchConnectTimeoutMs ?? DEFAULT_WATCH_CONNECT_TIMEOUT_MS);
  const source = loadCredentials(lib, kubeConfig, options);
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new KubeApiError(0, `The Kubernetes configuration (${source}) names no current cluster`);
  const core = kubeConfig.makeApiClient(lib.CoreV1Api);
  const caller = createApiCaller({ lib, clock: options.clock, timeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS });
  const logger = options.logger.child({ component: 'kube' });
  logger.info('using the Kubernetes API', { server: cluster.server, credentials: source, node: options.nodeName });
  return new Client(lib, kubeConfig, core, caller, cluster.server, options, logger);
}

class Client implements KubeClient {
  private view: ClusterViewHandle | null = null;
  private actions: PodActions | null = null;
  private reporter: NodeReporter | null = null;

  constructor(
    private readonly lib: ClientLibrary,
    private readonly kubeConfig: KubeConfig,
    private readonly core: CoreV1Api,
    private readonly caller: ApiCaller,
    readonly server: string,
    private readonly options: ConnectOptions,
    private readonly logger: Logger,
  ) {}

  clusterView(): ClusterViewHandle {
    this.view ??= new KubeClusterView({
      lib: this.lib,
      kubeConfig: this.kubeConfig,
      core: this.core,
      caller: this.caller,
      nodeName: this.options.nodeName,
      clock: this.options.clock,
      logger: this.logger.child({ component: 'cluster-view' }),
      backoff: this.options.watchBackoff,
      random: this.options.random,
      minWatchTimeoutSeconds: this.options.minWatchTimeoutSeconds,
    });
    return this.view;
  }

  podActions(): PodActions {
    this.actions ??= new KubePodActions({ lib: this.lib, core: this.core, caller: this.caller, clock: this.options.clock, logger: this.logger.child({ component: 'pod-actions' }) });
    return this.actions;
  }

  eventRecorder(component: string): EventRecorder {
    return new KubeEventRecorder({ core: this.core, caller: this.caller, clock: this.options.clock, logger: this.logger.child({ component: 'events' }), component, nodeName: this.options.nodeName, random: this.options.random });
  }

  nodeReporter(): NodeReporter {
    this.reporter ??= new KubeNodeReporter({
      lib: this.lib,
      core: this.core,
      caller: this.caller,
      nodeName: this.options.nodeName,
      clock: this.options.clock,
      logger: this.logger.child({ component: 'node-reporter' }),
      random: this.options.random,
      // The view's Node once it is watched (the agent's); a command that never starts it reads.
      watchedNode: () => this.view?.node() ?? null,
    });
    return this.reporter;
  }

  nodeReads(): NodeReads {
    return createNodeReads({ core: this.core, caller: this.caller, nodeName: this.options.nodeName });
  }

  ownerLookup(): OwnerLookup {
    return createOwnerLookup({ apps: this.kubeConfig.makeApiClient(this.lib.AppsV1Api), caller: this.caller });
  }

  nodeCleaner(): NodeCleaner {
    return createNodeCleaner({ lib: this.lib, core: this.core, caller: this.caller, clock: this.options.clock, logger: this.logger.child({ component: 'node-cleaner' }), random: this.options.random });
  }
}

// The library builds a fresh request per call from the KubeConfig: the API calls through
// applySecurityAuthentication, the watches through applyToFetchOptions. Both are where this
// agent's User-Agent goes; the API calls share kept-alive connections (kept-connections.ts), and
// the watch gets a bound on waiting for its response headers (node-fetch's `timeout`, which stops
// counting once the stream has started).
function makeKubeConfig(lib: ClientLibrary, userAgent: string, watchConnectTimeoutMs: number): KubeConfig {
  const connections = new KeptConnections();
  class AgentKubeConfig extends lib.KubeConfig {
    override async applySecurityAuthentication(context: RequestContext): Promise<void> {
      await super.applySecurityAuthentication(context);
      context.setHeaderParam('User-Agent', userAgent);
      const agent = connections.agentFor(context.getAgent());
      if (agent !== undefined) context.setAgent(agent);
    }

    override applyToFetchOptions(opts: HttpsRequestOptions): ReturnType<KubeConfig['applyToFetchOptions']> {
      return super.applyToFetchOptions({ ...opts, headers: { ...opts.headers, 'User-Agent': userAgent }, timeout: watchConnectTimeoutMs });
    }
  }
  return new AgentKubeConfig();
}

/** Loads credentials into `kubeConfig`; returns where they came from, for the log. */
function loadCredentials(lib: ClientLibrary, kubeConfig: KubeConfig, options: ConnectOptions): string {
  const env = options.env ?? process.env;
  try {
    if (options.kubeconfigYaml !== undefined) {
      kubeConfig.loadFromString(options.kubeconfigYaml);
      return 'kubeconfig document';
    }
    if (options.kubeconfig !== undefined && options.kubeconfig !== '') {
      kubeConfig.loadFromFile(options.kubeconfig);
      return options.kubeconfig;
    }
    if (env.KUBERNETES_SERVICE_HOST !== undefined && env.KUBERNETES_SERVICE_HOST !== '') {
      kubeConfig.loadFromCluster();
      return 'in-cluster service account';
    }
    const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((file) => file !== '');
    if (listed.length > 0) {
      // kubectl's rule: the first file that sets something wins; the rest are merged in.
      const [first, ...rest] = listed as [string, ...string[]];
      kubeConfig.loadFromFile(first);
      for (const file of rest) {
        const other = new lib.KubeConfig();
        other.loadFromFile(file);
        kubeConfig.mergeConfig(other, true);
      }
      return `KUBECONFIG=${env.KUBECONFIG ?? ''}`;
    }
    const homeConfig = join(options.homeDir ?? homedir(), '.kube', 'config');
    if (existsSync(homeConfig)) {
      kubeConfig.loadFromFile(homeConfig);
      return homeConfig;
    }
  } catch (err) {
    throw new KubeApiError(0, `The Kubernetes configuration cannot be loaded: ${errorMessage(err)}`, { cause: err });
  }
  throw new KubeApiError(0, 'No Kubernetes configuration found: pass a kubeconfig, set KUBECONFIG, create ~/.kube/config, or run in a pod');
}
