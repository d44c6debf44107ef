// The composition root: the one place that wires a running agent, for `run`, `demo` and the
// end-to-end tests. It connects to the cluster, builds the node side from the compiled settings
// (or takes the caller's stand-ins), and starts the agent (src/daemon) on them.

import { releaseFreedMemory } from '../act/own-memory.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { startAgent, type AgentDeps, type AgentOptions, type RunningAgent } from '../daemon/agent.js';
import type { KillPath, LocalTerminator, MemoryThresholdNotifier } from '../daemon/ports.js';
import { connect, type KubeClient } from '../kube/index.js';
import { createSharedEpollLoop } from '../notifier/shared-epoll-loop.js';
import type { AgentInstance } from '../daemon/node-lock-gate.js';
import { hostNodeLock, reportLockSharing, thisAgentInstance } from './node-lock.js';
import { hostIdentity, hostKillPath, hostNotifier, hostObserver, hostOomKillWatcher, hostPsiSource, hostTerminator, type NodeSide, type NodeSideContext } from './node-side.js';

/** Where the API server is: a kubeconfig file, or a kubeconfig document (a cluster started in this process). */
export interface ClusterTarget {
  /** Without either: in-cluster, then $KUBECONFIG, then ~/.kube/config. */
  readonly kubeconfig?: string | undefined;
  readonly kubeconfigYaml?: string | undefined;
}

/** Connects to the cluster as this node's agent. Makes no request: the agent starts even while the API server is down. */
export async function connectCluster(target: ClusterTarget, nodeName: string, clock: Clock, logger: Logger): Promise<KubeClient> {
  return connect({
    ...(target.kubeconfig === undefined ? {} : { kubeconfig: target.kubeconfig }),
    ...(target.kubeconfigYaml === undefined ? {} : { kubeconfigYaml: target.kubeconfigYaml }),
    nodeName,
    clock,
    logger,
  });
}

export interface AgentPlan extends AgentOptions {
  readonly cluster: ClusterTarget;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The cgroup standing for the node ('' on a real node); see NodeSideContext. */
  readonly nodeCgroup?: string;
  /** Stand-ins for node-side ports (the demo's simulated node); the rest are the host's. */
  readonly nodeSide?: Partial<NodeSide>;
  /** Sees, and may wrap, every port before the agent starts (the demo prints through them). */
  readonly decorate?: (deps: AgentDeps) => AgentDeps;
  /**
   * The node lock's directory instead of the configuration's (tests give each node its own), or
   * null for none. Left out: the configuration's, on a real node side; none for stand-ins (the demo).
   */
  readonly nodeLock?: { readonly directory: string; readonly self?: AgentInstance } | null;
}

// The stand-in's terminator, or the host's, and with the host's, on a memcg v1 node, the kill path.
function terminatorOf(plan: AgentPlan, context: NodeSideContext, notifier: MemoryThresholdNotifier): { terminator: LocalTerminator; killPath?: KillPath } {
  const given = plan.nodeSide?.terminator;
  if (given !== undefined) return { terminator: given };
  const terminator = hostTerminator(plan.config, context);
  const killPath = hostKillPath(plan.config, context, notifier, terminator);
  return killPath === undefined ? { terminator } : { terminator, killPath };
}

/** Connects, wires and starts the agent; resolves once it is running. */
export async function startNodeAgent(plan: AgentPlan): Promise<RunningAgent> {
  const { config, nodeName, clock, logger } = plan;
  const client = await connectCluster(plan.cluster, nodeName, clock, logger);
  // Compiling the client library leaves the C heap's high-water mark high: given back before the
  // first lists and passes pile their own on top of it, and again once they are done.
  releaseFreedMemory();
  logger.info('starting', { node: nodeName, server: client.server, config: plan.reload?.path, kind: config.kind, dryRun: plan.dryRun === true || config.agent.actions.dryRun });
  const cluster = client.clusterView();
  const context = { nodeName, clock, logger, epollLoop: createSharedEpollLoop(logger), node: () => cluster.node(), ...(plan.nodeCgroup === undefined ? {} : { nodeCgroup: plan.nodeCgroup }) };
  const lockDirectory = plan.nodeLock === undefined ? (plan.nodeSide === undefined ? config.agent.nodeLock.directory : '') : (plan.nodeLock?.directory ?? '');
  const lock = hostNodeLock(config, lockDirectory);
  const notifier = plan.nodeSide?.notifier ?? hostNotifier(config, context);
  const deps: AgentDeps = {
    cluster,
    actions: client.podActions(),
    events: client.eventRecorder('kube-eviction-agent'),
    owners: client.ownerLookup(),
    nodeReporter: client.nodeReporter(),
    observer: plan.nodeSide?.observer ?? hostObserver(config, context),
    notifier,
    // The host's kills are a stand-in node's business only when it says so.
    ...(plan.nodeSide === undefined ? { oomKills: hostOomKillWatcher(config, context) } : plan.nodeSide.oomKills === undefined ? {} : { oomKills: plan.nodeSide.oomKills }),
    ...terminatorOf(plan, context, notifier),
    // The same cgroups as the notifier's: a stand-in node's sandbox cgroups, where it has them.
    psiSource: hostPsiSource(config, context),
    hostIdentity: plan.nodeSide?.identity ?? hostIdentity(config),
    ...(lock === null ? {} : { nodeLock: { lock, self: plan.nodeLock?.self ?? thisAgentInstance() } }),
    clock,
    logger,
  };
  const options: AgentOptions = {
    config,
    nodeName,
    reload: plan.reload,
    ...(plan.dryRun === undefined ? {} : { dryRun: plan.dryRun }),
    ...(plan.serverPort === undefined ? {} : { serverPort: plan.serverPort }),
    ...(plan.probePort === undefined ? {} : { probePort: plan.probePort }),
    ...(plan.signal === undefined ? {} : { signal: plan.signal }),
  };
  const running = await startAgent(options, plan.decorate === undefined ? deps : plan.decorate(deps));
  releaseFreedMemory();
  // Once the lock was first tried, its directory exists: is it the host's?
  if (lock !== null) reportLockSharing(lock.directory, logger);
  return running;
}
