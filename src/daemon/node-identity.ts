// Is the Node the agent was told to act for the machine it runs on? The kubelet writes its host's
// boot ID, machine ID and system UUID into the Node's `status.nodeInfo`; the agent compares them
// with its own host's, at start and on every Node update. Only a match lets it act: with another
// node's name (a wrong --node-name, $NODE_NAME or nodeName) it would evict that node's pods for
// this host's pressure and write that node's conditions. Every refusal is visible: one log line
// and a node Event when the verdict changes, and the `node-identity` readiness check.

import type { HostIdentity } from '../api/host-identity.js';
import { MACHINE_IDENTITY_FIELDS } from '../api/host-identity.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import type { ClusterView, EventRecorder } from './ports.js';

/** The verdict on one Node object. `match` alone lets the agent act. */
export type IdentityVerdict =
  | { readonly state: 'match'; readonly compared: readonly string[] }
  /** The Node is another machine: a compared field differs. */
  | { readonly state: 'mismatch'; readonly reason: string }
  /** Nothing could be compared (no Node, no nodeInfo yet, or the host's files unreadable). */
  | { readonly state: 'unverified'; readonly reason: string };

// Long enough for any of the three identifiers; a longer value from the API is shown cut.
const MAX_SHOWN_CHARS = 64;

function shown(value: string): string {
  return JSON.stringify(value.length > MAX_SHOWN_CHARS ? `${value.slice(0, MAX_SHOWN_CHARS)}…` : value);
}

/**
 * Compares the Node's `status.nodeInfo` with the host. Each field is compared when both sides
 * have it (case aside: the UUIDs' hex digits may be written either way); any difference is a
 * mismatch, and at least one equal field is needed for a match.
 */
export function compareNodeIdentity(nodeName: string, node: Node | null, host: HostIdentity): IdentityVerdict {
  if (node === null) return { state: 'unverified', reason: `the Node ${nodeName} does not exist, so this host cannot be checked against it` };
  const info = node.status?.nodeInfo;
  const compared: string[] = [];
  const differing: string[] = [];
  for (const field of MACHINE_IDENTITY_FIELDS) {
    const raw = info?.[field];
    const theirs = typeof raw === 'string' ? raw.trim().toLowerCase() : '';
    const ours = host[field];
    if (theirs === '' || ours === null) continue;
    compared.push(field);
    if (theirs !== ours) differing.push(`its ${field} ${shown(theirs)} is not this host's ${shown(ours)}`);
  }
  if (differing.length > 0) return { state: 'mismatch', reason: `the Node ${nodeName} is another machine: ${differing.join(', ')}` };
  if (compared.length === 0) {
    const hostSide = host.problems.length === 0 ? '' : `; ${host.problems.join('; ')}`;
    return { state: 'unverified', reason: `cannot check that this host is the Node ${nodeName}: no bootID, machineID or systemUUID both in its status.nodeInfo and readable on this host${hostSide}` };
  }
  return { state: 'match', compared };
}

export interface NodeIdentityDeps {
  readonly nodeName: string;
  readonly host: HostIdentity;
  readonly cluster: ClusterView;
  readonly events: EventRecorder;
  readonly logger: Logger;
}

/** Keeps the verdict on the agent's Node current; tells its listeners when acting becomes allowed or refused. */
export class NodeIdentityGuard {
  private readonly log: Logger;
  private verdictOf: { node: Node | null; verdict: IdentityVerdict } | null = null;
  // What was last reported (logged, and recorded as an Event), so each change is said once.
  private reported: string | null = null;
  private allowed = false;
  private readonly listeners = new Set<(allowed: boolean) => void>();
  private unsubscribe: (() => void) | null = null;

  constructor(private readonly deps: NodeIdentityDeps) {
    this.log = deps.logger.child({ component: 'node-identity' });
  }

  start(): void {
    if (this.unsubscribe !== null) return;
    this.unsubscribe = this.deps.cluster.onNodeChange(() => this.refusal());
    for (const problem of this.deps.host.problems) this.log.warn('part of the host identity is unknown; it is not compared with the Node', { problem });
    this.refusal();
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  /** Called with true when the Node becomes verified as this host, false when that stops. */
  onChange(listener: (allowed: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Null when the agent may act on its Node; else why not. Re-evaluates against the Node the watch holds now. */
  refusal(): string | null {
    const { cluster, nodeName } = this.deps;
    if (!cluster.synced) return this.settle(false, `the Node ${nodeName} has not been read yet`, null);
    const node = cluster.node();
    if (this.verdictOf?.node !== node) this.verdictOf = { node, verdict: compareNodeIdentity(nodeName, node, this.deps.host) };
    const { verdict } = this.verdictOf;
    if (verdict.state === 'match') return this.settle(true, null, verdict);
    return this.settle(false, verdict.reason, verdict);
  }

  private settle(allowed: boolean, reason: string | null, verdict: IdentityVerdict | null): string | null {
    if (verdict !== null) this.report(verdict);
    if (allowed !== this.allowed) {
      this.allowed = allowed;
      for (const listener of [...this.listeners]) listener(allowed);
    }
    return reason;
  }

  private report(verdict: IdentityVerdict): void {
    const key = verdict.state === 'match' ? 'match' : verdict.reason;
    if (key === this.reported) return;
    const wasRefused = this.reported !== null && this.reported !== 'match';
    this.reported = key;
    const node = this.deps.nodeName;
    if (verdict.state === 'match') {
      this.log.info('this host is the Node; acting on it', { node, compared: verdict.compared });
      if (wasRefused) void this.deps.events.nodeEvent({ type: 'Normal', reason: 'NodeIdentityVerified', message: `This host is the Node ${node} (${verdict.compared.join(', ')} equal): the agent acts on it again` });
      return;
    }
    const mismatch = verdict.state === 'mismatch';
    this.log.error(mismatch ? 'refusing to act: this host is not the Node' : 'refusing to act: this host cannot be checked against the Node', { node, reason: verdict.reason });
    void this.deps.events.nodeEvent({
      type: 'Warning',
      reason: mismatch ? 'NodeIdentityMismatch' : 'NodeIdentityUnverified',
      message: `kube-eviction-agent refuses to act (no eviction, no taint or condition written): ${verdict.reason}`.slice(0, 1024),
    });
  }
}
