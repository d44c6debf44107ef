// Carries out the engine's decisions on the cluster and on the node, safely: re-checks every pod
// right before acting (still here, same UID, still bound to this node, not critical), picks the
// action by threshold kind (Eviction API for soft thresholds so PodDisruptionBudgets hold;
// DELETE plus local termination for hard memory pressure), moves on to the next candidate when
// a PodDisruptionBudget refuses, records the kubelet's Events, and keeps retrying a deletion whose
// processes it already ended, so no decision is lost while the API server is unreachable.
//
// Nothing on the way to a local kill waits for the API server: the pod is re-checked against the
// watch's latest state (memory), its processes are ended, and only then do the requests go out, in
// the background (the DisruptionTarget condition, the DELETE, both conditional on the pod's UID),
// with the Events beside them rather than before them. On a real node each request took 20-60 ms;
// the node Event the kill used to wait for, 22-36 ms. A deletion that failed is retried with
// jittered back-off, and not at all once the watch shows it landed (a request the agent gave up on
// may still have reached the API server): every node of a fleet pays for what its agent repeats.

import { backoffDelayMs, type BackoffPolicy } from '../api/backoff.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type Pod } from '../api/pod.js';
import { isMemorySignal } from '../api/signals.js';
import { errorMessage } from '../errors.js';
import { isCriticalPod } from '../eviction/critical.js';
import type { Eviction, SynchronizeResult } from '../eviction/types.js';
import { BackgroundTasks } from './background-tasks.js';
import type { EvictionStormGuard } from './eviction-storms.js';
import type { AgentMetrics } from './metrics.js';
import type { ClusterView, EventRecorder, EvictionOutcome, LocalTermination, LocalTerminator, PodActions } from './ports.js';

export interface ExecutorSettings {
  readonly nodeName: string;
  readonly dryRun: boolean;
  /** How hard-threshold (and local-storage) evictions are requested. */
  readonly hardEviction: 'delete' | 'eviction-api';
  /** How soft-threshold evictions are requested. */
  readonly softEviction: 'eviction-api' | 'delete';
  /** End a pod's processes locally on hard memory pressure. */
  readonly localTermination: boolean;
  /** Grace before SIGKILL for local termination; null uses the engine's grace period. */
  readonly localTerminationGracePeriodMs: number | null;
  readonly setDisruptionTargetCondition: boolean;
}

export interface ExecutorDeps {
  readonly cluster: ClusterView;
  readonly actions: PodActions;
  readonly events: EventRecorder;
  readonly terminator: LocalTerminator;
  readonly metrics: AgentMetrics;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Null while the agent may act; else why not (its Node is not this host): nothing is then done. */
  readonly refusal?: () => string | null;
  /** The eviction storm guard: asked before a soft eviction, told of every eviction that goes ahead. */
  readonly stormGuard?: EvictionStormGuard;
  /** Spreads the retries of failed deletions (a fleet's agents that failed together retry apart). */
  readonly random?: () => number;
}

/** What one execution did: the pods now terminating, to wait for before the next eviction. */
export interface ExecutionReport {
  readonly evicted: readonly Pod[];
  /** For each pod in `evicted` (by UID): how, and when its processes were signalled or its request sent. */
  readonly acted: ReadonlyMap<string, { readonly action: Action | 'local-termination'; readonly atMs: number }>;
  readonly attempts: readonly { readonly pod: string; readonly action: string; readonly result: string; readonly message?: string }[];
}

type Action = 'eviction-api' | 'delete';

type Acted = Map<string, { readonly action: Action | 'local-termination'; readonly atMs: number }>;

/** A pod whose processes the kill path already signalled (from `atMs`), and what it reported. */
export interface EndedLocally {
  readonly atMs: number;
  readonly termination: LocalTermination;
}

export interface ExecuteOptions {
  /** Only a hard (or local-storage) eviction goes ahead: evicted pods are still terminating. */
  readonly hardOnly?: boolean;
  /** The first eviction's pod was already ended locally by the kill path: the rest (requests, Events) follows. */
  readonly endedLocally?: EndedLocally;
}

