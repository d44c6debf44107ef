// The agent's own sections of an AgentConfiguration (observe, notifier, actions, reporting,
// taintEviction, oomKills, stormGuard, configReload, server, and the top-level nodeName, housekeepingInterval and logLevel): read,
// validated and defaulted into AgentSettings, the one validation they get. Unknown keys are
// errors at every level, so a typo is never silently ignored. Host paths stay as the host spells
// them; the adapters read them under `observe.hostRoot`.

import type { Node } from 'yaml';
import type { AgentSettings, LogLevel, NotifierSettings, ObserveSettings } from '../api/agent-settings.js';
import { cleartextTokenRefusal } from '../api/loopback-host.js';
import { podCgroupRootForDriver } from '../host/pod-cgroup-names.js';
import {
  actionsSection,
  configReloadSection,
  nodeLockSection,
  DNS_SUBDOMAIN,
  notifierSection,
  observeSection,
  oomKillsSection,
  psiConditionsSection,
  reportingSection,
  serverSection,
  stormGuardSection,
  taintEvictionSection,
  type Mutable,
} from './agent-sections.js';
import type { ConfigReader, EntryHandler, MapEntry } from './config-reader.js';
import { defaultAgentSettings } from './defaults.js';
import { SettingReaders } from './setting-readers.js';

/** The top-level keys of an AgentConfiguration that are the agent's (the rest are the kubelet's). */
export const AGENT_FIELDS = ['nodeName', 'housekeepingInterval', 'observe', 'notifier', 'actions', 'reporting', 'taintEviction', 'oomKills', 'stormGuard', 'psiConditions', 'configReload', 'nodeLock', 'server', 'logLevel'] as const;

export function isAgentField(key: string): boolean {
  return (AGENT_FIELDS as readonly string[]).includes(key);
}

/** Reads the agent fields among `entries` (other keys are the caller's). Problems go to `reader`. */
export function readAgentSettings(reader: ConfigReader, entries: readonly MapEntry[]): AgentSettings {
  const settings = defaultAgentSettings() as Mutable<AgentSettings>;
  const r = new SettingReaders(reader);
  let containerFsPathSet = false;
  // Kept to point the cross-field notifier checks at the right lines.
  const notifierNodes: NotifierNodes = { window: null, stall: null, fastCheckMin: null, fastCheckMax: null };
  const stormGuardNode: { node: Node | null } = { node: null };
  const kubeletUrlNode: { node: Node | null } = { node: null };
  const serverNodes: { port: Node | null; probePort: Node | null } = { port: null, probePort: null };

  const topHandlers: Record<(typeof AGENT_FIELDS)[number], EntryHandler> = {
    nodeName: (e) => r.matching(e, (v) => DNS_SUBDOMAIN.test(v) && v.length <= 253, 'a node name (a lowercase DNS subdomain)', (v) => (settings.nodeName = v)),
    housekeepingInterval: (e) => r.duration(e, (ms) => (settings.housekeepingIntervalMs = ms)),
    observe: (e) =>
      reader.section(
        e.valueNode,
        e.field,
        observeSection(r, reader, settings.observe, () => (containerFsPathSet = true), (entry) => (kubeletUrlNode.node = entry.valueNode)),
      ),
    notifier: (e) => reader.section(e.valueNode, e.field, notifierSection(r, reader, settings.notifier, (key, entry) => (notifierNodes[key] = entry.valueNode))),
    actions: (e) => reader.section(e.valueNode, e.field, actionsSection(r, settings.actions)),
    reporting: (e) => reader.section(e.valueNode, e.field, reportingSection(r, reader, settings.reporting)),
    taintEviction: (e) => reader.section(e.valueNode, e.field, taintEvictionSection(r, reader, settings.taintEviction)),
    oomKills: (e) => reader.section(e.valueNode, e.field, oomKillsSection(r, settings.oomKills)),
    stormGuard: (e) => {
      stormGuardNode.node = e.valueNode;
      reader.section(e.valueNode, e.field, stormGuardSection(r, reader, settings.stormGuard));
    },
    psiConditions: (e) => reader.section(e.valueNode, e.field, psiConditionsSection(r, reader, settings.psiConditions)),
    configReload: (e) => reader.section(e.valueNode, e.field, configReloadSection(r, settings.configReload)),
    nodeLock: (e) => reader.section(e.valueNode, e.field, nodeLockSection(r, settings.nodeLock)),
    server: (e) => reader.section(e.valueNode, e.field, serverSection(r, settings.server, (key, entry) => (serverNodes[key] = entry.valueNode))),
    logLevel: r.oneOf<LogLevel>(['debug', 'info', 'warn', 'error'], (v) => (settings.logLevel = v)),
  };
  for (const entry of entries) {
    const handler = (topHandlers as Record<string, EntryHandler>)[entry.key];
    handler?.(entry);
  }

  checkNotifier(reader, settings.notifier, notifierNodes);
  // The cool-down keeps the pressure taint: without the taint there is nothing to keep.
  if (settings.stormGuard.owners.taintCoolDownMs > 0 && !settings.reporting.taint.enabled) {
    reader.warning('stormGuard.owners.taintCoolDown', stormGuardNode.node, 'has no effect while reporting.taint.enabled is false: the cool-down keeps the pressure taint, which is off');
  }
  // One port cannot be both listeners: the second bind would fail at start, with a less clear message.
  const { port, probePort } = settings.server;
  if (port !== 0 && probePort === port) {
    reader.problem('server.probePort', serverNodes.probePort ?? serverNodes.port, `must differ from server.port (${port}), or be 0 for no probe listener: ${probePort}`, probePort);
  }
  const observe = settings.observe;
  checkKubeletToken(reader, observe, kubeletUrlNode.node);
  if (!containerFsPathSet) observe.containerFsPath = observe.imageFsPath;
  if (observe.cgroupDriver === 'systemd') observe.podCgroupRoot = podCgroupRootForDriver(observe.podCgroupRoot, 'systemd');
  return settings;
}

