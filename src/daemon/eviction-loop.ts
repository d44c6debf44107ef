// The daemon's main loop, the kubelet eviction manager's `Start` made event-driven: a
// synchronize pass every housekeeping interval, at once on every kernel notification, and at the
// moment a soft threshold's grace period runs out, one pass at a time (wake-ups during a pass
// collapse into one more pass). A hard memory crossing is answered first by the kill path, on a
// thread of its own, with the plan the loop arms after each pass and on each pod change
// (kill-path-arming.ts); the loop takes its kill in afterwards, and takes the plan back before it
// acts itself. Otherwise a memory notification is first answered by the memory shortcut
// (memory-shortcut.ts), synchronously in the notification's callback: fresh node memory, and on
// a hard memory threshold the kubelet's first-ranked pod ended at once; the full pass follows.
// After an eviction it waits, at most the pod cleanup timeout, polling every second, until the
// evicted pods are gone before evicting again, except to escalate to a hard eviction, and never
// while a pod ended locally still has processes, nor on figures observed before they were gone
// (the kubelet's wait for pod cleanup, on local evidence: its pod cgroup removed, its volumes gone
// from the kubelet's root; a pod reported Failed, or gone from the API, may still hold its emptyDir).
// A pod evicted for a hard threshold holds the next decision up (on the pressure it relieves) at most
// its grace period and the escalation timeout:
// past them, still holding its memory (or still there), it is passed over and the next ranked pod is
// evicted (escalation.md).
// Reporting the node's conditions never holds the loop up. All waiting goes through the injected clock.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type Pod } from '../api/pod.js';
import { isSignal, NODE_CONDITIONS, signalToNodeCondition, type NodeConditionType } from '../api/signals.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import { errorMessage } from '../errors.js';
import type { EvictionManager } from '../eviction/manager.js';
import type { Eviction, SynchronizeResult } from '../eviction/types.js';
import type { DryRunReporter } from './dry-run-reporter.js';
import type { EndedLocally, EvictionExecutor } from './eviction-executor.js';
import { KillPathArming } from './kill-path-arming.js';
import { memoryShortcut } from './memory-shortcut.js';
import type { AgentMetrics } from './metrics.js';
import type { OutcomeReporter } from './outcome-reporter.js';
import type { PodStatsGuard } from './pod-stats-guard.js';
import type { HardMemoryPressure } from '../eviction/memory-shortcut.js';
import type { ClusterView, KillPath, KillPathReport, MemoryThresholdNotifier, NodeObserver, NotifierEvent, Observation } from './ports.js';

export type SyncTrigger = 'housekeeping' | 'notifier' | 'grace-period' | 'eviction-wait' | 'reload' | 'startup';

export interface LoopSettings {
  readonly housekeepingIntervalMs: number;
  readonly podCleanupTimeoutMs: number;
  /** How long a pod evicted for a hard threshold may hold up the next decision (5 s when omitted). */
  readonly escalationTimeoutMs?: number;
}

export interface LoopDeps {
  readonly manager: EvictionManager;
  readonly observer: NodeObserver;
  readonly notifier: MemoryThresholdNotifier;
  readonly cluster: ClusterView;
  readonly executor: EvictionExecutor;
  /** Whether the pods can be ranked on each observation; signals whose pods cannot are not acted on. */
  readonly podStats: PodStatsGuard;
  readonly metrics: AgentMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Called with each pass's decision, before it is acted on (the demo's timeline). */
  readonly onDecision?: (result: SynchronizeResult, trigger: SyncTrigger) => void;
  /** Called with a memory notification's shortcut eviction, after the kill (the demo's timeline). */
  readonly onShortcut?: (eviction: Eviction) => void;
  /** Called after every pass with its result, once acted on (node conditions, taint). */
  readonly onSync?: (result: SynchronizeResult, trigger: SyncTrigger) => Promise<void> | void;
  /** Reports the dry-run thresholds' decision of each pass (metrics, log, Events); it acts on nothing. */
  readonly dryRun?: DryRunReporter;
  /** Follows each eviction to its outcome, fed from the passes; without it none are reported. */
  readonly outcomes?: OutcomeReporter;
  /** The thresholds the notifier arms, from the current configuration. */
  readonly thresholds: () => Parameters<MemoryThresholdNotifier['updateThresholds']>[1];
  /** The hard memory kill armed ahead of the notification (kill-path-arming.ts); without it the shortcut answers. */
  readonly killPath?: KillPath;
  /** The node lock file the kill path checks at the signal; without it, none. */
  readonly killPathLock?: () => { readonly path: string; readonly fileId: string } | null;
}

