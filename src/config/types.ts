// The loaded configuration: the compiled eviction configuration (src/api/eviction-config.ts), the
// agent's settings (src/api/agent-settings.ts), and where each threshold came from. Only
// src/config builds these; the commands and the composition root read them.

import type { AgentSettings } from '../api/agent-settings.js';
import type { EvictionConfig } from '../api/eviction-config.js';
import type { Signal } from '../api/signals.js';
import type { ConfigProblem } from '../errors.js';

/**
 * Where one compiled threshold came from, parallel to `EvictionConfig.thresholds` (same index).
 * The raw strings are kept because a float32 percentage cannot be printed back as written.
 */
export interface ThresholdSource {
  /** `user`: written in the file; `default`: from the default evictionHard map; `allocatable-copy`: §2.5. */
  readonly origin: 'user' | 'default' | 'allocatable-copy';
  /** The entry it was parsed from (`evictionHard["memory.available"]`); for a copy, the copied entry. */
  readonly field: string;
  /** The value as written (`100Mi`, `10%`). */
  readonly rawValue: string;
  /** The grace period as written, or null for a hard threshold from evictionHard. */
  readonly rawGracePeriod: string | null;
  /** The minimum reclaim as written, or null. */
  readonly rawMinReclaim: string | null;
  /** True for a default added to a partial evictionHard by `mergeDefaultEvictionSettings`. */
  readonly merged: boolean;
}

/** A threshold of the file met on (nearly) every pass: a percentage within 0.1 % of the whole capacity. */
export interface NearWholeThreshold extends ConfigProblem {
  readonly signal: Signal;
}

export type ConfigKind = 'AgentConfiguration' | 'KubeletConfiguration';

/** A configuration file, loaded, validated and defaulted. */
export interface LoadedConfig {
  readonly kind: ConfigKind;
  readonly eviction: EvictionConfig;
  /** Parallel to `eviction.thresholds`. */
  readonly thresholdSources: readonly ThresholdSource[];
  /** Parallel to `eviction.dryRunThresholds`. */
  readonly dryRunThresholdSources: readonly ThresholdSource[];
  readonly agent: AgentSettings;
  /** Things that are not errors but deserve a look: ignored kubelet fields, a partial evictionHard. */
  readonly warnings: readonly ConfigProblem[];
  /**
   * Percentage thresholds within 0.1 % of the whole capacity ("100.0%", "99.95%"): valid, as in the
   * kubelet, but met on (nearly) every pass. Not among `warnings`: they are called out louder.
   */
  readonly nearWholeThresholds: readonly NearWholeThreshold[];
}
