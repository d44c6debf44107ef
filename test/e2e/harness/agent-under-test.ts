// The agent as the end-to-end tests run it: the product's composition root (startNodeAgent) with
// the ServiceAccount token of deploy/daemonset.yaml, and the real cgroup observer, memcg v1
// notifier and pod terminator: pointed at a node sandbox instead of the machine's root cgroup, or,
// on a real node, wired from the configuration's `observe` paths exactly as `run` wires them.
// Without either (a test that needs no memory, on a machine without root) the node side is a
// quiet stand-in. A timeline can wrap the ports to see where a reaction's time goes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../../src/api/clock.js';
import { startNodeAgent } from '../../../src/compose/agent.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { LoadedConfig } from '../../../src/config/types.js';
import type { RunningAgent } from '../../../src/daemon/agent.js';
import type { ClusterView, LocalTerminator, NodeObserver } from '../../../src/daemon/ports.js';
import type { ControlPlane } from './control-plane.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { MemoryLogger } from './memory-logger.js';
import { POD_CGROUP_ROOT, type NodeSandbox } from './node-sandbox.js';
import type { PortTimeline } from './port-timeline.js';
import { metricValue } from './metric-value.js';
import { waitFor } from './wait.js';

export const CGROUP_ROOT = '/sys/fs/cgroup';

export interface AgentUnderTestOptions {
  readonly plane: ControlPlane;
  /** The bearer token the agent runs with (the ServiceAccount's). */
  readonly token: string;
  readonly nodeName: string;
  /** The agent's configuration file, as an operator would write it. */
  readonly configYaml: string;
  /** The node's memory; without it (or realNode) the observer reports nothing and the notifier is disabled. */
  readonly node?: NodeSandbox;
  /** A real kubelet's node: the observer, notifier and terminator come from the configuration. */
  readonly realNode?: boolean;
  /** Wraps the ports the agent gets, to time its calls. */
  readonly timeline?: PortTimeline;
  /**
   * The node lock's directory. Left out, each agent gets a directory of its own (tests on one
   * machine must not stand each other by); agents meant to share a node share one.
   */
  readonly nodeLockDirectory?: string;
}

export interface AgentUnderTest {
  readonly agent: RunningAgent;
  readonly config: LoadedConfig;
  /** The agent's pod and node view (what its watches hold). */
  readonly cluster: ClusterView;
  readonly log: MemoryLogger;
  /** The agent's /metrics text. */
  metrics(): Promise<string>;
  /** One metric's value (the sum over label sets matching `labels`), 0 when absent. */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
  stop(): Promise<void>;
}

// The node's paths and cgroups in the settings: the sandbox's cgroupfs tree, scratch directories
// for the kubelet's and the runtime's, and the memcg v1 notifier only where there is a node.
function sandboxed(config: LoadedConfig, scratchDir: string | null): LoadedConfig {
  const paths = scratchDir === null ? {} : { kubeletRootDir: scratchDir, imageFsPath: scratchDir, containerFsPath: scratchDir, podLogsDir: scratchDir };
  const observe = { ...config.agent.observe, cgroupDriver: 'cgroupfs' as const, podCgroupRoot: POD_CGROUP_ROOT, ...paths };
  const notifier = { ...config.agent.notifier, mode: scratchDir === null ? ('disabled' as const) : ('memcg-v1' as const) };
  return { ...config, agent: { ...config.agent, observe, notifier } };
}

// Stand-ins for a test that needs no node memory at all.
const quietObserver: NodeObserver = {
  observe: async () => ({ summary: { node: {}, pods: [] }, dedicatedImageFs: false, splitContainerFs: false, problems: [] }),
};
const noTerminator: LocalTerminator = { terminate: async () => ({ signalled: 0 }) };

export async function startAgentUnderTest(options: AgentUnderTestOptions): Promise<AgentUnderTest> {
  const log = MemoryLogger.create();
  const logger = log.child({ node: options.nodeName });
  const clock = systemClock;
  const { node, timeline } = options;
  const realNode = options.realNode === true;
  // With a sandbox, disk observation reads here instead of the machine's /var/lib/kubelet.
  const emptyDir = !realNode && node !== undefined ? mkdtempSync(join(tmpdir(), 'kea-e2e-agent-')) : null;
  const ownLockDir = options.nodeLockDirectory === undefined ? mkdtempSync(join(tmpdir(), 'kea-e2e-lock-')) : null;
  const parsed = parseConfigText(options.configYaml, 'e2e-agent.yaml');
  const config = realNode ? parsed : sandboxed(parsed, emptyDir);
  // The agent's own view of the cluster, as the composition root built it.
  const seen: { cluster?: ClusterView } = {};
  const agent = await startNodeAgent({
    config,
    nodeName: options.nodeName,
    cluster: { kubeconfigYaml: kubeconfigYaml({ server: options.plane.url, caPem: options.plane.caPem, token: options.token, user: 'kube-eviction-agent' }) },
    reload: null,
    serverPort: 0,
    clock,
    logger,
    nodeLock: { directory: options.nodeLockDirectory ?? (ownLockDir as string) },
    // A real node's adapters come from the configuration as they are; a sandbox is the node for
    // the real cgroup observer, memcg v1 notifier and terminator; otherwise quiet stand-ins.
    ...(realNode ? {} : node !== undefined ? { nodeCgroup: node.nodeCgroup } : { nodeSide: { observer: quietObserver, terminator: noTerminator } }),
    decorate: (deps) => {
      seen.cluster = deps.cluster;
      if (timeline === undefined) return deps;
      return {
        ...deps,
        actions: timeline.actions(deps.actions),
        events: timeline.events(deps.events),
        observer: timeline.observer(deps.observer),
        notifier: timeline.notifier(deps.notifier),
        terminator: timeline.terminator(deps.terminator),
        ...(deps.killPath === undefined ? {} : { killPath: timeline.killPath(deps.killPath) }),
      };
    },
  });
  const view = seen.cluster;
  if (view === undefined) throw new Error('the agent started without a cluster view');
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await agent.stop();
    if (emptyDir !== null) rmSync(emptyDir, { recursive: true, force: true });
    if (ownLockDir !== null) rmSync(ownLockDir, { recursive: true, force: true });
  };
  try {
    await waitFor(() => view.synced, { what: 'the agent\'s pod and node watches to sync', timeoutMs: 30_000, detail: () => log.tail(20) });
  } catch (err) {
    await stop();
    throw err;
  }
  const metrics = async (): Promise<string> => agent.metrics.registry.metrics();
  return {
    agent,
    config,
    cluster: view,
    log,
    metrics,
    async metric(name, labels = {}) {
      return metricValue(await metrics(), name, labels);
    },
    stop,
  };
}
