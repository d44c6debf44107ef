// The EventRecorder port over the API server: core/v1 Events in the legacy form client-go's record
// package writes (and the kubelet's eviction manager therefore produces): no eventTime, so the API
// server applies the legacy validation; firstTimestamp = lastTimestamp, count 1, source.component
// and source.host, and, as client-go sets them from the same source, reportingComponent and
// reportingInstance (the kubelet's are `kubelet` and its node's name; events.k8s.io/v1 calls the
// first `reportingController`); annotations on the Event itself (the kubelet's AnnotatedEventf).
// Best effort: a failure is logged, never thrown, and never delays an eviction (Events are written
// beside the evictions, never before them). As client-go's recorder does for the kubelet, a write
// the API server did not answer (down, paused, too slow) is retried every 10 s, 12 tries in all, the
// first retry after a random part of that (so a fleet's agents that lost the API server together
// come back apart), and an Evicted Event outlives an API outage of up to two minutes. So are the
// answers of an API server that is loaded or still starting: a 429 (shedding load, which client-go's
// REST client retries on its own; in a fleet-wide storm that is where Events were lost), a 5xx, and
// a 401 or 403 (authentication and RBAC answer before their caches have loaded: one of a restart's
// Evicted Events was lost that way). Only an answer about the Event itself (400, 404, 409, 422...)
// is final. A retry that finds the Event already there (the earlier try reached the server after
// this side gave up) counts as written, so an Event is never doubled.

import { setMaxListeners } from 'node:events';
import type { CoreV1Event, V1ObjectReference as ObjectReference } from '@kubernetes/client-node';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type ObjectRef, type Pod } from '../api/pod.js';
import type { AgentEvent, EventRecorder } from '../daemon/ports.js';
import type { ApiCaller } from './api-call.js';
import type { CoreV1Api } from './client-library.js';

export interface KubeEventRecorderDeps {
  readonly core: CoreV1Api;
  readonly caller: ApiCaller;
  readonly clock: Clock;
  readonly logger: Logger;
  /** `source.component`: who reports. */
  readonly component: string;
  /** `source.host`, and the Node the node events are about. */
  readonly nodeName: string;
  /** Spreads the first retry over the interval. */
  readonly random?: (() => number) | undefined;
}

/** client-go's record package: `maxTriesPerEvent` and `defaultSleepDuration`. */
export const EVENT_MAX_TRIES = 12;
export const EVENT_RETRY_INTERVAL_MS = 10_000;

/** Whether an Event write that failed with `status` may land if tried again (0: no answer). */
export function retryable(status: number): boolean {
  return status === 0 || status === 401 || status === 403 || status === 429 || status >= 500;
}

export class KubeEventRecorder implements EventRecorder {
  private sequence = 0;
  private readonly closing = new AbortController();

  constructor(private readonly deps: KubeEventRecorderDeps) {
    // Every write waiting for its retry listens to it; their number is bounded by the callers' queues.
    setMaxListeners(0, this.closing.signal);
  }

  async podEvent(pod: Pod, event: AgentEvent): Promise<void> {
    const namespace = pod.metadata.namespace ?? 'default';
    const ref: ObjectReference = {
      apiVersion: pod.apiVersion ?? 'v1',
      kind: 'Pod',
      namespace,
      name: pod.metadata.name ?? '',
      ...(pod.metadata.uid === undefined ? {} : { uid: pod.metadata.uid }),
    };
    await this.record(namespace, ref, event, podKey(pod));
  }

  /**
   * Node events go to the `default` namespace (a Node has none, and legacy validation accepts
   * only "" or "default" then). The reference uses the node name as its UID, as the kubelet does;
   * `kubectl describe node` looks events up by both.
   */
  async nodeEvent(event: AgentEvent): Promise<void> {
    const { nodeName } = this.deps;
    await this.record('default', { apiVersion: 'v1', kind: 'Node', name: nodeName, uid: nodeName }, event, nodeName);
  }

  /** An owner's Event lives in its namespace, as client-go's recorder puts it. */
  async objectEvent(object: ObjectRef, event: AgentEvent): Promise<void> {
    const ref: ObjectReference = {
      apiVersion: object.apiVersion,
      kind: object.kind,
      namespace: object.namespace,
      name: object.name,
      ...(object.uid === null ? {} : { uid: object.uid }),
    };
    await this.record(object.namespace, ref, event, `${object.kind} ${object.namespace}/${object.name}`);
  }

  private async record(namespace: string, involvedObject: ObjectReference, event: AgentEvent, subject: string): Promise<void> {
    const { core, caller, clock, logger, component, nodeName } = this.deps;
    const now = new Date(clock.nowMs());
    const body: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: {
        name: `${involvedObject.name ?? 'unknown'}.${this.uniqueSuffix(now.getTime())}`,
        namespace,
        ...(event.annotations === undefined || Object.keys(event.annotations).length === 0 ? {} : { annotations: { ...event.annotations } }),
      },
      involvedObject,
      reason: event.reason,
      message: event.message,
      type: event.type,
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component, host: nodeName },
      reportingComponent: component,
      reportingInstance: nodeName,
    };
    for (let attempt = 1; ; attempt++) {
      const result = await caller.call((options) => core.createNamespacedEvent({ namespace, body }, options));
      if (result.ok) return;
      const { status, message } = result.failure;
      if (attempt > 1 && status === 409) {
        logger.debug('event already recorded by an earlier try', { object: subject, reason: event.reason, attempts: attempt });
        return;
      }
      const fields = { object: subject, reason: event.reason, status, error: message, attempts: attempt };
      if (!retryable(status) || attempt >= EVENT_MAX_TRIES || this.closing.signal.aborted) {
        logger.warn('recording an event failed', fields);
        return;
      }
      const retryInMs = attempt === 1 ? Math.round(EVENT_RETRY_INTERVAL_MS * Math.min(1, Math.max(0, (this.deps.random ?? Math.random)()))) : EVENT_RETRY_INTERVAL_MS;
      logger.warn('recording an event failed; retrying', { ...fields, retryInMs });
      await clock.sleep(retryInMs, this.closing.signal);
      if (this.closing.signal.aborted) {
        logger.warn('recording an event failed', { ...fields, error: `${message}; not retried: the agent is stopping` });
        return;
      }
    }
  }

  /** Stops retrying: Events still unwritten are dropped (logged), as the agent stops. */
  close(): void {
    this.closing.abort();
  }

  // client-go names events `<object>.<UnixNano in hex>`; a sequence number in the low digits keeps
  // two events of the same millisecond apart.
  private uniqueSuffix(nowMs: number): string {
    this.sequence = (this.sequence + 1) % 1_000_000;
    return (BigInt(nowMs) * 1_000_000n + BigInt(this.sequence)).toString(16);
  }
}
