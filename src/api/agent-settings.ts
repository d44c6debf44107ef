// The agent's own settings (everything that is not a kubelet eviction setting), compiled: fully
// defaulted, validated, with units in every numeric name. src/config produces them from a file, in
// one pass with one table of defaults; the adapters take their section as it is and neither
// default nor validate it again. Host paths are as the host spells them, read under `hostRoot`.

export type ObserveSource = 'cgroupfs' | 'kubelet';
/** The kubelet's `cgroupDriver`: how it names the pods' cgroups. */
export type CgroupDriver = 'cgroupfs' | 'systemd';
/** The setting: a driver, or `auto` for whichever pod cgroup tree exists on the node. */
export type CgroupDriverSetting = CgroupDriver | 'auto';
/** What wakes the loop between housekeeping passes: memcg v1 eventfd thresholds, cgroup v2 PSI triggers plus a fast check, or nothing. */
export type NotifierMode = 'memcg-v1' | 'psi' | 'disabled';
/** The setting: a mode, or `auto` for what the node offers. */
export type NotifierModeSetting = NotifierMode | 'auto';
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
  readonly cgroupDriver: CgroupDriverSetting;
  /**
   * The pods' parent cgroup, relative to each hierarchy's root (the kubelet's pod cgroup root):
   * `kubepods` for the cgroupfs driver; in systemd form (`kubepods.slice`) when the driver is
   * `systemd`. With `auto`, both forms are looked for (src/host/pod-cgroup-names.ts).
   */
  readonly podCgroupRoot: string;
  readonly kubeletUrl: string;
  /**
   * Read from the agent's own filesystem (not under `hostRoot`): usually its service-account
   * token. Null (`""` in the file): no token is sent.
   */
  readonly kubeletTokenFile: string | null;
  /**
   * Whether the token may be sent over plain http to a loopback `kubeletUrl` (127.0.0.0/8, ::1,
   * localhost). Over http to any other host it is never sent: the configuration is refused.
   */
  readonly allowTokenOverHttpLoopback: boolean;
  readonly kubeletInsecureSkipVerify: boolean;
  /**
   * The PEM bundle the kubelet's serving certificate is verified with, a host path read under
   * `hostRoot`; null: the kubelet's self-signed serving certificate (`<kubeletRootDir>/pki/kubelet.crt`)
   * where found, the system's CAs otherwise.
   */
  readonly kubeletCaFile: string | null;
  /** How often per-pod disk usage is re-measured (walking volumes and logs is costly). */
  readonly diskUsageIntervalMs: number;
}

/** The kernel's bounds on a PSI trigger's window (kernel/sched/psi.c: 500 ms to 10 s). */
export const PSI_MIN_WINDOW_MS = 500;
export const PSI_MAX_WINDOW_MS = 10_000;

/** What wakes the loop between housekeeping passes. */
export interface NotifierSettings {
  readonly mode: NotifierModeSetting;
  /** PSI trigger: stall time within `psiWindowMs` that counts as pressure; whole microseconds, at most the window. */
  readonly psiStallThresholdMs: number;
  /** Whole milliseconds within the kernel's bounds. */
  readonly psiWindowMs: number;
  /**
   * The cgroup v2 fast check of the memory signals between passes: each check schedules the next
   * after the time the worst-case allocation rate needs to close the distance to the nearest
   * crossing, bounded by these two intervals. Whole milliseconds, min <= max.
   */
  readonly fastCheckMinIntervalMs: number;
  readonly fastCheckMaxIntervalMs: number;
  /** The fastest the pods are assumed to charge memory, in bytes per second (whole bytes, > 0). */
  readonly fastCheckAllocationBytesPerSecond: number;
  /**
   * cgroup v2, cgroupfs driver: also set the kubepods cgroup's memory.high at the usage where its
   * working set crosses the nearest allocatable threshold, and wake on its `high` events. Changes
   * what the kernel does past that point (it throttles and reclaims there), so it is off by default.
   */
  readonly memoryHighWakeup: boolean;
  /**
   * cgroup v1 (memcg-v1 mode): answer a hard memory threshold's crossing from a worker thread of
   * its own, with the victim ranked beforehand (docs/notifier.md, the kill path). The thread's V8
   * isolate costs about 12 MiB of RSS; off, the main thread answers every crossing.
   */
  readonly killPath: boolean;
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
  /**
   * How long after its grace period a pod evicted for a hard threshold (or ended locally) may hold
   * up the next decision while it has not freed what it holds: past it, the next ranked pod is evicted.
   */
  readonly escalationTimeoutMs: number;
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
  /**
   * How long after an eviction's signal is back a new crossing counts as a re-trigger, and how long
   * after the first action the signal is awaited: each eviction's outcome is reported at its end.
   */
  readonly retriggerWindowMs: number;
}

/** NoExecute taint handling for the agent's own node (off by default). */
export interface TaintEvictionSettings {
  readonly enabled: boolean;
  readonly useEvictionApi: boolean;
  /** With the Eviction API: after this long without success, fall back to DELETE. */
  readonly evictionApiDeadlineMs: number;
  readonly skipTerminatingPods: boolean;
  /** Honour `Gt`/`Lt` toleration operators. */
  readonly comparisonOperators: boolean;
  /** Count `tolerationSeconds` from each taint's `timeAdded`, so a restart grants no fresh period. */
  readonly countFromTimeAdded: boolean;
  readonly deleteRetries: number;
}