/** What the executor acts on: a synchronize pass's decision, or the memory shortcut's. */
export type Decision = Pick<SynchronizeResult, 'nowMs' | 'reclaim' | 'evictions' | 'fallbacks'>;

interface Attempt {
  readonly pod: string;
  readonly action: string;
  readonly result: string;
  readonly message?: string;
}

type Note = (act: string, res: string, message?: string) => Attempt;

// How long a deletion whose processes were already ended is retried, and how often: after 2 s,
// then twice as long each time up to a minute, each delay shortened at random by up to half.
const DELETE_RETRY_WINDOW_MS = 10 * 60_000;
const DELETE_RETRY_BACKOFF: BackoffPolicy = Object.freeze({ initialDelayMs: 2_000, maxDelayMs: 60_000, factor: 2, jitterRatio: 0.5 });
// The node Event for a threshold is recorded at most this often (the kubelet relies on the
// client-side event correlator to fold its repeats; a plain rate limit does the same here).
const NODE_EVENT_INTERVAL_MS = 60_000;
// Requests in flight beside the loop at most: each eviction starts a few, so this is dozens of
// evictions' worth while the API server is slow; past it, Events are dropped first (see below).
const MAX_BACKGROUND_REQUESTS = 64;

interface PendingDelete {
  readonly eviction: Eviction;
  readonly firstAtMs: number;
  nextAtMs: number;
  attempts: number;
  /** A retry is in flight. */
  retrying: boolean;
}

/** Why a chosen pod is not acted on after all; `critical` moves on to the next candidate. */
type SkipReason = 'gone' | 'replaced' | 'other-node' | 'critical' | 'terminating';

interface Skip {
  readonly skip: SkipReason;
  readonly message: string;
}

/** The delay before retrying a deletion that failed `attempts` times: doubling from 2 s to a minute, each shortened at random by up to half. */
export function deleteRetryDelayMs(attempts: number, random: () => number): number {
  return backoffDelayMs(attempts - 1, DELETE_RETRY_BACKOFF, random);
}

function signalLabel(eviction: Eviction): string {
  return eviction.reason.kind === 'threshold' ? eviction.reason.signal : eviction.reason.limit;
}

function isHard(eviction: Eviction): boolean {
  return eviction.reason.kind === 'local-storage' || eviction.reason.hard;
}

export class EvictionExecutor {
  private readonly log: Logger;
  private readonly pendingDeletes = new Map<string, PendingDelete>();
  private readonly nodeEventAtMs = new Map<string, number>();
  /** The API requests that follow local kills: one sequence per pod, beside the loop. */
  private readonly requests: BackgroundTasks;
  /** Events: best effort, never awaited by an eviction. */
  private readonly events: BackgroundTasks;
  /** Pods whose processes were ended and whose requests are still in flight, by UID. */
  private readonly inFlight = new Set<string>();

  constructor(
    private settings: ExecutorSettings,
    private readonly deps: ExecutorDeps,
  ) {
    this.log = deps.logger.child({ component: 'eviction-executor' });
    this.requests = new BackgroundTasks('eviction-requests', MAX_BACKGROUND_REQUESTS, this.log);
    this.events = new BackgroundTasks('events', MAX_BACKGROUND_REQUESTS, this.log);
  }

  updateSettings(settings: ExecutorSettings): void {
    this.settings = settings;
  }

  /** Deletions still being retried (their processes were ended locally). */
  get pendingDeleteCount(): number {
    return this.pendingDeletes.size;
  }

  get dryRun(): boolean {
    return this.settings.dryRun;
  }

  /** Whether this eviction ends the pod's processes locally (hard memory pressure). */
  endsLocally(eviction: Eviction): boolean {
    return isHard(eviction) && this.settings.localTermination && eviction.reason.kind === 'threshold' && isMemorySignal(eviction.reason.signal);
  }

