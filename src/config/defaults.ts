// Every default of the configuration, in one place: the kubelet's (the Linux evictionHard map, the
// 5-minute transition period, `enforceNodeAllocatable: [pods]`, ...) and the agent's own. The
// kubelet's defaults are its current Linux ones (pkg/kubelet/eviction/defaults_linux.go and
// SetDefaults_KubeletConfiguration), applied the way cmd/kubelet applies them.

import { PSI_MAX_WINDOW_MS, PSI_MIN_WINDOW_MS, type AgentSettings } from '../api/agent-settings.js';

/**
 * The kubelet's Linux default `evictionHard` (imagefs.inodesFree since v1.29), in SIGNALS order.
 * Applied only when the file has no evictionHard at all; an explicit map replaces it, unless
 * `mergeDefaultEvictionSettings` is true.
 */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = Object.freeze({
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
});

/** `evictionPressureTransitionPeriod`: 5 minutes; an explicit zero also becomes 5 minutes. */
export const DEFAULT_PRESSURE_TRANSITION_PERIOD_MS = 5 * 60_000;
export const DEFAULT_MAX_POD_GRACE_PERIOD_SECONDS = 0;
export const DEFAULT_ENFORCE_NODE_ALLOCATABLE: readonly string[] = Object.freeze(['pods']);
export const DEFAULT_LOCAL_STORAGE_CAPACITY_ISOLATION = true;
export const DEFAULT_KERNEL_MEMCG_NOTIFICATION = false;
export const DEFAULT_MERGE_DEFAULT_EVICTION_SETTINGS = false;
/** The kubelet's fixed evictionMonitoringPeriod (kept in step with cAdvisor housekeeping). */
export const DEFAULT_HOUSEKEEPING_INTERVAL_MS = 10_000;

export interface EffectiveEvictionHard {
  /** The map ParseThresholdConfig receives. */
  readonly evictionHard: Readonly<Record<string, string>>;
  /** Signals whose entry came from {@link DEFAULT_EVICTION_HARD}. */
  readonly defaultedSignals: ReadonlySet<string>;
  /** Those of `defaultedSignals` added to a partial map by `mergeDefaultEvictionSettings`. */
  readonly mergedSignals: ReadonlySet<string>;
  /** Default signals a partial map leaves out and that stay off (replace, not merge). */
  readonly droppedDefaultSignals: readonly string[];
}

/**
 * The evictionHard the kubelet runs with: the defaults when the field is absent (null also counts
 * as absent, as in the kubelet's JSON decoding); the file's map as is otherwise, which silently
 * turns off every default it omits; with `mergeDefaultEvictionSettings`, the file's map plus each
 * missing default (the file's entries win, a `0%` included).
 */
export function effectiveEvictionHard(fromFile: Readonly<Record<string, string>> | undefined, mergeDefaults: boolean): EffectiveEvictionHard {
  const defaultSignals = Object.keys(DEFAULT_EVICTION_HARD);
  if (fromFile === undefined) {
    return { evictionHard: { ...DEFAULT_EVICTION_HARD }, defaultedSignals: new Set(defaultSignals), mergedSignals: new Set(), droppedDefaultSignals: [] };
  }
  const missing = defaultSignals.filter((signal) => !Object.hasOwn(fromFile, signal));
  if (!mergeDefaults) {
    return { evictionHard: { ...fromFile }, defaultedSignals: new Set(), mergedSignals: new Set(), droppedDefaultSignals: missing };
  }
  const merged: Record<string, string> = { ...fromFile };
  for (const signal of missing) merged[signal] = DEFAULT_EVICTION_HARD[signal] as string;
  return { evictionHard: merged, defaultedSignals: new Set(missing), mergedSignals: new Set(missing), droppedDefaultSignals: [] };
}

/** The kubelet's SetDefaults rule for the transition period: zero (written or absent) means 5 minutes. */
export function effectivePressureTransitionPeriodMs(fromFileMs: number | undefined): number {
  return fromFileMs === undefined || fromFileMs === 0 ? DEFAULT_PRESSURE_TRANSITION_PERIOD_MS : fromFileMs;
}

