// One acting agent per node. Every agent process on a node tries for the node lock (an exclusive
// flock on a file in a host directory they all mount, src/act/node-lock-file.ts); the one that holds
// it acts, every other is a warm standby: it observes, decides and serves its metrics like the
// active one, and every port that changes the cluster or the node refuses it (the acting guard
// consults `refusal()`). A standby tries for the lock every few milliseconds and takes over the
// moment the kernel releases it (the holder exited or was killed); its first pass then acts on
// what it has computed, with the engine state and the evictions in flight the holder published
// beside the lock, so a takeover neither restarts a grace period nor evicts a second pod for a
// shortage the first is still terminating for.
//
// A frozen or hung holder keeps its flock but stops beating: once its heartbeat is older than the
// hung-holder timeout, a standby moves the lock file aside and locks a fresh one. The old holder,
// should it wake, finds that the path no longer names the file it locked at the very next action
// it tries (`held()` is checked at every refusal) and stops acting at once.

import { Counter, Gauge, type Registry } from 'prom-client';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey } from '../api/pod.js';
import { errorMessage } from '../errors.js';
import { parseCarriedEngineState, type CarriedEngineState } from '../eviction/carried-state.js';
import type { EventRecorder, LocalTerminator, NodeLockFile, PodActions } from './ports.js';

/** Who an agent process is, as the lock's state file and the Events name it. */
export interface AgentInstance {
  readonly pid: number;
  /** The pod it runs in (`namespace/name`), or null for a process started by hand. */
  readonly pod: string | null;
  /** The Helm release or manifest it was deployed by (`KEA_RELEASE`), when known. */
  readonly release: string | null;
  readonly image: string | null;
  readonly startedAtMs: number;
}

/** An eviction (or local termination) the holder made, until its pod is gone. */
export interface InFlightEviction {
  readonly uid: string;
  readonly pod: string;
  readonly action: 'eviction' | 'deletion' | 'local-termination';
  readonly atMs: number;
}

export type NodeLockStateName = 'active' | 'standby' | 'unlocked';

/** What the holder publishes at every heartbeat (state.json). */
export interface PublishedLockState {
  readonly version: 1;
  readonly holder: AgentInstance;
  /** The lock file the holder locked (`dev:ino`): a state naming another file is not the current holder's. */
  readonly lockFileId: string | null;
  readonly acquiredAtMs: number;
  readonly heartbeatAtMs: number;
  readonly engine: CarriedEngineState | null;
  readonly inFlight: readonly InFlightEviction[];
}

export interface NodeLockSettings {
  /** How often a standby tries for the lock: the most a takeover waits after the lock is released. */
  readonly pollIntervalMs: number;
  /** How often the holder rewrites its state, and a standby reads it. */
  readonly heartbeatIntervalMs: number;
  /** A holder whose heartbeat is older than this is hung (frozen, stopped): its lock is broken. */
  readonly hungHolderMs: number;
  /** How long an eviction stays in flight (published for a successor): the pod cleanup timeout. */
  readonly podCleanupTimeoutMs: number;
  /**
   * How long a successor holds its evictions for a pod the previous holder evicted (at most the pod
   * cleanup timeout): the escalation timeout, so a takeover never holds an escalation back longer
   * than the holder itself would have.
   */
  readonly inheritedHoldMs?: number;
}

export const DEFAULT_NODE_LOCK_POLL_INTERVAL_MS = 20;
export const DEFAULT_NODE_LOCK_HEARTBEAT_INTERVAL_MS = 1000;

export interface NodeLockGateDeps {
  readonly lock: NodeLockFile;
  readonly self: AgentInstance;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly events: EventRecorder;
  readonly registry?: Registry;
  /** The engine state to publish. */
  readonly engineState: () => CarriedEngineState | null;
  /** Whether a pod (by UID) is gone: not listed, or listed with no process left in its cgroup. */
  readonly podGone: (uid: string) => boolean;
  /** Called once this agent holds the lock, with what the previous holder published (when recent enough to trust). */
  readonly onTakeover: (previous: { readonly engine: CarriedEngineState | null; readonly inFlight: readonly InFlightEviction[]; readonly holder: AgentInstance } | null) => void;
  /** Called when this agent finds it lost the lock (it stands by from then on). */
  readonly onLost?: () => void;
}

