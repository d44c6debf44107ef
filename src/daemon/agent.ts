// The running agent: the eviction loop, the executor, node status, the operations server and
// configuration hot reload, put together from adapters the caller supplies (the real ones in
// `run`, the sandboxed ones in `demo`, fakes in tests). It owns start-up order and a prompt,
// complete shutdown.

import type { Clock } from '../api/clock.js';
import type { HostIdentity } from '../api/host-identity.js';
import type { Logger } from '../api/logger.js';
import type { LoadedConfig } from '../config/types.js';
import { AgentError, errorMessage, formatConfigProblem } from '../errors.js';
import { EvictionManager } from '../eviction/manager.js';
import { thresholdsMetOnlyBy } from '../eviction/threshold-change.js';
import type { Eviction, SynchronizeResult, ThresholdMet } from '../eviction/types.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import { guardPorts } from './acting-guard.js';
import { AgentActivity, trackActivity } from './agent-activity.js';
import { NodePodFilter, POD_REFUSAL_REASONS } from './node-pod-filter.js';
import { ConfigWatcher, type ReloadResult } from './config-watcher.js';
import { DryRunReporter } from './dry-run-reporter.js';
import { EvictionExecutor, type ExecutorSettings } from './eviction-executor.js';
import { EvictionStormGuard } from './eviction-storms.js';
import { EvictionLoop, type LoopSettings, type SyncTrigger } from './eviction-loop.js';
import { startOpsServer, startProbeServer, type HealthState, type OpsServer } from './http-server.js';
import { createAgentMetrics, type AgentMetrics } from './metrics.js';
import { NodeIdentityGuard } from './node-identity.js';
import { DEFAULT_NODE_LOCK_HEARTBEAT_INTERVAL_MS, DEFAULT_NODE_LOCK_POLL_INTERVAL_MS, NodeLockGate, describeInstance, type AgentInstance } from './node-lock-gate.js';
import { NodeStatusReporter, type NodeStatusSettings } from './node-status.js';
import type { OomAttribution } from './oom-attribution.js';

/** What the agent made of a kernel OOM kill, for `onOomKill`. */
export type { OomAttribution };
import { OomKillReporter } from './oom-kill-reporter.js';
import { OutcomeReporter } from './outcome-reporter.js';
import type { EvictionOutcome } from '../eviction/eviction-outcomes.js';
import { PodStatsGuard } from './pod-stats-guard.js';
import { PsiConditionReporter, type PsiConditionReporterSettings, type PsiSource } from './psi-condition-reporter.js';
import type { ClusterView, EventRecorder, KernelOomKill, KillPath, LocalTerminator, MemoryThresholdNotifier, NodeLockFile, NodeObserver, NodeReporter, OomKillWatcher, OwnerLookup, PodActions } from './ports.js';
import { Readiness } from './readiness.js';
import { inForce, restartOnlyChanges } from './restart-only.js';
import { TaintController } from './taint-controller.js';

export interface AgentOptions {
  readonly config: LoadedConfig;
  readonly nodeName: string;
  /** The file to watch for hot reload, and how to parse a new version of it; null disables reload. */
  readonly reload: { readonly path: string; readonly text: string; readonly parse: (text: string) => LoadedConfig } | null;
  /** Overrides the config's dry-run setting (the `--dry-run` flag). */
  readonly dryRun?: boolean | undefined;
  /** Overrides the config's `server.port`; here 0 means any free port (tests and the demo), where the config's 0 disables the endpoint. */
  readonly serverPort?: number;
  /**
   * Overrides the config's `server.probePort`, 0 meaning any free port. Left out with `serverPort: 0`,
   * the probe listener takes any free port too (unless the config turns it off), so a test or the
   * demo never binds the fixed default.
   */
  readonly probePort?: number;
  /** Aborting it during start-up (SIGTERM) stops what has started and rejects the start. */
  readonly signal?: AbortSignal;
}

