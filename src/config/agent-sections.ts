// One handler table per section of the agent's own settings (observe, notifier, actions,
// reporting, taintEviction, oomKills, stormGuard, configReload, nodeLock, server): which keys each section has, how each value is read, and
// where it lands in the settings being built. Cross-field rules are agent-settings.ts's.

import { expandEnvironmentReferences } from './environment-references.js';
import { isIP } from 'node:net';
import { isScalar } from 'yaml';
import type {
  ActionSettings,
  CgroupDriverSetting,
  ConfigReloadSettings,
  NodeLockSettings,
  NotifierModeSetting,
  NotifierSettings,
  ObserveSettings,
  ObserveSource,
  OomKillSettings,
  PodRemovalMethod,
  PsiConditionSettings,
  PsiResourceSettings,
  ReportingSettings,
  ServerSettings,
  StormGuardSettings,
  TaintEvictionSettings,
} from '../api/agent-settings.js';
import type { ConfigReader, EntryHandler, MapEntry } from './config-reader.js';
import type { SettingReaders } from './setting-readers.js';

export type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? (T[K] extends readonly unknown[] ? T[K] : Mutable<T[K]>) : T[K] };

// By the key as the file spells it (`psiWindow`, where the setting is `psiWindowMs`).
type Handlers = Readonly<Record<string, EntryHandler>>;

// A label-style qualified name (`example.com/name`), as a taint key must be.
const QUALIFIED_NAME = /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
export const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/**
 * `observe`; `containerFsPathSet` records whether the file named a containerfs path, `onKubeletUrl`
 * keeps the entry the token check points at.
 */
export function observeSection(r: SettingReaders, reader: ConfigReader, observe: Mutable<ObserveSettings>, containerFsPathSet: () => void, onKubeletUrl: (entry: MapEntry) => void = () => {}): Handlers {
  const path = (assign: (value: string) => void): EntryHandler => (e) => r.absolutePath(e, assign);
  return {
    source: r.oneOf<ObserveSource>(['cgroupfs', 'kubelet'], (v) => (observe.source = v)),
    hostRoot: path((v) => (observe.hostRoot = v)),
    cgroupRoot: path((v) => (observe.cgroupRoot = v)),
    procRoot: path((v) => (observe.procRoot = v)),
    kubeletRootDir: path((v) => (observe.kubeletRootDir = v)),
    imageFsPath: path((v) => (observe.imageFsPath = v)),
    containerFsPath: path((v) => {
      observe.containerFsPath = v;
      containerFsPathSet();
    }),
    podLogsDir: path((v) => (observe.podLogsDir = v)),
    cgroupDriver: r.oneOf<CgroupDriverSetting>(['auto', 'cgroupfs', 'systemd'], (v) => (observe.cgroupDriver = v)),
    // Joined under the cgroup mount: it must not climb out of the hierarchy.
    podCgroupRoot: (e) => r.matching(e, (v) => !v.split('/').includes('..'), 'a cgroup path inside the hierarchy (no "..")', (v) => (observe.podCgroupRoot = v)),
    kubeletUrl: (e) => {
      onKubeletUrl(e);
      const written = reader.string(e.valueNode, e.field, '"https://127.0.0.1:10250"');
      if (written === undefined) return;
      // The node's own address, from the pod's environment: https://$(NODE_IP):10250.
      const expanded = expandEnvironmentReferences(written, process.env);
      if (expanded.missing !== undefined) {
        reader.problem(e.field, e.valueNode, `names ${expanded.missing.map((n) => `$(${n})`).join(', ')}, which the environment does not set (the chart sets NODE_IP from the pod's status.hostIP and NODE_NAME from its spec.nodeName): ${JSON.stringify(written)}`);
        return;
      }
      const value = expanded.value;
      if (!URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
        reader.problem(e.field, e.valueNode, `must be an http or https URL: ${JSON.stringify(value)}`);
        return;
      }
      observe.kubeletUrl = value;
    },
    kubeletTokenFile: (e) => {
      // "" sends no token: a kubelet reached without one (plain http on a test node, say).
      if (reader.string(e.valueNode, e.field, 'an absolute path, or "" for no token') === '') observe.kubeletTokenFile = null;
      else r.absolutePath(e, (v) => (observe.kubeletTokenFile = v));
    },
    allowTokenOverHttpLoopback: (e) => r.bool(e, (v) => (observe.allowTokenOverHttpLoopback = v)),
    kubeletInsecureSkipVerify: (e) => r.bool(e, (v) => (observe.kubeletInsecureSkipVerify = v)),
    kubeletCaFile: path((v) => (observe.kubeletCaFile = v)),
    diskUsageInterval: (e) => r.duration(e, (ms) => (observe.diskUsageIntervalMs = ms)),
  };
}