  /**
   * A pod evicted for a hard threshold that has not freed what it holds within the escalation
   * timeout: the next decision passes it over. Said once per pod: log, Event, metric.
   */
  reportEscalation(pod: Pod, signal: string, elapsedMs: number, localKill: boolean, volumesLeft = false): void {
    const kind = localKill ? 'local' : 'api';
    this.deps.metrics.escalations.inc({ signal, kind });
    const held = localKill ? 'its processes are still in its cgroup' : volumesLeft ? 'its volumes are still on the kubelet\'s root directory' : 'it is still on the API server';
    const message = `Evicted ${Math.round(elapsedMs)} ms ago for ${signal} and ${held}: the next ranked pod is evicted instead of waiting for it`;
    this.log.warn('escalating past a pod that has not freed its resources', { pod: podKey(pod), signal, elapsedMs: Math.round(elapsedMs), kind });
    if (!this.settings.dryRun) this.recordPodEvent(pod, { type: 'Warning', reason: 'EvictionEscalated', message });
  }

  /** Null while the agent may act now; else why not (its Node is not this host, another agent holds the node lock). */
  refusal(): string | null {
    return this.deps.refusal?.() ?? null;
  }

  /**
   * Why the re-check right before acting would refuse to end `pod`'s processes now (gone, replaced,
   * another node's, critical), or null: the check the kill path's victim passes when armed.
   */
  refusesLocalKill(pod: Pod): string | null {
    const checked = this.recheck(pod, this.inWatch(pod));
    return 'skip' in checked && checked.skip !== 'terminating' ? checked.message : null;
  }

  /** The grace period a local kill of this eviction gives the pod's processes before SIGKILL. */
  localGracePeriodMs(eviction: Eviction): number {
    return this.settings.localTerminationGracePeriodMs ?? eviction.gracePeriodSeconds * 1000;
  }

  /** Resolves once every request and Event started so far has been answered (stop, tests). */
  async settled(): Promise<void> {
    while (this.requests.size > 0 || this.events.size > 0) await Promise.all([this.requests.settled(), this.events.settled()]);
  }

  /**
   * Acts on one synchronize result. `notifiedAtMs` is when the kernel notification that led to
   * this pass arrived (null for a housekeeping pass), for the reaction-latency metric.
   */
  async execute(result: Decision, notifiedAtMs: number | null, options: ExecuteOptions = {}): Promise<ExecutionReport> {
    const attempts: { pod: string; action: string; result: string; message?: string }[] = [];
    const evicted: Pod[] = [];
    // How and when each pod was acted on, by UID (the outcome timeline).
    const acted: Acted = new Map();
    try {
      const report = await this.executeEvictions(result, notifiedAtMs, options, attempts, evicted, acted);
      return { ...report, acted: new Map([...acted].filter(([uid]) => evicted.some((p) => (p.metadata.uid ?? podKey(p)) === uid))) };
    } finally {
      // After the evictions, so its request never delays a kill.
      if (result.reclaim !== null) this.recordNodeEvent(result);
    }
  }