export interface AgentDeps {
  readonly cluster: ClusterView & { start(): Promise<void>; stop(): Promise<void> };
  readonly actions: PodActions;
  readonly events: EventRecorder;
  readonly nodeReporter: NodeReporter;
  readonly observer: NodeObserver;
  readonly notifier: MemoryThresholdNotifier;
  readonly terminator: LocalTerminator;
  /** This host's boot ID, machine ID and system UUID, checked against the Node's before anything is done to it. */
  readonly hostIdentity: HostIdentity;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics?: AgentMetrics;
  /** Called with every pass's decision, before it is acted on (the demo's timeline). */
  readonly onDecision?: (result: SynchronizeResult, trigger: SyncTrigger) => void;
  /** Called with a memory notification's shortcut eviction, after the kill (the demo's timeline). */
  readonly onShortcut?: (eviction: Eviction) => void;
  /** Finds kernel OOM kills on the node; without it none are reported. */
  readonly oomKills?: OomKillWatcher;
  /** Called with every kernel OOM kill and its attribution (the demo prints it). */
  readonly onOomKill?: (kill: KernelOomKill, attribution: OomAttribution) => void;
  /** Called with every eviction outcome once known, and its sentence (the demo prints it). */
  readonly onOutcome?: (outcome: EvictionOutcome, message: string) => void;
  /** Reads a ReplicaSet's owner, to count evictions against its Deployment; without it the names decide. */
  readonly owners?: OwnerLookup;
  /** The node lock: only its holder acts, any other agent on the node stands by. Without it the agent always acts. */
  readonly nodeLock?: { readonly lock: NodeLockFile; readonly self: AgentInstance; readonly pollIntervalMs?: number };
  /** The pods' cgroup's pressure files, for the PSI node conditions; without it they are unavailable. */
  readonly psiSource?: PsiSource;
  /** The hard memory kill on a thread of its own, armed by the loop; without it the main thread answers every crossing. */
  readonly killPath?: KillPath;
}

export interface RunningAgent {
  readonly metrics: AgentMetrics;
  readonly loop: EvictionLoop;
  /** Every eviction followed to its outcome: the last ones known. */
  readonly outcomes: OutcomeReporter;
  /** The named readiness checks behind /readyz. */
  readonly readiness: Readiness;
  readonly opsPort: number | null;
  /** The probe listener's port (`/healthz` and `/readyz` only); null when it is off. */
  readonly probePort: number | null;
  /** The configuration in force (after reloads). */
  config(): LoadedConfig;
  /** Applies a new configuration text as a reload would; resolves with the outcome. */
  reloadNow(): Promise<ReloadResult | 'disabled'>;
  stop(): Promise<void>;
}

function executorSettings(config: LoadedConfig, nodeName: string, dryRun: boolean): ExecutorSettings {
  const a = config.agent.actions;
  return {
    nodeName,
    dryRun,
    hardEviction: a.hardEviction,
    softEviction: a.softEviction,
    localTermination: a.localTermination,
    localTerminationGracePeriodMs: a.localTerminationGracePeriodMs,
    setDisruptionTargetCondition: a.setDisruptionTargetCondition,
  };
}

function loopSettings(config: LoadedConfig): LoopSettings {
  return {
    housekeepingIntervalMs: config.eviction.housekeepingIntervalMs,
    podCleanupTimeoutMs: config.agent.actions.podCleanupTimeoutMs,
    escalationTimeoutMs: config.agent.actions.escalationTimeoutMs,
  };
}

function statusSettings(config: LoadedConfig, dryRun: boolean): NodeStatusSettings {
  const r = config.agent.reporting;
  return { enabled: r.nodeConditions, dryRun, conditionTypePrefix: r.conditionTypePrefix, taint: { enabled: r.taint.enabled, key: r.taint.key } };
}

function psiSettings(config: LoadedConfig, dryRun: boolean): PsiConditionReporterSettings {
  return { psi: config.agent.psiConditions, conditionTypePrefix: config.agent.reporting.conditionTypePrefix, dryRun };
}

// A node side without pressure files (a stand-in node): the PSI conditions say so and report nothing.
const NO_PSI_SOURCE: PsiSource = {
  unavailable: 'this node side has no pressure files',
  paths: { memory: '', io: '' },
  read: () => ({ memory: { ok: false, reason: 'no pressure files' }, io: { ok: false, reason: 'no pressure files' } }),
  close: () => undefined,
};

// Events are best effort and optional: with `reporting.events: false`, none are recorded.
function gatedEvents(events: EventRecorder, enabled: () => boolean): EventRecorder {
  return {
    podEvent: async (pod, event) => (enabled() ? events.podEvent(pod, event) : undefined),
    nodeEvent: async (event) => (enabled() ? events.nodeEvent(event) : undefined),
    objectEvent: async (object, event) => (enabled() ? events.objectEvent(object, event) : undefined),
  };
}

