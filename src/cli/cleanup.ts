// `kube-eviction-agent cleanup (--node-name NODE | --all-nodes)`: the last step of an uninstall.
// Takes the agent's own node conditions and pressure taint (as the configuration names them, or
// the defaults) off one Node or every Node, through the composition root (src/compose/cleanup.ts),
// never anyone else's; `--dry-run` prints what would go and changes nothing. One line per Node on
// stdout, a summary on stderr; the exit status is 1 if any Node could not be cleaned.

import type { Writable } from 'node:stream';
import type { Command } from 'commander';
import type { AgentSettings } from '../api/agent-settings.js';
import { systemClock } from '../api/clock.js';
import { printableValue } from '../api/pod.js';
import { agentNodeMarks, cleanupNodes, isNodeName, type NodeCleanupOutcome } from '../compose/cleanup.js';
import { readAgentConfig } from '../compose/config-file.js';
import { defaultAgentSettings } from '../config/defaults.js';
import { formatConfigErrors } from '../config/effective-table.js';
import { AgentError, ConfigError, errorMessage } from '../errors.js';
import { createLogger } from '../log.js';

export interface CleanupCliOptions {
  readonly nodeName?: string;
  readonly allNodes?: boolean;
  readonly config?: string;
  readonly kubeconfig?: string;
  readonly dryRun?: boolean;
  readonly logLevel?: string;
}

/** The checked command line. */
export interface CleanupTarget {
  readonly nodes: { readonly name: string } | 'all';
  readonly dryRun: boolean;
}

const LOG_LEVELS = new Set(['debug', 'info', 'warn', 'error']);

function usage(message: string): AgentError {
  return new AgentError('EVA_ERR_USAGE', message);
}

export function cleanupTarget(options: CleanupCliOptions): CleanupTarget {
  const named = options.nodeName !== undefined;
  if (named === (options.allNodes === true)) throw usage('cleanup needs exactly one of --node-name NODE or --all-nodes');
  if (options.logLevel !== undefined && !LOG_LEVELS.has(options.logLevel)) throw usage(`--log-level must be debug, info, warn or error: ${printableValue(options.logLevel)}`);
  const dryRun = options.dryRun === true;
  if (options.nodeName === undefined) return { nodes: 'all', dryRun };
  if (!isNodeName(options.nodeName)) throw usage(`--node-name must be a node name (a lowercase DNS subdomain of at most 253 characters): ${printableValue(options.nodeName)}`);
  return { nodes: { name: options.nodeName }, dryRun };
}

const list = (items: readonly string[]): string => items.join(', ');

/** One Node's line. */
export function formatOutcome(outcome: NodeCleanupOutcome): string {
  const what = [...(outcome.conditions.length === 0 ? [] : [`conditions ${list(outcome.conditions)}`]), ...(outcome.taints.length === 0 ? [] : [`taint ${list(outcome.taints)}`])];
  const removed = what.map((item) => `removed ${item}`).join('; ');
  switch (outcome.result) {
    case 'cleaned':
      return `${outcome.node}: ${removed}`;
    case 'would-clean':
      return `${outcome.node}: would remove ${what.join('; ')} (dry run: nothing changed)`;
    case 'clean':
      return `${outcome.node}: nothing of the agent's on it`;
    case 'missing':
      return `${outcome.node}: no such node`;
    case 'failed':
      return `${outcome.node}: FAILED: ${outcome.error ?? 'unknown error'}${removed === '' ? '' : ` (before that: ${removed})`}`;
  }
}

/** Failed Nodes, and a Node named on the command line that does not exist. */
export function failedOutcomes(outcomes: readonly NodeCleanupOutcome[], target: CleanupTarget): NodeCleanupOutcome[] {
  return outcomes.filter((o) => o.result === 'failed' || (o.result === 'missing' && target.nodes !== 'all'));
}

export function summary(outcomes: readonly NodeCleanupOutcome[], target: CleanupTarget): string {
  const count = (result: NodeCleanupOutcome['result']): number => outcomes.filter((o) => o.result === result).length;
  const changed = target.dryRun ? `${count('would-clean')} to clean (dry run: nothing changed)` : `${count('cleaned')} cleaned`;
  return `cleanup: ${outcomes.length} node(s): ${changed}, ${count('clean')} already clean, ${count('missing')} gone, ${failedOutcomes(outcomes, target).length} failed`;
}

/** Runs the clean-up; resolves with the exit status. */
export async function cleanupCommand(options: CleanupCliOptions, io: { stdout: Writable; stderr: Writable }): Promise<number> {
  const target = cleanupTarget(options);
  let settings: AgentSettings;
  try {
    settings = options.config === undefined ? defaultAgentSettings() : (await readAgentConfig(options.config)).config.agent;
  } catch (err) {
    io.stderr.write(err instanceof ConfigError ? `${options.config ?? ''}: invalid configuration\n${formatConfigErrors(err)}\n` : `${errorMessage(err)}\n`);
    return 1;
  }
  const logger = createLogger(options.logLevel ?? 'warn', io.stderr).child({ component: 'cleanup' });
  let outcomes: NodeCleanupOutcome[];
  try {
    outcomes = await cleanupNodes({
      cluster: { kubeconfig: options.kubeconfig },
      nodes: target.nodes,
      marks: agentNodeMarks(settings),
      dryRun: target.dryRun,
      clock: systemClock,
      logger,
      onOutcome: (outcome) => io.stdout.write(`${formatOutcome(outcome)}\n`),
    });
  } catch (err) {
    io.stderr.write(`cleanup: ${errorMessage(err)}\n`);
    return 1;
  }
  io.stderr.write(`${summary(outcomes, target)}\n`);
  return failedOutcomes(outcomes, target).length === 0 ? 0 : 1;
}

export function registerCleanup(program: Command): void {
  program
    .command('cleanup')
    .description('Remove the agent\'s own node conditions and pressure taint from one node or every node (the last step of an uninstall)')
    .option('--node-name <name>', 'the node to clean')
    .option('--all-nodes', 'clean every node the API server lists')
    .option('-c, --config <file>', 'the agent\'s configuration, for its condition type prefix and taint key (default: the defaults)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)')
    .option('--dry-run', 'print what would be removed and change nothing')
    .option('--log-level <level>', 'debug, info, warn or error (default: warn)')
    .action(async (options: CleanupCliOptions) => {
      const status = await cleanupCommand(options, { stdout: process.stdout, stderr: process.stderr });
      // Idle keep-alive sockets of the HTTP client must not delay the exit.
      process.exit(status);
    });
}