  private async executeEvictions(
    result: Decision,
    notifiedAtMs: number | null,
    options: ExecuteOptions,
    attempts: { pod: string; action: string; result: string; message?: string }[],
    evicted: Pod[],
    acted: Acted,
  ): Promise<Omit<ExecutionReport, 'acted'>> {
    const first = result.evictions[0];
    if (first === undefined) return { evicted, attempts };
    const refused = this.deps.refusal?.() ?? null;
    if (refused !== null) {
      attempts.push({ pod: podKey(first.pod), action: 'none', result: 'refused', message: refused });
      this.deps.metrics.evictions.inc({ signal: signalLabel(first), action: 'none', result: 'refused' });
      return { evicted, attempts };
    }
    if (first.reason.kind === 'local-storage') {
      // Every local-storage violator goes, each on its own.
      for (const eviction of result.evictions) {
        const outcome = await this.evictOne(eviction, notifiedAtMs, attempts, acted);
        if (outcome === 'accepted') evicted.push(eviction.pod);
        if (outcome === 'accepted' || outcome === 'dry-run') this.deps.stormGuard?.evicted(eviction, this.settings.dryRun);
      }
      return { evicted, attempts };
    }
    if (options.hardOnly === true && !isHard(first)) {
      attempts.push({ pod: podKey(first.pod), action: 'none', result: 'deferred', message: 'waiting for an evicted pod to terminate' });
      return { evicted, attempts };
    }
    // The per-node budget holds back a soft eviction (any candidate alike); a hard one, never.
    const held = this.deps.stormGuard?.admit(first, this.settings.dryRun) ?? null;
    if (held !== null) {
      attempts.push({ pod: podKey(first.pod), action: 'none', result: 'held', message: held.message });
      this.deps.metrics.evictions.inc({ signal: signalLabel(first), action: 'none', result: 'held' });
      return { evicted, attempts };
    }
    // Threshold pressure: one pod; a PodDisruptionBudget refusal moves on to the next in rank order.
    for (const eviction of [first, ...result.fallbacks]) {
      const outcome = await this.evictOne(eviction, notifiedAtMs, attempts, acted, eviction === first ? options.endedLocally : undefined);
      if (outcome === 'accepted') evicted.push(eviction.pod);
      if (outcome === 'accepted' || outcome === 'dry-run') this.deps.stormGuard?.evicted(eviction, this.settings.dryRun);
      // In a dry run nothing is waited for: the decision is reported again at the next pass.
      if (outcome === 'accepted' || outcome === 'dry-run') break;
      if (outcome !== 'blocked' && outcome !== 'skipped') break;
    }
    return { evicted, attempts };
  }

  /** Retries (in the background) deletions of pods whose processes were already ended; called on every pass. */
  retryPendingDeletes(): void {
    if ((this.deps.refusal?.() ?? null) !== null) return;
    const nowMs = this.deps.clock.nowMs();
    for (const [uid, pending] of [...this.pendingDeletes]) {
      if (pending.retrying || nowMs < pending.nextAtMs) continue;
      if (nowMs - pending.firstAtMs > DELETE_RETRY_WINDOW_MS) {
        this.pendingDeletes.delete(uid);
        this.log.error('giving up deleting a pod whose processes were ended', { pod: podKey(pending.eviction.pod), attempts: pending.attempts });
        continue;
      }
      const landed = this.deletionLanded(pending.eviction.pod);
      if (landed !== null) {
        this.pendingDeletes.delete(uid);
        this.deps.metrics.evictions.inc({ signal: signalLabel(pending.eviction), action: 'delete', result: 'gone' });
        this.log.info('a failed deletion landed after all: not retried', { pod: podKey(pending.eviction.pod), seen: landed, attempts: pending.attempts });
        continue;
      }
      // In the background: a pass never waits for an API server that may be down.
      pending.retrying = true;
      this.requests.run(`retry delete ${podKey(pending.eviction.pod)}`, async () => {
        try {
          const outcome = await this.requestDeletion({ ...pending.eviction, pod: this.watched(pending.eviction.pod) }, 'delete');
          pending.attempts++;
          if (outcome.result === 'failed') {
            pending.nextAtMs = nowMs + this.retryDelayMs(pending.attempts);
          } else {
            this.pendingDeletes.delete(uid);
            this.deps.metrics.evictions.inc({ signal: signalLabel(pending.eviction), action: 'delete', result: outcome.result === 'accepted' ? 'accepted' : 'gone' });
            if (outcome.result === 'accepted') this.log.warn('evicted pod', { pod: podKey(pending.eviction.pod), signal: signalLabel(pending.eviction), action: 'delete', gracePeriodSeconds: pending.eviction.gracePeriodSeconds, attempts: pending.attempts });
          }
        } finally {
          pending.retrying = false;
        }
      });
    }
  }

