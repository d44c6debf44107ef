// Exponential backoff with jitter, for the watch's reconnect loop, the taint's conflict retries and
// the retried deletions of pods already ended. The delay maths is a pure function so it can be
// tested without waiting; the jitter spreads a fleet of agents that lost the same API server so
// they do not all come back in the same second.

import type { Clock } from './clock.js';

export interface BackoffPolicy {
  /** The first delay. */
  readonly initialDelayMs: number;
  /** No delay is ever longer than this, jitter included. */
  readonly maxDelayMs: number;
  /** Each attempt multiplies the delay by this. */
  readonly factor: number;
  /** Each delay is shortened by up to this fraction of itself, at random (0 = no jitter). */
  readonly jitterRatio: number;
}

/** The watch's policy: close to client-go's reflector (800 ms doubling to a 30 s cap). */
export const WATCH_BACKOFF: BackoffPolicy = Object.freeze({ initialDelayMs: 800, maxDelayMs: 30_000, factor: 2, jitterRatio: 0.5 });

/** Conflict retries on the node object: short, because the next read usually succeeds. */
export const CONFLICT_BACKOFF: BackoffPolicy = Object.freeze({ initialDelayMs: 50, maxDelayMs: 1_000, factor: 2, jitterRatio: 0.5 });

/**
 * The delay before retry number `attempt` (0-based): `initial * factor^attempt`, capped, then
 * shortened by a random fraction of at most `jitterRatio` (so the cap always holds).
 */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.floor(attempt));
  const baseMs = Math.min(policy.maxDelayMs, policy.initialDelayMs * Math.pow(policy.factor, exponent));
  const jitter = Math.min(1, Math.max(0, policy.jitterRatio)) * Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(baseMs * (1 - jitter)));
}

/** A backoff sequence: each `nextDelayMs()` is longer than the last until `reset()`. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly policy: BackoffPolicy,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay to wait now; advances the sequence. */
  nextDelayMs(): number {
    return backoffDelayMs(this.attempt++, this.policy, this.random);
  }

  /** Retries made since the last reset. */
  get attempts(): number {
    return this.attempt;
  }

  reset(): void {
    this.attempt = 0;
  }
}

export interface RetryOptions {
  readonly clock: Clock;
  readonly policy: BackoffPolicy;
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly signal?: AbortSignal | undefined;
  readonly random?: (() => number) | undefined;
}

/**
 * Calls `attempt` until `shouldRetry` says its result is final or the attempts run out, sleeping
 * with backoff in between; returns the last result. `attempt` must not throw.
 */
export async function retryWithBackoff<T>(attempt: (attemptIndex: number) => Promise<T>, shouldRetry: (result: T) => boolean, options: RetryOptions): Promise<T> {
  const backoff = new Backoff(options.policy, options.random);
  const aborted = (): boolean => options.signal?.aborted === true;
  let result = await attempt(0);
  for (let index = 1; index < options.maxAttempts && shouldRetry(result) && !aborted(); index++) {
    await options.clock.sleep(backoff.nextDelayMs(), options.signal);
    if (aborted()) break;
    result = await attempt(index);
  }
  return result;
}
