// Writes: pod creation, updates and graceful DELETE (with the QoS class the API server derives),
// the policy/v1 Eviction subresource checked against PodDisruptionBudgets, and core/v1 Events with
// the API server's validation.

import { randomUUID } from 'node:crypto';
import type { Clock } from '../../api/clock.js';
import { compareQuantity, parseQuantity, type Quantity } from '../../api/quantity.js';
import { parseJson, send, type RequestContext } from './http.js';
import { alreadyExists, applyGenerateName, badRequest, clone, conflict, invalid, isObject, labelsOf, metaOf, namespaceMismatch, notFound, phaseOf, rfc3339, StatusError, str, uidPreconditionFailed, type FieldError, type JsonObject, type ObjectStore } from './objects.js';
import { strategicMerge } from './patches.js';

// The QoS class the API server stamps on a new pod, which the agent ranks pods by.

/** The QoS class the API server stamps on a new pod (`GetPodQOS`): from cpu and memory only. */
export function qosClassOf(spec: JsonObject): 'Guaranteed' | 'Burstable' | 'BestEffort' {
  const containers = [...(Array.isArray(spec.containers) ? spec.containers : []), ...(Array.isArray(spec.initContainers) ? spec.initContainers : [])].filter(isObject);
  const quantity = (value: unknown): Quantity | null => {
    if (typeof value !== 'string') return null;
    try {
      return parseQuantity(value);
    } catch {
      return null;
    }
  };
  const nonZero = (value: unknown): boolean => (quantity(value)?.nanos ?? 0n) !== 0n;
  let anySet = false;
  let guaranteed = containers.length > 0;
  for (const container of containers) {
    const resources = isObject(container.resources) ? container.resources : {};
    const requests = isObject(resources.requests) ? resources.requests : {};
    const limits = isObject(resources.limits) ? resources.limits : {};
    for (const resource of ['cpu', 'memory']) {
      const request = requests[resource];
      const limit = limits[resource];
      if (nonZero(request) || nonZero(limit)) anySet = true;
      // Guaranteed: a limit for both, and any request equal to it (an absent request defaults to the limit).
      const limitQuantity = quantity(limit);
      const requestQuantity = quantity(request);
      if (limitQuantity === null || limitQuantity.nanos === 0n) guaranteed = false;
      else if (requestQuantity !== null && compareQuantity(requestQuantity, limitQuantity) !== 0) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

// Pod creation and deletion with the API server's pod strategy: creation validates, names and
// defaults the pod (UID, timestamps, grace period, Pending phase, QoS class); DELETE checks its
// preconditions and then marks the pod terminating for its grace period, or removes it at once
// when there is nothing to stop.

/**
 * A create request's body: an object, in the request's namespace. An empty or absent namespace is
 * the request's, as the API server's BeforeCreate has it; another one is refused.
 */
function createBody(ctx: RequestContext, namespace: string, what: string): JsonObject {
  const body = parseJson(ctx.body);
  if (!isObject(body)) throw badRequest(`the body of the request must be ${what}`);
  const bodyNamespace = metaOf(body).namespace;
  if (bodyNamespace !== undefined && bodyNamespace !== '' && bodyNamespace !== namespace) throw namespaceMismatch();
  return body;
}

export class PodWrites {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  createRequest(ctx: RequestContext, namespace: string): void {
    const body = createBody(ctx, namespace, 'a Pod');
    delete body.status;
    send(ctx, 201, this.create(body, namespace));
  }

  /** `uid`: the UID to give the pod instead of a fresh one (a compromised server's crafted UID). */
  create(obj: JsonObject, namespace: string, uid: string = randomUUID()): JsonObject {
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
    meta.uid = uid;
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

// PodDisruptionBudgets and the budget check of the Eviction subresource: which budget covers a
// pod, how many healthy pods it wants (percentages round up, as the disruption controller does),
// and whether one more disruption fits.

/** A PodDisruptionBudget as the stand-in stores it (policy/v1, integer or percentage budgets). */
export interface StandInPdb {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly selector?: { readonly matchLabels?: Readonly<Record<string, string>> };
    readonly minAvailable?: number | string;
    readonly maxUnavailable?: number | string;
  };
}

export class DisruptionBudgets {
  private readonly pdbs = new Map<string, StandInPdb>();

  constructor(private readonly store: ObjectStore) {}

  add(pdb: StandInPdb): void {
    const namespace = pdb.metadata.namespace ?? 'default';
    this.pdbs.set(`${namespace}/${pdb.metadata.name}`, clone({ ...pdb, metadata: { ...pdb.metadata, namespace } }));
  }

  /** Refuses (429) when the pod's PodDisruptionBudget has no disruption left, as the eviction REST does. */
  check(pod: JsonObject, namespace: string): void {
    const labels = labelsOf(pod);
    const budgets = [...this.pdbs.values()].filter((pdb) => pdb.metadata.namespace === namespace && selects(pdb, labels));
    if (budgets.length === 0) return;
    if (budgets.length > 1) throw new StatusError(500, undefined, 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
    const pdb = budgets[0] as StandInPdb;
    const covered = this.store.values('pods').filter((p) => str(metaOf(p).namespace) === namespace && selects(pdb, labelsOf(p)));
    const expected = covered.length;
    const healthy = covered.filter((p) => metaOf(p).deletionTimestamp === undefined && isReady(p)).length;
    const desiredHealthy = desiredHealthyPods(pdb, expected);
    // An unready pod may go whenever the budget is met without it (the IfHealthyBudget policy).
    if (!isReady(pod) && healthy >= desiredHealthy) return;
    if (healthy - desiredHealthy > 0) return;
    throw new StatusError(429, 'TooManyRequests', "Cannot evict pod as it would violate the pod's disruption budget.", {
      causes: [{ reason: 'DisruptionBudget', message: `The disruption budget ${pdb.metadata.name} needs ${desiredHealthy} healthy pods and has ${healthy} currently` }],
    });
  }
}

/** A pod that is not running, or already going, is evicted without consulting its budget. */
export function canIgnorePdb(pod: JsonObject): boolean {
  const phase = phaseOf(pod);
  return phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || metaOf(pod).deletionTimestamp !== undefined;
}

function isReady(pod: JsonObject): boolean {
  const conditions = isObject(pod.status) && Array.isArray(pod.status.conditions) ? pod.status.conditions : [];
  return conditions.some((c) => isObject(c) && c.type === 'Ready' && c.status === 'True');
}

function selects(pdb: StandInPdb, labels: JsonObject): boolean {
  const wanted = pdb.spec.selector?.matchLabels ?? {};
  return Object.entries(wanted).every(([key, value]) => labels[key] === value);
}

/** The disruption controller's desiredHealthy: percentages of the expected count round up. */
function desiredHealthyPods(pdb: StandInPdb, expected: number): number {
  const scaled = (value: number | string): number => (typeof value === 'number' ? value : Math.ceil((expected * Number.parseFloat(value)) / 100));
  if (pdb.spec.minAvailable !== undefined) return scaled(pdb.spec.minAvailable);
  if (pdb.spec.maxUnavailable !== undefined) return Math.max(0, expected - scaled(pdb.spec.maxUnavailable));
  return expected;
}

// The policy/v1 Eviction subresource: checked against the pod's PodDisruptionBudget, the pod is
// marked with a DisruptionTarget condition and then deleted with the Eviction's DeleteOptions.

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

// core/v1 Event validation, with the API server's field errors: the agent's Events must pass it
// here as they would against a real cluster.

/** core/v1 Event validation: the legacy rules without eventTime, the new ones with it. */
export function validateEvent(event: JsonObject, namespace: string): FieldError[] {
  const errors: FieldError[] = [];
  const meta = metaOf(event);
  if (str(meta.name) === '') errors.push({ field: 'metadata.name', type: 'FieldValueRequired', detail: 'Required value: name or generateName is required' });
  const ref = isObject(event.involvedObject) ? event.involvedObject : null;
  if (ref === null) {
    errors.push({ field: 'involvedObject', type: 'FieldValueRequired', detail: 'Required value' });
  } else {
    if (str(ref.kind) === '') errors.push({ field: 'involvedObject.kind', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(ref.name) === '') errors.push({ field: 'involvedObject.name', type: 'FieldValueRequired', detail: 'Required value' });
  }
  const refNamespace = str(ref?.namespace);
  const hasEventTime = event.eventTime !== undefined && event.eventTime !== null;
  if (!hasEventTime) {
    if (refNamespace === '' ? namespace !== '' && namespace !== 'default' : namespace !== refNamespace) {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
  } else {
    if (refNamespace === '' && namespace !== 'default' && namespace !== 'kube-system') {
      errors.push({ field: 'involvedObject.namespace', type: 'FieldValueInvalid', detail: `Invalid value: "${refNamespace}": does not match event.namespace` });
    }
    if (str(event.reportingComponent) === '') errors.push({ field: 'reportingComponent', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.reportingInstance) === '') errors.push({ field: 'reportingInstance', type: 'FieldValueRequired', detail: 'Required value' });
    if (str(event.action) === '') errors.push({ field: 'action', type: 'FieldValueRequired', detail: 'Required value' });
  }
  if (str(event.reason) === '') errors.push({ field: 'reason', type: 'FieldValueRequired', detail: 'Required value' });
  if (str(event.message) === '') errors.push({ field: 'message', type: 'FieldValueRequired', detail: 'Required value' });
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    errors.push({ field: 'type', type: 'FieldValueNotSupported', detail: `Unsupported value: "${str(event.type)}": supported values: "Normal", "Warning"` });
  }
  return errors;
}

// core/v1 Events: creation with the API server's naming, namespace and validation rules, and the
// Events created so far in creation order, for a test or the demo to read back.

export class Events {
  private readonly order: string[] = [];

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: Clock,
  ) {}

  createRequest(ctx: RequestContext, namespace: string): void {
    const event = createBody(ctx, namespace, 'an Event');
    const meta = metaOf(event);
    meta.namespace = namespace;
    applyGenerateName(meta);
    const name = str(meta.name);
    const errors = validateEvent(event, namespace);
    if (errors.length > 0) throw invalid('Event', name, errors);
    const key = `${namespace}/${name}`;
    if (this.store.has('events', key)) throw alreadyExists('events', name);
    event.kind = 'Event';
    event.apiVersion = 'v1';
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(this.clock.nowMs());
    this.order.push(key);
    send(ctx, 201, this.store.commit('events', key, event));
  }

  /** The Events created so far, in order. */
  list(): JsonObject[] {
    return this.order.map((key) => this.store.find('events', key)).filter((e): e is JsonObject => e !== undefined).map((e) => clone(e));
  }
}
