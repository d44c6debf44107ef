// The eviction storm guard in the running agent: the pure guard's decisions (src/eviction/storm-guard.ts)
// applied and reported. The executor asks it before a soft eviction (the per-node budget) and tells
// it of every eviction that went ahead; it finds the pod's owner (a ReplicaSet's Deployment through
// the API server, by the names where it cannot), reports an owner past its threshold (a Warning
// Event on the owner, a metric, a log line) and says whether the pressure taint stays for a
// cool-down. Nothing here delays an eviction: the owner lookup and the Events run beside the loop.

import type { StormGuardSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type ObjectRef, type Pod } from '../api/pod.js';
import { signalToResource, type ResourceName } from '../api/signals.js';
import { errorMessage } from '../errors.js';
import { controllerOf, deploymentByName, type OwnerRef } from '../eviction/owner.js';
import { StormGuard, type HeldEviction, type OwnerStorm, type StormGuardState } from '../eviction/storm-guard.js';
import type { Eviction } from '../eviction/types.js';
import { BackgroundTasks } from './background-tasks.js';
import type { AgentMetrics } from './metrics.js';
import type { EventRecorder, OwnerLookup } from './ports.js';

export interface StormGuardDeps {
  readonly nodeName: string;
  readonly events: EventRecorder;
  readonly metrics: AgentMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Reads a ReplicaSet's owner; without it a Deployment is found by the names alone. */
  readonly owners?: OwnerLookup;
}

// A ReplicaSet's owner does not change: an answer is kept this long, for this many ReplicaSets at most.
const OWNER_CACHE_MS = 10 * 60_000;
const OWNER_CACHE_MAX = 256;
// Owner lookups and Events in flight at most; past it, the owner is found by the names.
const MAX_BACKGROUND = 32;

function isHard(eviction: Eviction): boolean {
  return eviction.reason.kind === 'local-storage' || eviction.reason.hard;
}

function signalOf(eviction: Eviction): string {
  return eviction.reason.kind === 'threshold' ? eviction.reason.signal : eviction.reason.limit;
}

function resourceOf(eviction: Eviction): ResourceName {
  return eviction.reason.kind === 'threshold' ? signalToResource[eviction.reason.signal] : 'ephemeral-storage';
}

export class EvictionStormGuard {
  private readonly guard: StormGuard;
  private readonly log: Logger;
  private readonly background: BackgroundTasks;
  private readonly replicaSetOwners = new Map<string, { readonly owner: OwnerRef | null; readonly atMs: number }>();

  constructor(
    settings: StormGuardSettings,
    private readonly deps: StormGuardDeps,
  ) {
    this.guard = new StormGuard(settings, deps.nodeName);
    this.log = deps.logger.child({ component: 'storm-guard' });
    this.background = new BackgroundTasks('storm-guard', MAX_BACKGROUND, this.log);
  }

  updateSettings(settings: StormGuardSettings): void {
    this.guard.updateSettings(settings);
  }

  /** Null when `eviction` may go ahead; else the hold, already reported (a metric, a log line, on the first hold a node Event). */
  admit(eviction: Eviction, dryRun: boolean): HeldEviction | null {
    const decision = this.guard.admit({ pod: podKey(eviction.pod), uid: eviction.pod.metadata.uid ?? podKey(eviction.pod), signal: signalOf(eviction), hard: isHard(eviction) }, this.deps.clock.nowMs());
    if (decision.admit) return null;
    this.deps.metrics.softEvictionsHeld.inc({ signal: decision.signal });
    if (decision.firstHold) {
      this.log.warn(dryRun ? 'soft eviction budget reached (dry run): would hold back soft evictions' : 'soft eviction budget reached: holding back soft evictions', { pod: decision.pod, signal: decision.signal, used: decision.used, max: decision.max, nextAllowedAtMs: decision.nextAllowedAtMs });
      this.background.run('EvictionHeldBack', () => this.deps.events.nodeEvent({ type: 'Warning', reason: 'EvictionHeldBack', message: decision.message }));
    } else {
      this.log.info('soft eviction held back by the budget', { pod: decision.pod, signal: decision.signal, nextAllowedAtMs: decision.nextAllowedAtMs });
    }
    return decision;
  }