/** `notifier`; `onTimingEntry` keeps the entries the cross-field checks point at. */
export function notifierSection(r: SettingReaders, reader: ConfigReader, notifier: Mutable<NotifierSettings>, onTimingEntry: (key: 'window' | 'stall' | 'fastCheckMin' | 'fastCheckMax', entry: MapEntry) => void): Handlers {
  return {
    mode: r.oneOf<NotifierModeSetting>(['auto', 'memcg-v1', 'psi', 'disabled'], (v) => (notifier.mode = v)),
    psiStallThreshold: (e) => {
      onTimingEntry('stall', e);
      r.duration(e, (ms) => (notifier.psiStallThresholdMs = ms));
    },
    psiWindow: (e) => {
      onTimingEntry('window', e);
      r.duration(e, (ms) => (notifier.psiWindowMs = ms));
    },
    fastCheckMinInterval: (e) => {
      onTimingEntry('fastCheckMin', e);
      r.duration(e, (ms) => (notifier.fastCheckMinIntervalMs = ms));
    },
    fastCheckMaxInterval: (e) => {
      onTimingEntry('fastCheckMax', e);
      r.duration(e, (ms) => (notifier.fastCheckMaxIntervalMs = ms));
    },
    fastCheckAllocationRate: (e) => r.bytes(e, (bytes) => (notifier.fastCheckAllocationBytesPerSecond = bytes)),
    // The fixed interval became an adaptive one; say so rather than "unknown field".
    fastCheckInterval: (e) => reader.problem(e.field, e.valueNode, 'was replaced by fastCheckMinInterval and fastCheckMaxInterval: the fast check now adapts its interval to the distance to the threshold'),
    memoryHighWakeup: (e) => r.bool(e, (v) => (notifier.memoryHighWakeup = v)),
    killPath: (e) => r.bool(e, (v) => (notifier.killPath = v)),
  };
}

export function actionsSection(r: SettingReaders, actions: Mutable<ActionSettings>): Handlers {
  return {
    dryRun: (e) => r.bool(e, (v) => (actions.dryRun = v)),
    hardEviction: r.oneOf<PodRemovalMethod>(['delete', 'eviction-api'], (v) => (actions.hardEviction = v)),
    softEviction: r.oneOf<PodRemovalMethod>(['eviction-api', 'delete'], (v) => (actions.softEviction = v)),
    localTermination: (e) => r.bool(e, (v) => (actions.localTermination = v)),
    localTerminationGracePeriod: (e) => r.duration(e, (ms) => (actions.localTerminationGracePeriodMs = ms)),
    podCleanupTimeout: (e) => r.duration(e, (ms) => (actions.podCleanupTimeoutMs = ms)),
    escalationTimeout: (e) => r.duration(e, (ms) => (actions.escalationTimeoutMs = ms)),
    setDisruptionTargetCondition: (e) => r.bool(e, (v) => (actions.setDisruptionTargetCondition = v)),
  };
}

