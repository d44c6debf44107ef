// The ports that change the cluster or the node (evictions, deletions, the DisruptionTarget
// condition, local termination, node conditions and taints), wrapped so that none of their calls
// goes through while the agent may not act (its Node is not this host). The parts that use them
// check first and say why; this is what holds if one of them did not.

import { podKey } from '../api/pod.js';
import type { Logger } from '../api/logger.js';
import type { EvictionOutcome, LocalTerminator, NodeReporter, PodActions } from './ports.js';

export type Refusal = () => string | null;

export interface GuardedPorts {
  readonly actions: PodActions;
  readonly terminator: LocalTerminator;
  readonly nodeReporter: NodeReporter;
}

export function guardPorts(ports: GuardedPorts, refusal: Refusal, logger: Logger): GuardedPorts {
  const log = logger.child({ component: 'acting-guard' });
  const refused = (what: string): EvictionOutcome | null => {
    const reason = refusal();
    if (reason === null) return null;
    log.warn('refused', { what, reason });
    return { result: 'failed', status: 0, message: `refused: ${reason}` };
  };
  const { actions, terminator, nodeReporter } = ports;
  return {
    actions: {
      getPod: (namespace, name) => actions.getPod(namespace, name),
      evictPod: async (pod, grace) => refused(`evicting ${podKey(pod)}`) ?? actions.evictPod(pod, grace),
      deletePod: async (pod, options) => refused(`deleting ${podKey(pod)}`) ?? actions.deletePod(pod, options),
      addDisruptionTarget: async (pod, condition) => refused(`the DisruptionTarget condition of ${podKey(pod)}`) ?? actions.addDisruptionTarget(pod, condition),
    },
    terminator: {
      terminate: async (pod, graceMs) => (refused(`ending the processes of ${podKey(pod)}`) === null ? terminator.terminate(pod, graceMs) : { signalled: 0 }),
      adopt: (pod, graceMs) => {
        if (refused(`keeping the processes of ${podKey(pod)} ended`) === null) terminator.adopt?.(pod, graceMs);
      },
      release: (uid) => terminator.release?.(uid),
    },
    nodeReporter: {
      setConditions: async (conditions) => refused('writing node conditions') === null && nodeReporter.setConditions(conditions),
      setTaint: async (taint, present) => refused(present ? 'adding the node taint' : 'removing the node taint') === null && nodeReporter.setTaint(taint, present),
    },
  };
}