// The kubelet polls for pod cleanup every second.
const POD_CLEANUP_POLL_MS = 1000;
// Without a way to count a locally ended pod's processes, they are taken to be gone this long
// after its grace period.
const LOCAL_KILL_SLACK_MS = 2000;
const DEFAULT_ESCALATION_TIMEOUT_MS = 5000;

/** An evicted pod the loop waits for. */
interface AwaitedPod {
  readonly pod: Pod;
  /** Its processes were ended locally: until they are gone, nothing else is evicted. */
  readonly localKill: boolean;
  /** When its processes are taken to be gone if they cannot be counted. */
  readonly endsByMs: number;
  processesGone: boolean;
  /** When it was evicted, with what grace period, whether for a hard threshold (only those escalate), and for what. */
  readonly evictedAtMs: number;
  readonly graceMs: number;
  readonly hard: boolean;
  readonly signal: string;
  /** The pressure its eviction relieves (a local-storage limit's: disk); a decision on the same one waits for its cleanup. */
  readonly relieves: NodeConditionType | null;
  /** Its volumes were seen gone from the kubelet's root (or cannot be looked for): they never come back. */
  volumesGone: boolean;
  /** Passed over once already: it no longer holds anything up, and is reported once. */
  escalated: boolean;
}

// The node condition a pressure signal reports; a local-storage limit frees the node's disk.
function relievedCondition(signal: string): NodeConditionType | null {
  if (isSignal(signal)) return signalToNodeCondition[signal];
  return signal.endsWith('.limit') ? 'DiskPressure' : null;
}

// The kubelet's "active pods": bound to this node and not terminal.
function activePods(pods: readonly Pod[]): Pod[] {
  return pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
}

export class EvictionLoop {
  private readonly log: Logger;
  private stopped = false;
  private running: Promise<void> | null = null;
  private wakeController = new AbortController();
  private pendingTrigger: SyncTrigger | null = null;
  private pendingNotifiedAtMs: number | null = null;
  /** Pods evicted and not yet gone (by UID), and until when the loop waits for them. */
  private awaiting: { pods: Map<string, AwaitedPod>; untilMs: number } | null = null;
  private lastSyncAtMs: number | null = null;
  /** When the last pass that observed and decided started: a wait never skips the housekeeping cadence. */
  private lastDecidedAtMs: number | null = null;
  private lastObserveOk = false;
  private latestObservation: Observation | null = null;
  /** Cancels the wake-up set for the end of the next grace period, if one is set. */
  private cancelGraceWake: (() => void) | null = null;
  private shortcutRunning = false;
  /** Bumped at every local kill: a pass's observation predates a kill begun since it started. */
  private localKillCount = 0;
  /** A decision was deferred for a local kill: a pass follows as soon as its processes are gone. */
  private recheckAfterLocalKill = false;
  /** A decision was deferred for an evicted pod's cleanup: a pass follows as soon as it is cleaned up. */
  private recheckAfterCleanup = false;
  /** Node status reporting, beside the loop: the one in flight, and the latest result waiting for it. */
  private reporting: Promise<void> | null = null;
  private toReport: { result: SynchronizeResult; trigger: SyncTrigger } | null = null;
  /** What the kill path is armed with, and when (null without a kill path or a memory reader). */
  private readonly arming: KillPathArming | null;
  private cancelRearm: (() => void) | null = null;
  private unsubscribePods: (() => void) | null = null;

  constructor(
    private settings: LoopSettings,
    private readonly deps: LoopDeps,
  ) {
    this.log = deps.logger.child({ component: 'eviction-loop' });
    const { killPath, observer, manager, executor, cluster, podStats } = deps;
    this.arming =
      killPath === undefined || observer.memory === undefined
        ? null
        : new KillPathArming(
            { killPath, manager, reader: observer.memory, executor, cluster, podStats, lockFile: deps.killPathLock ?? (() => null), logger: deps.logger },
            { localKillInProgress: () => this.localKillInProgress(), candidates: () => this.memoryCandidates(deps.clock.nowMs()) },
          );
  }

  updateSettings(settings: LoopSettings): void {
    this.settings = settings;
    this.wake('reload', null);
  }

  /** Takes the kill path's plan back at once (a reload, the Node no longer this host's); the next pass arms it again if it may. */
  disarmKillPath(why: string): void {
    if (this.arming !== null && !this.arming.disarm(why)) this.deps.killPath?.collect();
  }

  /** The node as the latest pass that observed it saw it (a reload judges new thresholds on it); null before one has. */
  get lastObservation(): Observation | null {
    return this.latestObservation;
  }

