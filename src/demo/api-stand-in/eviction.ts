// The policy/v1 Eviction subresource: checked against the pod's PodDisruptionBudget, the pod is
// marked with a DisruptionTarget condition and then deleted with the Eviction's DeleteOptions.

import type { Clock } from '../../api/clock.js';
import { canIgnorePdb, type DisruptionBudgets } from './disruption-budgets.js';
import { clone, isObject, str, type JsonObject } from './json.js';
import { metaOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { checkUidPrecondition, type PodWrites } from './pod-writes.js';
import { parseJson } from './request-body.js';
import { send, type RequestContext } from './responses.js';
import { rfc3339 } from './rfc3339.js';
import { badRequest, notFound } from './status-error.js';
import { strategicMerge } from './strategic-merge.js';

export class Evictions {
  constructor(
    private readonly store: ObjectStore,
    private readonly budgets: DisruptionBudgets,
    private readonly pods: PodWrites,
    private readonly clock: Clock,
  ) {}

  request(ctx: RequestContext, namespace: string, name: string): void {
    const eviction = parseJson(ctx.body);
    if (!isObject(eviction)) throw badRequest('the body of the request must be an Eviction');
    if (eviction.kind !== undefined && eviction.kind !== 'Eviction') throw badRequest(`expected an Eviction, got ${str(eviction.kind)}`);
    const evictionName = str(metaOf(eviction).name);
    if (evictionName !== name) throw badRequest('name in URL does not match name in Eviction object');
    const key = `${namespace}/${name}`;
    const pod = this.store.find('pods', key);
    if (pod === undefined) throw notFound('pods', name);
    if (!canIgnorePdb(pod)) this.budgets.check(pod, namespace);
    const options = isObject(eviction.deleteOptions) ? clone(eviction.deleteOptions) : {};
    checkUidPrecondition(options, pod, key, name);
    // The API server marks a pod it evicts before deleting it (PodDisruptionConditions).
    if (metaOf(pod).deletionTimestamp === undefined) {
      const marked = strategicMerge(clone(pod), { status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'EvictionByEvictionAPI', message: 'Eviction API: evicting', lastTransitionTime: rfc3339(this.clock.nowMs()) }] } }, '') as JsonObject;
      this.store.commit('pods', key, marked);
    }
    this.pods.delete(namespace, name, options);
    send(ctx, 201, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
  }
}