/** Kernel OOM kills: found, attributed to pods and reported (reporting only: no decision changes). */
export interface OomKillSettings {
  readonly enabled: boolean;
  /** Read the kernel log (/dev/kmsg) for each victim's PID, process name and cgroups; needs CAP_SYSLOG where kernel.dmesg_restrict is 1. */
  readonly kernelLog: boolean;
  /** How often the pod tree is walked again and every OOM counter re-read (the safety net). */
  readonly scanIntervalMs: number;
  /** How long a kill found by the counters waits for its kernel log line, to be reported once with it. */
  readonly kernelLogWaitMs: number;
}

/**
 * The eviction storm guard: a per-node budget of soft evictions (changes decisions: off by
 * default), and per-owner tracking that reports a controller whose pods keep being evicted
 * (reporting only: on), optionally keeping the pressure taint for a cool-down (off).
 */
export interface StormGuardSettings {
  /** At most `maxEvictions` soft evictions per `windowMs`; 0 is no budget. Hard evictions are never held back. */
  readonly softEvictionBudget: { readonly maxEvictions: number; readonly windowMs: number };
  /** A Warning Event on an owner with `eventThreshold` pods evicted within `windowMs` (0: none); the taint then stays `taintCoolDownMs` (0: not). */
  readonly owners: { readonly eventThreshold: number; readonly windowMs: number; readonly taintCoolDownMs: number };
}

/** One resource's PSI thresholds, in percent of wall time as the kernel's averages are. */
export interface PsiResourceSettings {
  readonly enabled: boolean;
  readonly avg10ThresholdPercent: number;
  readonly avg60ThresholdPercent: number;
}

/**
 * PSI node conditions (off by default, reporting only): `<prefix>KubepodsMemoryContentionPressure`
 * and `<prefix>KubepodsDiskContentionPressure` from the pods' cgroup's memory.pressure and
 * io.pressure on cgroup v2, with hysteresis (src/pressure/psi-conditions.ts), and optionally a
 * NoSchedule taint for each while it is True (docs/psi-conditions.md).
 */
export interface PsiConditionSettings {
  readonly enabled: boolean;
  /** Which line of the pressure file is compared: `full` (every task stalled) or `some`. */
  readonly line: 'some' | 'full';
  readonly memory: PsiResourceSettings;
  readonly io: PsiResourceSettings;
  /** Every reading over both thresholds for this long sets a condition. */
  readonly setHoldDurationMs: number;
  /** Every reading under both thresholds for this long clears it. */
  readonly clearHoldDurationMs: number;
  /** How often the pressure files are read (the kernel recomputes its averages every 2 s). */
  readonly intervalMs: number;
  /** A NoSchedule taint `<prefix>memory-contention-pressure` / `<prefix>disk-contention-pressure` while the condition is True. */
  readonly taint: { readonly enabled: boolean };
}

/** The node lock: which one of the agents on a node acts (docs/deployment.md, "One acting agent per node"). */
export interface NodeLockSettings {
  /** The host directory every agent on the node mounts, holding the lock and its state file; '' turns the lock off. */
  readonly directory: string;
  /** A holder whose heartbeat is older than this is taken to be hung (frozen, stopped) and its lock is broken. */
  readonly hungHolderTimeoutMs: number;
}

/** How a hot reload of the configuration file is applied. */
export interface ConfigReloadSettings {
  /**
   * Apply a reloaded file whose thresholds the node's latest observation already meets (where
   * the configuration in force meets none on the same signal as soon): it would evict as soon as
   * it is applied. Off: such a reload is held back and reported. Read from the file being loaded.
   */
  readonly applyThresholdsThatEvictNow: boolean;
}

/**
 * The metrics and health endpoint, and the probe listener beside it: `/healthz` and `/readyz` on a
 * port of their own with a connection limit of their own, so that whatever holds the metrics port's
 * connections (a scraper gone wrong, a flood) cannot starve the kubelet's probes and get the agent
 * restarted.
 */
export interface ServerSettings {
  /** The address both listeners bind (`0.0.0.0` for every interface, `127.0.0.1` for this host only). */
  readonly address: string;
  /** `/metrics`, `/healthz` and `/readyz`; 0 disables this listener. */
  readonly port: number;
  /** Open connections at most on `port`; more are closed as they arrive. */
  readonly maxConnections: number;
  /** `/healthz` and `/readyz` only, for the kubelet's probes; 0 disables this listener. Never `port`. */
  readonly probePort: number;
  /** Open connections at most on `probePort`; more are closed as they arrive. */
  readonly probeMaxConnections: number;
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
  readonly oomKills: OomKillSettings;
  readonly stormGuard: StormGuardSettings;
  readonly psiConditions: PsiConditionSettings;
  readonly configReload: ConfigReloadSettings;
  readonly nodeLock: NodeLockSettings;
  readonly server: ServerSettings;
  readonly logLevel: LogLevel;
}