export function reportingSection(r: SettingReaders, reader: ConfigReader, reporting: Mutable<ReportingSettings>): Handlers {
  const taint: Handlers = {
    enabled: (e) => r.bool(e, (v) => (reporting.taint.enabled = v)),
    key: (e) => r.matching(e, (v) => QUALIFIED_NAME.test(v), 'a qualified name such as "example.com/pressure"', (v) => (reporting.taint.key = v)),
    effect: (e) => {
      const value = reader.string(e.valueNode, e.field, '"NoSchedule"');
      if (value === undefined || value === 'NoSchedule') return;
      reader.problem(e.field, e.valueNode, `only "NoSchedule" is supported, not ${JSON.stringify(value)}: a NoExecute pressure taint would evict every pod that does not tolerate it, not the one the engine chose`);
    },
  };
  return {
    nodeConditions: (e) => r.bool(e, (v) => (reporting.nodeConditions = v)),
    conditionTypePrefix: (e) => {
      const value = reader.string(e.valueNode, e.field, '"kube-eviction-agent.io/"');
      if (value === undefined) return;
      // A prefix keeps the agent's conditions apart from the kubelet's own MemoryPressure, which
      // the kubelet would overwrite on its next status update.
      if (!value.endsWith('/') || !DNS_SUBDOMAIN.test(value.slice(0, -1))) {
        reader.problem(e.field, e.valueNode, `must be a DNS subdomain followed by "/", such as "kube-eviction-agent.io/": ${JSON.stringify(value)}`);
        return;
      }
      reporting.conditionTypePrefix = value;
    },
    taint: (e) => reader.section(e.valueNode, e.field, taint),
    events: (e) => r.bool(e, (v) => (reporting.events = v)),
    retriggerWindow: (e) => r.duration(e, (ms) => (reporting.retriggerWindowMs = ms)),
  };
}

export function taintEvictionSection(r: SettingReaders, reader: ConfigReader, taintEviction: Mutable<TaintEvictionSettings>): Handlers {
  return {
    enabled: (e) => r.bool(e, (v) => (taintEviction.enabled = v)),
    useEvictionApi: (e) => r.bool(e, (v) => (taintEviction.useEvictionApi = v)),
    evictionApiDeadline: (e) => r.duration(e, (ms) => (taintEviction.evictionApiDeadlineMs = ms)),
    // Always on now; an old file that names it still loads.
    uidPrecondition: (e) => reader.warning(e.field, e.keyNode, 'is no longer a setting: the UID precondition and the check that the pod is still bound to this node are always on; remove it'),
    skipTerminatingPods: (e) => r.bool(e, (v) => (taintEviction.skipTerminatingPods = v)),
    comparisonOperators: (e) => r.bool(e, (v) => (taintEviction.comparisonOperators = v)),
    countFromTimeAdded: (e) => r.bool(e, (v) => (taintEviction.countFromTimeAdded = v)),
    deleteRetries: (e) => r.integer(e, 0, 100, (v) => (taintEviction.deleteRetries = v)),
  };
}

export function oomKillsSection(r: SettingReaders, oomKills: Mutable<OomKillSettings>): Handlers {
  return {
    enabled: (e) => r.bool(e, (v) => (oomKills.enabled = v)),
    kernelLog: (e) => r.bool(e, (v) => (oomKills.kernelLog = v)),
    scanInterval: (e) => r.duration(e, (ms) => (oomKills.scanIntervalMs = ms)),
    kernelLogWait: (e) => r.duration(e, (ms) => (oomKills.kernelLogWaitMs = ms)),
  };
}

export function stormGuardSection(r: SettingReaders, reader: ConfigReader, stormGuard: Mutable<StormGuardSettings>): Handlers {
  const budget: Handlers = {
    maxEvictions: (e) => r.integer(e, 0, 1000, (v) => (stormGuard.softEvictionBudget.maxEvictions = v)),
    window: (e) => r.duration(e, (ms) => (stormGuard.softEvictionBudget.windowMs = ms)),
  };
  const owners: Handlers = {
    eventThreshold: (e) => r.integer(e, 0, 1000, (v) => (stormGuard.owners.eventThreshold = v)),
    window: (e) => r.duration(e, (ms) => (stormGuard.owners.windowMs = ms)),
    taintCoolDown: (e) => r.duration(e, (ms) => (stormGuard.owners.taintCoolDownMs = ms)),
  };
  return {
    softEvictionBudget: (e) => reader.section(e.valueNode, e.field, budget),
    owners: (e) => reader.section(e.valueNode, e.field, owners),
  };
}

