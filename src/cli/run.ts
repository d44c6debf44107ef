// `kube-eviction-agent run --config FILE`: the product's main job on a node. Reads the
// configuration once, starts the agent through the composition root (src/compose) with the real
// adapters, and stops everything on SIGTERM or SIGINT within a second.

import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { systemClock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { startNodeAgent } from '../compose/agent.js';
import { readAgentConfig, type AgentConfigFile } from '../compose/config-file.js';
import { formatConfigErrors } from '../config/effective-table.js';
import type { RunningAgent } from '../daemon/agent.js';
import { AgentError, ConfigError, errorMessage } from '../errors.js';
import { createLogger } from '../log.js';

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

/** Starts the agent against a cluster with a loaded configuration; resolves once it is running. */
export async function runAgent(options: RunOptions, file: AgentConfigFile, logger: Logger): Promise<RunningAgent> {
  const { config } = file;
  const nodeName = options.nodeName ?? process.env.NODE_NAME ?? config.agent.nodeName;
  if (nodeName === undefined || nodeName === null || nodeName === '') {
    throw new AgentError('EVA_ERR_USAGE', 'The node name is unknown: pass --node-name, set NODE_NAME, or set nodeName in the configuration');
  }
  if (options.oomScoreAdj !== undefined) setOomScoreAdj(options.oomScoreAdj, logger);
  return startNodeAgent({
    config,
    nodeName,
    cluster: { kubeconfig: options.kubeconfig },
    reload: { path: file.path, text: file.text, parse: file.parse },
    ...(options.dryRun === true ? { dryRun: true } : {}),
    ...(options.port === undefined ? {} : { serverPort: Number(options.port) }),
    clock: systemClock,
    logger,
  });
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
      let file: AgentConfigFile;
      try {
        file = await readAgentConfig(options.config, { hostRoot: options.hostRoot });
      } catch (err) {
        process.stderr.write(err instanceof ConfigError ? `${options.config}: invalid configuration\n${formatConfigErrors(err)}\n` : `${errorMessage(err)}\n`);
        process.exitCode = 1;
        return;
      }
      const logger = createLogger(options.logLevel ?? file.config.agent.logLevel).child({ component: 'main' });
      let agent: RunningAgent;
      try {
        agent = await runAgent(options, file, logger);
      } catch (err) {
        logger.error('cannot start', { err: errorMessage(err), code: err instanceof AgentError ? err.code : undefined });
        process.exitCode = 1;
        return;
      }
      await new Promise<void>((resolve) => {
        const shutdown = (signal: string): void => {
          logger.info('signal received; stopping', { signal });
          process.off('SIGTERM', onTerm);
          process.off('SIGINT', onInt);
          agent.stop().then(resolve, (err: unknown) => {
            logger.error('stop failed', { err: errorMessage(err) });
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
