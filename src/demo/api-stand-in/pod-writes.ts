// Pod creation and deletion with the API server's pod strategy: creation validates, names and
// defaults the pod (UID, timestamps, grace period, Pending phase, QoS class); DELETE checks its
// preconditions and then marks the pod terminating for its grace period, or removes it at once
// when there is nothing to stop.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../api/clock.js';
import { clone, isObject, str, type JsonObject } from './json.js';
import { applyGenerateName, metaOf, phaseOf } from './object-meta.js';
import type { ObjectStore } from './object-store.js';
import { qosClassOf } from './qos-class.js';
import { parseJson } from './request-body.js';
import { send, type RequestContext } from './responses.js';
import { rfc3339 } from './rfc3339.js';
import { alreadyExists, badRequest, conflict, invalid, namespaceMismatch, notFound, uidPreconditionFailed, type FieldError } from './status-error.js';

export class PodWrites {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  createRequest(ctx: RequestContext, namespace: string): void {
    const body = parseJson(ctx.body);
    if (!isObject(body)) throw badRequest('the body of the request must be a Pod');
    const meta = metaOf(body);
    if (meta.namespace !== undefined && meta.namespace !== namespace) throw namespaceMismatch();
    delete body.status;
    send(ctx, 201, this.create(body, namespace));
  }

  create(obj: JsonObject, namespace: string): JsonObject {
    const meta = metaOf(obj);
    applyGenerateName(meta);
    const name = str(meta.name);
    const spec = isObject(obj.spec) ? obj.spec : {};
    const errors: FieldError[] = [];
    if (name === '') errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'Required value: name or generateName is required' });
    if (!Array.isArray(spec.containers) || spec.containers.length === 0) errors.push({ field: 'spec.containers', type: 'FieldValueRequired', detail: 'Required value' });
    if (errors.length > 0) throw invalid('Pod', name, errors);
    const key = `${namespace}/${name}`;
    if (this.store.has('pods', key)) throw alreadyExists('pods', name);
    obj.kind = 'Pod';
    obj.apiVersion = 'v1';
    obj.spec = { terminationGracePeriodSeconds: 30, restartPolicy: 'Always', ...spec };
    meta.namespace = namespace;
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.nowMs());
    if (meta.generation === undefined) meta.generation = 1;
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    if (obj.status === undefined) obj.status = { phase: 'Pending' };
    const status = obj.status as JsonObject;
    if (status.qosClass === undefined) status.qosClass = qosClassOf(obj.spec as JsonObject);
    return this.store.commit('pods', key, obj);
  }

  deleteRequest(ctx: RequestContext, namespace: string, name: string): void {
    const body = parseJson(ctx.body);
    const options: JsonObject = isObject(body) ? body : {};
    const queryGrace = ctx.url.searchParams.get('gracePeriodSeconds');
    if (options.gracePeriodSeconds === undefined && queryGrace !== null) options.gracePeriodSeconds = Number(queryGrace);
    send(ctx, 200, this.delete(namespace, name, options));
  }

  /** DELETE with DeleteOptions: preconditions, then a graceful or immediate deletion. */
  delete(namespace: string, name: string, options: JsonObject): JsonObject {
    const key = `${namespace}/${name}`;
    const pod = this.store.find('pods', key);
    if (pod === undefined) throw notFound('pods', name);
    const meta = metaOf(pod);
    checkUidPrecondition(options, pod, key, name);
    const preconditions = preconditionsOf(options);
    if (typeof preconditions.resourceVersion === 'string' && preconditions.resourceVersion !== meta.resourceVersion) {
      throw conflict('pods', name, `Precondition failed: ResourceVersion in precondition: ${preconditions.resourceVersion}, ResourceVersion in object meta: ${str(meta.resourceVersion)}`);
    }
    const spec = isObject(pod.spec) ? pod.spec : {};
    const phase = phaseOf(pod);
    let graceSeconds = typeof options.gracePeriodSeconds === 'number' ? options.gracePeriodSeconds : typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
    // The pod strategy: an unscheduled or finished pod has nothing to stop, so it goes at once.
    if (str(spec.nodeName) === '' || phase === 'Succeeded' || phase === 'Failed') graceSeconds = 0;
    if (graceSeconds <= 0) return this.store.commit('pods', key, null);
    const currentGrace = meta.deletionGracePeriodSeconds;
    if (meta.deletionTimestamp !== undefined && typeof currentGrace === 'number' && currentGrace <= graceSeconds) return clone(pod);
    const next = clone(pod);
    metaOf(next).deletionTimestamp = rfc3339(this.clock.nowMs() + graceSeconds * 1000);
    metaOf(next).deletionGracePeriodSeconds = graceSeconds;
    return this.store.commit('pods', key, next);
  }
}

function preconditionsOf(options: JsonObject): JsonObject {
  return isObject(options.preconditions) ? options.preconditions : {};
}

/** The UID precondition of DeleteOptions, refused in the storage layer's words. */
export function checkUidPrecondition(options: JsonObject, pod: JsonObject, key: string, name: string): void {
  const preconditions = preconditionsOf(options);
  const uid = metaOf(pod).uid;
  if (typeof preconditions.uid === 'string' && preconditions.uid !== uid) throw uidPreconditionFailed('pods', key, name, preconditions.uid, str(uid));
}
