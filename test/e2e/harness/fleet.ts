// A fleet of nodes on one real API server, for the fleet test and the fleet benchmark: the Node
// objects and their pods created directly as admin (no scheduler, no kubelet: each pod bound to
// its node and given a Running status), a stand-in for every kubelet's last step of a deletion
// (one cluster-wide watch that removes a terminating pod with grace period 0, as the kubelet does
// once its containers are gone), and agents started through the product's composition root with
// a simulated host (fleet-host.ts): every Kubernetes client path is the agent's own.

import { systemClock } from '../../../src/api/clock.js';
import type { Logger } from '../../../src/api/logger.js';
import { startNodeAgent } from '../../../src/compose/agent.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { RunningAgent } from '../../../src/daemon/agent.js';
import type { ClusterView } from '../../../src/daemon/ports.js';
import { nodeInfoOf, thisHostIdentity } from '../../../src/host/host-identity.js';
import { CONTENT_TYPE, type ApiClient } from './api-client.js';
import { FLEET_NODE_MEMORY_BYTES, FleetHost, LEAKER_LABEL } from './fleet-host.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { ListWatch, type KubeObject } from './list-watch.js';
import { waitFor } from './wait.js';

export const FLEET_NAMESPACE = 'fleet';
const MiB = 1024 * 1024;

/**
 * The agent's configuration on every node of the fleet: the shipped defaults, a hard memory
 * threshold, the taint on (the most writes a node's pressure can cost), no local endpoints. The
 * pressure transition period is 30 s instead of 5 minutes, so a storm's conditions and taints come
 * off within a minute and the next storm starts from nodes at rest, as the first did.
 */
export const FLEET_AGENT_CONFIG = `
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: 500Mi
evictionPressureTransitionPeriod: 30s
reporting:
  taint:
    enabled: true
server:
  port: 0
  probePort: 0
`;

/** The agent's memory pressure condition on each fleet Node. */
export const FLEET_PRESSURE_CONDITION = 'kube-eviction-agent.io/MemoryPressure';
const FLEET_TAINT_KEY = 'kube-eviction-agent.io/pressure';

/** Grows the leaker past the 500Mi hard threshold of an 8 GiB node (about 5 GiB of pods' memory left). */
export const STORM_BYTES = 6 * 1024 * MiB;

export function fleetNodeName(index: number): string {
  return `fleet-node-${String(index).padStart(4, '0')}`;
}

export function fleetPodName(nodeName: string, index: number): string {
  return `${nodeName}-pod-${String(index).padStart(2, '0')}`;
}

/** Runs `task` over `items`, at most `concurrency` at a time. */
export async function inParallel<T>(items: readonly T[], concurrency: number, task: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Creates the namespace, the Nodes (Ready, 8 GiB, this machine's identity) and `podsPerNode` Running pods on each; pod 0 of each node is its leaker. */
export async function createFleetObjects(admin: ApiClient, nodeNames: readonly string[], podsPerNode: number, concurrency = 16): Promise<void> {
  const namespace = await admin.request('GET', `/api/v1/namespaces/${FLEET_NAMESPACE}`);
  if (namespace.status === 404) await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLEET_NAMESPACE } });
  const nodeInfo = nodeInfoOf(thisHostIdentity());
  await inParallel(nodeNames, concurrency, async (nodeName) => {
    await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' } } });
    const now = new Date().toISOString();
    const resources = { cpu: '8', memory: String(FLEET_NODE_MEMORY_BYTES), pods: '110', 'ephemeral-storage': String(100n << 30n) };
    await admin.patch(
      `/api/v1/nodes/${nodeName}/status`,
      { status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'fleet node', lastHeartbeatTime: now, lastTransitionTime: now }], nodeInfo } },
      CONTENT_TYPE.strategicMergePatch,
    );
  });
  const pods = nodeNames.flatMap((nodeName) => Array.from({ length: podsPerNode }, (_, i) => ({ nodeName, index: i })));
  await inParallel(pods, concurrency, async ({ nodeName, index }) => {
    const name = fleetPodName(nodeName, index);
    const leaker = index === 0;
    const created = await admin.create<{ metadata: { uid: string } }>(`/api/v1/namespaces/${FLEET_NAMESPACE}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'fleet', ...(leaker ? { [LEAKER_LABEL]: 'true' } : {}) } },
      spec: {
        nodeName,
        // The leaker asks for nothing (BestEffort, ranked first under memory pressure); the others ask for what they use.
        containers: [{ name: 'main', image: 'registry.example/fleet:1', ...(leaker ? {} : { resources: { requests: { memory: '256Mi' } } }) }],
        terminationGracePeriodSeconds: 5,
      },
    });
    const now = new Date().toISOString();
    await admin.patch(
      `/api/v1/namespaces/${FLEET_NAMESPACE}/pods/${name}/status`,
      {
        metadata: { uid: created.metadata.uid },
        status: {
          phase: 'Running',
          startTime: now,
          conditions: ['Initialized', 'ContainersReady', 'Ready', 'PodScheduled'].map((type) => ({ type, status: 'True', lastTransitionTime: now })),
          containerStatuses: [{ name: 'main', image: 'registry.example/fleet:1', imageID: '', containerID: `containerd://${created.metadata.uid.replace(/-/g, '')}`, ready: true, started: true, restartCount: 0, state: { running: { startedAt: now } } }],
        },
      },
      CONTENT_TYPE.strategicMergePatch,
    );
  });
}

