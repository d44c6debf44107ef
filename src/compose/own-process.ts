// What `run` does to its own process before it starts the agent on a real node: the start-up
// report of the Linux capabilities its configured features need (src/host/capabilities.ts), and
// its oom_score_adj, whose refusal names the capability that would allow it.

import { readFileSync, writeFileSync } from 'node:fs';
import type { Logger } from '../api/logger.js';
import type { LoadedConfig } from '../config/types.js';
import { AgentError, errorMessage } from '../errors.js';
import { logCapabilityError, missingCapabilityError, reportMissingCapabilities, type CapabilityName } from '../host/capabilities.js';

const OWN_STATUS_FILE = '/proc/self/status';
const OWN_OOM_SCORE_ADJ_FILE = '/proc/self/oom_score_adj';

/** Logs one coded warning per capability the configured features need and this process lacks; returns them. */
export function reportOwnCapabilities(config: LoadedConfig, dryRun: boolean, logger: Logger, statusFile = OWN_STATUS_FILE): CapabilityName[] {
  let status: string | null = null;
  try {
    status = readFileSync(statusFile, 'utf8');
  } catch {
    // reportMissingCapabilities says so.
  }
  const features = {
    signalsPodProcesses: config.agent.actions.localTermination && !dryRun && !config.agent.actions.dryRun,
    walksPodFiles: config.agent.observe.source === 'cgroupfs',
  };
  return reportMissingCapabilities(status, features, logger);
}

/**
 * Sets this process's oom_score_adj, so that the kernel OOM killer spares the agent, which must
 * outlive the pods it protects the node from. Going below the value the container started with
 * (-997 for a node-critical pod) needs CAP_SYS_RESOURCE; without it the kernel answers EACCES and
 * the agent keeps the value it has. Returns whether the value was set.
 */
export function setOomScoreAdj(value: string, logger: Logger, file = OWN_OOM_SCORE_ADJ_FILE): boolean {
  const adj = Number(value);
  if (!Number.isInteger(adj) || adj < -1000 || adj > 1000) throw new AgentError('EVA_ERR_USAGE', `--oom-score-adj must be an integer from -1000 to 1000: ${value}`);
  try {
    writeFileSync(file, `${adj}\n`);
    logger.info('oom_score_adj set', { oomScoreAdj: adj });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EACCES') {
      logger.warn('could not set oom_score_adj', { err: errorMessage(err) });
      return false;
    }
    let current = 'unchanged';
    try {
      current = readFileSync(file, 'utf8').trim();
    } catch {
      // Only for the message.
    }
    const error = missingCapabilityError('CAP_SYS_RESOURCE', `Setting oom_score_adj to ${adj} was refused (EACCES)`, `it stays at ${current}`);
    logCapabilityError(logger, error, { oomScoreAdj: adj, current });
    return false;
  }
}
