// The decision engine's public API: the manager and its contract, and the pure helpers the
// `explain` command and reports reuse. Everything here is pure; nothing performs I/O.

export { EvictionManager, type EvictionManagerOptions } from './manager.js';
export type {
  Eviction,
  EvictionConfig,
  EvictionReason,
  RankedPod,
  SignalObservation,
  SignalObservations,
  SynchronizeInput,
  SynchronizeResult,
  ThresholdMet,
} from './types.js';
export type { MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from './ports.js';

export {
  containerFsStats,
  makeSignalObservations,
  makeStatsFunc,
  signalQuantity,
  signalQuantityFormat,
  statTimeMs,
  type FilesystemLayout,
} from './observations.js';
export {
  byEvictionPriority,
  describeThresholdsMet,
  getReclaimableThreshold,
  hasThreshold,
  mergeThresholds,
  signalsWithoutObservation,
  sortByEvictionPriority,
  thresholdFigures,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
  type ThresholdsObservedAt,
} from './thresholds.js';
export {
  hasNodeCondition,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
  type NodeConditionsObservedAt,
} from './conditions.js';
export { updateContainerFsThresholds } from './containerfs-thresholds.js';

export { isCriticalPod } from './critical.js';
export { podPriority, podRequest } from './pod-resources.js';
export { rankedPods, type StatsFunc } from './ranking.js';
export { localStorageEviction } from './local-storage.js';
export { evictionMessage } from './eviction-message.js';
export { evictionGracePeriodSeconds } from './grace-period.js';
