// What the main thread and the kill thread (kill-thread.ts) say to each other, and the two words of
// shared memory between them. Messages carry plans and descriptors one way and reports the other.
// The control word decides which of them acts on a crossing: it is changed only by
// compare-and-swap, so that a plan the main thread takes back can never fire afterwards, and a plan
// that fired cannot be taken back. The verdict count tells the main thread, woken by its own
// notification of the same crossing, when the thread has judged it.

import type { SignallerPlace } from './process-signaller.js';

/** The shared words, as indexes of one Int32Array. */
export const CONTROL_WORD = 0;
/** How many crossings of a wake point the thread has judged (whatever it made of them). */
export const WAKE_VERDICTS = 1;
export const SHARED_WORDS = 2;

/** The state half of the control word. */
export const KillState = {
  /** Nothing armed. */
  idle: 0,
  /** A plan is on its way to the thread; nothing can fire until it is armed. */
  pending: 1,
  /** The plan of the word's generation can fire. */
  armed: 2,
  /** It fired: its signals are going out. */
  fired: 3,
  /** It fired and its report was posted. */
  reported: 4,
} as const;
export type KillStateCode = (typeof KillState)[keyof typeof KillState];

const STATE_BITS = 3;
const STATE_MASK = (1 << STATE_BITS) - 1;
/** Generations wrap here (the word is a 32-bit signed integer); only equality is ever asked of them. */
const GENERATION_LIMIT = 1 << 27;

export function controlWord(generation: number, state: KillStateCode): number {
  return (generation << STATE_BITS) | state;
}

export function stateOf(word: number): KillStateCode {
  return (word & STATE_MASK) as KillStateCode;
}

export function generationOf(word: number): number {
  return word >>> STATE_BITS;
}

export function nextGeneration(generation: number): number {
  return generation + 1 >= GENERATION_LIMIT ? 1 : generation + 1;
}

/** One threshold of a plan, with the files the thread reads to confirm it. */
export interface ThreadThreshold {
  readonly description: string;
  /** The cgroup's memory.usage_in_bytes and memory.stat. */
  readonly usagePath: string;
  readonly statPath: string;
  readonly wakeUsageBytes: bigint;
  readonly workingSetLimitBytes: bigint;
}

/** A pod that would rank before the victim at `overtakingWorkingSetBytes`, with the files its working set is read from. */
export interface ThreadRival {
  /** `namespace/name`, for the reason a plan is declined. */
  readonly key: string;
  readonly usagePath: string;
  readonly statPath: string;
  readonly overtakingWorkingSetBytes: bigint;
}

/** A plan as the thread holds it: every path found, every figure exact. */
export interface ThreadPlan {
  /** The victim, for the report (`namespace/name`) and its UID. */
  readonly victim: { readonly key: string; readonly uid: string };
  readonly podDir: string;
  /** The container cgroups to end (never the sandbox's). */
  readonly containers: readonly string[];
  readonly signal: 'SIGTERM' | 'SIGKILL';
  readonly thresholds: readonly ThreadThreshold[];
  readonly rivals: readonly ThreadRival[];
  readonly victimWorkingSetBytes: bigint;
  readonly victimShrinkAllowanceBytes: bigint | null;
  readonly lock: { readonly path: string; readonly fileId: string } | null;
  readonly place: SignallerPlace;
}

/** What the thread made of a crossing: `not met` covers a crossing downwards and a working set not past the threshold. */
export type CrossingOutcome = 'fired' | 'declined' | 'not met' | 'not armed' | 'approach';

/** Which point a registration wakes the thread at. */
export type WatchRole = 'wake' | 'approach';

export type ToThread =
  | { readonly kind: 'plan'; readonly generation: number; readonly plan: ThreadPlan }
  /**
   * A registered eventfd, handed over (the thread owns and closes it from now on), replacing the one
   * of the same threshold and role; `passed`: usage was already at or past the point once registered.
   */
  | { readonly kind: 'watch'; readonly description: string; readonly role: WatchRole; readonly eventFd: number; readonly passed: boolean }
  /** The eventfd of a point no longer wanted: closed. */
  | { readonly kind: 'unwatch'; readonly description: string; readonly role: WatchRole }
  | { readonly kind: 'stop' };

export type FromThread =
  | {
      readonly kind: 'fired';
      readonly generation: number;
      readonly description: string;
      readonly usageBytes: bigint;
      readonly workingSetBytes: bigint;
      readonly wokeAtNs: bigint;
      readonly issuedAtNs: bigint;
      readonly signalled: number;
      readonly refusals: readonly { readonly pid: number; readonly reason: string }[];
    }
  | { readonly kind: 'declined'; readonly generation: number; readonly description: string; readonly reason: string }
  /** The kernel signalled a point of this threshold (either way): the re-arming policy counts it; what came of it, for the logs. */
  | { readonly kind: 'crossed'; readonly description: string; readonly role: WatchRole; readonly outcome: CrossingOutcome }
  | { readonly kind: 'error'; readonly message: string };