/** The agent's parts, built on the caller's ports, with what a reload must reach. */
interface AgentParts {
  readonly identity: NodeIdentityGuard;
  readonly manager: EvictionManager;
  readonly executor: EvictionExecutor;
  readonly stormGuard: EvictionStormGuard;
  readonly nodeStatus: NodeStatusReporter;
  readonly psiConditions: PsiConditionReporter;
  readonly taints: TaintController;
  readonly podStats: PodStatsGuard;
  readonly outcomes: OutcomeReporter;
  readonly loop: EvictionLoop;
  /** Told whether the agent acts: in a dry run it changes nothing the kernel does. */
  readonly notifier: MemoryThresholdNotifier;
}

// The configuration in force, shared by the parts that read it at each use.
interface LiveConfig {
  current: LoadedConfig;
  readonly dryRunFlag: boolean;
}

const isDryRun = (live: LiveConfig): boolean => live.dryRunFlag || live.current.agent.actions.dryRun;

function buildParts(options: AgentOptions, deps: AgentDeps, live: LiveConfig, metrics: AgentMetrics, events: EventRecorder, lock: NodeLockGate | null): AgentParts {
  const config = live.current;
  const dryRun = (): boolean => isDryRun(live);
  // Nothing reaches the Node or its pods unless the Node is this host, and this agent holds the node lock.
  const identity = new NodeIdentityGuard({ nodeName: options.nodeName, host: deps.hostIdentity, cluster: deps.cluster, events, logger: deps.logger });
  const refusal = (): string | null => identity.refusal() ?? lock?.refusal() ?? null;
  // An eviction also waits for a pod the previous lock holder evicted (one shortage, one pod).
  const evictionRefusal = (): string | null => identity.refusal() ?? lock?.evictionRefusal() ?? null;
  const ports = lock === null ? deps : lock.track(deps);
  const guarded = guardPorts({ actions: ports.actions, terminator: ports.terminator, nodeReporter: deps.nodeReporter }, refusal, deps.logger);
  const manager = new EvictionManager(config.eviction);
  const stormGuard = new EvictionStormGuard(config.agent.stormGuard, {
    nodeName: options.nodeName,
    events,
    metrics,
    clock: deps.clock,
    logger: deps.logger,
    ...(deps.owners === undefined ? {} : { owners: deps.owners }),
  });
  const executor = new EvictionExecutor(executorSettings(config, options.nodeName, dryRun()), {
    cluster: deps.cluster,
    actions: guarded.actions,
    events,
    terminator: guarded.terminator,
    metrics,
    logger: deps.logger,
    clock: deps.clock,
    refusal: evictionRefusal,
    stormGuard,
  });
  const nodeStatus = new NodeStatusReporter(statusSettings(config, dryRun()), {
    reporter: guarded.nodeReporter,
    cluster: deps.cluster,
    clock: deps.clock,
    logger: deps.logger,
    refusal,
    // The conditions say which agent keeps them.
    ...(lock === null ? {} : { note: () => (lock.lockHolder === null ? null : `node lock holder: ${describeInstance(lock.lockHolder)}`) }),
  });
  const psiConditions = new PsiConditionReporter(psiSettings(config, dryRun()), {
    source: deps.psiSource ?? NO_PSI_SOURCE,
    reporter: guarded.nodeReporter,
    cluster: deps.cluster,
    events,
    metrics,
    clock: deps.clock,
    logger: deps.logger,
    refusal,
  });
  const taints = new TaintController(config.agent.taintEviction, {
    nodeName: options.nodeName,
    dryRun,
    cluster: deps.cluster,
    actions: guarded.actions,
    events,
    metrics,
    clock: deps.clock,
    logger: deps.logger,
    refusal,
  });
  // Nothing is evicted for a signal whose pods the agent cannot measure.
  const podStats = new PodStatsGuard({ events, logger: deps.logger });
  const outcomes = new OutcomeReporter(
    config.agent.reporting.retriggerWindowMs,
    { cluster: deps.cluster, events, metrics, logger: deps.logger, acting: () => !dryRun(), ...(deps.onOutcome === undefined ? {} : { onOutcome: deps.onOutcome }) },
    deps.clock,
  );
  outcomes.knownSignals(manager.thresholds.map((t) => t.signal));
  deps.notifier.setActing(!dryRun());
  const loop = new EvictionLoop(loopSettings(config), {
    manager,
    observer: deps.observer,
    notifier: deps.notifier,
    cluster: deps.cluster,
    executor,
    podStats,
    metrics,
    clock: deps.clock,
    logger: deps.logger,
    thresholds: () => manager.thresholds,
    outcomes,
    dryRun: new DryRunReporter({ metrics, events, clock: deps.clock, logger: deps.logger }),
    ...(deps.onDecision === undefined ? {} : { onDecision: deps.onDecision }),
    ...(deps.onShortcut === undefined ? {} : { onShortcut: deps.onShortcut }),
    onSync: async (result) => {
      await nodeStatus.report(result.nodeConditions, result.nowMs, stormGuard.taintHeld(result.nowMs));
    },
    ...(deps.killPath === undefined ? {} : { killPath: deps.killPath, killPathLock: () => lock?.heldFile() ?? null }),
  });
  identity.onChange((allowed) => {
    taints.setAllowed(allowed);
    if (!allowed) loop.disarmKillPath('the Node is not this host');
  });
  return { identity, manager, executor, stormGuard, nodeStatus, psiConditions, taints, podStats, outcomes, loop, notifier: deps.notifier };
}