  /** When the last pass finished (for liveness), and whether its observation worked (readiness). */
  get health(): { lastSyncAtMs: number | null; observeOk: boolean } {
    return { lastSyncAtMs: this.lastSyncAtMs, observeOk: this.lastObserveOk };
  }

  start(): void {
    if (this.running !== null) return;
    this.deps.killPath?.start((report) => this.onKillPathReport(report));
    // A pod added or changed may rank first: the plan is taken back now and made again.
    if (this.arming !== null) this.unsubscribePods = this.deps.cluster.onPodChange(() => {
      this.disarmKillPath('the pods changed');
      this.scheduleRearm();
    });
    this.deps.notifier.start((event) => this.onNotification(event));
    this.pendingTrigger = 'startup';
    this.running = this.run();
  }

  /** Stops after the pass in progress (if any); idempotent. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelGraceWake?.();
    this.cancelRearm?.();
    this.unsubscribePods?.();
    this.wakeController.abort();
    await this.deps.killPath?.stop();
    await this.deps.notifier.stop();
    await this.running;
    await this.reporting;
  }

  /** Asks for a pass now (coalesced with any already pending). */
  wake(trigger: SyncTrigger, notifiedAtMs: number | null): void {
    // A notifier wake outranks a housekeeping one: it carries the latency clock.
    if (this.pendingTrigger === null || trigger === 'notifier') this.pendingTrigger = trigger;
    if (notifiedAtMs !== null && this.pendingNotifiedAtMs === null) this.pendingNotifiedAtMs = notifiedAtMs;
    this.wakeController.abort();
  }

  private onNotification(event: NotifierEvent): void {
    // The kill path judges a crossing it was armed for first; its kill is taken in, and the
    // shortcut then finds it in progress.
    this.deps.killPath?.standAside(event.description);
    // The shortcut next: everything else (the metric, the log line) comes after the kill.
    this.shortcut(event.atMs);
    this.deps.metrics.notifierEvents.inc({ description: event.description });
    this.log.info('eviction manager: threshold crossed', { description: event.description });
    this.wake('notifier', event.atMs);
  }

  // The memory shortcut, synchronously: a hard memory threshold met on fresh node memory ends the
  // kubelet's first-ranked pod now; the full pass woken next decides everything else.
  private shortcut(notifiedAtMs: number): void {
    const { observer, manager, executor, cluster, clock, notifier } = this.deps;
    const reader = observer.memory;
    if (reader === undefined || this.stopped || this.shortcutRunning || executor.dryRun || !cluster.synced) return;
    // Pods that cannot be measured are not ranked for memory here either; the full pass says why.
    if (!this.deps.podStats.memoryRankable) return;
    if (this.localKillInProgress()) return;
    this.shortcutRunning = true;
    try {
      const outcome = memoryShortcut(manager, reader, this.memoryCandidates(clock.nowMs()));
      // The kill path must not fire while the main thread acts; when it already has, its kill stands for this one.
      if (outcome.kind === 'evict' && this.arming !== null && !this.arming.disarm('the memory shortcut acts')) this.deps.killPath?.collect();
      else if (outcome.kind === 'evict') {
        this.actOnHardMemory(outcome.pressure, outcome.eviction, notifiedAtMs, clock.nowMs());
        this.log.info('memory shortcut: evicting', { pod: podKey(outcome.eviction.pod), workingSetsRead: outcome.workingSetsRead });
      }
      // Re-armed from the fresh figures, after the kill.
      notifier.updateThresholds(outcome.node, this.deps.thresholds());
    } catch (err) {
      this.log.error('memory shortcut failed; the full pass follows', { err: errorMessage(err) });
    } finally {
      this.shortcutRunning = false;
    }
  }

  // A hard memory eviction decided between passes (the shortcut's, or the kill path's, whose kill is
  // `ended`): the pod is ended locally (or handed over, already ended), the requests follow beside
  // the loop, and the node reports the pressure the kill answered, as after a pass that evicts.
  private actOnHardMemory(pressure: HardMemoryPressure, eviction: Eviction, notifiedAtMs: number, decidedAtMs: number, ended?: EndedLocally): void {
    const { executor, manager, clock } = this.deps;
    const stuck = this.stuckPods(clock.nowMs());
    // The kill happens inside this call, before its first await.
    const executed = executor.execute({ nowMs: decidedAtMs, reclaim: pressure.reclaim, evictions: [eviction], fallbacks: [] }, notifiedAtMs, ended === undefined ? {} : { endedLocally: ended });
    this.awaitPods([eviction.pod], true, executor.localGracePeriodMs(eviction), { hard: true, signal: pressure.reclaim.threshold.signal });
    this.reportEscalations(clock.nowMs(), stuck);
    manager.commitHardMemoryPressure(pressure, clock.nowMs());
    void executed.then((report) => {
      this.followUp(report, [eviction], pressure.reclaim.threshold, pressure.observations, notifiedAtMs, decidedAtMs);
      for (const attempt of report.attempts) this.log.info('eviction attempt', { ...attempt, shortcut: true });
      if (report.evicted.length === 0) this.awaiting?.pods.delete(eviction.pod.metadata.uid ?? podKey(eviction.pod));
    });
    this.deps.onShortcut?.(eviction);
  }