  /**
   * Whether the watch shows the pod deleted (gone, or terminating): a DELETE the client gave up on
   * (a timeout, a connection cut) may still have reached the API server, and sending it again would
   * only cost the API server a request. Null while it shows the pod as it was, or has not synced.
   */
  private deletionLanded(pod: Pod): 'gone' | 'terminating' | null {
    if (!this.deps.cluster.synced) return null;
    const current = this.inWatch(pod);
    if (current === undefined) return 'gone';
    return current.metadata.deletionTimestamp === undefined || current.metadata.deletionTimestamp === null ? null : 'terminating';
  }

  // The pod as the watch holds it now (its conditions included), or as decided on when the watch no longer has it.
  private watched(pod: Pod): Pod {
    return this.inWatch(pod) ?? pod;
  }

  private inWatch(pod: Pod): Pod | undefined {
    return this.deps.cluster.pods().find((p) => p.metadata.uid === pod.metadata.uid);
  }

  private retryDelayMs(attempts: number): number {
    return deleteRetryDelayMs(attempts, this.deps.random ?? Math.random);
  }

  // Fire and forget: the kubelet's node Event, at most once a minute per signal.
  private recordNodeEvent(result: Decision): void {
    if (this.settings.dryRun || result.reclaim === null || (this.deps.refusal?.() ?? null) !== null) return;
    const signal = result.reclaim.threshold.signal;
    const lastMs = this.nodeEventAtMs.get(signal);
    if (lastMs !== undefined && result.nowMs - lastMs < NODE_EVENT_INTERVAL_MS) return;
    this.nodeEventAtMs.set(signal, result.nowMs);
    const resource = result.reclaim.resource;
    this.events.run('EvictionThresholdMet', () => this.deps.events.nodeEvent({ type: 'Warning', reason: 'EvictionThresholdMet', message: `Attempting to reclaim ${resource}` }));
  }

  // Fire and forget: an Event about a pod.
  private recordPodEvent(pod: Pod, event: Parameters<EventRecorder['podEvent']>[1]): void {
    this.events.run(event.reason, () => this.deps.events.podEvent(pod, event));
  }

  /**
   * The pod as the watch sees it now, if it is still a pod this agent may evict: same UID, bound
   * to this node, not critical, not already terminating. Otherwise why it is not, as a code and a
   * sentence.
   */
  private recheck(pod: Pod, current: Pod | null | undefined): { pod: Pod } | Skip {
    if (current === null || current === undefined) return { skip: 'gone', message: 'the pod no longer exists' };
    if (current.metadata.uid !== pod.metadata.uid) return { skip: 'replaced', message: 'the pod was replaced by another with the same name' };
    if (current.spec.nodeName !== this.settings.nodeName) return { skip: 'other-node', message: `the pod is bound to ${current.spec.nodeName ?? 'no node'}, not ${this.settings.nodeName}` };
    if (isCriticalPod(current)) return { skip: 'critical', message: 'cannot evict a critical pod' };
    if (current.metadata.deletionTimestamp !== undefined && current.metadata.deletionTimestamp !== null) return { skip: 'terminating', message: 'the pod is already terminating' };
    return { pod: current };
  }

