// `kube-eviction-agent explain`: one observation and one decision, now, as readable tables.
// Against the cluster and this node (one synchronize pass on a fresh observation), or with
// `--replay FILE` against a recording (the decision at its last step, or at `--at TIME`).

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { systemClock } from '../api/clock.js';
import { silentLogger } from '../api/logger.js';
import { readAgentConfig } from '../compose/config-file.js';
import { formatConfigErrors } from '../config/effective-table.js';
import type { LoadedConfig } from '../config/types.js';
import { hugepageLines } from './explain-hugepages.js';
import { AgentError, ConfigError, errorMessage, ReplayInputError } from '../errors.js';
import { EvictionManager } from '../eviction/manager.js';
import { assessStatsCoverage } from '../eviction/stats-coverage.js';
import { formatRfc3339, parseReplayLine, parseRfc3339 } from '../replay/input.js';
import { ReplayRunner } from '../replay/runner.js';
import { explainReport, type ExplainInput } from './explain-report.js';

interface ExplainOptions {
  readonly config: string;
  readonly replay?: string;
  readonly at?: string;
  readonly nodeName?: string;
  readonly kubeconfig?: string;
}

/** The report for a recording, at its last step or at the last step not after `atMs`. */
export async function explainRecording(config: LoadedConfig, path: string, atMs: number | null): Promise<string> {
  const runner = new ReplayRunner(config.eviction, {}, config.agent.stormGuard, config.agent.reporting.retriggerWindowMs);
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  let lineNumber = 0;
  for await (const text of lines) {
    lineNumber++;
    if (text.trim() === '') continue;
    const step = parseReplayLine(text, lineNumber, runner.previousTimeMs);
    if (atMs !== null && step.timeMs > atMs) break;
    runner.step(step);
  }
  const last = runner.lastStep();
  if (last === null) throw new AgentError('EVA_ERR_USAGE', atMs === null ? `${path} holds no step` : `${path} holds no step at or before ${formatRfc3339(atMs)}`);
  const stormGuard = runner.stormGuardAtLastStep();
  return explainReport({
    ...last,
    ...(stormGuard === null ? {} : { stormGuard }),
    oomKills: { settings: config.agent.oomKills },
    outcomes: { source: 'the replayed decisions, judged from the recording\'s later steps', messages: runner.recentOutcomes().map((o) => o.message) },
    source: `Recording ${path}, step at ${formatRfc3339(runner.previousTimeMs ?? 0)} (replayed from its start)`,
  });
}

// How long `explain` waits for the running agent's /outcomes.
const OUTCOMES_TIMEOUT_MS = 3000;

/**
 * The running agent's last outcomes, from its metrics port on this host (`server.address` and
 * `server.port`; a wildcard address is reached on loopback), or why they cannot be had.
 */
export async function agentOutcomes(config: LoadedConfig, fetchFn: typeof fetch = fetch): Promise<NonNullable<ExplainInput['outcomes']>> {
  const { address, port } = config.agent.server;
  if (port === 0) return { source: 'the running agent', unavailable: 'server.port is 0: the agent serves no /outcomes' };
  const host = address === '0.0.0.0' || address === '' ? '127.0.0.1' : address === '::' ? '[::1]' : address.includes(':') ? `[${address}]` : address;
  const url = `http://${host}:${port}/outcomes`;
  try {
    const response = await fetchFn(url, { signal: AbortSignal.timeout(OUTCOMES_TIMEOUT_MS) });
    if (!response.ok) return { source: url, unavailable: `${url} answered ${response.status}` };
    const body: unknown = await response.json();
    if (!Array.isArray(body)) return { source: url, unavailable: `${url} did not answer a list` };
    const messages = body.map((o: unknown) => (typeof o === 'object' && o !== null && typeof (o as { message?: unknown }).message === 'string' ? (o as { message: string }).message : null)).filter((m): m is string => m !== null);
    return { source: url, messages };
  } catch (err) {
    return { source: url, unavailable: `the agent did not answer at ${url}: ${errorMessage(err)}` };
  }
}