  // The kill path's reports, on the main thread, after the fact.
  private onKillPathReport(report: KillPathReport): void {
    switch (report.kind) {
      case 'killed': {
        const { plan, threshold, termination } = report;
        this.log.info('kill path: ended the first-ranked pod\'s processes', {
          pod: podKey(plan.victim),
          description: threshold.description,
          usageBytes: report.usageBytes.toString(),
          workingSetBytes: report.workingSetBytes.toString(),
          processes: termination.signalled,
          wokeToSignalMs: report.issuedAtMs - report.wokeAtMs,
        });
        const built = this.arming?.evictionFor(plan, threshold, report.workingSetBytes) ?? null;
        if (built === null) {
          // Cannot happen with a plan this loop armed; the pass that follows decides on fresh figures.
          this.log.error('kill path: no eviction for the reported kill; the next pass decides', { pod: podKey(plan.victim) });
          this.awaitPods([plan.victim], true, plan.gracePeriodMs, { hard: true, signal: threshold.signal });
        } else this.actOnHardMemory(built.pressure, built.eviction, report.wokeAtMs, report.issuedAtMs, { atMs: report.issuedAtMs, termination });
        this.wake('notifier', report.wokeAtMs);
        return;
      }
      case 'declined':
        this.log.info('kill path: a crossing confirmed, but the plan could not be trusted; the main thread decides', { pod: podKey(report.plan.victim), reason: report.reason });
        this.scheduleRearm();
        return;
      case 'approach':
        this.scheduleRearm();
        return;
      case 'failed':
        return;
    }
  }

  // The plan is made again on the next turn of the event loop (changes in a burst coalesce).
  private scheduleRearm(): void {
    if (this.arming === null || this.cancelRearm !== null || this.stopped) return;
    this.cancelRearm = this.deps.clock.after(0, () => {
      this.cancelRearm = null;
      if (!this.stopped) this.arming?.rearm();
    });
  }

  // The pods a memory eviction may choose now: active, and not a pod evicted for a hard threshold
  // that has not freed its memory in time (it is passed over).
  private memoryCandidates(nowMs: number): Pod[] {
    const stuck = this.stuckPods(nowMs);
    return activePods(this.deps.cluster.pods()).filter((p) => !stuck.has(p.metadata.uid ?? podKey(p)));
  }

  private awaitPods(pods: readonly Pod[], localKill: boolean, gracePeriodMs: number, reason: { hard: boolean; signal: string }): void {
    const nowMs = this.deps.clock.nowMs();
    const awaiting = this.awaiting ?? { pods: new Map<string, AwaitedPod>(), untilMs: 0 };
    for (const pod of pods) {
      const uid = pod.metadata.uid ?? podKey(pod);
      // Evicted again for the same kind of threshold (a re-check that found it still there): its
      // escalation clock keeps running from the first time, so repeats never postpone an escalation.
      const earlier = awaiting.pods.get(uid);
      const kept = earlier !== undefined && earlier.hard === reason.hard ? { evictedAtMs: earlier.evictedAtMs, graceMs: earlier.graceMs, escalated: earlier.escalated } : null;
      awaiting.pods.set(uid, {
        pod,
        localKill,
        endsByMs: nowMs + gracePeriodMs + LOCAL_KILL_SLACK_MS,
        processesGone: false,
        volumesGone: false,
        relieves: relievedCondition(reason.signal),
        ...reason,
        ...(kept ?? { evictedAtMs: nowMs, graceMs: gracePeriodMs, escalated: false }),
      });
    }
    if (localKill) this.localKillCount++;
    awaiting.untilMs = nowMs + this.settings.podCleanupTimeoutMs;
    this.awaiting = awaiting;
  }

