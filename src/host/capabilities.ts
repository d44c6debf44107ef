// The Linux capabilities the agent needs beyond those of a root process without any (measured on the
// real kernel, docs/deployment.md): which feature each one serves, the effective set read from
// /proc/self/status, and the coded, one-sentence errors that name a missing one. Everything else the
// agent does (memory thresholds, PSI triggers with 2 s windows, cgroup and /proc reads, statfs) needs
// none, only root's ownership of the files and a read-write cgroup mount.

import type { Logger } from '../api/logger.js';
import { AgentError } from '../errors.js';
import { describeError } from './read-result.js';

/** Capability numbers, from linux/capability.h. */
export const CAPABILITY_BITS = {
  CAP_DAC_READ_SEARCH: 2,
  CAP_KILL: 5,
  CAP_SYS_RESOURCE: 24,
} as const;

export type CapabilityName = keyof typeof CAPABILITY_BITS;

/** The capabilities in the `CapEff:` line of /proc/<pid>/status; null when the line is missing or malformed. */
export function effectiveCapabilities(statusText: string): ReadonlySet<CapabilityName> | null {
  const hex = /^CapEff:\s*([0-9a-f]{1,16})\s*$/m.exec(statusText)?.[1];
  if (hex === undefined) return null;
  const bits = BigInt(`0x${hex}`);
  const names = Object.keys(CAPABILITY_BITS) as CapabilityName[];
  return new Set(names.filter((name) => ((bits >> BigInt(CAPABILITY_BITS[name])) & 1n) === 1n));
}

/** A refusal that a missing capability explains, as the sentence operators see, with its code. */
export function missingCapabilityError(capability: CapabilityName, refused: string, consequence: string): AgentError {
  return new AgentError('EVA_ERR_CAPABILITY', `${refused}: this needs ${capability}, which the agent's container lacks; ${consequence}`);
}

/** Logs an AgentError as the agent logs coded problems: the sentence, and the code in `code`. */
export function logCapabilityError(logger: Logger, error: AgentError, fields: Record<string, unknown> = {}): void {
  logger.warn(error.message, { code: error.code, ...fields });
}

export interface CapabilityFeatures {
  /** actions.localTermination, and not a dry run: signals pods' processes, which run as other users. */
  readonly signalsPodProcesses: boolean;
  /** observe.source cgroupfs: walks pod volumes, logs and writable layers that other users own. */
  readonly walksPodFiles: boolean;
}

interface Need {
  readonly capability: CapabilityName;
  readonly when: (features: CapabilityFeatures) => boolean;
  readonly refused: string;
  readonly consequence: string;
}

const NEEDS: readonly Need[] = [
  {
    capability: 'CAP_KILL',
    when: (f) => f.signalsPodProcesses,
    refused: 'Local termination (actions.localTermination) cannot signal pod processes that run as another user',
    consequence: 'such pods are still evicted through the API server, only later',
  },
  {
    capability: 'CAP_DAC_READ_SEARCH',
    when: (f) => f.walksPodFiles,
    refused: 'The disk usage of pod volumes, logs and writable layers that another user owns cannot be measured',
    consequence: 'ephemeral-storage evictions do not count what it cannot read',
  },
];

/**
 * Checks, once at start, that the effective set holds what the configured features need, and logs
 * one coded warning per missing capability. Returns the missing ones. An unreadable status file is
 * reported and treated as "all present": the features then report their own refusals.
 */
export function reportMissingCapabilities(statusText: string | null, features: CapabilityFeatures, logger: Logger): CapabilityName[] {
  const effective = statusText === null ? null : effectiveCapabilities(statusText);
  if (effective === null) {
    logger.warn('cannot read the agent\'s effective capabilities from /proc/self/status; features report their own refusals', {});
    return [];
  }
  const missing: CapabilityName[] = [];
  for (const need of NEEDS) {
    if (!need.when(features) || effective.has(need.capability)) continue;
    missing.push(need.capability);
    logCapabilityError(logger, missingCapabilityError(need.capability, need.refused, need.consequence), { capability: need.capability });
  }
  return missing;
}

/**
 * describeError for a walk of files that pods own: an EACCES there means the agent cannot read
 * another user's directory, which CAP_DAC_READ_SEARCH allows, so the description says so.
 */
export function describePodFileError(error: unknown): string {
  const described = describeError(error);
  return described === 'EACCES' ? 'EACCES (reading what another user owns needs CAP_DAC_READ_SEARCH)' : described;
}