const UID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$|^[0-9a-f]{32}$/;
const MAX_TEXT_CHARS = 512;
const MAX_IN_FLIGHT = 64;

function text(value: unknown): string | null {
  return typeof value === 'string' && value.length <= MAX_TEXT_CHARS ? value : null;
}

function instant(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

function parseInstance(value: unknown): AgentInstance | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const pid = instant(v.pid);
  const startedAtMs = instant(v.startedAtMs);
  if (pid === null || startedAtMs === null) return null;
  return { pid, pod: text(v.pod), release: text(v.release), image: text(v.image), startedAtMs };
}

/** A state file another process wrote, checked field by field; null when it is not one. */
export function parsePublishedLockState(value: unknown): PublishedLockState | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  const holder = parseInstance(v.holder);
  const acquiredAtMs = instant(v.acquiredAtMs);
  const heartbeatAtMs = instant(v.heartbeatAtMs);
  if (v.version !== 1 || holder === null || acquiredAtMs === null || heartbeatAtMs === null) return null;
  const inFlight: InFlightEviction[] = [];
  if (Array.isArray(v.inFlight)) {
    for (const entry of (v.inFlight as unknown[]).slice(0, MAX_IN_FLIGHT)) {
      const e = (entry ?? {}) as Record<string, unknown>;
      const uid = text(e.uid);
      const pod = text(e.pod);
      const atMs = instant(e.atMs);
      if (uid === null || !UID.test(uid) || pod === null || atMs === null || (e.action !== 'eviction' && e.action !== 'deletion' && e.action !== 'local-termination')) continue;
      inFlight.push({ uid, pod, action: e.action, atMs });
    }
  }
  return { version: 1, holder, lockFileId: text(v.lockFileId), acquiredAtMs, heartbeatAtMs, engine: v.engine === null ? null : parseCarriedEngineState(v.engine), inFlight };
}

/** `pod kube-system/kea-abc (release kea, image repo:tag, pid 7)`, or `process 7 (...)` for one run by hand. */
export function describeInstance(instance: AgentInstance): string {
  const details = [`release ${instance.release ?? 'unknown'}`, `image ${instance.image ?? 'unknown'}`, `pid ${instance.pid}`].join(', ');
  return instance.pod === null ? `process ${instance.pid} (not a pod; ${details})` : `pod ${instance.pod} (${details})`;
}

interface LockMetrics {
  readonly state: Gauge<'state'>;
  readonly agents: Gauge;
  readonly takeovers: Counter<'from'>;
  readonly losses: Counter;
}

function lockMetrics(registry: Registry | undefined): LockMetrics | null {
  if (registry === undefined) return null;
  const registers = [registry];
  return {
    state: new Gauge({ name: 'kube_eviction_agent_node_lock_state', help: '1 for this agent\'s node lock state (active: holds the lock and acts; standby: another agent holds it; unlocked: the lock cannot be used and the agent acts without it), 0 for the others', labelNames: ['state'], registers }),
    agents: new Gauge({ name: 'kube_eviction_agent_node_agents', help: 'Agent processes this agent sees on its node, itself included (the lock holder and the standbys): more than 1 outside an upgrade is a second installation', registers }),
    takeovers: new Counter({ name: 'kube_eviction_agent_node_lock_takeovers_total', help: 'Times this agent took the node lock, by how it was found (free: at start or released by its holder; broken: a hung holder\'s lock moved aside)', labelNames: ['from'], registers }),
    losses: new Counter({ name: 'kube_eviction_agent_node_lock_losses_total', help: 'Times this agent found it no longer held the node lock (it stopped acting at once)', registers }),
  };
}

