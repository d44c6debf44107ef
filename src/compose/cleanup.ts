// `cleanup`, wired: connects with the given credentials and takes the agent's own conditions and
// pressure taint (as the compiled settings name them) off one Node or every Node, one at a time,
// reporting each Node's outcome as it is known. Node names from the API are checked like the
// operator's: a name that is not a DNS subdomain is refused without a request.

import type { AgentSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { DNS_SUBDOMAIN } from '../config/agent-sections.js';
import type { AgentNodeMarks, NodeCleanupOutcome } from '../kube/index.js';
import { connectCluster, type ClusterTarget } from './agent.js';

export type { AgentNodeMarks, NodeCleanupOutcome } from '../kube/index.js';

export interface CleanupPlan {
  readonly cluster: ClusterTarget;
  /** One Node by name, or every Node the API lists. */
  readonly nodes: { readonly name: string } | 'all';
  readonly marks: AgentNodeMarks;
  readonly dryRun: boolean;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called with each Node's outcome as soon as it is known. */
  readonly onOutcome?: (outcome: NodeCleanupOutcome) => void;
}

/** A Node's name as the API server admits it: a lowercase DNS subdomain of at most 253 characters. */
export function isNodeName(name: string): boolean {
  return name.length <= 253 && DNS_SUBDOMAIN.test(name);
}

/** What the agent with these settings puts on its Node. */
export function agentNodeMarks(settings: AgentSettings): AgentNodeMarks {
  return { conditionTypePrefix: settings.reporting.conditionTypePrefix, taintKey: settings.reporting.taint.key };
}

/** Cleans the Nodes; resolves with every outcome. Rejects only when the Nodes cannot be listed. */
export async function cleanupNodes(plan: CleanupPlan): Promise<NodeCleanupOutcome[]> {
  const client = await connectCluster(plan.cluster, plan.nodes === 'all' ? '' : plan.nodes.name, plan.clock, plan.logger);
  const cleaner = client.nodeCleaner();
  const names = plan.nodes === 'all' ? await cleaner.nodeNames() : [plan.nodes.name];
  const outcomes: NodeCleanupOutcome[] = [];
  for (const name of names) {
    const outcome = isNodeName(name)
      ? await cleaner.clean(name, plan.marks, plan.dryRun)
      : { node: name, result: 'failed' as const, conditions: [], taints: [], error: 'not a valid node name (a lowercase DNS subdomain); nothing was sent' };
    outcomes.push(outcome);
    plan.onOutcome?.(outcome);
  }
  return outcomes;
}