// A new configuration reaches every part; what carries over is each part's to decide.
// What the node side and the endpoint were built from stays as it is (the reload names it as
// requiring a restart); everything else is applied. Returns the restart-only fields that changed.
function applyConfig(wanted: LoadedConfig, live: LiveConfig, parts: AgentParts, nodeName: string, metrics: AgentMetrics): string[] {
  // Before anything changes (a dry run, local termination off): the pass that follows arms it again.
  parts.loop.disarmKillPath('configuration reloaded');
  const restartFields = restartOnlyChanges(live.current, wanted);
  const next = inForce(live.current, wanted);
  live.current = next;
  parts.manager.updateConfig(next.eviction);
  parts.executor.updateSettings(executorSettings(next, nodeName, isDryRun(live)));
  parts.stormGuard.updateSettings(next.agent.stormGuard);
  parts.nodeStatus.updateSettings(statusSettings(next, isDryRun(live)));
  parts.psiConditions.updateSettings(psiSettings(next, isDryRun(live)));
  parts.taints.updateSettings(next.agent.taintEviction);
  parts.outcomes.updateSettings(next.agent.reporting.retriggerWindowMs);
  parts.outcomes.knownSignals(parts.manager.thresholds.map((t) => t.signal));
  parts.notifier.setActing(!isDryRun(live));
  metrics.configInfo.reset();
  metrics.configInfo.set({ kind: next.kind }, 1);
  setNearWholeMetric(next, metrics);
  parts.loop.updateSettings(loopSettings(next));
  return restartFields;
}

// A threshold the kubelet accepts that is met on (nearly) every pass ("100.0%" for "100%"): said
// at every load, loudly, and kept as a metric while it is in force.
function warnNearWhole(config: LoadedConfig, log: Logger, fields: Record<string, unknown>): void {
  for (const t of config.nearWholeThresholds) {
    log.warn(`threshold met on (nearly) every pass: ${formatConfigProblem(t)}`, { code: 'EVA_ERR_THRESHOLD_NEAR_WHOLE', field: t.field, value: t.value, ...(t.line === undefined ? {} : { line: t.line }), ...fields });
  }
}

function setNearWholeMetric(config: LoadedConfig, metrics: AgentMetrics): void {
  metrics.thresholdsNearWhole.reset();
  for (const t of config.nearWholeThresholds) metrics.thresholdsNearWhole.set({ signal: t.signal, field: t.field }, 1);
}

// `memory.available < 7Gi (hard; 4Gi available)`, as the figures of the observation that meets it.
function describeMet(met: ThresholdMet): string {
  return `${met.threshold.signal} < ${met.quantity} (${isHardEvictionThreshold(met.threshold) ? 'hard' : 'soft'}; ${met.available} available)`;
}