// The kubelet source sends the service-account token as a bearer token: over plain http anyone on
// the path can read it and act as the agent. Refused, except to this host's loopback when the file
// says so explicitly. The client holds to the same rule (src/observe/kubelet-summary-client.ts).
function checkKubeletToken(reader: ConfigReader, observe: ObserveSettings, urlNode: Node | null): void {
  if (observe.source !== 'kubelet' || observe.kubeletTokenFile === null) return;
  const url = new URL(observe.kubeletUrl);
  const refusal = cleartextTokenRefusal(url, observe.allowTokenOverHttpLoopback);
  const fix = 'use an https URL, or set observe.kubeletTokenFile: "" to send no token';
  if (refusal === 'not-loopback') {
    reader.problem('observe.kubeletUrl', urlNode, `would send the token of observe.kubeletTokenFile in cleartext over http to ${url.host}: ${fix}`, observe.kubeletUrl);
  } else if (refusal === 'loopback-not-allowed') {
    reader.problem('observe.kubeletUrl', urlNode, `would send the token of observe.kubeletTokenFile unencrypted over http (loopback ${url.host}): ${fix}, or set observe.allowTokenOverHttpLoopback: true to allow it on loopback`, observe.kubeletUrl);
  }
}

interface NotifierNodes {
  window: Node | null;
  stall: Node | null;
  fastCheckMin: Node | null;
  fastCheckMax: Node | null;
}

// What the kernel and the timers accept: a PSI trigger in whole microseconds with a window of
// whole milliseconds within the kernel's bounds, and a fast check of whole milliseconds. Better
// said at load time than found at arming.
function checkNotifier(reader: ConfigReader, notifier: NotifierSettings, nodes: NotifierNodes): void {
  const { psiWindowMs, psiStallThresholdMs, fastCheckMinIntervalMs, fastCheckMaxIntervalMs } = notifier;
  // The window's range is its own reader's (DURATION_BOUNDS_MS); the kernel also wants whole ms.
  if (!Number.isInteger(psiWindowMs)) {
    reader.problem('notifier.psiWindow', nodes.window, `must be a whole number of milliseconds: ${psiWindowMs}ms`, psiWindowMs);
  }
  if (psiStallThresholdMs > psiWindowMs) {
    reader.problem('notifier.psiStallThreshold', nodes.stall ?? nodes.window, `must not exceed notifier.psiWindow (${psiWindowMs}ms): ${psiStallThresholdMs}ms`, psiStallThresholdMs);
  } else if (!isWholeMicroseconds(psiStallThresholdMs)) {
    reader.problem('notifier.psiStallThreshold', nodes.stall, `must be a whole number of microseconds (the kernel's unit): ${psiStallThresholdMs}ms`, psiStallThresholdMs);
  }
  if (!Number.isInteger(fastCheckMinIntervalMs)) {
    reader.problem('notifier.fastCheckMinInterval', nodes.fastCheckMin, `must be a whole number of milliseconds: ${fastCheckMinIntervalMs}ms`, fastCheckMinIntervalMs);
  } else if (!Number.isInteger(fastCheckMaxIntervalMs)) {
    reader.problem('notifier.fastCheckMaxInterval', nodes.fastCheckMax, `must be a whole number of milliseconds: ${fastCheckMaxIntervalMs}ms`, fastCheckMaxIntervalMs);
  } else if (fastCheckMinIntervalMs > fastCheckMaxIntervalMs) {
    reader.problem('notifier.fastCheckMinInterval', nodes.fastCheckMin ?? nodes.fastCheckMax, `must not exceed notifier.fastCheckMaxInterval (${fastCheckMaxIntervalMs}ms): ${fastCheckMinIntervalMs}ms`, fastCheckMinIntervalMs);
  }
}

// Allowing for binary fractions (0.1 ms is not exact).
function isWholeMicroseconds(ms: number): boolean {
  const us = ms * 1000;
  return Math.abs(us - Math.round(us)) <= 1e-6;
}
