// The PodActions port over the API server: the Eviction subresource, DELETE, the DisruptionTarget
// status patch and a fresh GET. Each call is bounded by the ApiCaller's timeout and answers with an
// EvictionOutcome; the run loop decides whether to retry, so nothing here loops.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type Pod, type PodCondition } from '../api/pod.js';
import type { DisruptionTargetCondition, EvictionOutcome, PodActions } from '../daemon/ports.js';
import { KubeApiError } from '../errors.js';
import type { ApiCaller, ApiFailure } from './api-call.js';
import type { ClientLibrary, CoreV1Api } from './client-library.js';
import { rfc3339, toWire } from './wire.js';

export interface KubePodActionsDeps {
  readonly lib: ClientLibrary;
  readonly core: CoreV1Api;
  readonly caller: ApiCaller;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The message the API server answers an Eviction with when a PodDisruptionBudget refuses it. */
export const PDB_REFUSAL_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

export class KubePodActions implements PodActions {
  constructor(private readonly deps: KubePodActionsDeps) {}

  /**
   * GET from the API server. Null when the pod does not exist (404). Any other failure rejects
   * with a KubeApiError: answering null would tell the caller the pod is gone when the API server
   * only could not be reached.
   */
  async getPod(namespace: string, name: string): Promise<Pod | null> {
    const { core, caller } = this.deps;
    const result = await caller.call((options) => core.readNamespacedPod({ name, namespace }, options));
    if (result.ok) return toWire<Pod>(result.value);
    if (result.failure.status === 404) return null;
    throw new KubeApiError(result.failure.status, `Reading pod ${namespace}/${name} failed: ${result.failure.message}`);
  }

  async evictPod(pod: Pod, gracePeriodSeconds: number | null): Promise<EvictionOutcome> {
    const { core, caller } = this.deps;
    const { namespace, name } = identity(pod);
    const body = {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name, namespace },
      deleteOptions: { ...(gracePeriodSeconds === null ? {} : { gracePeriodSeconds }), ...preconditionsOf(pod) },
    };
    const result = await caller.call((options) => core.createNamespacedPodEviction({ name, namespace, body }, options));
    if (result.ok) return { result: 'accepted' };
    const outcome = evictionOutcome(result.failure);
    this.log('eviction', pod, outcome);
    return outcome;
  }

  async deletePod(pod: Pod, options: { gracePeriodSeconds: number | null }): Promise<EvictionOutcome> {
    const { core, caller } = this.deps;
    const { namespace, name } = identity(pod);
    if (pod.metadata.uid === undefined || pod.metadata.uid === '') return { result: 'gone', message: 'the pod has no UID to make its deletion conditional on' };
    const grace = options.gracePeriodSeconds === null ? {} : { gracePeriodSeconds: options.gracePeriodSeconds };
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', ...grace, ...preconditionsOf(pod) };
    const result = await caller.call((callOptions) => core.deleteNamespacedPod({ name, namespace, ...grace, body }, callOptions));
    if (result.ok) return { result: 'accepted' };
    const outcome = deletionOutcome(result.failure);
    this.log('delete', pod, outcome);
    return outcome;
  }

  /**
   * A strategic merge patch of the status subresource, merged by condition type, carrying the
   * pod's UID: the API server refuses it (409) if the name now belongs to another pod. The
   * transition time moves only when the condition was not already True. Nothing is sent when
   * the pod already carries the same condition.
   */
  async addDisruptionTarget(pod: Pod, condition: DisruptionTargetCondition): Promise<EvictionOutcome> {
    const { core, caller, lib, clock } = this.deps;
    const { namespace, name } = identity(pod);
    const existing = pod.status?.conditions?.find((c) => c.type === 'DisruptionTarget');
    if (existing !== undefined && existing.status === 'True' && existing.reason === condition.reason && existing.message === condition.message) return { result: 'accepted' };
    const lastTransitionTime = existing?.status === 'True' && existing.lastTransitionTime !== undefined ? String(toWire(existing.lastTransitionTime)) : rfc3339(clock.nowMs());
    const patched: PodCondition = {
      type: 'DisruptionTarget',
      status: 'True',
      reason: condition.reason,
      message: condition.message,
      lastTransitionTime,
      ...(pod.metadata.generation === undefined ? {} : { observedGeneration: pod.metadata.generation }),
    };
    const body = { metadata: pod.metadata.uid === undefined ? {} : { uid: pod.metadata.uid }, status: { conditions: [patched] } };
    const result = await caller.call((options) => core.patchNamespacedPodStatus({ name, namespace, body }, options), { contentType: lib.PatchStrategy.StrategicMergePatch });
    if (result.ok) return { result: 'accepted' };
    const outcome = deletionOutcome(result.failure);
    this.log('DisruptionTarget condition', pod, outcome);
    return outcome;
  }

  private log(action: string, pod: Pod, outcome: EvictionOutcome): void {
    const fields = { pod: podKey(pod), action, result: outcome.result, ...(outcome.result === 'failed' ? { status: outcome.status } : {}), message: 'message' in outcome ? outcome.message : undefined };
    if (outcome.result === 'failed') this.deps.logger.warn('pod request failed', fields);
    else this.deps.logger.debug('pod request refused', fields);
  }
}

function identity(pod: Pod): { namespace: string; name: string } {
  return { namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name ?? '' };
}

function preconditionsOf(pod: Pod): { preconditions?: { uid: string } } {
  return pod.metadata.uid === undefined ? {} : { preconditions: { uid: pod.metadata.uid } };
}

/**
 * An Eviction's answer. 429 means a PodDisruptionBudget refused it only when the body says so
 * (the `DisruptionBudget` cause, or the fixed message): API Priority and Fairness also answers
 * 429 when it sheds load, and that is a failure to retry, not a refusal.
 */
export function evictionOutcome(failure: ApiFailure): EvictionOutcome {
  if (failure.status === 429 && isBudgetRefusal(failure)) {
    const detail = failure.causes.map((cause) => cause.message).filter((m): m is string => m !== undefined && m !== '');
    return { result: 'blocked', message: [failure.message, ...detail].join(' ') };
  }
  return deletionOutcome(failure);
}

/**
 * 404: the pod no longer exists; 409: the UID precondition failed, so the name is another pod's.
 * One 409 is not about identity: an Eviction guarded by a PodDisruptionBudget deletes with a
 * resourceVersion precondition, and a pod updated meanwhile answers "the object has been
 * modified": the same pod is still there, so that is a failure to retry.
 */
export function deletionOutcome(failure: ApiFailure): EvictionOutcome {
  if (failure.status === 404) return { result: 'gone', message: failure.message };
  if (failure.status === 409 && !failure.message.includes('the object has been modified')) return { result: 'gone', message: failure.message };
  return { result: 'failed', status: failure.status, message: failure.message };
}

function isBudgetRefusal(failure: ApiFailure): boolean {
  return failure.causes.some((cause) => cause.reason === 'DisruptionBudget') || failure.message.startsWith('Cannot evict pod as it would violate');
}