  private async evictOne(
    eviction: Eviction,
    notifiedAtMs: number | null,
    attempts: { pod: string; action: string; result: string; message?: string }[],
    acted: Acted,
    ended?: EndedLocally,
  ): Promise<'accepted' | 'blocked' | 'gone' | 'failed' | 'skipped' | 'dry-run'> {
    const key = podKey(eviction.pod);
    const signal = signalLabel(eviction);
    const hard = isHard(eviction);
    const action: Action = hard ? this.settings.hardEviction : this.settings.softEviction;
    const note = this.noter(key, signal, attempts);

    // 1. Re-check against the watch's latest state: never act on a pod of another node, a
    //    replaced pod, or a critical pod, whatever the decision was based on.
    const cached = this.recheck(eviction.pod, this.deps.cluster.pods().find((p) => p.metadata.uid === eviction.pod.metadata.uid));
    if ('skip' in cached && cached.skip !== 'terminating') return this.passOver(key, action, cached, note);
    const localKill = this.endsLocally(eviction);

    if (this.settings.dryRun) {
      note(localKill ? `${action}+local-termination` : action, 'dry-run');
      this.log.info('would evict (dry run)', { pod: key, signal, gracePeriodSeconds: eviction.gracePeriodSeconds, message: eviction.message });
      return 'dry-run';
    }

    // 2. Hard memory pressure: end the pod's processes now, from its cgroup, so memory is freed
    //    in milliseconds whatever the API server and the kubelet are doing; the requests follow in
    //    the background, and the pod counts as evicted from here.
    if (localKill) {
      const uid = eviction.pod.metadata.uid ?? key;
      if (this.inFlight.has(uid)) {
        // Its processes were ended by an earlier pass whose requests are still in flight.
        note('local-termination', 'skipped', 'already ended; its requests are in flight');
        return 'accepted';
      }
      if (this.pendingDeletes.has(uid)) {
        // Ended by an earlier pass whose deletion failed: that deletion is retried, never sent (nor its Event recorded) twice.
        note('local-termination', 'skipped', 'already ended; its deletion is being retried');
        return 'accepted';
      }
      this.endLocally(eviction, notifiedAtMs, note, ended);
      acted.set(uid, { action: 'local-termination', atMs: ended?.atMs ?? this.deps.clock.nowMs() });
      if ('skip' in cached) {
        // Already terminating: the API has nothing more to do; local termination sped it up.
        note(action, 'skipped', cached.message);
        return 'accepted';
      }
      this.inFlight.add(uid);
      const started = this.requests.run(`${action} ${key}`, async () => {
        try {
          await this.requestAfterLocalKill(eviction, action, note);
        } finally {
          this.inFlight.delete(uid);
        }
      });
      if (!started) {
        // Too many requests in flight: the deletion joins the retried ones.
        this.inFlight.delete(uid);
        this.failed(eviction, action, true, 0, 'too many API requests in flight', note);
      }
      return 'accepted';
    }
    // A pod already terminating with a longer grace period (a soft eviction, a user's deletion) is
    // deleted again with the hard one: the API server shortens its grace period, so a hard eviction
    // never waits behind a long graceful shutdown (the kubelet's stuck case).
    const shorten = 'skip' in cached && hard && action === 'delete' && this.terminatingLonger(eviction);
    if ('skip' in cached && !shorten) {
      note(action, 'skipped', cached.message);
      return 'gone';
    }

    // 3. API only: re-check against the API server itself, right before the request.
    let fresh: Pod | null;
    try {
      fresh = await this.deps.actions.getPod(eviction.pod.metadata.namespace ?? '', eviction.pod.metadata.name ?? '');
    } catch (err) {
      return this.failed(eviction, action, false, 0, errorMessage(err), note);
    }
    const rechecked = this.recheck(eviction.pod, fresh);
    if ('skip' in rechecked && !(shorten && rechecked.skip === 'terminating' && fresh !== null)) return this.passOver(key, action, rechecked, note);
    const checked = 'skip' in rechecked ? { pod: fresh as Pod } : rechecked;
    if (shorten) this.log.warn('shortening the grace period of a terminating pod for a hard eviction', { pod: key, signal, fromSeconds: checked.pod.metadata.deletionGracePeriodSeconds ?? null, toSeconds: eviction.gracePeriodSeconds });

    // 4. The request. The kubelet records the Evicted event before killing; it goes out beside the
    //    DELETE here. A soft eviction may still be refused by a budget, so its event waits for the answer.
    const evictedEvent = { type: 'Warning' as const, reason: 'Evicted', message: eviction.message, annotations: eviction.annotations };
    if (action === 'delete') this.recordPodEvent(checked.pod, evictedEvent);
    this.observeLatency(notifiedAtMs, action);
    acted.set(eviction.pod.metadata.uid ?? key, { action, atMs: this.deps.clock.nowMs() });
    const outcome = await this.requestDeletion({ ...eviction, pod: checked.pod }, action);
    note(action, outcome.result, 'message' in outcome ? outcome.message : undefined);
    switch (outcome.result) {
      case 'accepted':
        if (action === 'eviction-api') this.recordPodEvent(checked.pod, evictedEvent);
        this.log.warn('evicted pod', { pod: key, signal, action, gracePeriodSeconds: eviction.gracePeriodSeconds });
        return 'accepted';
      case 'blocked':
        // The budget stands: the pod stays, so its containers are no longer kept ended.
        if (localKill) this.deps.terminator.release?.(checked.pod.metadata.uid ?? '');
        this.log.warn('eviction refused by a PodDisruptionBudget; trying the next candidate', { pod: key, message: outcome.message });
        this.recordPodEvent(checked.pod, { type: 'Warning', reason: 'EvictionBlocked', message: `Eviction for ${signal} refused: ${outcome.message}` });
        return 'blocked';
      case 'gone':
        return 'gone';
      case 'failed':
        return this.failed({ ...eviction, pod: checked.pod }, action, false, outcome.status, outcome.message);
    }
  }

