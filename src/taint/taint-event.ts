// What the taint logic reports: the two Kubernetes Events upstream records (reason
// `TaintManagerEviction`, type Normal, on the Pod) and the scheduling facts the replay output
// lists as `{"pod", "action", "at", "fireAt"}`.

export const TAINT_EVICTION_REASON = 'TaintManagerEviction';

/** Upstream's message when a timer fires ("Marking for deletion Pod ns/name"). */
export function markingForDeletionMessage(podKey: string): `Marking for deletion Pod ${string}` {
  return `Marking for deletion Pod ${podKey}`;
}

/** Upstream's message when a pending timer was stopped ("Cancelling deletion of Pod ns/name"). */
export function cancellingDeletionMessage(podKey: string): `Cancelling deletion of Pod ${string}` {
  return `Cancelling deletion of Pod ${podKey}`;
}

/**
 * A deletion was queued: a timer, or immediate work (`fireAtMs === atMs`). Upstream records no
 * Kubernetes Event for this; it is a scheduling fact for logs and the replay output.
 */
export interface TaintScheduledEvent {
  readonly type: 'scheduled';
  readonly podKey: string;
  readonly atMs: number;
  /** The start the delay is counted from (an earlier entry's, when upstream re-adds under it). */
  readonly createdAtMs: number;
  readonly fireAtMs: number;
}

/** A pending timer was stopped; record a Normal Event with this reason and message. */
export interface TaintCancelledEvent {
  readonly type: 'cancelled';
  readonly podKey: string;
  readonly atMs: number;
  readonly reason: typeof TAINT_EVICTION_REASON;
  readonly message: `Cancelling deletion of Pod ${string}`;
}

/** Queued work fired and the pod is being deleted; record a Normal Event with this reason and message. */
export interface TaintDeletedEvent {
  readonly type: 'deleted';
  readonly podKey: string;
  readonly atMs: number;
  readonly fireAtMs: number;
  readonly reason: typeof TAINT_EVICTION_REASON;
  readonly message: `Marking for deletion Pod ${string}`;
}

export type TaintEvent = TaintScheduledEvent | TaintCancelledEvent | TaintDeletedEvent;
