// What a change of thresholds would do on the node as it was last observed: which thresholds of
// the new configuration the observation meets where the configuration in force meets none as
// soon. The hot reload asks before applying a file, so a threshold that evicts the moment it is in
// force ("100.0%", or a value above what is free now) is held back instead of acted on. Pure:
// the manager's own fitting and evaluation (containerfs thresholds, observations, strict `>`).

import type { Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';
import { updateContainerFsThresholds } from './containerfs-thresholds.js';
import { makeSignalObservations } from './observations.js';
import { describeThresholdsMet, thresholdsMet } from './thresholds.js';
import type { ThresholdMet } from './types.js';

/** One observation of the node, as a synchronize pass takes it. */
export interface ObservedNode {
  readonly summary: Summary;
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
}

/**
 * The thresholds of `next` the observation meets (min-reclaim aside, grace periods not yet run)
 * for which `running` meets no threshold on the same signal with the same or a shorter grace
 * period: what would start evicting, or evict sooner, once `next` is in force. Both lists are the
 * configurations' own thresholds; each is fitted to the observed filesystem layout as the manager
 * fits it. In `next` order, with the figures that meet them.
 */
export function thresholdsMetOnlyBy(running: readonly Threshold[], next: readonly Threshold[], node: ObservedNode): ThresholdMet[] {
  const layout = { dedicatedImageFs: node.dedicatedImageFs, splitContainerFs: node.splitContainerFs };
  const fitted = (thresholds: readonly Threshold[]): Threshold[] => updateContainerFsThresholds(thresholds, layout.dedicatedImageFs, layout.splitContainerFs).thresholds;
  const { observations } = makeSignalObservations(node.summary, layout);
  const metNow = thresholdsMet(fitted(running), observations, false);
  const metNext = thresholdsMet(fitted(next), observations, false);
  const newlyMet = metNext.filter((t) => !metNow.some((m) => m.signal === t.signal && m.gracePeriodMs <= t.gracePeriodMs));
  return describeThresholdsMet(newlyMet, observations);
}
