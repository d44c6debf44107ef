// The agent's own sections of an AgentConfiguration (observe, notifier, actions, reporting,
// taintEviction, server, and the top-level nodeName, housekeepingInterval and logLevel): read,
// validated and defaulted into AgentSettings. Unknown keys are errors at every level, so a typo
// is never silently ignored. Host paths stay as the host spells them; the observer and the notifier
// read them under `observe.hostRoot`.

import { posix } from 'node:path';
import type { Node } from 'yaml';
import type { ConfigReader, EntryHandler, MapEntry } from './config-reader.js';
import { defaultAgentSettings, podCgroupRootForDriver } from './defaults.js';
import type { AgentSettings, CgroupDriver, LogLevel, NotifierMode, NotifierSettings, ObserveSource, PodRemovalMethod, ServerSettings } from './types.js';

/** The top-level keys of an AgentConfiguration that are the agent's (the rest are the kubelet's). */
export const AGENT_FIELDS = ['nodeName', 'housekeepingInterval', 'observe', 'notifier', 'actions', 'reporting', 'taintEviction', 'server', 'logLevel'] as const;

export function isAgentField(key: string): boolean {
  return (AGENT_FIELDS as readonly string[]).includes(key);
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? (T[K] extends readonly unknown[] ? T[K] : Mutable<T[K]>) : T[K] };

// Kernel limits for a PSI trigger (Documentation/accounting/psi.rst): the window is 500 ms to 10 s.
const PSI_WINDOW_MIN_MS = 500;
const PSI_WINDOW_MAX_MS = 10_000;