  // Whether a pod whose processes were ended locally may still hold its memory: its cgroup still
  // has processes (or, where they cannot be counted, its grace period is not long past).
  private localKillInProgress(): boolean {
    if (this.awaiting === null) return false;
    const nowMs = this.deps.clock.nowMs();
    if (nowMs >= this.awaiting.untilMs) return false;
    for (const awaited of this.awaiting.pods.values()) if (!this.pastEscalation(awaited, nowMs) && !this.processesGone(awaited, nowMs)) return true;
    return false;
  }

  private get escalationTimeoutMs(): number {
    return this.settings.escalationTimeoutMs ?? DEFAULT_ESCALATION_TIMEOUT_MS;
  }

  // A pod evicted for a hard threshold holds nothing up once its grace period and the escalation
  // timeout after it are over: until its grace period ends it may rightly still hold its memory.
  private pastEscalation(awaited: AwaitedPod, nowMs: number): boolean {
    return awaited.hard && nowMs - awaited.evictedAtMs >= awaited.graceMs + this.escalationTimeoutMs;
  }

  // The pods evicted for a hard threshold longer ago than the escalation timeout that still hold
  // what they held: processes in their cgroup (ended locally), or still on the API server.
  private stuckPods(nowMs: number): Map<string, AwaitedPod> {
    const stuck = new Map<string, AwaitedPod>();
    if (this.awaiting === null) return stuck;
    const present = new Set(this.deps.cluster.pods().map((p) => p.metadata.uid));
    for (const [uid, awaited] of this.awaiting.pods) {
      if (!this.pastEscalation(awaited, nowMs)) continue;
      if (awaited.localKill ? !this.processesGone(awaited, nowMs) : present.has(uid) || !this.volumesGone(awaited)) stuck.set(uid, awaited);
    }
    return stuck;
  }

  private housekeepingDue(nowMs: number): boolean {
    return this.lastDecidedAtMs === null || nowMs - this.lastDecidedAtMs >= this.settings.housekeepingIntervalMs;
  }

  // An escalation is due: a stuck pod not yet passed over (an eviction-wait pass then decides).
  private escalationDue(nowMs: number): boolean {
    for (const awaited of this.stuckPods(nowMs).values()) if (!awaited.escalated) return true;
    return false;
  }

  // Each stuck pod is reported once, when the decision first passes it over.
  private reportEscalations(nowMs: number, stuck: ReadonlyMap<string, AwaitedPod>): void {
    for (const awaited of stuck.values()) {
      if (awaited.escalated) continue;
      awaited.escalated = true;
      const inApi = this.deps.cluster.pods().some((p) => p.metadata.uid === awaited.pod.metadata.uid);
      this.deps.executor.reportEscalation(awaited.pod, awaited.signal, nowMs - awaited.evictedAtMs, awaited.localKill, !awaited.localKill && !inApi && !awaited.volumesGone);
    }
  }

  // Whether an awaited pod's processes are gone (always, for a pod not ended locally).
  private processesGone(awaited: AwaitedPod, nowMs: number): boolean {
    if (!awaited.localKill || awaited.processesGone) return true;
    const processes = this.deps.observer.memory?.podProcessCount(awaited.pod);
    if (processes === 0 || (processes === undefined && nowMs >= awaited.endsByMs)) {
      awaited.processesGone = true;
      // Its cgroup empty: the pod is gone as far as what it held goes (its outcome's timeline).
      if (processes === 0) this.deps.outcomes?.podGone(awaited.pod.metadata.uid ?? podKey(awaited.pod), nowMs);
    }
    return awaited.processesGone;
  }

  // Whether an awaited pod's volumes are gone from the kubelet's root (the kubelet's podVolumesExist):
  // an emptyDir's files hold their space until the kubelet has removed them, which it may do after
  // the pod has left the API server (a deletion with grace 0) or after it was reported Failed.
  private volumesGone(awaited: AwaitedPod): boolean {
    if (awaited.volumesGone) return true;
    // Where the source cannot tell, the API server's view is all there is.
    if (this.deps.observer.podVolumesPresent?.(awaited.pod) === true) return false;
    awaited.volumesGone = true;
    return true;
  }

  // The pods evicted through the API for a hard threshold (or a local-storage limit) whose cleanup is
  // not yet seen (still on the API server, in whatever phase, or their volumes still on the kubelet's
  // root) and that are not past the escalation timeout: the kubelet waits for their cleanup before it
  // evicts again, so a decision on the pressure they relieve waits too. (A pod ended locally holds the
  // decision until its processes are gone, see localKillInProgress.)
  private awaitingCleanup(nowMs: number, condition: NodeConditionType | null): AwaitedPod[] {
    if (this.awaiting === null || nowMs >= this.awaiting.untilMs) return [];
    const present = new Set(this.deps.cluster.pods().map((p) => p.metadata.uid));
    const held: AwaitedPod[] = [];
    for (const [uid, awaited] of this.awaiting.pods) {
      if (!awaited.hard || awaited.localKill || this.pastEscalation(awaited, nowMs)) continue;
      if (condition !== null && awaited.relieves !== null && awaited.relieves !== condition) continue;
      if (present.has(uid) || !this.volumesGone(awaited)) held.push(awaited);
    }
    return held;
  }