/** The range one duration setting takes, both ends included. */
export interface DurationBounds {
  readonly minMs: number;
  readonly maxMs: number;
  /** Why the range is what it is, when the message should say it. */
  readonly why?: string;
}

/**
 * The range of every duration among the agent's own settings, by its path in the file. Below the
 * minimum a loop spins (`housekeepingInterval: 1ns` ran thousands of passes a second); above the
 * maximum the agent would sit on pressure or a pending pod far longer than any node can wait, and
 * past 24.8 days a Node.js timer fires at once. The kubelet's own fields keep the kubelet's rules:
 * they are only compared with the clock, never armed as timers.
 */
export const DURATION_BOUNDS_MS: Readonly<Record<string, DurationBounds>> = Object.freeze({
  housekeepingInterval: { minMs: 1000, maxMs: 10 * 60_000 },
  'observe.diskUsageInterval': { minMs: 1000, maxMs: 60 * 60_000 },
  'notifier.psiStallThreshold': { minMs: 0.001, maxMs: PSI_MAX_WINDOW_MS },
  'notifier.psiWindow': { minMs: PSI_MIN_WINDOW_MS, maxMs: PSI_MAX_WINDOW_MS, why: "the kernel's limits for a PSI trigger" },
  'notifier.fastCheckMinInterval': { minMs: 1, maxMs: 10_000 },
  'notifier.fastCheckMaxInterval': { minMs: 1, maxMs: 10_000 },
  'actions.localTerminationGracePeriod': { minMs: 0, maxMs: 10 * 60_000 },
  'actions.podCleanupTimeout': { minMs: 1000, maxMs: 10 * 60_000 },
  'actions.escalationTimeout': { minMs: 1000, maxMs: 10 * 60_000 },
  // Outcomes are reported at the window's end: past an hour, a report would come too late to act on.
  'reporting.retriggerWindow': { minMs: 1000, maxMs: 60 * 60_000 },
  'taintEviction.evictionApiDeadline': { minMs: 0, maxMs: 60 * 60_000 },
  'oomKills.scanInterval': { minMs: 1000, maxMs: 10 * 60_000, why: 'the scan walks every pod\'s cgroups' },
  'oomKills.kernelLogWait': { minMs: 0, maxMs: 5000, why: 'past it, a report would lag the kill noticeably' },
  // 0: no hold (KEP-5394's own rule, judged at each reading); past an hour a condition lags the node.
  'psiConditions.setHoldDuration': { minMs: 0, maxMs: 60 * 60_000 },
  'psiConditions.clearHoldDuration': { minMs: 0, maxMs: 60 * 60_000 },
  'psiConditions.interval': { minMs: 1000, maxMs: 60_000, why: 'the kernel recomputes its averages every 2 s' },
  // Past a day, a window would keep far more history than a storm needs.
  'stormGuard.softEvictionBudget.window': { minMs: 1000, maxMs: 24 * 3_600_000 },
  'stormGuard.owners.window': { minMs: 1000, maxMs: 24 * 3_600_000 },
  'stormGuard.owners.taintCoolDown': { minMs: 0, maxMs: 24 * 3_600_000 },
  // Above a pass's longest stall (a slow disk walk), below the kubelet's own reaction time many times over.
  'nodeLock.hungHolderTimeout': { minMs: 3000, maxMs: 5 * 60_000, why: 'a shorter one would break the lock of a holder in a long pass' },
});

export const DEFAULT_IMAGE_FS_PATH = '/var/lib/containerd';

/**
 * The agent's settings when the file says nothing. Paths here are as seen on the host; the loader
 * resolves them under `hostRoot`.
 */
