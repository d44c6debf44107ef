// What `record` reads, wired: the node's pods and Node from the API server, and the stats either
// from the kubelet's summary (through the API server's node proxy) or from the agent's own
// observer on this host (cgroupfs, /proc, statfs, as `run` observes it).

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node, Pod } from '../api/pod.js';
import type { LoadedConfig } from '../config/types.js';
import { connectCluster, type ClusterTarget } from './agent.js';
import { hostObserver } from './node-side.js';

/** The sources `record` captures from (the shape of src/replay's RecordSources). */
export interface RecordingSources {
  listPods(): Promise<readonly Pod[]>;
  getNode(): Promise<Node | null>;
  stats(pods: readonly Pod[]): Promise<{ readonly summary: unknown; readonly dedicatedImageFs?: boolean; readonly splitContainerFs?: boolean }>;
}

export type RecordingStatsSource = 'kubelet' | 'observer';

export interface RecordingPlan {
  readonly cluster: ClusterTarget;
  readonly nodeName: string;
  readonly source: RecordingStatsSource;
  /** The agent's configuration (the observer's settings); needed for `observer`. */
  readonly config?: LoadedConfig;
  readonly clock: Clock;
  readonly logger: Logger;
}

export async function recordingSources(plan: RecordingPlan): Promise<RecordingSources> {
  const { nodeName, clock, logger } = plan;
  const reads = (await connectCluster(plan.cluster, nodeName, clock, logger)).nodeReads();
  if (plan.source === 'kubelet') {
    return { listPods: () => reads.listPods(), getNode: () => reads.getNode(), stats: async () => ({ summary: await reads.kubeletSummary() }) };
  }
  if (plan.config === undefined) throw new Error('recording from the observer needs the agent configuration');
  const observer = hostObserver(plan.config, { nodeName, clock, logger });
  return {
    listPods: () => reads.listPods(),
    getNode: () => reads.getNode(),
    async stats(pods) {
      const observation = await observer.observe(pods);
      for (const problem of observation.problems) logger.warn('observation problem', { problem });
      return { summary: observation.summary, dedicatedImageFs: observation.dedicatedImageFs, splitContainerFs: observation.splitContainerFs };
    },
  };
}