// Hot reload: a valid new file is applied, and the fields it changes that need a restart are
// named (log, metric, Event); one whose thresholds the node as last observed already meets, where
// those in force do not, is held back and reported the same way, unless the file itself says to
// apply it (`configReload.applyThresholdsThatEvictNow`); an invalid one keeps the old and is reported.
function reloadWatcher(
  reload: NonNullable<AgentOptions['reload']>,
  apply: (next: LoadedConfig) => string[],
  evictsNow: (next: LoadedConfig) => ThresholdMet[],
  metrics: AgentMetrics,
  events: EventRecorder,
  logger: Logger,
): ConfigWatcher {
  const log = logger.child({ component: 'agent' });
  return new ConfigWatcher(
    {
      path: reload.path,
      apply: async (text) => {
        const next = reload.parse(text);
        warnNearWhole(next, log, { path: reload.path });
        const met = next.agent.configReload.applyThresholdsThatEvictNow ? [] : evictsNow(next);
        if (met.length > 0) {
          const held = new AgentError(
            'EVA_ERR_CONFIG_HELD',
            `Configuration ${reload.path} held back, previous configuration kept: its thresholds would evict on the node as it stands: ${met.map(describeMet).join(', ')}. ` +
              'To apply it anyway, set configReload.applyThresholdsThatEvictNow: true in it',
          );
          metrics.configReloads.inc({ result: 'held' });
          log.warn('configuration reload held back: its thresholds would evict on the node as it stands', { path: reload.path, code: held.code, thresholds: met.map(describeMet) });
          await events.nodeEvent({ type: 'Warning', reason: 'ConfigReloadHeld', message: held.message.slice(0, 1024) });
          return 'held';
        }
        const restartFields = apply(next);
        if (restartFields.length === 0) {
          metrics.configReloads.inc({ result: 'applied' });
          log.info('configuration reloaded', { path: reload.path });
          return 'applied';
        }
        metrics.configReloads.inc({ result: 'requires-restart' });
        log.warn('configuration reloaded, except fields that take effect only after a restart', { path: reload.path, requiresRestart: restartFields });
        await events.nodeEvent({ type: 'Warning', reason: 'ConfigReloadRequiresRestart', message: `Configuration ${reload.path} reloaded, but these fields keep their values until the agent restarts: ${restartFields.join(', ')}`.slice(0, 1024) });
        return 'requires-restart';
      },
      onRejected: async (err) => {
        metrics.configReloads.inc({ result: 'rejected' });
        const message = errorMessage(err);
        log.error('configuration reload rejected; keeping the previous configuration', { path: reload.path, err: message });
        await events.nodeEvent({ type: 'Warning', reason: 'ConfigReloadFailed', message: `Invalid configuration ${reload.path} ignored, previous configuration kept: ${message}`.slice(0, 1024) });
      },
      logger,
    },
    reload.text,
  );
}

// Live while passes keep happening.
function livenessOf(live: LiveConfig, loop: EvictionLoop, clock: Clock): () => string | null {
  return () => {
    const { lastSyncAtMs } = loop.health;
    const config = live.current;
    // Three housekeeping intervals plus the cleanup wait of slack.
    const slackMs = 3 * config.eviction.housekeepingIntervalMs + config.agent.actions.podCleanupTimeoutMs;
    if (lastSyncAtMs !== null && clock.nowMs() - lastSyncAtMs > slackMs) return `no synchronize pass for ${Math.round((clock.nowMs() - lastSyncAtMs) / 1000)}s`;
    return null;
  };
}

// Ready once the watches have synced and the node was observed; other parts add their own checks.
function baseReadiness(metrics: AgentMetrics, loop: EvictionLoop, cluster: ClusterView): Readiness {
  const readiness = new Readiness({ ready: metrics.ready, notReady: metrics.notReady });
  readiness.add('watches', () => (cluster.synced ? null : 'pod and node watches not synced'));
  readiness.add('observation', () => (loop.health.observeOk ? null : 'the node has not been observed successfully (see the logs)'));
  return readiness;
}

// How long shutdown waits for the Node to be cleaned up (conditions Unknown, taint removed): a
// DaemonSet gives its pod a few seconds between SIGTERM and SIGKILL.
const SHUTDOWN_CLEANUP_MS = 2_000;

async function within(clock: Clock, ms: number, work: Promise<void>): Promise<void> {
  const stop = new AbortController();
  await Promise.race([work, clock.sleep(ms, stop.signal)]);
  stop.abort();
}

