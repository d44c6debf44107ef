// Takes the agent's own conditions and pressure taint off Nodes (the `cleanup` command, the last
// step of an uninstall). Each write is a merge patch carrying the resourceVersion just read, so the
// API server refuses it (409) if the Node changed in between instead of dropping what someone else
// wrote; the Node is then read again and the plan made again, a bounded number of times. The
// conditions go through the status subresource, the taint through the Node itself: the rights the
// agent's ClusterRole already has (get, list and patch nodes, patch nodes/status).

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import { KubeApiError } from '../errors.js';
import type { ApiCaller } from './api-call.js';
import { Backoff, CONFLICT_BACKOFF, type BackoffPolicy } from '../api/backoff.js';
import type { ClientLibrary, CoreV1Api } from './client-library.js';
import { nodeCleanupPlan, nothingToClean, type AgentNodeMarks } from './node-cleanup-plan.js';
import { toWire } from './wire.js';

export type { AgentNodeMarks } from './node-cleanup-plan.js';

/** What cleaning one Node came to. */
export interface NodeCleanupOutcome {
  readonly node: string;
  /**
   * `cleaned`: what is listed was removed; `clean`: the Node carried nothing of the agent's;
   * `would-clean`: dry run, what is listed would go; `missing`: no such Node; `failed`: see `error`
   * (what is listed was removed before it failed).
   */
  readonly result: 'cleaned' | 'clean' | 'would-clean' | 'missing' | 'failed';
  readonly conditions: readonly string[];
  readonly taints: readonly string[];
  readonly error?: string;
}

export interface NodeCleaner {
  /** Every Node's name, read in pages. Rejects with a KubeApiError when the list fails. */
  nodeNames(): Promise<string[]>;
  /** Removes (or, in dry run, lists) the agent's conditions and taint on one Node. Never rejects. */
  clean(nodeName: string, marks: AgentNodeMarks, dryRun: boolean): Promise<NodeCleanupOutcome>;
}

export interface KubeNodeCleanerDeps {
  readonly lib: ClientLibrary;
  readonly core: CoreV1Api;
  readonly caller: ApiCaller;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Reads (and writes) of one Node in all, conflicts included. */
  readonly attempts?: number;
  readonly conflictBackoff?: BackoffPolicy;
  readonly random?: (() => number) | undefined;
}

// Two writes when nothing interferes (the status, then the taint); the rest are for conflicts.
const DEFAULT_ATTEMPTS = 8;
const PAGE_SIZE = 500;
// A bound on the listing: far beyond the largest supported cluster (5,000 nodes).
const MAX_NODES = 100_000;

export function createNodeCleaner(deps: KubeNodeCleanerDeps): NodeCleaner {
  const { lib, core, caller, clock, logger } = deps;
  const attempts = deps.attempts ?? DEFAULT_ATTEMPTS;
  return {
    async nodeNames() {
      const names: string[] = [];
      let next: string | undefined;
      do {
        const page = next;
        const result = await caller.call((options) => core.listNode({ limit: PAGE_SIZE, ...(page === undefined ? {} : { _continue: page }) }, options));
        if (!result.ok) throw new KubeApiError(result.failure.status, `Listing the nodes failed: ${result.failure.message}`);
        const list = toWire<{ metadata?: { continue?: string }; items?: Node[] }>(result.value);
        for (const item of list.items ?? []) names.push(item.metadata.name ?? '');
        if (names.length > MAX_NODES) throw new KubeApiError(0, `Listing the nodes returned more than ${MAX_NODES}`);
        next = list.metadata?.continue === '' ? undefined : list.metadata?.continue;
      } while (next !== undefined);
      return names;
    },

    async clean(nodeName, marks, dryRun) {
      const removedConditions: string[] = [];
      const removedTaints: string[] = [];
      const outcome = (result: NodeCleanupOutcome['result'], error?: string): NodeCleanupOutcome => ({
        node: nodeName,
        result,
        conditions: removedConditions,
        taints: removedTaints,
        ...(error === undefined ? {} : { error }),
      });
      const backoff = new Backoff(deps.conflictBackoff ?? CONFLICT_BACKOFF, deps.random);
      for (let attempt = 1; ; attempt++) {
        const read = await caller.call((options) => core.readNode({ name: nodeName }, options));
        if (!read.ok) return read.failure.status === 404 && removedConditions.length + removedTaints.length === 0 ? outcome('missing') : outcome('failed', `reading the node failed (${read.failure.status}): ${read.failure.message}`);
        const node = toWire<Node>(read.value);
        const plan = nodeCleanupPlan(node, marks);
        if (dryRun) return { node: nodeName, result: nothingToClean(plan) ? 'clean' : 'would-clean', conditions: plan.removeConditions, taints: plan.removeTaints };
        if (nothingToClean(plan)) return outcome(removedConditions.length + removedTaints.length === 0 ? 'clean' : 'cleaned');
        const resourceVersion = node.metadata.resourceVersion;
        if (resourceVersion === undefined || resourceVersion === '') return outcome('failed', 'the node has no resourceVersion; refusing an unconditional write');
        if (attempt > attempts) return outcome('failed', `the node kept changing (${attempts} attempts)`);
        // The conditions first: a cordon that outlives its conditions would be the worse leftover.
        const statusWrite = plan.removeConditions.length > 0;
        const result = statusWrite
          ? await caller.call((options) => core.patchNodeStatus({ name: nodeName, body: { metadata: { resourceVersion }, status: { conditions: plan.keepConditions } } }, options), { contentType: lib.PatchStrategy.MergePatch })
          : await caller.call((options) => core.patchNode({ name: nodeName, body: { metadata: { resourceVersion }, spec: { taints: plan.keepTaints.length === 0 ? null : plan.keepTaints } } }, options), { contentType: lib.PatchStrategy.MergePatch });
        if (result.ok) {
          if (statusWrite) removedConditions.push(...plan.removeConditions);
          else removedTaints.push(...plan.removeTaints);
          logger.info(statusWrite ? 'removed the agent\'s node conditions' : 'removed the agent\'s node taint', { node: nodeName, removed: statusWrite ? plan.removeConditions : plan.removeTaints });
          continue;
        }
        if (result.failure.status !== 409) return outcome('failed', `${statusWrite ? 'writing the node status' : 'writing the node taints'} failed (${result.failure.status}): ${result.failure.message}`);
        logger.debug('the node changed meanwhile; reading it again', { node: nodeName, attempt });
        await clock.sleep(backoff.nextDelayMs());
      }
    },
  };
}