  /** An eviction went ahead (accepted, or decided in a dry run): counted at once; its owner is counted once found. */
  evicted(eviction: Eviction, dryRun: boolean): void {
    const nowMs = this.deps.clock.nowMs();
    const uid = eviction.pod.metadata.uid ?? podKey(eviction.pod);
    this.guard.countEviction({ uid, hard: isHard(eviction) }, nowMs);
    const count = (owner: OwnerRef | null): void => {
      const storm = this.guard.countOwner({ uid, resource: resourceOf(eviction), owner }, nowMs);
      if (storm !== null) this.report(storm, dryRun);
    };
    const controller = controllerOf(eviction.pod);
    if (controller?.kind !== 'ReplicaSet' || this.deps.owners === undefined) {
      count(controller);
      return;
    }
    const cached = this.cachedOwner(controller, nowMs);
    if (cached !== undefined) {
      count(cached ?? controller);
      return;
    }
    const started = this.background.run(`owner of ${podKey(eviction.pod)}`, async () => count((await this.replicaSetOwner(eviction.pod, controller)) ?? controller));
    if (!started) count(deploymentByName(eviction.pod, controller) ?? controller);
  }

  /** Whether the pressure taint stays on now (an owner storm's cool-down is running). */
  taintHeld(nowMs: number): boolean {
    return this.guard.taintHeldUntilMs(nowMs) !== null;
  }

  state(nowMs: number): StormGuardState {
    return this.guard.state(nowMs);
  }

  /** Resolves once every lookup and Event started so far is done (stop, tests). */
  async settled(): Promise<void> {
    while (this.background.size > 0) await this.background.settled();
  }

  private cachedOwner(replicaSet: OwnerRef, nowMs: number): OwnerRef | null | undefined {
    const key = `${replicaSet.namespace}/${replicaSet.name}`;
    const hit = this.replicaSetOwners.get(key);
    if (hit === undefined || nowMs - hit.atMs >= OWNER_CACHE_MS) return undefined;
    return hit.owner;
  }

  // The ReplicaSet's owner from the API server; by the names when it cannot say.
  private async replicaSetOwner(pod: Pod, replicaSet: OwnerRef): Promise<OwnerRef | null> {
    const lookup = this.deps.owners;
    let answer: ObjectRef | null | string;
    try {
      answer = lookup === undefined ? 'no lookup' : await lookup.replicaSetOwner(replicaSet.namespace, replicaSet.name);
    } catch (err) {
      answer = errorMessage(err);
    }
    if (typeof answer === 'string') {
      this.log.debug('reading the ReplicaSet failed; its Deployment is found by the names', { replicaSet: `${replicaSet.namespace}/${replicaSet.name}`, err: answer });
      return deploymentByName(pod, replicaSet);
    }
    if (this.replicaSetOwners.size >= OWNER_CACHE_MAX) this.replicaSetOwners.delete(this.replicaSetOwners.keys().next().value ?? '');
    this.replicaSetOwners.set(`${replicaSet.namespace}/${replicaSet.name}`, { owner: answer, atMs: this.deps.clock.nowMs() });
    return answer;
  }

  private report(storm: OwnerStorm, dryRun: boolean): void {
    const { owner } = storm;
    this.deps.metrics.evictionStorms.inc({ kind: owner.kind });
    this.log.warn(dryRun ? 'eviction storm (dry run)' : 'eviction storm', { owner: `${owner.kind} ${owner.namespace}/${owner.name}`, count: storm.count, windowMs: storm.windowMs, coolDownUntilMs: storm.coolDownUntilMs, message: storm.message });
    this.background.run('EvictionStorm', () => this.deps.events.objectEvent(owner, { type: 'Warning', reason: 'EvictionStorm', message: storm.message.slice(0, 1024) }));
  }
}