export class NodeLockGate {
  private readonly log: Logger;
  private readonly metrics: LockMetrics | null;
  private stateName: NodeLockStateName = 'standby';
  private standbySinceMs: number | null = null;
  private unlockedReason: string | null = null;
  private acquiredAtMs: number | null = null;
  private lockFileId: string | null = null;
  private lastHeartbeatMs = -Infinity;
  private holder: AgentInstance | null = null;
  private reportedHolder: string | null = null;
  /** The holder's lock file as a standby last saw it, and since when (a holder that never published still times out). */
  private watched: { id: string; sinceMs: number } | null = null;
  private inFlight: InFlightEviction[] = [];
  /** What the previous holder had in flight: evictions wait for these pods to go. */
  private inherited: InFlightEviction[] = [];
  private cancelTick: (() => void) | null = null;
  private stopped = false;
  private agentsSeen = 1;

  constructor(
    private readonly settings: NodeLockSettings,
    private readonly deps: NodeLockGateDeps,
  ) {
    this.log = deps.logger.child({ component: 'node-lock' });
    this.metrics = lockMetrics(deps.registry);
  }

  get state(): NodeLockStateName {
    return this.stateName;
  }

  /** The agent holding the lock as last seen (this one when active); null when unknown. */
  get lockHolder(): AgentInstance | null {
    return this.stateName === 'standby' ? this.holder : this.deps.self;
  }

  /** One line for `explain`, the node conditions' messages and /readyz. */
  describe(): string {
    const dir = this.deps.lock.directory;
    if (this.stateName === 'active') return `acting: this agent holds the node lock in ${dir}`;
    if (this.stateName === 'unlocked') return `acting without the node lock (${this.unlockedReason ?? 'unusable'})`;
    return `standby: the node lock in ${dir} is held by ${this.holder === null ? 'an agent that has not published its state' : describeInstance(this.holder)}`;
  }

  /** Takes the lock if it is free, else becomes a standby; then keeps watching. */
  start(): void {
    this.stopped = false;
    this.attempt();
    if (this.stateName === 'standby') this.standbyHeartbeat();
    this.setMetrics();
    this.arm();
  }

  /** Publishes a last state and releases the lock (a successor carries on from it); idempotent. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.cancelTick?.();
    this.cancelTick = null;
    try {
      if (this.stateName === 'active' && this.deps.lock.held()) this.publish();
      this.deps.lock.removePresence(this.deps.self.pid);
    } catch (err) {
      this.log.warn('writing the node lock state at stop failed', { err: errorMessage(err) });
    }
    this.deps.lock.release();
  }

  /** Whether another agent stands by on this node now (its presence file beat within the last few heartbeats): a stop hands over to it. */
  standbysWaiting(): boolean {
    if (this.stateName !== 'active') return false;
    const nowMs = this.deps.clock.nowMs();
    return this.freshPresences(nowMs, 3 * this.settings.heartbeatIntervalMs).length > 0;
  }

  /** Null when this agent may change the cluster or the node now; else why not. Checked before every action. */
  refusal(): string | null {
    if (this.stopped && this.acquiredAtMs !== null) return `this agent is stopping and has released the node lock in ${this.deps.lock.directory}`;
    if (this.stateName === 'unlocked') return null;
    if (this.stateName === 'active') {
      if (this.deps.lock.held()) return null;
      this.lost();
    }
    return this.describe();
  }

  /**
   * The lock file this agent holds now (its path and `dev:ino`), for an action checked on another
   * thread (the kill path: the path must still name that file at the moment of the signal); null
   * when it acts without the lock. Asked only while `refusal()` is null.
   */
  heldFile(): { readonly path: string; readonly fileId: string } | null {
    if (this.stateName === 'unlocked') return null;
    // Not holding it (or not knowing which file it locked): an id no file has, so the check fails.
    return { path: this.deps.lock.path, fileId: this.stateName === 'active' ? (this.lockFileId ?? '') : '' };
  }