// Settles with `work`, or rejects as soon as `signal` is aborted (SIGTERM during start-up).
async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return work;
  const interrupted = (): AgentError => new AgentError('EVA_ERR_SHUTDOWN', 'Start-up interrupted');
  if (signal.aborted) throw interrupted();
  let onAbort = (): void => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(interrupted());
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The probe listener's port (0: any free one), or null for none; see AgentOptions.probePort. */
function probePortToBind(configuredPort: number, options: AgentOptions): number | null {
  if (options.probePort !== undefined) return options.probePort;
  if (configuredPort === 0) return null;
  return options.serverPort === 0 ? 0 : configuredPort;
}

export async function startAgent(options: AgentOptions, callerDeps: AgentDeps): Promise<RunningAgent> {
  const log = callerDeps.logger.child({ component: 'agent' });
  const metrics = callerDeps.metrics ?? createAgentMetrics();
  const live: LiveConfig = { current: options.config, dryRunFlag: options.dryRun === true };
  const events = gatedEvents(callerDeps.events, () => live.current.agent.reporting.events && !isDryRun(live));
  metrics.configInfo.set({ kind: live.current.kind }, 1);
  setNearWholeMetric(live.current, metrics);
  warnNearWhole(live.current, log, {});
  // What the agent was doing, for the moment the kernel OOM killer fires.
  let thresholds: () => readonly Threshold[] = () => [];
  const activity = new AgentActivity({ dryRun: () => isDryRun(live), notifierMode: callerDeps.notifier.mode, thresholds: () => thresholds(), armed: () => null });
  const tracked = trackActivity(callerDeps, activity);
  // Every part sees only the pods it may act on: bound to this node, with a usable identity.
  const nodePods = new NodePodFilter({
    nodeName: options.nodeName,
    cluster: tracked.cluster,
    logger: tracked.logger,
    onRefusedCounts: (counts) => {
      for (const reason of POD_REFUSAL_REASONS) metrics.refusedPods.set({ reason }, counts[reason]);
    },
  });
  const deps: AgentDeps = { ...tracked, cluster: nodePods };
  // The parts exist before the lock is first tried (start-up, below): its callbacks reach them then.
  let partsRef: AgentParts | null = null;
  let partsStarted = false;
  const lock =
    deps.nodeLock === undefined
      ? null
      : new NodeLockGate(
          {
            pollIntervalMs: deps.nodeLock.pollIntervalMs ?? DEFAULT_NODE_LOCK_POLL_INTERVAL_MS,
            heartbeatIntervalMs: DEFAULT_NODE_LOCK_HEARTBEAT_INTERVAL_MS,
            hungHolderMs: live.current.agent.nodeLock.hungHolderTimeoutMs,
            podCleanupTimeoutMs: live.current.agent.actions.podCleanupTimeoutMs,
            inheritedHoldMs: live.current.agent.actions.escalationTimeoutMs,
          },
          {
            lock: deps.nodeLock.lock,
            self: deps.nodeLock.self,
            clock: deps.clock,
            logger: deps.logger,
            events,
            registry: metrics.registry,
            engineState: () => partsRef?.manager.carriedState() ?? null,
            podGone: (uid) => {
              const pod = deps.cluster.pods().find((p) => p.metadata.uid === uid);
              return pod === undefined || deps.observer.memory?.podProcessCount(pod) === 0;
            },
            // Its first pass acts at once, on what it has observed, carrying on from the previous holder's state.
            onTakeover: (previous) => {
              if (partsRef === null) return;
              if (previous?.engine) partsRef.manager.adoptCarriedState(previous.engine, deps.clock.nowMs());
              partsRef.loop.wake('startup', null);
              // NoExecute taint handling waits while the agent may not act: it starts now (at start-up, it starts with the rest).
              if (partsStarted) partsRef.taints.setAllowed(true);
            },
            onLost: () => partsRef?.taints.setAllowed(false),
          },
        );
  const parts = buildParts(options, deps, live, metrics, events, lock);
  partsRef = parts;
  thresholds = () => parts.manager.thresholds;
  const oomKills =
    deps.oomKills === undefined
      ? null
      : new OomKillReporter({
          watcher: deps.oomKills,
          cluster: deps.cluster,
          events,
          metrics,
          activity,
          clock: deps.clock,
          logger: deps.logger,
          onKill: (kill, attribution) => {
            // Node pressure the evictions were meant to prevent; a container's own limit is not.
            if (attribution.kind === 'node' || attribution.kind === 'allocatable') parts.outcomes.kernelOomKill(kill.atMs);
            deps.onOomKill?.(kill, attribution);
          },
        });
  const readiness = baseReadiness(metrics, parts.loop, deps.cluster);
  readiness.add('node-identity', () => parts.identity.refusal());
  readiness.add('pod-stats', () => parts.podStats.refusal());
  // A standby is ready (an upgrade with surge waits for it), and /readyz says it stands by.
  const health: HealthState = { live: livenessOf(live, parts.loop, deps.clock), ready: () => readiness.reason(), ...(lock === null ? {} : { note: () => lock.describe() }) };
  // Judged on the node as the latest pass saw it; before any pass has observed it, there is nothing to judge by.
  const evictsNow = (next: LoadedConfig): ThresholdMet[] => {
    const observed = parts.loop.lastObservation;
    return observed === null ? [] : thresholdsMetOnlyBy(live.current.eviction.thresholds, next.eviction.thresholds, observed);
  };
  const watcher = options.reload === null ? null : reloadWatcher(options.reload, (next) => applyConfig(next, live, parts, options.nodeName, metrics), evictsNow, metrics, events, deps.logger);
  let ops: OpsServer | null = null;
  let probes: OpsServer | null = null;

  // Every part's stop is idempotent and safe on a part that never started, so one sequence stops
  // a running agent and a start-up that failed half-way alike. The Node is cleaned up (conditions
  // Unknown, taint removed) once nothing can set them again, and before the watch goes.
  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      log.info('stopping');
      await watcher?.stop();
      await parts.taints.stop();
      await parts.loop.stop();
      await oomKills?.stop();
      await parts.outcomes.stop();
      // With a standby waiting, the lock goes to it at once and it keeps the Node's conditions:
      // nothing to retire, and no moment without an acting agent. Otherwise the lock is held
      // until the Node is cleaned up.
      if (lock?.standbysWaiting() === true) {
        await parts.psiConditions.shutdown(false);
        lock.stop();
      } else await within(deps.clock, SHUTDOWN_CLEANUP_MS, Promise.all([parts.nodeStatus.shutdown(), parts.psiConditions.shutdown()]).then(() => undefined));
      lock?.stop();
      deps.observer.close?.();
      callerDeps.events.close?.();
      parts.identity.stop();
      await deps.cluster.stop();
      await ops?.stop();
      await probes?.stop();
      log.info('stopped');
    })();
    return stopping;
  };

  // Start-up order: the endpoints first, so a port that cannot be bound fails the start before
  // anything is armed; then the watches (decisions need the pods and the Node), the identity
  // check, the taint handling (idle until the Node is verified as this host), the loop, and
  // reload. The loop runs even before the watches sync: observing costs nothing, and nothing is
  // acted on until the Node is verified.
  try {
    const { address, port: configuredPort } = live.current.agent.server;
    const port = options.serverPort ?? configuredPort;
    if (port !== 0 || options.serverPort === 0) {
      ops = await unlessAborted(startOpsServer(address, port, metrics.registry, health, live.current.agent.server, () => parts.outcomes.recentJson()), options.signal);
      log.info('serving /metrics, /healthz and /readyz', { address, port: ops.port });
    }
    const probePort = probePortToBind(live.current.agent.server.probePort, options);
    if (probePort !== null) {
      probes = await unlessAborted(startProbeServer(address, probePort, health, { maxConnections: live.current.agent.server.probeMaxConnections }), options.signal);
      log.info('serving /healthz and /readyz for the probes', { address, port: probes.port });
    }
    // The lock before the watches: a standby syncs its informers and arms its notifier all the same.
    lock?.start();
    await unlessAborted(deps.cluster.start(), options.signal);
    parts.identity.start();
    oomKills?.start();
    parts.outcomes.start();
    parts.taints.start();
    partsStarted = true;
    parts.loop.start();
    parts.psiConditions.start();
    watcher?.start();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    metrics,
    loop: parts.loop,
    outcomes: parts.outcomes,
    readiness,
    opsPort: ops?.port ?? null,
    probePort: probes?.port ?? null,
    config: () => live.current,
    reloadNow: async () => (watcher === null ? 'disabled' : watcher.reload()),
    stop,
  };
}
