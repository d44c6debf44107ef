// The shapes the configuration module produces: the agent's own settings (everything that is not
// a kubelet eviction setting), fully defaulted and with units in every numeric name, and the loaded
// configuration that pairs them with the compiled eviction configuration and where each threshold
// came from. Only src/config builds these; the CLI and the composition root read them.

import type { EvictionConfig } from '../api/eviction-config.js';
import type { ConfigProblem } from '../errors.js';

export type ObserveSource = 'cgroupfs' | 'kubelet';
export type CgroupDriver = 'auto' | 'cgroupfs' | 'systemd';
export type NotifierMode = 'auto' | 'memcg-v1' | 'psi' | 'disabled';
export type PodRemovalMethod = 'delete' | 'eviction-api';
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Where node statistics come from. Paths are absolute host paths, read under `hostRoot`. */
export interface ObserveSettings {
  readonly source: ObserveSource;
  /** The host's root as mounted into the agent's container (`/` when running on the host). */
  readonly hostRoot: string;
  readonly cgroupRoot: string;
  readonly procRoot: string;
  readonly kubeletRootDir: string;
  readonly imageFsPath: string;
  readonly containerFsPath: string;
  readonly podLogsDir: string;
  readonly cgroupDriver: CgroupDriver;
  /**
   * The pods' parent cgroup, relative to each hierarchy's root (the kubelet's pod cgroup root):
   * `kubepods` for the cgroupfs driver; in systemd form (`kubepods.slice`) when the driver is
   * `systemd`. With `auto`, the observer converts it with `podCgroupRootForDriver` once it knows.
   */
  readonly podCgroupRoot: string;
  readonly kubeletUrl: string;
  /** Read from the agent's own filesystem (not under `hostRoot`): usually its service-account token. */
  readonly kubeletTokenFile: string;
  readonly kubeletInsecureSkipVerify: boolean;
  /** How often per-pod disk usage is re-measured (walking volumes and logs is costly). */
  readonly diskUsageIntervalMs: number;
}

/** What wakes the loop between housekeeping passes. */
export interface NotifierSettings {
  readonly mode: NotifierMode;
  /** PSI trigger: stall time within `psiWindowMs` that counts as pressure. */
  readonly psiStallThresholdMs: number;
  readonly psiWindowMs: number;
  /** The cgroup v2 sub-second check of memory.available between housekeeping passes. */
  readonly fastCheckIntervalMs: number;
}

/** How chosen pods are removed. */
export interface ActionSettings {
  readonly dryRun: boolean;
  readonly hardEviction: PodRemovalMethod;
  readonly softEviction: PodRemovalMethod;
  /** Kill the pod's processes locally on hard memory pressure, before the API call completes. */
  readonly localTermination: boolean;
  /** Grace period for the local kill; null means the engine's grace period for the eviction. */
  readonly localTerminationGracePeriodMs: number | null;
  /** How long to wait for an evicted pod to be gone before the next pass (kubelet: 30 s). */
  readonly podCleanupTimeoutMs: number;
  readonly setDisruptionTargetCondition: boolean;
}

export interface TaintSettings {
  readonly enabled: boolean;
  readonly key: string;
  /** Only NoSchedule: a NoExecute pressure taint would evict far more than the engine chose. */
  readonly effect: 'NoSchedule';
}

/** What the agent reports on the Node and in Events. */
export interface ReportingSettings {
  readonly nodeConditions: boolean;
  /** Prefix of the condition types the agent owns (`kube-eviction-agent.io/MemoryPressure`). */
  readonly conditionTypePrefix: string;
  readonly taint: TaintSettings;
  readonly events: boolean;
}

/** NoExecute taint handling for the agent's own node (off by default). */
export interface TaintEvictionSettings {
  readonly enabled: boolean;
  readonly useEvictionApi: boolean;
  /** With the Eviction API: after this long without success, fall back to DELETE. */
  readonly evictionApiDeadlineMs: number;
  readonly uidPrecondition: boolean;
  readonly skipTerminatingPods: boolean;
  /** Honour `Gt`/`Lt` toleration operators. */
  readonly comparisonOperators: boolean;
  /** Count `tolerationSeconds` from each taint's `timeAdded`, so a restart grants no fresh period. */
  readonly countFromTimeAdded: boolean;
  readonly deleteRetries: number;
}

/** The metrics and health endpoint. */
export interface ServerSettings {
  readonly address: string;
  /** 0 disables the server. */
  readonly port: number;
}

/** Every agent setting, defaulted. */
export interface AgentSettings {
  /** Null when the file leaves it out: the command line takes it from NODE_NAME. */
  readonly nodeName: string | null;
  readonly housekeepingIntervalMs: number;
  readonly observe: ObserveSettings;
  readonly notifier: NotifierSettings;
  readonly actions: ActionSettings;
  readonly reporting: ReportingSettings;
  readonly taintEviction: TaintEvictionSettings;
  readonly server: ServerSettings;
  readonly logLevel: LogLevel;
}

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

export type ConfigKind = 'AgentConfiguration' | 'KubeletConfiguration';

/** A configuration file, loaded, validated and defaulted. */
export interface LoadedConfig {
  readonly kind: ConfigKind;
  readonly eviction: EvictionConfig;
  /** Parallel to `eviction.thresholds`. */
  readonly thresholdSources: readonly ThresholdSource[];
  readonly agent: AgentSettings;
  /** Things that are not errors but deserve a look: ignored kubelet fields, a partial evictionHard. */
  readonly warnings: readonly ConfigProblem[];
}