  /** As `refusal`, and also while a pod the previous holder evicted is still terminating (no second eviction for one shortage). */
  evictionRefusal(): string | null {
    const refused = this.refusal();
    if (refused !== null || this.inherited.length === 0) return refused;
    const nowMs = this.deps.clock.nowMs();
    const holdMs = Math.min(this.settings.inheritedHoldMs ?? Infinity, this.settings.podCleanupTimeoutMs);
    this.inherited = this.inherited.filter((e) => nowMs < e.atMs + holdMs && !this.deps.podGone(e.uid));
    const first = this.inherited[0];
    return first === undefined ? null : `waiting for ${first.pod}, evicted by the previous lock holder, to terminate`;
  }

  /** The ports, wrapped to remember what this agent evicted until its pods are gone (published for a successor). */
  track<P extends { readonly actions: PodActions; readonly terminator: LocalTerminator }>(ports: P): P {
    const { actions, terminator } = ports;
    const remember = (pod: Parameters<PodActions['evictPod']>[0], action: InFlightEviction['action']): void => {
      const uid = pod.metadata.uid;
      if (uid === undefined || !UID.test(uid)) return;
      this.inFlight = [...this.inFlight.filter((e) => e.uid !== uid), { uid, pod: podKey(pod), action, atMs: this.deps.clock.nowMs() }].slice(-MAX_IN_FLIGHT);
      // At once, not at the next heartbeat: a kill -9 right after the eviction must not lose it.
      if (this.stateName === 'active') this.publishQuietly();
    };
    return {
      ...ports,
      actions: {
        ...actions,
        getPod: (namespace, name) => actions.getPod(namespace, name),
        evictPod: async (pod, grace) => {
          const outcome = await actions.evictPod(pod, grace);
          if (outcome.result === 'accepted') remember(pod, 'eviction');
          return outcome;
        },
        deletePod: async (pod, options) => {
          const outcome = await actions.deletePod(pod, options);
          if (outcome.result === 'accepted') remember(pod, 'deletion');
          return outcome;
        },
        addDisruptionTarget: (pod, condition) => actions.addDisruptionTarget(pod, condition),
      },
      terminator: {
        terminate: async (pod, graceMs) => {
          // Remembered before the signals: the kill may be the holder's last act.
          remember(pod, 'local-termination');
          return terminator.terminate(pod, graceMs);
        },
        adopt: (pod, graceMs) => {
          remember(pod, 'local-termination');
          terminator.adopt?.(pod, graceMs);
        },
        release: (uid) => terminator.release?.(uid),
      },
    };
  }

  private arm(): void {
    if (this.stopped) return;
    const intervalMs = this.stateName === 'standby' ? this.settings.pollIntervalMs : this.settings.heartbeatIntervalMs;
    this.cancelTick = this.deps.clock.after(intervalMs, () => {
      this.cancelTick = null;
      try {
        this.tick();
      } catch (err) {
        this.log.error('node lock check failed', { err: errorMessage(err) });
      }
      this.arm();
    });
  }

  private tick(): void {
    const nowMs = this.deps.clock.nowMs();
    if (this.stateName === 'active') {
      if (!this.deps.lock.held()) return this.lost();
      if (nowMs - this.lastHeartbeatMs >= this.settings.heartbeatIntervalMs) this.publishQuietly();
      return;
    }
    // A standby, or an agent that could not use the lock (which keeps trying: the directory may appear).
    if (this.stateName === 'unlocked' && nowMs - this.lastHeartbeatMs < this.settings.heartbeatIntervalMs) return;
    this.attempt();
    if (this.stateName === 'standby' && nowMs - this.lastHeartbeatMs >= this.settings.heartbeatIntervalMs) this.standbyHeartbeat();
    this.setMetrics();
  }

  // Tries for the lock; on success, takes over.
  private attempt(from: 'free' | 'broken' = 'free'): void {
    let taken: boolean;
    try {
      taken = this.deps.lock.tryAcquire();
    } catch (err) {
      if (this.stateName !== 'unlocked') {
        this.unlockedReason = `the node lock in ${this.deps.lock.directory} cannot be used: ${errorMessage(err)}`;
        this.log.error('acting without the node lock: a second agent on this node would not be held back', { code: 'EVA_ERR_NODE_LOCK', directory: this.deps.lock.directory, err: errorMessage(err) });
        this.stateName = 'unlocked';
      }
      this.lastHeartbeatMs = this.deps.clock.nowMs();
      return;
    }
    if (taken) this.takeOver(from);
    else if (this.stateName === 'standby') this.standbySinceMs ??= this.deps.clock.nowMs();
    else if (this.stateName === 'unlocked') {
      // The lock became usable and someone else holds it: stop acting.
      this.log.warn('the node lock is usable again and held by another agent: standing by', { directory: this.deps.lock.directory });
      this.stateName = 'standby';
      this.standbySinceMs = this.deps.clock.nowMs();
      this.lastHeartbeatMs = -Infinity;
    }
  }