  // The pods a decision on `signal` waits for: those not cleaned up when its figures were read, or
  // still not now, for the same pressure.
  private heldForCleanup(whenObserving: readonly AwaitedPod[], nowMs: number, signal: string): AwaitedPod[] {
    const condition = relievedCondition(signal);
    const now = this.awaitingCleanup(nowMs, condition);
    const earlier = whenObserving.filter((a) => !this.pastEscalation(a, nowMs) && (condition === null || a.relieves === null || a.relieves === condition));
    return [...new Set([...earlier, ...now])];
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      const trigger = this.pendingTrigger ?? 'housekeeping';
      const notifiedAtMs = this.pendingNotifiedAtMs;
      this.pendingTrigger = null;
      this.pendingNotifiedAtMs = null;
      this.wakeController = new AbortController();
      try {
        await this.syncOnce(trigger, notifiedAtMs);
      } catch (err) {
        // A pass must never end the loop: log, and try again at the next tick.
        this.log.error('synchronize failed', { err: errorMessage(err), trigger });
      }
      if (this.stopped) break;
      if (this.pendingTrigger !== null) continue;
      await this.deps.clock.sleep(this.awaiting !== null ? POD_CLEANUP_POLL_MS : this.settings.housekeepingIntervalMs, this.wakeController.signal);
      if (this.pendingTrigger === null && this.awaiting !== null) this.pendingTrigger = 'eviction-wait';
    }
  }

  /** One pass: observe, decide, report, act. */
  async syncOnce(trigger: SyncTrigger, notifiedAtMs: number | null): Promise<SynchronizeResult | null> {
    const { clock, cluster, observer, manager, metrics, notifier, executor, podStats } = this.deps;
    const startedMs = clock.nowMs();
    metrics.syncs.inc({ trigger });
    // Outcomes whose window has ended are reported whether or not this pass observes.
    this.deps.outcomes?.tick(startedMs);
    // Deletions whose processes were already ended are retried on every pass, waiting or not.
    executor.retryPendingDeletes();

    if (this.awaiting !== null) {
      // A pod gone from the API is cleaned up, except one ended here whose processes are not yet
      // gone (the kubelet deletes a pod only after removing its cgroup; a stand-in may not), and one
      // whose volumes are still on the kubelet's root (podVolumesExist; a deletion with grace 0
      // removes the pod before the kubelet has removed them).
      const present = new Set(cluster.pods().map((p) => p.metadata.uid));
      for (const [uid, awaited] of this.awaiting.pods) if (!present.has(uid) && this.processesGone(awaited, startedMs) && this.volumesGone(awaited)) this.awaiting.pods.delete(uid);
      if (this.awaiting.pods.size === 0 || startedMs >= this.awaiting.untilMs) {
        if (this.awaiting.pods.size > 0) this.log.warn('evicted pods still present after the cleanup timeout', { uids: [...this.awaiting.pods.keys()] });
        this.awaiting = null;
      } else if (trigger === 'eviction-wait' && !(this.recheckAfterLocalKill && !this.localKillInProgress()) && !(this.recheckAfterCleanup && this.awaitingCleanup(startedMs, null).length === 0) && !this.escalationDue(startedMs) && !this.housekeepingDue(startedMs)) {
        // Still waiting: nothing to do until the pods are gone, one is stuck, a notification arrives,
        // or the housekeeping interval is up (a hard threshold is then acted on: waiting for a
        // soft-evicted pod never holds one up, even when the crossing's notification came and went).
        return null;
      }
    }
    this.recheckAfterLocalKill = false;
    this.recheckAfterCleanup = false;
    this.lastDecidedAtMs = startedMs;
    // Figures observed while a pod ended here still had processes, or before one was ended, may
    // still count that pod's memory: they can start a decision, never an eviction.
    const killsBeforeObserving = this.localKillCount;
    const killInProgressWhenObserving = this.localKillInProgress();
    // Likewise figures read before an evicted pod was cleaned up: its volumes may still hold the
    // space, or its memory, that they show short.
    const cleanupPendingWhenObserving = this.awaitingCleanup(startedMs, null);

    const pods = activePods(cluster.pods());
    let observation;
    try {
      // Each pod's cgroup figures only when the decision on the node's fresh figures reads them.
      observation = await observer.observe(pods, { podStatsNeeded: (preliminary) => manager.podStatsNeeded({ ...preliminary, pods }) });
      this.lastObserveOk = true;
      this.latestObservation = observation;
    } catch (err) {
      // The kubelet logs and skips the pass when its summary fails; so does the agent.
      this.lastObserveOk = false;
      this.log.error('observing the node failed', { err: errorMessage(err) });
      return null;
    }
    metrics.observeProblems.set(observation.problems.length);
    notifier.updateThresholds(observation.summary, this.deps.thresholds());

    const nowMs = clock.nowMs();
    const decided = manager.synchronize({
      nowMs,
      summary: observation.summary,
      pods,
      dedicatedImageFs: observation.dedicatedImageFs,
      splitContainerFs: observation.splitContainerFs,
      unrankableSignals: podStats.assess(observation, pods, nowMs),
      ...(observation.hugepages === undefined ? {} : { hugepagesSubtractedBytes: observation.hugepages.subtractedBytes }),
    });
    // Pods that were evicted for a hard threshold and have not freed what they hold in time are
    // passed over: the next ranked pod is evicted instead of waiting on them.
    const stuck = this.stuckPods(nowMs);
    const result = this.passOverStuck(decided, stuck);
    this.deps.outcomes?.observed(result.observations, result.thresholdsMetIgnoringGrace.map((m) => m.threshold), nowMs);
    metrics.syncDuration.observe({ trigger }, (clock.nowMs() - startedMs) / 1000);
    this.wakeAtGracePeriodEnd(result.nextGracePeriodEndMs);
    this.record(result);
    for (const { message, ...fields } of result.notes) this.log.info(message, fields);
    this.deps.onDecision?.(result, trigger);

    const first = result.evictions[0];
    if (first !== undefined) {
      // The kill path must not fire while the pass acts; a kill it made meanwhile is taken in, and defers this one.
      if (this.arming !== null && !this.arming.disarm('a pass acts')) this.deps.killPath?.collect();
      if (killInProgressWhenObserving || killsBeforeObserving !== this.localKillCount || this.localKillInProgress()) {
        // A pod ended locally may still hold the memory this pass saw: wait for its processes, as
        // the kubelet waits for pod cleanup, and decide again on figures read after they are gone,
        // rather than end a second pod for the same shortage.
        this.recheckAfterLocalKill = true;
        this.log.info('eviction deferred: a pod ended locally still had processes when the node was observed', { pod: podKey(first.pod) });
      } else if (first.reason.kind === 'threshold' && this.heldForCleanup(cleanupPendingWhenObserving, nowMs, first.reason.signal).length > 0) {
        // An evicted pod not yet cleaned up may still hold what this pass saw short (an emptyDir the
        // kubelet has not removed yet): wait for it, as the kubelet waits for pod cleanup, and decide
        // again on figures read after it is gone, rather than evict a second pod for the same shortage.
        const waitingFor = this.heldForCleanup(cleanupPendingWhenObserving, nowMs, first.reason.signal);
        this.recheckAfterCleanup = true;
        this.log.info('eviction deferred: an evicted pod is not yet cleaned up', { pod: podKey(first.pod), signal: first.reason.signal, waitingFor: waitingFor.map((a) => podKey(a.pod)).join(', ') });
      } else {
        // While evicted pods are terminating, only a hard (or local-storage) eviction goes ahead:
        // an escalation must not wait behind a slow graceful shutdown.
        // A stuck pod that is no candidate any more (reported Failed, or gone from the API with its
        // volumes left) is passed over all the same, for the pressure its eviction was to relieve.
        const condition = first.reason.kind === 'threshold' ? relievedCondition(first.reason.signal) : null;
        const passedOver = result !== decided ? stuck : new Map([...stuck].filter(([, a]) => !a.localKill && condition !== null && a.relieves === condition));
        this.reportEscalations(nowMs, passedOver);
        const report = await executor.execute(result, notifiedAtMs, { hardOnly: this.awaiting !== null });
        for (const attempt of report.attempts) this.log.info('eviction attempt', { ...attempt });
        this.followUp(report, [...result.evictions, ...result.fallbacks], result.reclaim?.threshold ?? null, result.observations, notifiedAtMs, nowMs);
        for (const pod of report.evicted) {
          const eviction = result.evictions.find((e) => e.pod.metadata.uid === pod.metadata.uid) ?? result.fallbacks.find((e) => e.pod.metadata.uid === pod.metadata.uid);
          const reason = eviction?.reason;
          const hard = reason === undefined || reason.kind === 'local-storage' || reason.hard;
          const signal = reason === undefined ? '' : reason.kind === 'threshold' ? reason.signal : reason.limit;
          const localKill = eviction !== undefined && executor.endsLocally(eviction);
          // Uncounted processes of a pod ended locally are taken to be gone after the local grace period.
          this.awaitPods([pod], localKill, eviction === undefined ? 0 : localKill ? executor.localGracePeriodMs(eviction) : eviction.gracePeriodSeconds * 1000, { hard, signal });
        }
      }
    }
    this.report(result, trigger);
    this.lastSyncAtMs = clock.nowMs();
    // Ranked again on the pass's node, for the next crossing.
    if (!this.stopped) this.arming?.rearm();
    return result;
  }

  // Each pod evicted for a threshold is followed to its outcome (local-storage limits have no signal to follow).
  private followUp(report: Awaited<ReturnType<EvictionExecutor['execute']>>, candidates: readonly Eviction[], threshold: Threshold | null, observations: SynchronizeResult['observations'], notifiedAtMs: number | null, decidedAtMs: number): void {
    const outcomes = this.deps.outcomes;
    if (outcomes === undefined || threshold === null) return;
    for (const pod of report.evicted) {
      const uid = pod.metadata.uid ?? podKey(pod);
      const eviction = candidates.find((e) => (e.pod.metadata.uid ?? podKey(e.pod)) === uid);
      const acted = report.acted.get(uid);
      // The threshold acted on; a local-storage limit has no signal to follow.
      if (eviction === undefined || acted === undefined || eviction.reason.kind !== 'threshold' || eviction.reason.signal !== threshold.signal) continue;
      outcomes.evicted({ pod, threshold, action: acted.action, notifiedAtMs, decidedAtMs, actedAtMs: acted.atMs, observations });
    }
  }

  // The decision without the stuck pods among its candidates: the first of the others is evicted,
  // the rest are its fallbacks. Local-storage evictions name every violator and are left as they are.
  private passOverStuck(result: SynchronizeResult, stuck: ReadonlyMap<string, AwaitedPod>): SynchronizeResult {
    const first = result.evictions[0];
    if (stuck.size === 0 || first === undefined || first.reason.kind !== 'threshold') return result;
    const candidates = [...result.evictions, ...result.fallbacks];
    const others = candidates.filter((e) => !stuck.has(e.pod.metadata.uid ?? podKey(e.pod)));
    if (others.length === candidates.length) return result;
    return { ...result, evictions: others.slice(0, 1), fallbacks: others.slice(1) };
  }

  // Beyond the kubelet, which acts on an elapsed grace period at its next periodic pass: a pass is
  // woken the moment the next one runs out. Each pass sets the wake-up afresh from its result.
  private wakeAtGracePeriodEnd(endMs: number | null): void {
    this.cancelGraceWake?.();
    this.cancelGraceWake = null;
    if (endMs === null || this.stopped) return;
    this.cancelGraceWake = this.deps.clock.after(endMs - this.deps.clock.nowMs(), () => {
      this.cancelGraceWake = null;
      this.wake('grace-period', null);
    });
  }

  // Node status goes out beside the loop, one request at a time, the latest result first: a slow
  // API server delays the conditions, never the next pass.
  private report(result: SynchronizeResult, trigger: SyncTrigger): void {
    const onSync = this.deps.onSync;
    if (onSync === undefined) return;
    this.toReport = { result, trigger };
    this.reporting ??= (async () => {
      while (this.toReport !== null) {
        const next = this.toReport;
        this.toReport = null;
        try {
          await onSync(next.result, next.trigger);
        } catch (err) {
          this.log.error('reporting the node status failed', { err: errorMessage(err) });
        }
      }
      this.reporting = null;
    })();
  }

  private record(result: SynchronizeResult): void {
    const { metrics } = this.deps;
    for (const [signal, observation] of result.observations) {
      metrics.signalAvailable.set({ signal }, Number(observation.available));
      metrics.signalCapacity.set({ signal }, Number(observation.capacity));
    }
    metrics.thresholdMet.reset();
    for (const met of result.thresholdsMet) metrics.thresholdMet.set({ signal: met.threshold.signal, hard: String(isHardEvictionThreshold(met.threshold)), dry_run: 'false' }, 1);
    this.deps.dryRun?.report(result.dryRun, result.nowMs);
    for (const condition of NODE_CONDITIONS) metrics.nodeCondition.set({ condition }, result.nodeConditions.includes(condition) ? 1 : 0);
  }
}
