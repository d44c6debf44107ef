// The eviction storm guard's decisions, pure (the daemon applies them; replay runs the same code on
// its virtual clock). Two parts:
// - a per-node budget of soft evictions per window: a soft eviction past it is held back until the
//   oldest one in the window ages out; hard evictions (and local-storage limits) are never held back
//   and never counted, since they protect the node itself;
// - per-owner tracking: evictions counted by owning controller, and once one reaches the event
//   threshold within its window, a storm to report on the owner ("3 pods of Deployment shop/leaky
//   evicted from node node-a for memory in the last 10 minutes"), at most once a window per owner,
//   with the time until which the pressure taint should stay (the cool-down), when one is set.
// Each pod counts once a window (by UID): a decision repeated for the same pod (a dry run, a retry,
// a replay step that still lists it) is one eviction. No I/O, no clock: every call takes `nowMs`.

import type { StormGuardSettings } from '../api/agent-settings.js';
import type { ResourceName } from '../api/signals.js';
import { ownerKey, type OwnerRef } from './owner.js';

/** An eviction as the guard sees it. */
export interface GuardedEviction {
  /** `namespace/name`. */
  readonly pod: string;
  readonly uid: string;
  /** The signal (or local-storage limit) it is for. */
  readonly signal: string;
  readonly resource: ResourceName;
  /** Hard thresholds and local-storage limits: never held back. */
  readonly hard: boolean;
  /** The owning controller, or null for a bare pod. */
  readonly owner: OwnerRef | null;
}

/** A soft eviction held back by the budget. */
export interface HeldEviction {
  readonly pod: string;
  readonly signal: string;
  /** Soft evictions counted in the window, and the budget. */
  readonly used: number;
  readonly max: number;
  readonly windowMs: number;
  /** When the oldest counted eviction leaves the window. */
  readonly nextAllowedAtMs: number;
  /** The first hold since soft evictions were last allowed: the one to report as an Event. */
  readonly firstHold: boolean;
  readonly message: string;
}

export type AdmitDecision = { readonly admit: true } | ({ readonly admit: false } & HeldEviction);

/** An owner that reached its event threshold. */
export interface OwnerStorm {
  readonly owner: OwnerRef;
  readonly count: number;
  readonly windowMs: number;
  readonly resources: readonly ResourceName[];
  /** Until when the pressure taint should stay on the node; null without a cool-down. */
  readonly coolDownUntilMs: number | null;
  readonly message: string;
}

/** The guard's state now, for `explain` and the replay. */
export interface StormGuardState {
  /** Null without a budget. */
  readonly budget: { readonly used: number; readonly max: number; readonly windowMs: number; readonly nextAllowedAtMs: number | null } | null;
  /** Owners with evictions in their window, most evicted first. */
  readonly owners: readonly { readonly owner: OwnerRef; readonly count: number }[];
  readonly coolDownUntilMs: number | null;
}

interface Counted {
  readonly atMs: number;
  readonly uid: string;
}

interface OwnerRecord {
  owner: OwnerRef;
  readonly evictions: (Counted & { readonly resource: ResourceName })[];
  lastStormAtMs: number | null;
}

/** `10 minutes`, `1 hour`, `90 seconds`. */
export function formatWindow(ms: number): string {
  const unit = (value: number, name: string): string => `${value} ${name}${value === 1 ? '' : 's'}`;
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return unit(ms / 3_600_000, 'hour');
  if (ms >= 60_000 && ms % 60_000 === 0) return unit(ms / 60_000, 'minute');
  return unit(Math.max(1, Math.ceil(ms / 1000)), 'second');
}