  private takeOver(from: 'free' | 'broken'): void {
    const nowMs = this.deps.clock.nowMs();
    const standbyForMs = this.standbySinceMs === null ? 0 : nowMs - this.standbySinceMs;
    this.standbySinceMs = null;
    // Read before the first write: what the previous holder left.
    const previous = parsePublishedLockState(this.deps.lock.readState());
    // Trusted only while it can still describe the node: no older than a hung holder's last beat.
    const fresh = previous !== null && previous.holder.pid !== this.deps.self.pid && nowMs - previous.heartbeatAtMs <= this.settings.hungHolderMs + 2 * this.settings.heartbeatIntervalMs;
    this.stateName = 'active';
    this.acquiredAtMs = nowMs;
    this.lockFileId = this.deps.lock.lockFileId();
    this.holder = null;
    this.watched = null;
    this.inherited = fresh ? previous.inFlight.filter((e) => nowMs < e.atMs + this.settings.podCleanupTimeoutMs) : [];
    this.publishQuietly();
    try {
      this.deps.lock.removePresence(this.deps.self.pid);
    } catch {
      // A presence file left behind ages out: readers ignore one that stops beating.
    }
    this.metrics?.takeovers.inc({ from });
    this.log.info('node lock acquired: this agent acts on the node', {
      directory: this.deps.lock.directory,
      from,
      standbyForMs,
      ...(previous === null ? {} : { previousHolder: describeInstance(previous.holder), previousHeartbeatAgeMs: nowMs - previous.heartbeatAtMs, carriedOver: fresh }),
      inheritedEvictions: this.inherited.map((e) => e.pod),
    });
    this.setMetrics();
    this.deps.onTakeover(fresh ? { engine: previous.engine, inFlight: this.inherited, holder: previous.holder } : null);
  }

  private lost(): void {
    if (this.stateName !== 'active') return;
    this.stateName = 'standby';
    this.standbySinceMs = this.deps.clock.nowMs();
    this.acquiredAtMs = null;
    this.lastHeartbeatMs = -Infinity;
    this.deps.lock.release();
    this.metrics?.losses.inc();
    this.setMetrics();
    this.log.error('node lock lost: the lock file was moved aside (this agent was taken to be hung); acting stops now', { directory: this.deps.lock.directory, lockFileId: this.lockFileId });
    this.deps.onLost?.();
    void this.deps.events.nodeEvent({ type: 'Warning', reason: 'NodeLockLost', message: `Agent ${describeInstance(this.deps.self)} lost the node lock in ${this.deps.lock.directory} (taken to be hung) and stopped acting` }).catch(() => undefined);
  }

  private publishQuietly(): void {
    try {
      this.publish();
    } catch (err) {
      this.log.warn('writing the node lock state failed', { err: errorMessage(err) });
    }
  }

  private publish(): void {
    const nowMs = this.deps.clock.nowMs();
    this.inFlight = this.inFlight.filter((e) => nowMs < e.atMs + this.settings.podCleanupTimeoutMs && !this.deps.podGone(e.uid));
    const state: PublishedLockState = {
      version: 1,
      holder: this.deps.self,
      lockFileId: this.lockFileId,
      acquiredAtMs: this.acquiredAtMs ?? nowMs,
      heartbeatAtMs: nowMs,
      engine: this.deps.engineState(),
      // What the previous holder had in flight is still in flight for this one's successor.
      inFlight: [...this.inherited, ...this.inFlight],
    };
    this.lastHeartbeatMs = nowMs;
    this.deps.lock.writeState(state);
    this.agentsSeen = 1 + this.freshPresences(nowMs).length;
    this.setMetrics();
  }

