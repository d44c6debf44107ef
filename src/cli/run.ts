// `kube-eviction-agent run --config FILE`: the product's main job on a node. Wires the real
// adapters (the API server, the cgroup observer or the kubelet's summary, the kernel notifier,
// local termination) into the agent, and stops everything on SIGTERM or SIGINT within a second.

import { readFileSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';
import type { Command } from 'commander';
import { createPodTerminator } from '../act/pod-terminator.js';
import { systemClock, type Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { formatConfigErrors } from '../config/effective-table.js';
import { parseConfigText } from '../config/load.js';
import type { LoadedConfig } from '../config/types.js';
import { startAgent, type AgentDeps, type RunningAgent } from '../daemon/agent.js';
import type { NodeObserver } from '../daemon/ports.js';
import { AgentError, ConfigError, errorMessage } from '../errors.js';
import { connect } from '../kube/index.js';
import { createLogger } from '../log.js';
import { createMemoryThresholdNotifier } from '../notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver } from '../observe/cgroup-observer.js';
import { createKubeletSummaryObserver } from '../observe/kubelet-summary-client.js';

export interface RunOptions {
  readonly config: string;
  readonly nodeName?: string;
  readonly kubeconfig?: string;
  readonly dryRun?: boolean;
  readonly oomScoreAdj?: string;
  readonly logLevel?: string;
  readonly port?: string;
  readonly hostRoot?: string;
}

/** Reads and validates the configuration file; a ConfigError lists every problem. */
export function readConfig(path: string, hostRoot?: string): { config: LoadedConfig; text: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError([{ field: '', value: path, message: `The configuration file cannot be read: ${errorMessage(err)}` }], 'EVA_ERR_CONFIG_READ');
  }
  return { config: withHostRoot(parseConfigText(text, path), hostRoot), text };
}

/**
 * `--host-root` overrides `observe.hostRoot`: a KubeletConfiguration has no agent fields, so this
 * is how an agent reading the kubelet's own file finds the host mounted at /host.
 */
export function withHostRoot(config: LoadedConfig, hostRoot: string | undefined): LoadedConfig {
  if (hostRoot === undefined) return config;
  if (!posix.isAbsolute(hostRoot)) throw new AgentError('EVA_ERR_USAGE', `--host-root must be an absolute path: ${hostRoot}`);
  return { ...config, agent: { ...config.agent, observe: { ...config.agent.observe, hostRoot } } };
}

/** The node-side adapters for a configuration: observer, notifier and local terminator. */
export function nodeAdapters(config: LoadedConfig, nodeName: string, clock: Clock, logger: Logger): Pick<AgentDeps, 'observer' | 'notifier' | 'terminator'> {
  const o = config.agent.observe;
  const hostCgroupRoot = posix.join(o.hostRoot, o.cgroupRoot);
  const driver = o.cgroupDriver;
  // With `auto`, the pod cgroup root is whichever the driver's tree turns out to be.
  const podCgroupRoot = driver === 'auto' ? undefined : o.podCgroupRoot;
  const observer: NodeObserver =
    o.source === 'kubelet'
      ? createKubeletSummaryObserver({ url: o.kubeletUrl, tokenFile: o.kubeletTokenFile, insecureSkipVerify: o.kubeletInsecureSkipVerify, timeoutMs: 5000, clock, logger })
      : createCgroupObserver({
          hostRoot: o.hostRoot,
          cgroupRoot: o.cgroupRoot,
          procRoot: o.procRoot,
          kubeletRootDir: o.kubeletRootDir,
          imageFsPath: o.imageFsPath,
          containerFsPath: o.containerFsPath,
          podLogsDir: o.podLogsDir,
          cgroupDriver: driver,
          ...(podCgroupRoot === undefined ? {} : { podCgroupRoot }),
          diskUsageIntervalMs: o.diskUsageIntervalMs,
          // Counts are fresh on every housekeeping pass; a notification's pass reuses them.
          processCountIntervalMs: config.eviction.housekeepingIntervalMs,
          nodeName,
          clock,
          logger,
        });
  const n = config.agent.notifier;
  const notifier = createMemoryThresholdNotifier({
    mode: n.mode,
    cgroupRoot: hostCgroupRoot,
    nodeCgroup: '',
    podCgroupRoot: podCgroupRoot ?? detectPodCgroupRoot(hostCgroupRoot),
    psiStallThresholdMs: n.psiStallThresholdMs,
    psiWindowMs: n.psiWindowMs,
    fastCheckIntervalMs: n.fastCheckIntervalMs,
    // The PSI trigger fallback writes /proc/pressure/memory: the container's own /proc (the
    // same kernel) is writable where the host's, mounted read-only, is not.
    procRoot: '/proc',
    clock,
    logger,
  });
  const terminator = createPodTerminator({ cgroupRoot: hostCgroupRoot, cgroupDriver: driver, ...(podCgroupRoot === undefined ? {} : { podCgroupRoot }), clock, logger });
  return { observer, notifier, terminator };
}

// The systemd driver's tree when it exists, else the cgroupfs one.
function detectPodCgroupRoot(hostCgroupRoot: string): string {
  for (const root of [`${hostCgroupRoot}/memory`, hostCgroupRoot]) {
    try {
      readFileSync(`${root}/kubepods.slice/cgroup.procs`);
      return 'kubepods.slice';
    } catch {
      // not this one
    }
  }
  return 'kubepods';
}

// The agent must outlive the pods it protects the node from: keep the kernel OOM killer off it.
function setOomScoreAdj(value: string, logger: Logger): void {
  const adj = Number(value);
  if (!Number.isInteger(adj) || adj < -1000 || adj > 1000) throw new AgentError('EVA_ERR_USAGE', `--oom-score-adj must be an integer from -1000 to 1000: ${value}`);
  try {
    writeFileSync('/proc/self/oom_score_adj', `${adj}\n`);
    logger.info('oom_score_adj set', { oomScoreAdj: adj });
  } catch (err) {
    logger.warn('could not set oom_score_adj', { err: errorMessage(err) });
  }
}

/** Starts the agent against a cluster; resolves once it is running. */
export async function runAgent(options: RunOptions, logger: Logger): Promise<RunningAgent> {
  const { config, text } = readConfig(options.config, options.hostRoot);
  const nodeName = options.nodeName ?? process.env.NODE_NAME ?? config.agent.nodeName;
  if (nodeName === undefined || nodeName === null || nodeName === '') {
    throw new AgentError('EVA_ERR_USAGE', 'The node name is unknown: pass --node-name, set NODE_NAME, or set nodeName in the configuration');
  }
  if (options.oomScoreAdj !== undefined) setOomScoreAdj(options.oomScoreAdj, logger);
  const clock = systemClock;
  const client = await connect({ ...(options.kubeconfig === undefined ? {} : { kubeconfig: options.kubeconfig }), nodeName, clock, logger });
  const cluster = client.clusterView();
  logger.info('starting', { node: nodeName, server: client.server, config: options.config, kind: config.kind, dryRun: options.dryRun === true || config.agent.actions.dryRun });
  return startAgent(
    {
      config,
      nodeName,
      reload: { path: options.config, text, parse: (next) => withHostRoot(parseConfigText(next, options.config), options.hostRoot) },
      ...(options.dryRun === true ? { dryRun: true } : {}),
      ...(options.port === undefined ? {} : { serverPort: Number(options.port) }),
    },
    {
      cluster,
      actions: client.podActions(),
      events: client.eventRecorder('kube-eviction-agent'),
      nodeReporter: client.nodeReporter(),
      ...nodeAdapters(config, nodeName, clock, logger),
      clock,
      logger,
    },
  );
}

export function registerRun(program: Command): void {
  program
    .command('run')
    .description('Run the agent on this node: observe, decide and evict as the kubelet eviction manager would, reacting to kernel memory notifications')
    .requiredOption('-c, --config <file>', 'AgentConfiguration or KubeletConfiguration file (reloaded when it changes)')
    .option('--node-name <name>', 'this node\'s name (default: $NODE_NAME)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)')
    .option('--dry-run', 'observe, decide and report, but change nothing in the cluster or on the node')
    .option('--oom-score-adj <n>', 'set the agent\'s own oom_score_adj (e.g. -999) so the kernel OOM killer spares it')
    .option('--log-level <level>', 'debug, info, warn or error (default: the configuration\'s logLevel)')
    .option('--port <port>', 'port for /metrics, /healthz and /readyz (default: the configuration\'s server.port); 0 picks a free one')
    .option('--host-root <dir>', 'where the host\'s root is mounted (overrides observe.hostRoot; for a KubeletConfiguration file)')
    .action(async (options: RunOptions) => {
      let logLevel = options.logLevel ?? 'info';
      try {
        logLevel = options.logLevel ?? readConfig(options.config).config.agent.logLevel;
      } catch {
        // Reported below by runAgent, with every problem.
      }
      const logger = createLogger(logLevel).child({ component: 'main' });
      let agent: RunningAgent;
      try {
        agent = await runAgent(options, logger);
      } catch (err) {
        if (err instanceof ConfigError) process.stderr.write(`${options.config}: invalid configuration\n${formatConfigErrors(err)}\n`);
        else logger.error('cannot start', { err: errorMessage(err), code: err instanceof AgentError ? err.code : undefined });
        process.exitCode = 1;
        return;
      }
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string): void => {
          logger.info('signal received; stopping', { signal });
          process.off('SIGTERM', onTerm);
          process.off('SIGINT', onInt);
          agent.stop().then(resolve, (err: unknown) => {
            logger.error('stop failed', { err: String(err) });
            resolve();
          });
        };
        const onTerm = (): void => shutdown('SIGTERM');
        const onInt = (): void => shutdown('SIGINT');
        process.on('SIGTERM', onTerm);
        process.on('SIGINT', onInt);
      });
      // Everything is stopped; idle keep-alive sockets of the HTTP client must not delay the exit.
      process.exit(process.exitCode ?? 0);
    });
}
