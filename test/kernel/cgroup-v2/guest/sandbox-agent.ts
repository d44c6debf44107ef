// One agent on one sandbox node in the cgroup v2 guest, as the race and idle suites run it: the
// agent's real run loop (startAgent) with the real cgroup observer, notifier and terminator built
// from the compiled settings of its configuration file (as the composition root builds them) and
// the real Kubernetes client against the in-process API stand-in. The node is a CgroupSandbox with
// a memory.max, holding a `kubepods` cgroup with a memory.max of its own. The terminator is wrapped
// to note the first pod it is asked to end, the time, and kubepods' usage then.

import { systemClock } from '../../../../src/api/clock.js';
import { silentLogger } from '../../../../src/api/logger.js';
import type { Pod } from '../../../../src/api/pod.js';
import { parseConfigText } from '../../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../../src/daemon/agent.js';
import type { SyncTrigger } from '../../../../src/daemon/eviction-loop.js';
import type { LocalTerminator, MemoryThresholdNotifier } from '../../../../src/daemon/ports.js';
import { nodeOfThisHost, thisHostIdentity } from '../../../../src/compose/this-host.js';
import { kubeconfigFor, type ApiStandIn } from '../../../../src/demo/api-stand-in.js';
import { connect } from '../../../../src/kube/index.js';
import { createMemoryThresholdNotifier } from '../../../../src/notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver, type CgroupObserver } from '../../../../src/observe/cgroup-observer.js';
import { createPodTerminator } from '../../../../src/act/pod-terminator.js';
import { CgroupSandbox } from '../../../helpers/cgroup-sandbox.js';
import { currentBytes } from './kernel-numbers.js';

/** How one agent is configured, compared side by side with others. */
export interface AgentVariant {
  readonly key: string;
  /** How reports name it. */
  readonly label: string;
  /** The lines of its `notifier:` section (indented by the caller). */
  readonly notifier: readonly string[];
}

export interface SandboxAgentOptions {
  readonly api: ApiStandIn;
  readonly variant: AgentVariant;
  readonly nodeLimitBytes: number;
  readonly podsLimitBytes: number;
  /** The hard memory.available threshold (the kubelet derives the allocatable one from it). */
  readonly threshold: string;
  readonly housekeepingIntervalMs: number;
  /** Stands in for the kubelet's and the runtime's directories. */
  readonly scratchDir: string;
}

export interface SandboxAgent {
  readonly variant: AgentVariant;
  readonly nodeName: string;
  readonly sandbox: CgroupSandbox;
  readonly agent: RunningAgent;
  readonly observer: CgroupObserver;
  /** The real notifier the agent runs. */
  readonly notifier: MemoryThresholdNotifier;
  /** The first pod the terminator was asked to end since the last reset, when, and kubepods' usage then. */
  kill: { uid: string; atNs: bigint; usageBytes: number } | null;
  /** Resolves the next pass's promise, if one is awaited. */
  onPass: ((trigger: SyncTrigger) => void) | null;
  /** The pods the agent's watch shows. */
  pods(): readonly Pod[];
  stop(): Promise<void>;
}

export function agentConfigText(variant: AgentVariant, threshold: string, housekeepingIntervalMs: number): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    `  memory.available: ${threshold}`,
    `housekeepingInterval: ${housekeepingIntervalMs}ms`,
    'observe:',
    '  cgroupDriver: cgroupfs',
    '  podCgroupRoot: kubepods',
    'notifier:',
    ...variant.notifier.map((line) => `  ${line}`),
    'actions:',
    '  localTermination: true',
    '',
  ].join('\n');
}

export async function startSandboxAgent(options: SandboxAgentOptions): Promise<SandboxAgent> {
  const { api, variant } = options;
  const nodeName = `node-${variant.key}`;
  api.setNode(nodeOfThisHost(nodeName));
  const config = parseConfigText(agentConfigText(variant, options.threshold, options.housekeepingIntervalMs), `${variant.key}.yaml`);
  const settings = config.agent;
  const sandbox = await CgroupSandbox.create({ version: 'v2', limitBytes: BigInt(options.nodeLimitBytes) });
  sandbox.mkdir('kubepods/burstable');
  sandbox.setLimit('kubepods', BigInt(options.podsLimitBytes));
  const scratch = options.scratchDir;
  const observe = { ...settings.observe, kubeletRootDir: scratch, imageFsPath: scratch, containerFsPath: scratch, podLogsDir: scratch, diskUsageIntervalMs: 24 * 3600_000 };
  const observer = createCgroupObserver(observe, { clock: systemClock, logger: silentLogger, nodeCgroup: sandbox.name, processCountIntervalMs: options.housekeepingIntervalMs, nodeName });
  const notifier = createMemoryThresholdNotifier(settings.notifier, { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: sandbox.name, podCgroupRoot: `${sandbox.name}/kubepods`, procRoot: '/proc', clock: systemClock, logger: silentLogger });
  const inner = createPodTerminator(observe, { nodeCgroup: sandbox.name, clock: systemClock, logger: silentLogger });
  const client = await connect({ kubeconfigYaml: kubeconfigFor(api), nodeName, clock: systemClock, logger: silentLogger });
  const cluster = client.clusterView();
  let node: SandboxAgent | null = null;
  const terminator: LocalTerminator = {
    terminate: (pod, gracePeriodMs) => {
      if (node !== null && node.kill === null) node.kill = { uid: pod.metadata.uid ?? '', atNs: process.hrtime.bigint(), usageBytes: currentBytes(sandbox.resolve('kubepods')) };
      return inner.terminate(pod, gracePeriodMs);
    },
  };
  const agent = await startAgent(
    { config, nodeName, reload: null, serverPort: 0 },
    {
      cluster,
      actions: client.podActions(),
      events: client.eventRecorder('kube-eviction-agent'),
      nodeReporter: client.nodeReporter(),
      observer,
      notifier,
      terminator,
      hostIdentity: thisHostIdentity(),
      clock: systemClock,
      logger: silentLogger,
      onDecision: (_result, trigger) => node?.onPass?.(trigger),
    },
  );
  await cluster.whenSynced();
  let stopped: Promise<void> | null = null;
  node = {
    variant,
    nodeName,
    sandbox,
    agent,
    observer,
    notifier,
    kill: null,
    onPass: null,
    pods: () => cluster.pods(),
    stop() {
      stopped ??= (async () => {
        await agent.stop();
        observer.close();
        await sandbox.cleanup();
      })();
      return stopped;
    },
  };
  return node;
}

/** Asks the agent for a pass now and resolves once it has decided: its next housekeeping pass is a full interval away. */
export function passNow(node: SandboxAgent): Promise<void> {
  return new Promise((resolve) => {
    node.onPass = () => {
      node.onPass = null;
      resolve();
    };
    node.agent.loop.wake('housekeeping', null);
  });
}