export function defaultAgentSettings(): AgentSettings {
  return {
    nodeName: null,
    housekeepingIntervalMs: DEFAULT_HOUSEKEEPING_INTERVAL_MS,
    observe: {
      source: 'cgroupfs',
      hostRoot: '/',
      cgroupRoot: '/sys/fs/cgroup',
      procRoot: '/proc',
      kubeletRootDir: '/var/lib/kubelet',
      imageFsPath: DEFAULT_IMAGE_FS_PATH,
      containerFsPath: DEFAULT_IMAGE_FS_PATH,
      podLogsDir: '/var/log/pods',
      cgroupDriver: 'auto',
      podCgroupRoot: 'kubepods',
      kubeletUrl: 'https://127.0.0.1:10250',
      kubeletTokenFile: '/var/run/secrets/kubernetes.io/serviceaccount/token',
      allowTokenOverHttpLoopback: false,
      kubeletInsecureSkipVerify: false,
      kubeletCaFile: null,
      diskUsageIntervalMs: 60_000,
    },
    notifier: {
      mode: 'auto',
      psiStallThresholdMs: 100,
      psiWindowMs: 1_000,
      fastCheckMinIntervalMs: 10,
      fastCheckMaxIntervalMs: 10_000,
      fastCheckAllocationBytesPerSecond: 4 * 1024 ** 3,
      memoryHighWakeup: false,
      killPath: true,
    },
    actions: {
      dryRun: false,
      hardEviction: 'delete',
      softEviction: 'eviction-api',
      localTermination: true,
      localTerminationGracePeriodMs: null,
      podCleanupTimeoutMs: 30_000,
      // A killed process frees its memory in milliseconds; one that has not within seconds is stuck
      // (in the kernel, or a pod whose deletion the kubelet is slow to act on), and pressure is not.
      escalationTimeoutMs: 5_000,
      setDisruptionTargetCondition: true,
    },
    reporting: {
      nodeConditions: true,
      conditionTypePrefix: 'kube-eviction-agent.io/',
      taint: { enabled: false, key: 'kube-eviction-agent.io/pressure', effect: 'NoSchedule' },
      events: true,
      // A minute: pressure back within it is the same shortage, not a new one.
      retriggerWindowMs: 60_000,
    },
    taintEviction: {
      enabled: false,
      useEvictionApi: false,
      evictionApiDeadlineMs: 5 * 60_000,
      skipTerminatingPods: false,
      comparisonOperators: false,
      countFromTimeAdded: false,
      deleteRetries: 5,
    },
    // Reporting only: on. The kernel log is read where the agent may (CAP_SYSLOG).
    oomKills: { enabled: true, kernelLog: true, scanIntervalMs: DEFAULT_HOUSEKEEPING_INTERVAL_MS, kernelLogWaitMs: 500 },
    // The budget changes decisions: off. Owner Events only report: on. The cool-down changes the taint: off.
    stormGuard: {
      softEvictionBudget: { maxEvictions: 0, windowMs: 10 * 60_000 },
      owners: { eventThreshold: 3, windowMs: 10 * 60_000, taintCoolDownMs: 0 },
    },
    // Reporting only, and it changes scheduling when its taint is on: off. KEP-5394 leaves its defaults to
    // experiments; these call a node contended when all of its pods' tasks stalled on memory for a tenth of
    // the last 10 s and of the last minute, on I/O for a fifth (fsync-heavy pods stall on I/O in normal work).
    psiConditions: {
      enabled: false,
      line: 'full',
      memory: { enabled: true, avg10ThresholdPercent: 10, avg60ThresholdPercent: 10 },
      io: { enabled: true, avg10ThresholdPercent: 20, avg60ThresholdPercent: 20 },
      setHoldDurationMs: 10_000,
      clearHoldDurationMs: 60_000,
      intervalMs: 2_000,
      taint: { enabled: false },
    },
    // A reload that would evict the moment it is applied waits for an explicit yes.
    configReload: { applyThresholdsThatEvictNow: false },
    // On: a second agent on the node stands by instead of evicting for the same pressure. /run is the
    // host's tmpfs, so a reboot clears a stale state file.
    nodeLock: { directory: '/run/kube-eviction-agent', hungHolderTimeoutMs: 10_000 },
    // The kubelet's probes open one connection each and never keep it alive (three probes at most):
    // eight is room for a slow answer and a person's curl, and small enough to cost nothing held.
    server: { address: '0.0.0.0', port: 8080, maxConnections: 32, probePort: 8081, probeMaxConnections: 8 },
    logLevel: 'info',
  };
}
