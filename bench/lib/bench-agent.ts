// The agent under benchmark: the real run loop (`startAgent`), unchanged, wired as the `demo`
// command wires it — the sandbox node's real adapters, and the real Kubernetes client talking
// to the in-process API stand-in — with thin wrappers that stamp the moments that matter
// (process.hrtime, the clock the allocating children report in): the kernel notification reaching
// JavaScript, the decision, local termination, and the API request. The wrappers only note the
// time (and let a hook read the node's usage) before passing the call on.

import { systemClock } from '../../src/api/clock.js';
import { createWriteStream } from 'node:fs';
import { silentLogger, type Logger } from '../../src/api/logger.js';
import { createLogger } from '../../src/log.js';
import type { Pod } from '../../src/api/pod.js';
import { parseConfigText } from '../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../src/daemon/agent.js';
import type { SyncTrigger } from '../../src/daemon/eviction-loop.js';
import type { KillPath, LocalTerminator, MemoryThresholdNotifier, PodActions } from '../../src/daemon/ports.js';
import { kubeconfigFor, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import type { SynchronizeResult } from '../../src/eviction/types.js';
import type { ClusterViewHandle } from '../../src/kube/cluster-view.js';
import { connect } from '../../src/kube/index.js';
import type { BenchNode } from './bench-node.js';
import { nodeOfThisHost, thisHostIdentity } from '../../src/compose/this-host.js';

/** One way of running the agent, compared side by side. */
export interface AgentVariant {
  readonly key: string;
  /** How the page names it. */
  readonly label: string;
  readonly notifier: 'memcg-v1' | 'disabled';
  readonly localTermination: boolean;
  readonly housekeepingIntervalMs: number;
}

/** Called (synchronously, before the real call) at each moment of a reaction. */
export interface AgentHooks {
  notified?(atNs: bigint): void;
  decided?(result: SynchronizeResult, trigger: SyncTrigger, atNs: bigint): void;
  /** A memory notification's shortcut evicted this pod (called after its kill was issued). */
  shortcut?(pod: Pod, atNs: bigint): void;
  /**
   * The pod's processes are about to be signalled: by local termination, or, `byKillPath`, by the
   * kill path's thread, whose confirming reading of the node's usage it gives (the hook runs later,
   * on the main thread).
   */
  terminating?(pod: Pod, atNs: bigint, byKillPath?: { readonly usageBytes: bigint }): void;
  /** A DELETE or an Eviction is about to be sent to the API server. */
  requesting?(pod: Pod, atNs: bigint): void;
}

export interface BenchAgent {
  readonly running: RunningAgent;
  /** The agent's own view of its pods (the same watch its loop reads). */
  readonly cluster: ClusterViewHandle;
  /** The real notifier inside the wrapper. */
  readonly notifier: MemoryThresholdNotifier;
  /** Replaced freely between runs. */
  hooks: AgentHooks;
  /** Resolves once the agent's watch shows the pod (present) or no longer shows it. */
  waitForPod(uid: string, present: boolean, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** The configuration file of a variant: only the hard memory.available threshold. */
export function agentConfigText(variant: AgentVariant, thresholdQuantity: string): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    `  memory.available: ${thresholdQuantity}`,
    '# The sandbox node has no kubepods limit of its own to guard.',
    'enforceNodeAllocatable: []',
    `housekeepingInterval: ${variant.housekeepingIntervalMs}ms`,
    'notifier:',
    `  mode: ${variant.notifier}`,
    'actions:',
    `  localTermination: ${variant.localTermination}`,
    '',
  ].join('\n');
}

const nowNs = (): bigint => process.hrtime.bigint();

/**
 * `KEA_BENCH_AGENT_LOG=<file>` writes the agents' logs there (at `KEA_BENCH_AGENT_LOG_LEVEL`, info
 * by default), to see why a reaction took the path it took; silent otherwise (logging is work on
 * the measured thread).
 */
function benchAgentLogger(variantKey: string): Logger {
  const path = process.env.KEA_BENCH_AGENT_LOG;
  return path === undefined || path === '' ? silentLogger : createLogger(process.env.KEA_BENCH_AGENT_LOG_LEVEL ?? 'info', createWriteStream(path, { flags: 'a' })).child({ variant: variantKey });
}

export async function startBenchAgent(options: {
  readonly node: BenchNode;
  readonly standIn: ApiStandIn;
  readonly nodeName: string;
  readonly variant: AgentVariant;
  readonly thresholdQuantity: string;
  readonly scratchDir: string;
}): Promise<BenchAgent> {
  const { node, standIn, nodeName, variant } = options;
  const logger = benchAgentLogger(variant.key);
  standIn.setNode(nodeOfThisHost(nodeName));
  const adapters = node.adapters({
    nodeName,
    scratchDir: options.scratchDir,
    notifierMode: variant.notifier,
    processCountIntervalMs: variant.housekeepingIntervalMs,
    clock: systemClock,
    logger,
  });
  const client = await connect({ kubeconfigYaml: kubeconfigFor(standIn), nodeName, clock: systemClock, logger: silentLogger });
  const cluster = client.clusterView();
  const inner = client.podActions();
  let bench: BenchAgent | null = null;
  const hooks = (): AgentHooks => bench?.hooks ?? {};

  const notifier: MemoryThresholdNotifier = {
    mode: adapters.notifier.mode,
    start: (onEvent) =>
      adapters.notifier.start((event) => {
        hooks().notified?.(nowNs());
        onEvent(event);
      }),
    updateThresholds: (summary, thresholds) => adapters.notifier.updateThresholds(summary, thresholds),
    setActing: (acting) => adapters.notifier.setActing(acting),
    stop: () => adapters.notifier.stop(),
  };
  const terminator: LocalTerminator = {
    terminate: (pod, gracePeriodMs) => {
      hooks().terminating?.(pod, nowNs());
      return adapters.terminator.terminate(pod, gracePeriodMs);
    },
    adopt: (pod, gracePeriodMs) => adapters.terminator.adopt?.(pod, gracePeriodMs),
    release: (uid) => adapters.terminator.release?.(uid),
  };
  // The kill path's kills are stamped by its thread: when the kernel woke it, when its signals went out.
  const adaptersKillPath = adapters.killPath;
  const killPath: KillPath | undefined =
    adaptersKillPath === undefined
      ? undefined
      : {
          start: (onReport) =>
            adaptersKillPath.start((report) => {
              if (report.kind === 'killed') {
                hooks().notified?.(report.wokeAtNs);
                hooks().terminating?.(report.plan.victim, report.issuedAtNs, { usageBytes: report.usageBytes });
              }
              onReport(report);
            }),
          arm: (plan) => adaptersKillPath.arm(plan),
          disarm: () => adaptersKillPath.disarm(),
          collect: () => adaptersKillPath.collect(),
          standAside: (description) => adaptersKillPath.standAside(description),
          get armed() {
            return adaptersKillPath.armed;
          },
          stop: () => adaptersKillPath.stop(),
        };
  const actions: PodActions = {
    getPod: (namespace, name) => inner.getPod(namespace, name),
    evictPod: (pod, grace) => {
      hooks().requesting?.(pod, nowNs());
      return inner.evictPod(pod, grace);
    },
    deletePod: (pod, deleteOptions) => {
      hooks().requesting?.(pod, nowNs());
      return inner.deletePod(pod, deleteOptions);
    },
    addDisruptionTarget: (pod, condition) => inner.addDisruptionTarget(pod, condition),
  };

  const running = await startAgent(
    { config: parseConfigText(agentConfigText(variant, options.thresholdQuantity), `${variant.key}.yaml`), nodeName, reload: null, serverPort: 0 },
    {
      cluster,
      actions,
      events: client.eventRecorder('kube-eviction-agent'),
      nodeReporter: client.nodeReporter(),
      observer: adapters.observer,
      notifier,
      terminator,
      ...(killPath === undefined ? {} : { killPath }),
      hostIdentity: thisHostIdentity(),
      clock: systemClock,
      logger,
      onDecision: (result, trigger) => hooks().decided?.(result, trigger, nowNs()),
      onShortcut: (eviction) => hooks().shortcut?.(eviction.pod, nowNs()),
    },
  );
  await cluster.whenSynced();

  bench = {
    running,
    cluster,
    notifier: adapters.notifier,
    hooks: {},
    async waitForPod(uid, present, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (cluster.pods().some((p) => p.metadata.uid === uid) !== present) {
        if (Date.now() > deadline) throw new Error(`the agent's watch did not ${present ? 'show' : 'drop'} pod ${uid} within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    },
    async stop() {
      await running.stop();
      adapters.observer.close();
    },
  };
  return bench;
}