  private freshPresences(nowMs: number, maxAgeMs = this.settings.hungHolderMs): AgentInstance[] {
    const fresh: AgentInstance[] = [];
    for (const value of this.deps.lock.readPresences(this.deps.self.pid)) {
      const v = (value ?? {}) as Record<string, unknown>;
      const instance = parseInstance(v.instance);
      const beatMs = instant(v.heartbeatAtMs);
      if (instance !== null && beatMs !== null && nowMs - beatMs <= maxAgeMs) fresh.push(instance);
    }
    return fresh;
  }

  // A standby's heartbeat: say who it is, see who holds the lock, and break a hung holder's lock.
  private standbyHeartbeat(): void {
    const nowMs = this.deps.clock.nowMs();
    this.lastHeartbeatMs = nowMs;
    const { lock } = this.deps;
    try {
      lock.writePresence(this.deps.self.pid, { instance: this.deps.self, heartbeatAtMs: nowMs });
    } catch (err) {
      this.log.warn('writing the standby presence file failed', { err: errorMessage(err) });
    }
    const id = lock.lockFileId();
    if (id === null) return;
    const state = parsePublishedLockState(lock.readState());
    const current = state !== null && state.lockFileId === id ? state : null;
    this.holder = current?.holder ?? null;
    if (this.watched?.id !== id) this.watched = { id, sinceMs: nowMs };
    this.agentsSeen = 2 + this.freshPresences(nowMs).length;
    this.reportSecondAgent();
    const lastSignMs = Math.max(current?.heartbeatAtMs ?? -Infinity, this.watched.sinceMs);
    if (nowMs - lastSignMs <= this.settings.hungHolderMs) return;
    const who = this.holder === null ? 'an agent that never published its state' : describeInstance(this.holder);
    this.log.error('the node lock holder is hung: breaking its lock', { holder: who, heartbeatAgeMs: nowMs - lastSignMs, hungHolderMs: this.settings.hungHolderMs });
    void this.deps.events
      .nodeEvent({ type: 'Warning', reason: 'NodeLockBroken', message: `The node lock holder ${who} has not beaten for ${Math.round((nowMs - lastSignMs) / 1000)}s (hung or frozen): agent ${describeInstance(this.deps.self)} broke its lock and acts instead` })
      .catch(() => undefined);
    if (lock.breakLock(id)) this.attempt('broken');
  }

  // Once per holder: a Warning when the two agents are not one release's old and new pod (an
  // upgrade with surge), a Normal Event when they are.
  private reportSecondAgent(): void {
    const holder = this.holder;
    if (holder === null) return;
    const key = `${holder.pid}/${holder.startedAtMs}`;
    if (this.reportedHolder === key) return;
    this.reportedHolder = key;
    const self = this.deps.self;
    const sameRelease = holder.release !== null && holder.release === self.release && holder.pod !== null && self.pod !== null;
    const message = `Agent ${describeInstance(self)} is on standby: ${describeInstance(holder)} holds the node lock in ${this.deps.lock.directory}${sameRelease ? ' (one release\'s old and new pod: an upgrade)' : '; two installations on one node: only one acts, remove the other'}`;
    if (sameRelease) this.log.info('standing by: another agent of this release holds the node lock', { holder: describeInstance(holder) });
    else this.log.warn('standing by: a second agent holds the node lock', { holder: describeInstance(holder) });
    void this.deps.events.nodeEvent({ type: sameRelease ? 'Normal' : 'Warning', reason: sameRelease ? 'AgentStandby' : 'DuplicateAgent', message: message.slice(0, 1024) }).catch(() => undefined);
  }

  private setMetrics(): void {
    if (this.metrics === null) return;
    for (const state of ['active', 'standby', 'unlocked'] as const) this.metrics.state.set({ state }, state === this.stateName ? 1 : 0);
    this.metrics.agents.set(this.agentsSeen);
  }
}
