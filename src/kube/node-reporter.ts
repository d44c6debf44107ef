// The NodeReporter port over the API server. Conditions: a strategic merge patch of nodes/<n>/status,
// which merges by condition type, so only the agent's own types are sent and the kubelet's stay
// as they are. The taint: a read-modify-write of spec.taints guarded by the resourceVersion, so a
// taint another controller added in between is never lost; a conflict re-reads and retries. What
// is on the Node is taken from the watch when it has the Node (a stale copy costs a conflict and a
// read, never a lost taint): a read before each write cost the API server one more request per
// write, N times over when a fleet's nodes come under pressure together.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import type { AgentNodeCondition, NodeReporter } from '../daemon/ports.js';
import type { ApiCaller } from './api-call.js';
import { CONFLICT_BACKOFF, retryWithBackoff, type BackoffPolicy } from '../api/backoff.js';
import type { ClientLibrary, CoreV1Api } from './client-library.js';
import { conditionsToWrite, KUBELET_CONDITION_TYPES, type NodeConditionWire } from './node-conditions.js';
import { withTaint } from './taints.js';
import { rfc3339, toWire } from './wire.js';

export interface KubeNodeReporterDeps {
  readonly lib: ClientLibrary;
  readonly core: CoreV1Api;
  readonly caller: ApiCaller;
  readonly nodeName: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Attempts at the taint when the node keeps changing under it (409). */
  readonly taintAttempts?: number;
  readonly conflictBackoff?: BackoffPolicy;
  readonly random?: (() => number) | undefined;
  /** The Node as the watch holds it (null: not known), read instead of the API server where it will do. */
  readonly watchedNode?: () => Node | null;
}

const DEFAULT_TAINT_ATTEMPTS = 5;

export class KubeNodeReporter implements NodeReporter {
  constructor(private readonly deps: KubeNodeReporterDeps) {}

  /** Resolves true when every condition was written; false when one was refused or the API failed. */
  async setConditions(conditions: readonly AgentNodeCondition[]): Promise<boolean> {
    const { lib, core, caller, nodeName, clock, logger } = this.deps;
    const refused = conditions.filter((c) => KUBELET_CONDITION_TYPES.has(c.type));
    for (const condition of refused) logger.error('refusing to write a condition the kubelet owns', { node: nodeName, type: condition.type });
    const allowed = conditions.filter((c) => !KUBELET_CONDITION_TYPES.has(c.type));
    if (allowed.length === 0) return refused.length === 0;

    const node = this.deps.watchedNode?.() ?? (await this.readNode());
    if (node === null) return false;
    const current = (node.status?.conditions ?? []) as NodeConditionWire[];
    const body = { status: { conditions: conditionsToWrite(current, allowed, rfc3339(clock.nowMs())) } };
    const result = await caller.call((options) => core.patchNodeStatus({ name: nodeName, body }, options), { contentType: lib.PatchStrategy.StrategicMergePatch });
    if (!result.ok) {
      logger.warn('setting node conditions failed', { node: nodeName, status: result.failure.status, error: result.failure.message });
      return false;
    }
    return refused.length === 0;
  }

  /** Resolves true when the node carries (or no longer carries) the taint; false when that could not be written. */
  async setTaint(taint: { key: string; value: string; effect: 'NoSchedule' }, present: boolean): Promise<boolean> {
    const { lib, core, caller, nodeName, clock, logger } = this.deps;
    // The first try with the Node as watched; after a conflict, as the API server has it. A watched
    // copy may not show this agent's own last write yet, so its "nothing to do" is confirmed by a read
    // (a taint believed gone and still there would outlive its reason).
    const attempt = async (index: number): Promise<'done' | 'failed' | 'conflict'> => {
      const taintsOf = (node: Node | null) => (node === null ? null : withTaint(node.spec?.taints ?? [], taint, present));
      const watched = index === 0 ? (this.deps.watchedNode?.() ?? null) : null;
      let node = watched ?? (await this.readNode());
      let taints = taintsOf(node);
      if (taints === null && watched !== null) {
        node = await this.readNode();
        taints = taintsOf(node);
      }
      if (node === null) return 'failed';
      if (taints === null) return 'done';
      // A merge patch with the resourceVersion read above: the API server answers 409 if the node
      // changed since, instead of overwriting a taint someone else just added.
      const body = { metadata: { resourceVersion: node.metadata.resourceVersion }, spec: { taints: taints.length === 0 ? null : taints } };
      const result = await caller.call((options) => core.patchNode({ name: nodeName, body }, options), { contentType: lib.PatchStrategy.MergePatch });
      if (result.ok) {
        logger.info(present ? 'tainted node' : 'removed node taint', { node: nodeName, key: taint.key, effect: taint.effect });
        return 'done';
      }
      if (result.failure.status === 409) {
        logger.debug('node changed while setting the taint; retrying', { node: nodeName, key: taint.key });
        return 'conflict';
      }
      logger.warn('setting the node taint failed', { node: nodeName, key: taint.key, status: result.failure.status, error: result.failure.message });
      return 'failed';
    };
    const outcome = await retryWithBackoff(attempt, (result) => result === 'conflict', {
      clock,
      policy: this.deps.conflictBackoff ?? CONFLICT_BACKOFF,
      maxAttempts: this.deps.taintAttempts ?? DEFAULT_TAINT_ATTEMPTS,
      random: this.deps.random,
    });
    if (outcome === 'conflict') logger.warn('setting the node taint kept conflicting; giving up for now', { node: nodeName, key: taint.key });
    return outcome === 'done';
  }

  private async readNode(): Promise<Node | null> {
    const { core, caller, nodeName, logger } = this.deps;
    const result = await caller.call((options) => core.readNode({ name: nodeName }, options));
    if (result.ok) return toWire<Node>(result.value);
    logger.warn('reading the node failed', { node: nodeName, status: result.failure.status, error: result.failure.message });
    return null;
  }
}