/** `psiConditions`: the PSI node conditions (opt-in). */
export function psiConditionsSection(r: SettingReaders, reader: ConfigReader, psi: Mutable<PsiConditionSettings>): Handlers {
  const resource = (settings: Mutable<PsiResourceSettings>): Handlers => ({
    enabled: (e) => r.bool(e, (v) => (settings.enabled = v)),
    avg10Threshold: (e) => r.percent(e, (v) => (settings.avg10ThresholdPercent = v)),
    avg60Threshold: (e) => r.percent(e, (v) => (settings.avg60ThresholdPercent = v)),
  });
  const taint: Handlers = { enabled: (e) => r.bool(e, (v) => (psi.taint.enabled = v)) };
  return {
    enabled: (e) => r.bool(e, (v) => (psi.enabled = v)),
    line: r.oneOf<'some' | 'full'>(['full', 'some'], (v) => (psi.line = v)),
    memory: (e) => reader.section(e.valueNode, e.field, resource(psi.memory)),
    io: (e) => reader.section(e.valueNode, e.field, resource(psi.io)),
    // CPU pressure is left out, as KEP-5394 leaves it out: say so rather than "unknown field".
    cpu: (e) => reader.problem(e.field, e.keyNode, 'is not supported: CPU pressure also rises when a pod is throttled at its own CPU limit, so it says nothing about the node (KEP-5394 leaves it out too)'),
    setHoldDuration: (e) => r.duration(e, (ms) => (psi.setHoldDurationMs = ms)),
    clearHoldDuration: (e) => r.duration(e, (ms) => (psi.clearHoldDurationMs = ms)),
    interval: (e) => r.duration(e, (ms) => (psi.intervalMs = ms)),
    taint: (e) => reader.section(e.valueNode, e.field, taint),
  };
}

export function configReloadSection(r: SettingReaders, configReload: Mutable<ConfigReloadSettings>): Handlers {
  return {
    applyThresholdsThatEvictNow: (e) => r.bool(e, (v) => (configReload.applyThresholdsThatEvictNow = v)),
  };
}

/** `nodeLock`: an absolute directory, or '' to turn the lock off. */
export function nodeLockSection(r: SettingReaders, nodeLock: Mutable<NodeLockSettings>): Handlers {
  return {
    directory: (e) => {
      if (isScalar(e.valueNode) && e.valueNode.value === '') nodeLock.directory = '';
      else r.absolutePath(e, (v) => (nodeLock.directory = v));
    },
    hungHolderTimeout: (e) => r.duration(e, (ms) => (nodeLock.hungHolderTimeoutMs = ms)),
  };
}

/** `server`; `onPortEntry` keeps the entries the cross-field check (the two ports differ) points at. */
export function serverSection(r: SettingReaders, server: Mutable<ServerSettings>, onPortEntry: (key: 'port' | 'probePort', entry: MapEntry) => void = () => {}): Handlers {
  return {
    address: (e) => r.matching(e, (v) => isIP(v) !== 0, 'an IP address to bind, such as "0.0.0.0" (every interface) or "127.0.0.1" (this host only)', (v) => (server.address = v)),
    port: (e) => {
      onPortEntry('port', e);
      r.integer(e, 0, 65535, (v) => (server.port = v));
    },
    maxConnections: (e) => r.integer(e, 1, 1024, (v) => (server.maxConnections = v)),
    probePort: (e) => {
      onPortEntry('probePort', e);
      r.integer(e, 0, 65535, (v) => (server.probePort = v));
    },
    probeMaxConnections: (e) => r.integer(e, 1, 1024, (v) => (server.probeMaxConnections = v)),
  };
}