// A label-style qualified name (`example.com/name`), as a taint key must be.
const QUALIFIED_NAME = /^(?:[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/** Reads the agent fields among `entries` (other keys are the caller's). Problems go to `reader`. */
export function readAgentSettings(reader: ConfigReader, entries: readonly MapEntry[]): AgentSettings {
  const settings = defaultAgentSettings() as Mutable<AgentSettings>;
  let containerFsPathSet = false;

  const positiveDuration = (entry: MapEntry, assign: (ms: number) => void, allowZero = false): void => {
    const duration = reader.duration(entry.valueNode, entry.field);
    if (duration === undefined) return;
    if (duration.ms < 0 || (!allowZero && duration.ms === 0)) {
      reader.problem(entry.field, entry.valueNode, `must be ${allowZero ? 'zero or positive' : 'positive'}: ${duration.raw}`);
      return;
    }
    assign(duration.ms);
  };
  const bool = (entry: MapEntry, assign: (value: boolean) => void): void => {
    const value = reader.boolean(entry.valueNode, entry.field);
    if (value !== undefined) assign(value);
  };
  const oneOf = <T extends string>(allowed: readonly T[], assign: (value: T) => void): EntryHandler => (entry) => {
    const value = reader.enumeration(entry.valueNode, entry.field, allowed);
    if (value !== undefined) assign(value);
  };
  const absolutePath = (entry: MapEntry, assign: (path: string) => void): void => {
    const value = reader.string(entry.valueNode, entry.field, 'an absolute path');
    if (value === undefined) return;
    if (!value.startsWith('/')) {
      reader.problem(entry.field, entry.valueNode, `must be an absolute path: ${JSON.stringify(value)}`);
      return;
    }
    // Normalized without a trailing slash, so joining and comparing paths is predictable.
    const normalized = posix.normalize(value);
    assign(normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized);
  };
  const nonEmptyString = (entry: MapEntry, assign: (value: string) => void): void => {
    const value = reader.string(entry.valueNode, entry.field);
    if (value === undefined) return;
    if (value.trim() === '') {
      reader.problem(entry.field, entry.valueNode, 'must not be empty');
      return;
    }
    assign(value);
  };

  const observe = settings.observe;
  const observeHandlers: Record<string, EntryHandler> = {
    source: oneOf<ObserveSource>(['cgroupfs', 'kubelet'], (v) => (observe.source = v)),
    hostRoot: (e) => absolutePath(e, (v) => (observe.hostRoot = v)),
    cgroupRoot: (e) => absolutePath(e, (v) => (observe.cgroupRoot = v)),
    procRoot: (e) => absolutePath(e, (v) => (observe.procRoot = v)),
    kubeletRootDir: (e) => absolutePath(e, (v) => (observe.kubeletRootDir = v)),
    imageFsPath: (e) => absolutePath(e, (v) => (observe.imageFsPath = v)),
    containerFsPath: (e) =>
      absolutePath(e, (v) => {
        observe.containerFsPath = v;
        containerFsPathSet = true;
      }),
    podLogsDir: (e) => absolutePath(e, (v) => (observe.podLogsDir = v)),
    cgroupDriver: oneOf<CgroupDriver>(['auto', 'cgroupfs', 'systemd'], (v) => (observe.cgroupDriver = v)),
    podCgroupRoot: (e) => nonEmptyString(e, (v) => (observe.podCgroupRoot = v)),
    kubeletUrl: (e) => {
      const value = reader.string(e.valueNode, e.field, '"https://127.0.0.1:10250"');
      if (value === undefined) return;
      if (!URL.canParse(value) || !['http:', 'https:'].includes(new URL(value).protocol)) {
        reader.problem(e.field, e.valueNode, `must be an http or https URL: ${JSON.stringify(value)}`);
        return;
      }
      observe.kubeletUrl = value;
    },
    kubeletTokenFile: (e) => absolutePath(e, (v) => (observe.kubeletTokenFile = v)),
    kubeletInsecureSkipVerify: (e) => bool(e, (v) => (observe.kubeletInsecureSkipVerify = v)),
    diskUsageInterval: (e) => positiveDuration(e, (ms) => (observe.diskUsageIntervalMs = ms)),
  };
  const notifier = settings.notifier;
  // Kept to point the cross-field PSI checks at the right lines.
  const psiNodes: { window: Node | null; stall: Node | null } = { window: null, stall: null };
  const notifierHandlers: Record<string, EntryHandler> = {
    mode: oneOf<NotifierMode>(['auto', 'memcg-v1', 'psi', 'disabled'], (v) => (notifier.mode = v)),
    psiStallThreshold: (e) => {
      psiNodes.stall = e.valueNode;
      positiveDuration(e, (ms) => (notifier.psiStallThresholdMs = ms));
    },
    psiWindow: (e) => {
      psiNodes.window = e.valueNode;
      positiveDuration(e, (ms) => (notifier.psiWindowMs = ms));
    },
    fastCheckInterval: (e) => positiveDuration(e, (ms) => (notifier.fastCheckIntervalMs = ms)),
  };
  const actions = settings.actions;
  const actionHandlers: Record<string, EntryHandler> = {
    dryRun: (e) => bool(e, (v) => (actions.dryRun = v)),
    hardEviction: oneOf<PodRemovalMethod>(['delete', 'eviction-api'], (v) => (actions.hardEviction = v)),
    softEviction: oneOf<PodRemovalMethod>(['eviction-api', 'delete'], (v) => (actions.softEviction = v)),
    localTermination: (e) => bool(e, (v) => (actions.localTermination = v)),
    localTerminationGracePeriod: (e) => positiveDuration(e, (ms) => (actions.localTerminationGracePeriodMs = ms), true),
    podCleanupTimeout: (e) => positiveDuration(e, (ms) => (actions.podCleanupTimeoutMs = ms)),
    setDisruptionTargetCondition: (e) => bool(e, (v) => (actions.setDisruptionTargetCondition = v)),
  };
  const reporting = settings.reporting;
  const taintHandlers: Record<string, EntryHandler> = {
    enabled: (e) => bool(e, (v) => (reporting.taint.enabled = v)),
    key: (e) =>
      nonEmptyString(e, (v) => {
        if (!QUALIFIED_NAME.test(v)) reader.problem(e.field, e.valueNode, `must be a qualified name such as "example.com/pressure": ${JSON.stringify(v)}`);
        else reporting.taint.key = v;
      }),
    effect: (e) => {
      const value = reader.string(e.valueNode, e.field, '"NoSchedule"');
      if (value === undefined || value === 'NoSchedule') return;
      reader.problem(e.field, e.valueNode, `only "NoSchedule" is supported, not ${JSON.stringify(value)}: a NoExecute pressure taint would evict every pod that does not tolerate it, not the one the engine chose`);
    },
  };
  const reportingHandlers: Record<string, EntryHandler> = {
    nodeConditions: (e) => bool(e, (v) => (reporting.nodeConditions = v)),
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
    taint: (e) => reader.section(e.valueNode, e.field, taintHandlers),
    events: (e) => bool(e, (v) => (reporting.events = v)),
  };
  const taintEviction = settings.taintEviction;
  const taintEvictionHandlers: Record<string, EntryHandler> = {
    enabled: (e) => bool(e, (v) => (taintEviction.enabled = v)),
    useEvictionApi: (e) => bool(e, (v) => (taintEviction.useEvictionApi = v)),
    evictionApiDeadline: (e) => positiveDuration(e, (ms) => (taintEviction.evictionApiDeadlineMs = ms), true),
    uidPrecondition: (e) => bool(e, (v) => (taintEviction.uidPrecondition = v)),
    skipTerminatingPods: (e) => bool(e, (v) => (taintEviction.skipTerminatingPods = v)),
    comparisonOperators: (e) => bool(e, (v) => (taintEviction.comparisonOperators = v)),
    countFromTimeAdded: (e) => bool(e, (v) => (taintEviction.countFromTimeAdded = v)),
    deleteRetries: (e) => {
      const value = reader.integer(e.valueNode, e.field, 0, 100);
      if (value !== undefined) taintEviction.deleteRetries = value;
    },
  };
  const server = settings.server;
  const serverHandlers: Record<keyof ServerSettings, EntryHandler> = {
    address: (e) => nonEmptyString(e, (v) => (server.address = v)),
    port: (e) => {
      const value = reader.integer(e.valueNode, e.field, 0, 65535);
      if (value !== undefined) server.port = value;
    },
  };

  const topHandlers: Record<(typeof AGENT_FIELDS)[number], EntryHandler> = {
    nodeName: (e) =>
      nonEmptyString(e, (v) => {
        if (!DNS_SUBDOMAIN.test(v) || v.length > 253) reader.problem(e.field, e.valueNode, `must be a node name (a lowercase DNS subdomain): ${JSON.stringify(v)}`);
        else settings.nodeName = v;
      }),
    housekeepingInterval: (e) => positiveDuration(e, (ms) => (settings.housekeepingIntervalMs = ms)),
    observe: (e) => reader.section(e.valueNode, e.field, observeHandlers),
    notifier: (e) => reader.section(e.valueNode, e.field, notifierHandlers),
    actions: (e) => reader.section(e.valueNode, e.field, actionHandlers),
    reporting: (e) => reader.section(e.valueNode, e.field, reportingHandlers),
    taintEviction: (e) => reader.section(e.valueNode, e.field, taintEvictionHandlers),
    server: (e) => reader.section(e.valueNode, e.field, serverHandlers),
    logLevel: oneOf<LogLevel>(['debug', 'info', 'warn', 'error'], (v) => (settings.logLevel = v)),
  };
  for (const entry of entries) {
    const handler = (topHandlers as Record<string, EntryHandler>)[entry.key];
    handler?.(entry);
  }

  checkPsiTrigger(reader, notifier, psiNodes);
  if (!containerFsPathSet) observe.containerFsPath = observe.imageFsPath;
  if (observe.cgroupDriver === 'systemd') observe.podCgroupRoot = podCgroupRootForDriver(observe.podCgroupRoot, 'systemd');
  return settings;
}

// The kernel refuses a PSI trigger outside these bounds; better to say so at load time.
function checkPsiTrigger(reader: ConfigReader, notifier: NotifierSettings, nodes: { window: Node | null; stall: Node | null }): void {
  if (notifier.psiWindowMs < PSI_WINDOW_MIN_MS || notifier.psiWindowMs > PSI_WINDOW_MAX_MS) {
    reader.problem('notifier.psiWindow', nodes.window, `must be between 500ms and 10s (the kernel's limits for a PSI trigger): ${notifier.psiWindowMs}ms`, notifier.psiWindowMs);
  }
  if (notifier.psiStallThresholdMs > notifier.psiWindowMs) {
    reader.problem('notifier.psiStallThreshold', nodes.stall ?? nodes.window, `must not exceed notifier.psiWindow (${notifier.psiWindowMs}ms): ${notifier.psiStallThresholdMs}ms`, notifier.psiStallThresholdMs);
  }
}