  // Whether the pod, as the watch sees it, is terminating with a grace period longer than this eviction's.
  private terminatingLonger(eviction: Eviction): boolean {
    const current = this.deps.cluster.pods().find((p) => p.metadata.uid === eviction.pod.metadata.uid);
    const grace = current?.metadata.deletionGracePeriodSeconds;
    return typeof grace !== 'number' || grace > eviction.gracePeriodSeconds;
  }

  // Records an attempt (in the report while the pass lasts, in the metrics always).
  private noter(key: string, signal: string, attempts: { pod: string; action: string; result: string; message?: string }[]): Note {
    return (act, res, message) => {
      const attempt = { pod: key, action: act, result: res, ...(message === undefined ? {} : { message }) };
      attempts.push(attempt);
      this.deps.metrics.evictions.inc({ signal, action: act, result: res });
      return attempt;
    };
  }

  // The local kill: SIGTERM to the pod's processes (SIGKILL after the grace), synchronously up to
  // the signals; what it reports is noted when the terminator answers. A pod the kill path already
  // signalled is handed to the terminator to be kept ended.
  private endLocally(eviction: Eviction, notifiedAtMs: number | null, note: Note, already?: EndedLocally): void {
    const key = podKey(eviction.pod);
    const graceMs = this.localGracePeriodMs(eviction);
    if (already !== undefined) this.deps.terminator.adopt?.(eviction.pod, graceMs);
    const ended = already === undefined ? this.deps.terminator.terminate(eviction.pod, graceMs) : Promise.resolve(already.termination);
    this.observeLatency(notifiedAtMs, 'local-termination', already?.atMs);
    const signal = signalLabel(eviction);
    void ended.then(({ signalled, refused }) => {
      note('local-termination', refused !== undefined ? 'refused' : signalled > 0 ? 'accepted' : 'gone', refused);
      this.log.warn('ended pod processes locally', { pod: key, signal, processes: signalled, gracePeriodMs: graceMs, ...(refused === undefined ? {} : { refused }) });
      if (refused !== undefined) this.recordPodEvent(eviction.pod, { type: 'Warning', reason: 'LocalTerminationRefused', message: `Local termination refused: ${refused}`.slice(0, 1024) });
    });
  }

