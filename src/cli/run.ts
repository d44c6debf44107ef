// `kube-eviction-agent run --config FILE`: the product's main job on a node. Reads the
// configuration once, starts the agent through the composition root (src/compose) with the real
// adapters, and stops everything on SIGTERM or SIGINT within a second, start-up included. SIGHUP
// reloads the configuration. Any failure to start, and any unhandled rejection or uncaught
// exception, is logged and exits with status 1: a half-started agent never stays up.

import type { Command } from 'commander';
import { systemClock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { startNodeAgent } from '../compose/agent.js';
import { readAgentConfig, type AgentConfigFile } from '../compose/config-file.js';
import { reportOwnCapabilities, setOomScoreAdj } from '../compose/own-process.js';
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
  readonly probePort?: string;
  readonly hostRoot?: string;
}

// A port as given on the command line: a whole number from 0 to 65535, nothing else.
function portOption(value: string, flag = '--port'): number {
  const port = /^[0-9]{1,5}$/.test(value) ? Number(value) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new AgentError('EVA_ERR_USAGE', `${flag} must be an integer from 0 to 65535: ${value}`);
  return port;
}

/** Starts the agent against a cluster with a loaded configuration; resolves once it is running. Aborting `signal` stops a start in progress. */
export async function runAgent(options: RunOptions, file: AgentConfigFile, logger: Logger, signal?: AbortSignal): Promise<RunningAgent> {
  const { config } = file;
  const nodeName = options.nodeName ?? process.env.NODE_NAME ?? config.agent.nodeName;
  if (nodeName === undefined || nodeName === null || nodeName === '') {
    throw new AgentError('EVA_ERR_USAGE', 'The node name is unknown: pass --node-name, set NODE_NAME, or set nodeName in the configuration');
  }
  const serverPort = options.port === undefined ? undefined : portOption(options.port);
  const probePort = options.probePort === undefined ? undefined : portOption(options.probePort, '--probe-port');
  if (options.oomScoreAdj !== undefined) setOomScoreAdj(options.oomScoreAdj, logger);
  reportOwnCapabilities(config, options.dryRun === true, logger);
  return startNodeAgent({
    config,
    nodeName,
    cluster: { kubeconfig: options.kubeconfig },
    reload: { path: file.path, text: file.text, parse: file.parse },
    ...(options.dryRun === true ? { dryRun: true } : {}),
    ...(serverPort === undefined ? {} : { serverPort }),
    ...(probePort === undefined ? {} : { probePort }),
    ...(signal === undefined ? {} : { signal }),
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
    .option('--port <port>', 'port for /metrics, /healthz and /readyz (default: the configuration\'s server.port); 0 picks a free one, for the probe port too unless --probe-port is given')
    .option('--probe-port <port>', 'port for /healthz and /readyz only, the kubelet\'s probes (default: the configuration\'s server.probePort); 0 picks a free one')
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
      // Whatever escapes the agent's own handling ends the process, visibly: the DaemonSet restarts
      // it, where an agent limping on in an unknown state would not be noticed.
      const fatal = (what: string) => (err: unknown): void => {
        logger.error(what, { err: errorMessage(err), stack: err instanceof Error ? err.stack : undefined });
        process.exit(1);
      };
      process.on('unhandledRejection', fatal('unhandled rejection; exiting'));
      process.on('uncaughtException', fatal('uncaught exception; exiting'));

      // The signals are handled from the start: SIGTERM during start-up stops what has started.
      const starting = new AbortController();
      let agent: RunningAgent | null = null;
      let reloadWanted = false;
      const reload = (): void => {
        if (agent === null) {
          reloadWanted = true;
          return;
        }
        agent.reloadNow().then(
          (result) => logger.info('SIGHUP: configuration reload', { result }),
          (err: unknown) => logger.error('SIGHUP: configuration reload failed', { err: errorMessage(err) }),
        );
      };
      let stopped = (): void => {};
      const stoppedPromise = new Promise<void>((resolve) => {
        stopped = resolve;
      });
      let stopRequested = false;
      const shutdown = (signal: string): void => {
        if (stopRequested) return;
        stopRequested = true;
        logger.info('signal received; stopping', { signal });
        if (agent === null) starting.abort();
        else stopAgent(agent);
      };
      const stopAgent = (running: RunningAgent): void => {
        running.stop().then(stopped, (err: unknown) => {
          logger.error('stop failed', { err: errorMessage(err) });
          process.exitCode = 1;
          stopped();
        });
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
      process.on('SIGHUP', () => {
        logger.info('signal received; reloading the configuration', { signal: 'SIGHUP' });
        reload();
      });

      try {
        agent = await runAgent(options, file, logger, starting.signal);
      } catch (err) {
        if (starting.signal.aborted && err instanceof AgentError && err.code === 'EVA_ERR_SHUTDOWN') {
          logger.info('stopped during start-up');
          process.exit(0);
        }
        logger.error('cannot start', { err: errorMessage(err), code: err instanceof AgentError ? err.code : undefined });
        // Everything started is stopped; lingering sockets must not keep a failed agent alive.
        process.exit(1);
      }
      // A SIGTERM that came as the start completed; a SIGHUP that came during it.
      if (stopRequested) stopAgent(agent);
      else if (reloadWanted) reload();
      await stoppedPromise;
      // Everything is stopped; idle keep-alive sockets of the HTTP client must not delay the exit.
      process.exit(process.exitCode ?? 0);
    });
}