function andList(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1] ?? ''}`;
}

/** What the settings turn on, in one sentence (`explain`, `check-config`). */
export function describeStormGuard(settings: StormGuardSettings): string {
  const { maxEvictions, windowMs } = settings.softEvictionBudget;
  const { eventThreshold, windowMs: ownerWindowMs, taintCoolDownMs } = settings.owners;
  const budget = maxEvictions === 0 ? 'no soft-eviction budget' : `at most ${maxEvictions} soft eviction${maxEvictions === 1 ? '' : 's'} per ${formatWindow(windowMs)} (hard evictions never held back)`;
  const owners = eventThreshold === 0 ? 'no owner Events' : `a Warning Event on an owner with ${eventThreshold} or more pods evicted in ${formatWindow(ownerWindowMs)}`;
  const coolDown = taintCoolDownMs === 0 ? 'no taint cool-down' : `the pressure taint kept for ${formatWindow(taintCoolDownMs)} after such a storm`;
  return `${budget}; ${owners}; ${coolDown}`;
}

export class StormGuard {
  private settings: StormGuardSettings;
  private readonly soft: Counted[] = [];
  private holding = false;
  private readonly owners = new Map<string, OwnerRecord>();
  private coolDownUntilMs: number | null = null;

  constructor(
    settings: StormGuardSettings,
    private readonly nodeName: string,
  ) {
    this.settings = settings;
  }

  /** A new configuration: the history carries over, judged by the new numbers. */
  updateSettings(settings: StormGuardSettings): void {
    this.settings = settings;
  }

  /** Whether `eviction` may go ahead now. */
  admit(eviction: Pick<GuardedEviction, 'pod' | 'uid' | 'signal' | 'hard'>, nowMs: number): AdmitDecision {
    const { maxEvictions, windowMs } = this.settings.softEvictionBudget;
    if (eviction.hard || maxEvictions === 0) return { admit: true };
    this.prune(nowMs);
    // The same pod again (a retry, a dry run's repeated decision) is the eviction already counted.
    if (this.soft.length < maxEvictions || this.soft.some((c) => c.uid === eviction.uid)) {
      this.holding = false;
      return { admit: true };
    }
    const firstHold = !this.holding;
    this.holding = true;
    const used = this.soft.length;
    const nextAllowedAtMs = (this.soft[0]?.atMs ?? nowMs) + windowMs;
    return {
      admit: false,
      pod: eviction.pod,
      signal: eviction.signal,
      used,
      max: maxEvictions,
      windowMs,
      nextAllowedAtMs,
      firstHold,
      message:
        `Soft eviction of ${eviction.pod} for ${eviction.signal} held back: ${used} soft evictions from node ${this.nodeName} in the last ${formatWindow(windowMs)} ` +
        `reached the budget of ${maxEvictions}; the next is allowed in ${formatWindow(nextAllowedAtMs - nowMs)}. Hard evictions are not held back.`,
    };
  }

  /** Evictions that went ahead: counted; returns the owners that reached their event threshold now. */
  record(evictions: readonly GuardedEviction[], nowMs: number): OwnerStorm[] {
    for (const eviction of evictions) this.countEviction(eviction, nowMs);
    return evictions.flatMap((eviction) => {
      const storm = this.countOwner(eviction, nowMs);
      return storm === null ? [] : [storm];
    });
  }

  /** The budget's part of {@link record}, at once when an eviction goes ahead (its owner may take a lookup). */
  countEviction(eviction: Pick<GuardedEviction, 'uid' | 'hard'>, nowMs: number): void {
    this.prune(nowMs);
    if (!eviction.hard && !this.soft.some((c) => c.uid === eviction.uid)) this.soft.push({ atMs: nowMs, uid: eviction.uid });
  }

  /** The owners' part of {@link record}: the owner's storm, when it reaches its event threshold now. */
  countOwner(eviction: Pick<GuardedEviction, 'uid' | 'resource' | 'owner'>, nowMs: number): OwnerStorm | null {
    this.prune(nowMs);
    if (eviction.owner === null) return null;
    const key = ownerKey(eviction.owner);
    const record = this.owners.get(key) ?? { owner: eviction.owner, evictions: [], lastStormAtMs: null };
    // A later lookup may know more (the Deployment's UID).
    if (record.owner.uid === null && eviction.owner.uid !== null) record.owner = eviction.owner;
    if (!record.evictions.some((c) => c.uid === eviction.uid)) record.evictions.push({ atMs: nowMs, uid: eviction.uid, resource: eviction.resource });
    this.owners.set(key, record);
    const { eventThreshold, windowMs, taintCoolDownMs } = this.settings.owners;
    const count = record.evictions.length;
    if (eventThreshold === 0 || count < eventThreshold) return null;
    if (record.lastStormAtMs !== null && nowMs - record.lastStormAtMs < windowMs) return null;
    record.lastStormAtMs = nowMs;
    const coolDownUntilMs = taintCoolDownMs > 0 ? nowMs + taintCoolDownMs : null;
    if (coolDownUntilMs !== null) this.coolDownUntilMs = Math.max(this.coolDownUntilMs ?? 0, coolDownUntilMs);
    const resources = [...new Set(record.evictions.map((e) => e.resource))];
    const { owner } = record;
    return {
      owner,
      count,
      windowMs,
      resources,
      coolDownUntilMs,
      message:
        `${count} pods of ${owner.kind} ${owner.namespace}/${owner.name} evicted from node ${this.nodeName} for ${andList(resources)} in the last ${formatWindow(windowMs)}` +
        (coolDownUntilMs === null ? '' : `; the node keeps its pressure taint for ${formatWindow(taintCoolDownMs)}`),
    };
  }

  /** Until when the pressure taint should stay on (an owner storm's cool-down); null when none is running. */
  taintHeldUntilMs(nowMs: number): number | null {
    return this.coolDownUntilMs !== null && nowMs < this.coolDownUntilMs ? this.coolDownUntilMs : null;
  }

  state(nowMs: number): StormGuardState {
    this.prune(nowMs);
    const { maxEvictions, windowMs } = this.settings.softEvictionBudget;
    return {
      budget: maxEvictions === 0 ? null : { used: this.soft.length, max: maxEvictions, windowMs, nextAllowedAtMs: this.soft.length < maxEvictions ? null : (this.soft[0]?.atMs ?? nowMs) + windowMs },
      owners: [...this.owners.values()].filter((r) => r.evictions.length > 0).map((r) => ({ owner: r.owner, count: r.evictions.length })).sort((a, b) => b.count - a.count),
      coolDownUntilMs: this.taintHeldUntilMs(nowMs),
    };
  }

  // Forgets what left its window, so memory stays bounded by the windows' traffic.
  private prune(nowMs: number): void {
    const budgetFrom = nowMs - this.settings.softEvictionBudget.windowMs;
    while ((this.soft[0]?.atMs ?? Infinity) <= budgetFrom) this.soft.shift();
    const ownerWindowMs = this.settings.owners.windowMs;
    for (const [key, record] of this.owners) {
      while ((record.evictions[0]?.atMs ?? Infinity) <= nowMs - ownerWindowMs) record.evictions.shift();
      if (record.evictions.length === 0 && (record.lastStormAtMs === null || nowMs - record.lastStormAtMs >= ownerWindowMs)) this.owners.delete(key);
    }
  }
}