  // After a local kill, in the background: the Evicted Event beside the requests, the condition,
  // the DELETE. No fresh read first: the pod was re-checked against the watch right before its
  // processes were ended, and both requests carry its UID, so a pod replaced since is never touched
  // (the API server answers 409); its node and priority cannot change under the same UID. A read
  // would cost the API server one more request per eviction, N times over in a fleet-wide storm.
  // A failure joins the retried deletions: the processes are gone, so the pod must go too, or the
  // kubelet restarts its containers.
  private async requestAfterLocalKill(eviction: Eviction, action: Action, note: Note): Promise<void> {
    const key = podKey(eviction.pod);
    const signal = signalLabel(eviction);
    if (action === 'delete') this.recordPodEvent(eviction.pod, { type: 'Warning', reason: 'Evicted', message: eviction.message, annotations: eviction.annotations });
    const pod = this.watched(eviction.pod);
    const outcome = await this.requestDeletion({ ...eviction, pod }, action);
    this.logAttempt(note(action, outcome.result, 'message' in outcome ? outcome.message : undefined));
    switch (outcome.result) {
      case 'accepted':
        if (action === 'eviction-api') this.recordPodEvent(pod, { type: 'Warning', reason: 'Evicted', message: eviction.message, annotations: eviction.annotations });
        this.log.warn('evicted pod', { pod: key, signal, action, gracePeriodSeconds: eviction.gracePeriodSeconds });
        return;
      case 'blocked':
        // A hard eviction through the Eviction API after a local kill: the processes are gone, the
        // budget keeps the pod object, and the kubelet may restart its containers.
        this.log.warn('eviction refused by a PodDisruptionBudget after the pod\'s processes were ended', { pod: key, message: outcome.message });
        this.recordPodEvent(pod, { type: 'Warning', reason: 'EvictionBlocked', message: `Eviction for ${signal} refused: ${outcome.message}` });
        return;
      case 'gone':
        return;
      case 'failed':
        this.failed({ ...eviction, pod }, action, true, outcome.status, outcome.message);
    }
  }

  // The attempts of background requests are logged as they are answered (the pass has moved on).
  private logAttempt(attempt: Attempt): void {
    this.log.info('eviction attempt', { ...attempt });
  }

  // A pod the re-check refused: reported, and a critical one passed over for the next candidate.
  private passOver(key: string, action: Action, skip: Skip, note: Note): 'skipped' | 'gone' {
    note(action, 'skipped', skip.message);
    this.log.info('not evicting', { pod: key, reason: skip.message, code: skip.skip });
    return skip.skip === 'critical' ? 'skipped' : 'gone';
  }

  // An API failure. When the pod's processes were already ended locally, the deletion is
  // retried until it lands: otherwise the kubelet would restart the containers.
  private failed(eviction: Eviction, action: Action, localKill: boolean, status: number, message: string, note?: Note): 'accepted' | 'failed' {
    const key = podKey(eviction.pod);
    note?.(action, 'failed', message);
    this.deps.metrics.apiErrors.inc({ operation: action, status: String(status) });
    this.log.error('eviction request failed; retrying', { pod: key, action, status, message });
    if (!localKill) return 'failed';
    const nowMs = this.deps.clock.nowMs();
    this.pendingDeletes.set(eviction.pod.metadata.uid ?? key, { eviction, firstAtMs: nowMs, nextAtMs: nowMs + this.retryDelayMs(1), attempts: 1, retrying: false });
    return 'accepted';
  }

  private async requestDeletion(eviction: Eviction, action: Action): Promise<EvictionOutcome> {
    const { actions } = this.deps;
    if (action === 'eviction-api') return actions.evictPod(eviction.pod, eviction.gracePeriodSeconds);
    if (this.settings.setDisruptionTargetCondition && eviction.condition !== null) {
      const patched = await actions.addDisruptionTarget(eviction.pod, { reason: eviction.condition.reason, message: eviction.condition.message });
      if (patched.result === 'gone') return patched;
      // A failed condition patch does not stop the deletion: the condition is informative.
      if (patched.result === 'failed') this.log.warn('could not add the DisruptionTarget condition', { pod: podKey(eviction.pod), status: patched.status });
    }
    return actions.deletePod(eviction.pod, { gracePeriodSeconds: eviction.gracePeriodSeconds });
  }

  private observeLatency(notifiedAtMs: number | null, action: string, actedAtMs = this.deps.clock.nowMs()): void {
    if (notifiedAtMs === null) return;
    this.deps.metrics.notificationToEviction.observe({ action }, Math.max(0, actedAtMs - notifiedAtMs) / 1000);
  }
}
