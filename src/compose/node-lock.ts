// The node lock as `run` wires it: the lock file in the configured host directory, and who this
// agent is (from the environment the DaemonSet gives its pod: POD_NAMESPACE, POD_NAME, KEA_RELEASE,
// KEA_IMAGE), for the lock's state file and the Events that name both agents when there are two.
// Also whether the directory is the host's, which start-up and `check-config` report.

import type { Logger } from '../api/logger.js';
import type { LoadedConfig } from '../config/types.js';
import { createNodeLockFile } from '../act/node-lock-file.js';
import { describeInstance, parsePublishedLockState, type AgentInstance } from '../daemon/node-lock-gate.js';
import type { NodeLockFile } from '../daemon/ports.js';
import { hostSharing, type DirectorySharing } from '../host/host-shared-directory.js';

export type { DirectorySharing };

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
// An image reference or a release name: printable, no spaces, bounded.
const PRINTABLE = /^[\x21-\x7e]{1,512}$/;

/** This process as the lock and the Events name it; values of the wrong shape are left out, not trusted. */
export function thisAgentInstance(env: NodeJS.ProcessEnv = process.env, pid = process.pid, startedAtMs = Date.now() - Math.round(process.uptime() * 1000)): AgentInstance {
  const namespace = env.POD_NAMESPACE ?? '';
  const name = env.POD_NAME ?? '';
  const pod = DNS_LABEL.test(namespace) && DNS_SUBDOMAIN.test(name) ? `${namespace}/${name}` : null;
  const release = PRINTABLE.test(env.KEA_RELEASE ?? '') ? (env.KEA_RELEASE as string) : null;
  const image = PRINTABLE.test(env.KEA_IMAGE ?? '') ? (env.KEA_IMAGE as string) : null;
  return { pid, pod, release, image, startedAtMs };
}

/** The lock file of the configured directory; null when `nodeLock.directory` is '' (the lock is off). */
export function hostNodeLock(config: LoadedConfig, directory = config.agent.nodeLock.directory): NodeLockFile | null {
  return directory === '' ? null : createNodeLockFile(directory);
}

/** The node lock as `check-config` reports it: where, the hung-holder timeout, and whether the directory is the host's on this machine. */
export function describeNodeLock(config: LoadedConfig): string {
  const { directory, hungHolderTimeoutMs } = config.agent.nodeLock;
  if (directory === '') return 'node lock: off (nodeLock.directory is ""): this agent acts whatever other agent runs on its node\n';
  const sharing = hostSharing(directory);
  const verdict =
    sharing.shared === true ? `shared with the host here (${sharing.how})` : sharing.shared === false ? `NOT SHARED WITH THE HOST here: ${sharing.reason}` : `sharing with the host unknown here: ${sharing.reason}`;
  return `node lock: ${directory}/node.lock, a holder hung after ${hungHolderTimeoutMs / 1000}s; ${verdict}\n`;
}

/**
 * Who holds the node lock, as `explain` reports it: read from the holder's state file (nothing is
 * locked), trusted only when it names the lock file there now.
 */
export function describeLockHolder(config: LoadedConfig, nowMs: number): string {
  const { directory, hungHolderTimeoutMs } = config.agent.nodeLock;
  if (directory === '') return 'Node lock: off (nodeLock.directory is "")\n';
  const lock = createNodeLockFile(directory);
  const id = lock.lockFileId();
  const state = parsePublishedLockState(lock.readState());
  if (id === null) return `Node lock: ${directory}/node.lock does not exist here: no agent has run on this node with this directory\n`;
  if (state === null || state.lockFileId !== id) return `Node lock: ${directory}/node.lock: its holder, if any, has published no state\n`;
  const ageMs = nowMs - state.heartbeatAtMs;
  const freshness = ageMs > hungHolderTimeoutMs ? `last heartbeat ${(ageMs / 1000).toFixed(1)}s ago: exited, or hung (a standby breaks the lock past ${hungHolderTimeoutMs / 1000}s)` : `heartbeat ${(ageMs / 1000).toFixed(1)}s ago`;
  return `Node lock: ${directory}/node.lock, held by ${describeInstance(state.holder)} since ${new Date(state.acquiredAtMs).toISOString()}; ${freshness}\n`;
}

/** Whether the lock directory is the host's; says so in the log when it is not (or cannot be told). */
export function reportLockSharing(directory: string, logger: Logger): DirectorySharing {
  const sharing = hostSharing(directory);
  if (sharing.shared === false) logger.error('the node lock directory is not shared with the host: a second agent on this node would not be held back', { code: 'EVA_ERR_NODE_LOCK', directory, reason: sharing.reason });
  else if (sharing.shared === null) logger.warn('cannot tell whether the node lock directory is shared with the host', { directory, reason: sharing.reason });
  return sharing;
}
