// The agent as the end-to-end tests run it: `startAgent` with the product's real adapters, the
// API client from `connect({ kubeconfigYaml })` with the ServiceAccount token of
// deploy/daemonset.yaml, and the real cgroup observer, memcg v1 notifier and pod terminator:
// pointed at a node sandbox instead of the machine's root cgroup, or, on a real node, wired from the
// configuration's `observe` paths exactly as `run` wires them. Without either (a test that needs no
// memory, on a machine without root) the node side is a quiet stand-in. A timeline can wrap the
// ports to see where a reaction's time goes.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPodTerminator } from '../../../src/act/pod-terminator.js';
import { systemClock } from '../../../src/api/clock.js';
import { nodeAdapters } from '../../../src/cli/run.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { LoadedConfig } from '../../../src/config/types.js';
import { startAgent, type AgentDeps, type RunningAgent } from '../../../src/daemon/agent.js';
import type { LocalTerminator, MemoryThresholdNotifier, NodeObserver } from '../../../src/daemon/ports.js';
import { connect, type ClusterViewHandle } from '../../../src/kube/index.js';
import { createMemoryThresholdNotifier } from '../../../src/notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import type { ControlPlane } from './control-plane.js';
import { kubeconfigYaml } from './kubeconfig.js';
import { MemoryLogger } from './memory-logger.js';
import { POD_CGROUP_ROOT, type NodeSandbox } from './node-sandbox.js';
import type { PortTimeline } from './port-timeline.js';
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
}

export interface AgentUnderTest {
  readonly agent: RunningAgent;
  readonly config: LoadedConfig;
  /** The agent's pod and node view (what its watches hold). */
  readonly cluster: ClusterViewHandle;
  readonly log: MemoryLogger;
  /** The agent's /metrics text. */
  metrics(): Promise<string>;
  /** One metric's value (the sum over label sets matching `labels`), 0 when absent. */
  metric(name: string, labels?: Readonly<Record<string, string>>): Promise<number>;
  stop(): Promise<void>;
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
  const config = parseConfigText(options.configYaml, 'e2e-agent.yaml');
  // With a sandbox, disk observation reads here instead of the machine's /var/lib/kubelet.
  const emptyDir = options.realNode !== true && options.node !== undefined ? mkdtempSync(join(tmpdir(), 'kea-e2e-agent-')) : null;
  const { node } = options;
  let observer: NodeObserver = quietObserver;
  let notifier: MemoryThresholdNotifier;
  let terminator: LocalTerminator = noTerminator;
  if (options.realNode === true) {
    ({ observer, notifier, terminator } = nodeAdapters(config, options.nodeName, clock, logger));
  } else if (node !== undefined && emptyDir !== null) {
    observer = createCgroupObserver({
      hostRoot: '/',
      cgroupRoot: CGROUP_ROOT,
      procRoot: '/proc',
      kubeletRootDir: emptyDir,
      imageFsPath: emptyDir,
      podLogsDir: emptyDir,
      cgroupDriver: 'cgroupfs',
      podCgroupRoot: POD_CGROUP_ROOT,
      nodeCgroup: node.nodeCgroup,
      nodeName: options.nodeName,
      clock,
      logger,
    });
    notifier = createMemoryThresholdNotifier({ mode: 'memcg-v1', cgroupRoot: CGROUP_ROOT, nodeCgroup: node.nodeCgroup, podCgroupRoot: `${node.nodeCgroup}/${POD_CGROUP_ROOT}`, clock, logger });
    terminator = createPodTerminator({ cgroupRoot: CGROUP_ROOT, nodeCgroup: node.nodeCgroup, cgroupDriver: 'cgroupfs', podCgroupRoot: POD_CGROUP_ROOT, clock, logger });
  } else {
    notifier = createMemoryThresholdNotifier({ mode: 'disabled', clock, logger });
  }

  const client = await connect({
    kubeconfigYaml: kubeconfigYaml({ server: options.plane.url, caPem: options.plane.caPem, token: options.token, user: 'kube-eviction-agent' }),
    nodeName: options.nodeName,
    logger,
    clock,
  });
  const cluster = client.clusterView();
  const { timeline } = options;
  const deps: AgentDeps = {
    cluster,
    actions: timeline?.actions(client.podActions()) ?? client.podActions(),
    events: timeline?.events(client.eventRecorder('kube-eviction-agent')) ?? client.eventRecorder('kube-eviction-agent'),
    nodeReporter: client.nodeReporter(),
    observer: timeline?.observer(observer) ?? observer,
    notifier: timeline?.notifier(notifier) ?? notifier,
    terminator: timeline?.terminator(terminator) ?? terminator,
    clock,
    logger,
  };
  const agent = await startAgent({ config, nodeName: options.nodeName, reload: null, serverPort: 0 }, deps);
  let stopped = false;
  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await agent.stop();
    if (emptyDir !== null) rmSync(emptyDir, { recursive: true, force: true });
  };
  try {
    await waitFor(() => cluster.synced, { what: 'the agent\'s pod and node watches to sync', timeoutMs: 30_000, detail: () => log.tail(20) });
  } catch (err) {
    await stop();
    throw err;
  }
  const metrics = async (): Promise<string> => agent.metrics.registry.metrics();
  return {
    agent,
    config,
    cluster,
    log,
    metrics,
    async metric(name, labels = {}) {
      let sum = 0;
      for (const line of (await metrics()).split('\n')) {
        const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
        if (match === null || match[1] !== name) continue;
        const labelText = match[2] ?? '';
        if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) sum += Number(match[3]);
      }
      return sum;
    },
    stop,
  };
}