/** The report for this node now: the watches synced, one observation, one synchronize pass. */
export async function explainNode(config: LoadedConfig, options: ExplainOptions): Promise<string> {
  const nodeName = options.nodeName ?? process.env.NODE_NAME ?? config.agent.nodeName;
  if (nodeName === undefined || nodeName === null || nodeName === '') throw new AgentError('EVA_ERR_USAGE', 'The node name is unknown: pass --node-name or set NODE_NAME');
  const [{ connectCluster }, { hostObserver, hostOomKillCounts }, { describeLockHolder }, { explainPsiConditions }] = await Promise.all([
    import('../compose/agent.js'),
    import('../compose/node-side.js'),
    import('../compose/node-lock.js'),
    import('../compose/psi-conditions.js'),
  ]);
  const clock = systemClock;
  const client = await connectCluster({ kubeconfig: options.kubeconfig }, nodeName, clock, silentLogger);
  const cluster = client.clusterView();
  await cluster.start();
  try {
    const deadlineMs = clock.nowMs() + 30_000;
    while (!cluster.synced && clock.nowMs() < deadlineMs) await clock.sleep(100);
    if (!cluster.synced) throw new AgentError('EVA_ERR_KUBE_API', `The pods of ${nodeName} could not be listed within 30 s from ${client.server}`);
    const observer = hostObserver(config, { nodeName, clock, logger: silentLogger, node: () => cluster.node() });
    const pods = cluster.pods().filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
    const observation = await observer.observe(pods);
    const manager = new EvictionManager(config.eviction);
    const nowMs = clock.nowMs();
    // As the running agent does: no eviction for a signal whose pods cannot be measured.
    const coverage = assessStatsCoverage({ summary: observation.summary, pods, nowMs, podCgroupRootProblem: observation.podCgroupRootProblem });
    const unrankableSignals = new Set(coverage.blind ? coverage.signals : []);
    const result = manager.synchronize({
      nowMs,
      summary: observation.summary,
      pods,
      dedicatedImageFs: observation.dedicatedImageFs,
      splitContainerFs: observation.splitContainerFs,
      unrankableSignals,
      ...(observation.hugepages === undefined ? {} : { hugepagesSubtractedBytes: observation.hugepages.subtractedBytes }),
    });
    const refusal = coverage.blind ? `\nNot ready, refusing to evict: ${coverage.reason}\n` : '';
    const hugepages = hugepageLines(observation.hugepages, config.agent.observe.source === 'kubelet' ? 'kubelet' : 'cgroupfs');
    const problems =
      refusal +
      (hugepages.length === 0 ? '' : `\n${hugepages.join('\n')}\n`) +
      (observation.problems.length === 0 ? '' : `\nObservation problems:\n${observation.problems.map((p) => `  ${p}`).join('\n')}\n`) +
      // Which agent acts on this node (the others stand by).
      `\n${describeLockHolder(config, clock.nowMs())}` +
      // The pods' cgroup's pressure now against the PSI conditions' thresholds.
      `\n${explainPsiConditions(config)}`;
    return (
      explainReport({
        result,
        thresholds: manager.thresholds,
        summary: observation.summary,
        pods,
        dedicatedImageFs: observation.dedicatedImageFs,
        splitContainerFs: observation.splitContainerFs,
        source: `Node ${nodeName}, observed ${formatRfc3339(result.nowMs)} (one pass: a soft threshold met now is still within its grace period)`,
        // One pass has no history: the running agent's guard state is in its metrics and Events.
        stormGuard: { settings: config.agent.stormGuard, state: null, line: null },
        oomKills: { settings: config.agent.oomKills, counts: hostOomKillCounts(config, { nodeName, clock, logger: silentLogger }) },
        outcomes: await agentOutcomes(config),
      }) + problems
    );
  } finally {
    await cluster.stop();
  }
}

export function registerExplain(program: Command): void {
  program
    .command('explain')
    .description('Explain one decision: each signal against each threshold, the ranked pods, and what would be evicted and why')
    .requiredOption('-c, --config <file>', 'AgentConfiguration or KubeletConfiguration file')
    .option('--replay <file>', 'explain a recording (JSON Lines, as `replay` reads) instead of this node')
    .option('--at <time>', 'with --replay: the last step at or before this RFC 3339 time (default: the last step)')
    .option('--node-name <name>', 'this node\'s name (default: $NODE_NAME)')
    .option('--kubeconfig <file>', 'kubeconfig file (default: in-cluster, then $KUBECONFIG, then ~/.kube/config)')
    .action(async (options: ExplainOptions) => {
      try {
        const { config } = await readAgentConfig(options.config);
        let atMs: number | null = null;
        if (options.at !== undefined) {
          atMs = parseRfc3339(options.at);
          if (atMs === null) throw new AgentError('EVA_ERR_USAGE', `--at must be an RFC 3339 time: ${options.at}`);
        }
        const report = options.replay === undefined ? await explainNode(config, options) : await explainRecording(config, options.replay, atMs);
        process.stdout.write(report);
      } catch (err) {
        if (err instanceof ConfigError) process.stderr.write(`${options.config}: invalid configuration\n${formatConfigErrors(err)}\n`);
        else if (err instanceof ReplayInputError) process.stderr.write(`${options.replay ?? ''}: ${err.message}\n`);
        else process.stderr.write(`${errorMessage(err)}\n`);
        process.exitCode = 1;
      }
    });
}