/**
 * Every kubelet's last step of a deletion, for the whole fleet: a pod that got a
 * deletionTimestamp is deleted with grace period 0 (its UID as precondition). Started before the
 * pods exist, so its first list is empty.
 */
export class FleetKubelets {
  private readonly watch: ListWatch;
  private readonly finishing = new Set<string>();
  /** When each pod (by UID) was seen terminating, and when it was gone. */
  readonly terminatingAtMs = new Map<string, number>();
  readonly goneAtMs = new Map<string, number>();

  constructor(private readonly admin: ApiClient) {
    this.watch = new ListWatch(admin, {
      path: `/api/v1/namespaces/${FLEET_NAMESPACE}/pods`,
      onChange: (type, object) => this.onPod(type, object),
    });
  }

  get synced(): Promise<void> {
    return this.watch.synced;
  }

  async stop(): Promise<void> {
    await this.watch.stop();
  }

  private onPod(type: string, pod: KubeObject): void {
    const uid = pod.metadata.uid ?? '';
    if (type === 'DELETED') {
      this.goneAtMs.set(uid, Date.now());
      return;
    }
    if (pod.metadata.deletionTimestamp === undefined || this.finishing.has(uid)) return;
    this.finishing.add(uid);
    this.terminatingAtMs.set(uid, Date.now());
    void this.admin.request('DELETE', `/api/v1/namespaces/${pod.metadata.namespace ?? ''}/pods/${pod.metadata.name ?? ''}`, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid } },
    }).catch(() => this.finishing.delete(uid));
  }
}

/**
 * What the agents show on the fleet's Nodes, from one watch of every Node: which are under
 * pressure (the agent's MemoryPressure condition True, or its taint on), and when the last of
 * them came back to rest.
 */
export class FleetNodes {
  private readonly watch: ListWatch;
  private readonly pressed = new Set<string>();
  private readonly tainted = new Set<string>();
  private calmAtMs = 0;

  constructor(admin: ApiClient) {
    this.watch = new ListWatch(admin, {
      path: '/api/v1/nodes',
      onChange: (type, node) => this.onNode(type, node),
    });
  }

  get synced(): Promise<void> {
    return this.watch.synced;
  }

  /** Nodes whose agent shows pressure now. */
  underPressure(): number {
    return this.pressed.size;
  }

  /** Nodes that carry the agent's taint now (a subset of those under pressure). */
  taintedCount(): number {
    return this.tainted.size;
  }

  /** The names of the nodes under pressure now, in order. */
  pressedNames(): string[] {
    return [...this.pressed].sort();
  }

  /** When the last node under pressure came back to rest. */
  get lastCalmAtMs(): number {
    return this.calmAtMs;
  }

  async stop(): Promise<void> {
    await this.watch.stop();
  }

  private onNode(type: string, node: KubeObject): void {
    const name = node.metadata.name ?? '';
    const status = node.status as { conditions?: { type: string; status: string }[] } | undefined;
    const spec = node.spec as { taints?: { key: string }[] } | undefined;
    const tainted = type !== 'DELETED' && spec?.taints?.some((t) => t.key === FLEET_TAINT_KEY) === true;
    if (tainted) this.tainted.add(name);
    else this.tainted.delete(name);
    const pressed = tainted || (type !== 'DELETED' && status?.conditions?.some((c) => c.type === FLEET_PRESSURE_CONDITION && c.status === 'True') === true);
    if (pressed) this.pressed.add(name);
    else if (this.pressed.delete(name)) this.calmAtMs = Date.now();
  }
}

export interface FleetAgent {
  readonly nodeName: string;
  readonly host: FleetHost;
  readonly agent: RunningAgent;
  readonly cluster: ClusterView;
  stop(): Promise<void>;
}

export interface FleetAgentOptions {
  readonly server: string;
  readonly caPem: string;
  /** The agent's ServiceAccount token (every node's agent has the same account, as a DaemonSet's pods do). */
  readonly token: string;
  readonly nodeName: string;
  readonly logger: Logger;
  readonly configYaml?: string;
}

/** Starts one node's agent as `run` builds it, on a simulated host; resolves once its watches are synced. */
export async function startFleetAgent(options: FleetAgentOptions): Promise<FleetAgent> {
  const clock = systemClock;
  const host = new FleetHost(options.nodeName, clock, thisHostIdentity());
  const config = parseConfigText(options.configYaml ?? FLEET_AGENT_CONFIG, 'fleet-agent.yaml');
  const seen: { cluster?: ClusterView } = {};
  const agent = await startNodeAgent({
    config,
    nodeName: options.nodeName,
    cluster: { kubeconfigYaml: kubeconfigYaml({ server: options.server, caPem: options.caPem, token: options.token, user: 'kube-eviction-agent' }) },
    reload: null,
    clock,
    logger: options.logger,
    nodeSide: host.nodeSide(),
    nodeLock: null,
    decorate: (deps) => {
      seen.cluster = deps.cluster;
      return deps;
    },
  });
  const cluster = seen.cluster as ClusterView;
  try {
    await waitFor(() => cluster.synced, { what: `the pod and node watches of ${options.nodeName}'s agent to sync`, timeoutMs: 120_000, intervalMs: 250 });
  } catch (err) {
    await agent.stop();
    throw err;
  }
  return { nodeName: options.nodeName, host, agent, cluster, stop: () => agent.stop() };
}
