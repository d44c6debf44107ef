// The replay input format: JSON Lines, one step per line. This file parses and validates one
// line into a step, and names the line and the field path of anything wrong, so an operator can
// fix a recording without guessing. Only `time` is required; absent keys keep their previous value.
// What makes a line unusable (its JSON, its time, the Summary's or the Node's shape) stops the
// replay; what is wrong with one pod refuses that pod alone, with its reason, as the running agent
// refuses a pod it cannot trust and decides on the rest: a recording of a real node holds what the
// kubelet accepted (a static pod's manifest may set any `metadata.uid`, which its mirror pod's
// annotation then carries), and one odd pod must not make the whole node's history unreadable.

import { CONFIG_MIRROR_ANNOTATION_KEY, nodePodUid } from '../api/node-pod-uid.js';
import { sharedPodUidReason, type Node, type Pod } from '../api/pod.js';
import { parseQuantity, QuantityParseError } from '../api/quantity.js';
import type { Summary } from '../api/summary.js';
import { validateSummary as checkSummary } from '../api/summary-validation.js';
import { formatRfc3339, parseRfc3339 } from '../api/time.js';
import { errorMessage, ReplayInputError } from '../errors.js';

export { formatRfc3339, parseRfc3339 };

/**
 * A pod of a step's `pods` left out of the step, as the agent leaves out a pod it cannot trust:
 * never ranked, evicted or handed to the taint logic.
 */
export interface ReplayRefusedPod {
  /** `namespace/name`, or `pods[i]` when the entry has no name. */
  readonly pod: string;
  /** The line, the field path and what is wrong: `line 3: pods[1].metadata.uid: is required`. */
  readonly reason: string;
}

/** One parsed step. Absent keys are `undefined` and keep the previous step's value. */
export interface ReplayStep {
  readonly line: number;
  readonly timeMs: number;
  readonly summary?: Summary;
  /** The pods of the step's `pods` that were not refused. */
  readonly pods?: Pod[];
  /** With `pods`: the entries refused, in their order (empty when none was). */
  readonly refusedPods?: readonly ReplayRefusedPod[];
  readonly node?: Node | null;
  readonly dedicatedImageFs?: boolean;
  readonly splitContainerFs?: boolean;
}

const STEP_KEYS = new Set(['time', 'summary', 'pods', 'node', 'dedicatedImageFs', 'splitContainerFs']);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A validation context: the line and a field path, extended as the walk descends. */
class Where {
  constructor(
    readonly line: number,
    readonly path: string,
  ) {}

  key(name: string): Where {
    return new Where(this.line, /^[A-Za-z_][\w]*$/.test(name) ? (this.path === '' ? name : `${this.path}.${name}`) : `${this.path}["${name}"]`);
  }

  index(i: number): Where {
    return new Where(this.line, `${this.path}[${i}]`);
  }

  error(message: string): ReplayInputError {
    return new ReplayInputError(this.line, this.path, message);
  }
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function expectObject(value: unknown, where: Where): Record<string, Json> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw where.error(`expected an object, got ${typeName(value)}`);
  return value as Record<string, Json>;
}

function expectArray(value: unknown, where: Where): Json[] {
  if (!Array.isArray(value)) throw where.error(`expected an array, got ${typeName(value)}`);
  return value;
}

function optionalString(obj: Record<string, Json>, key: string, where: Where): void {
  const value = obj[key];
  if (value !== undefined && value !== null && typeof value !== 'string') throw where.key(key).error(`expected a string, got ${typeName(value)}`);
}

function requiredString(obj: Record<string, Json>, key: string, where: Where): string {
  const value = obj[key];
  if (typeof value !== 'string' || value === '') throw where.key(key).error(value === undefined ? 'is required' : `expected a non-empty string, got ${typeName(value)}`);
  return value;
}

/**
 * The shared Summary check (the kubelet client's too), strict here: a recording with any field
 * of the wrong shape is refused at its first problem, named by line and field.
 */
function validateSummary(value: unknown, where: Where): Summary {
  const { summary, problems } = checkSummary(value);
  const first = problems[0];
  if (summary === null || first !== undefined) {
    const separator = first?.indexOf(': ') ?? -1;
    // Problems read `node.memory.availableBytes: expected ...`; the path goes into the field.
    const field = first === undefined || separator < 0 ? '' : first.slice(0, separator);
    const message = first === undefined ? 'is not a Summary' : separator < 0 ? first : first.slice(separator + 2);
    throw new ReplayInputError(where.line, field === '' || field === 'summary' ? where.path : `${where.path}.${field}`, message);
  }
  return summary;
}

// One quantity, as its text. kubectl prints quantities as strings; a bare number is accepted as
// the same quantity. What the engine could not parse it would read as absent: refused here instead.
function validateQuantity(quantity: Json | undefined, where: Where): string {
  if (typeof quantity !== 'number' && typeof quantity !== 'string') throw where.error(`expected a quantity string, got ${typeName(quantity)}`);
  const text = String(quantity);
  try {
    parseQuantity(text);
  } catch (err) {
    if (!(err instanceof QuantityParseError)) throw err;
    throw where.error(`invalid quantity ${JSON.stringify(quantity)}: ${err.message}`);
  }
  return text;
}

function validateResourceList(list: Json | undefined, where: Where): void {
  if (list === undefined || list === null) return;
  const entries = expectObject(list, where);
  for (const [name, quantity] of Object.entries(entries)) entries[name] = validateQuantity(quantity, where.key(name));
}

function validateResources(value: Json | undefined, where: Where): void {
  if (value === undefined || value === null) return;
  const resources = expectObject(value, where);
  for (const kind of ['requests', 'limits']) validateResourceList(resources[kind], where.key(kind));
}

function validateContainers(value: Json | undefined, where: Where, required: boolean): void {
  if (value === undefined || value === null) {
    if (required) throw where.error('is required');
    return;
  }
  expectArray(value, where).forEach((c, i) => {
    const cw = where.index(i);
    const container = expectObject(c, cw);
    requiredString(container, 'name', cw);
    validateResources(container.resources, cw.key('resources'));
  });
}

/**
 * Validates the fields of a v1.Pod the engine reads; throws at the first problem, which refuses
 * the pod. A pod needs a UID: stats are matched by it (a mirror pod's by its static pod's UID, the
 * `kubernetes.io/config.mirror` annotation, which must have a form the agent may use as a UID).
 */
export function validatePod(value: unknown, where: Where): Pod {
  const pod = expectObject(value, where);
  const mw = where.key('metadata');
  const metadata = expectObject(pod.metadata, mw);
  requiredString(metadata, 'name', mw);
  requiredString(metadata, 'uid', mw);
  optionalString(metadata, 'namespace', mw);
  if (metadata.annotations !== undefined && metadata.annotations !== null) {
    const aw = mw.key('annotations');
    for (const [key, v] of Object.entries(expectObject(metadata.annotations, aw))) {
      if (typeof v !== 'string') throw aw.key(key).error(`expected a string, got ${typeName(v)}`);
    }
    // A mirror pod's stats are under its static pod's UID, which this annotation must name.
    const id = nodePodUid(pod as unknown as Pod);
    if (!id.ok) throw aw.key(CONFIG_MIRROR_ANNOTATION_KEY).error(id.reason.replace(/^its \S+ annotation /, ''));
  }
  if (metadata.ownerReferences !== undefined && metadata.ownerReferences !== null) {
    // The storm guard counts evictions by owner, read from these.
    expectArray(metadata.ownerReferences, mw.key('ownerReferences')).forEach((r, i) => {
      const rw = mw.key('ownerReferences').index(i);
      const ref = expectObject(r, rw);
      requiredString(ref, 'kind', rw);
      requiredString(ref, 'name', rw);
      for (const key of ['apiVersion', 'uid']) optionalString(ref, key, rw);
      if (ref.controller !== undefined && ref.controller !== null && typeof ref.controller !== 'boolean') throw rw.key('controller').error(`expected a boolean, got ${typeName(ref.controller)}`);
    });
  }
  if (metadata.namespace === undefined) metadata.namespace = 'default';
  const sw = where.key('spec');
  const spec = expectObject(pod.spec, sw);
  validateContainers(spec.containers, sw.key('containers'), true);
  validateContainers(spec.initContainers, sw.key('initContainers'), false);
  validateResources(spec.resources, sw.key('resources'));
  validateResourceList(spec.overhead, sw.key('overhead'));
  for (const key of ['priority', 'terminationGracePeriodSeconds']) {
    const v = spec[key];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v))) throw sw.key(key).error(`expected an integer, got ${JSON.stringify(v)}`);
  }
  if (spec.volumes !== undefined && spec.volumes !== null) {
    expectArray(spec.volumes, sw.key('volumes')).forEach((v, i) => {
      const vw = sw.key('volumes').index(i);
      const volume = expectObject(v, vw);
      requiredString(volume, 'name', vw);
      if (volume.emptyDir === undefined || volume.emptyDir === null) return;
      const emptyDir = expectObject(volume.emptyDir, vw.key('emptyDir'));
      if (emptyDir.sizeLimit !== undefined && emptyDir.sizeLimit !== null) emptyDir.sizeLimit = validateQuantity(emptyDir.sizeLimit, vw.key('emptyDir').key('sizeLimit'));
    });
  }
  if (spec.tolerations !== undefined && spec.tolerations !== null) {
    expectArray(spec.tolerations, sw.key('tolerations')).forEach((t, i) => {
      const tw = sw.key('tolerations').index(i);
      const toleration = expectObject(t, tw);
      for (const key of ['key', 'operator', 'value', 'effect']) optionalString(toleration, key, tw);
      const seconds = toleration.tolerationSeconds;
      if (seconds !== undefined && seconds !== null && (typeof seconds !== 'number' || !Number.isInteger(seconds))) {
        throw tw.key('tolerationSeconds').error(`expected an integer, got ${JSON.stringify(seconds)}`);
      }
    });
  }
  if (pod.status !== undefined && pod.status !== null) expectObject(pod.status, where.key('status'));
  return pod as unknown as Pod;
}

/** How a refused entry is named: its key when it has a name, else its place in the list. */
function entryName(value: Json, where: Where): string {
  const metadata = typeof value === 'object' && value !== null && !Array.isArray(value) ? value.metadata : undefined;
  if (typeof metadata !== 'object' || metadata === null || Array.isArray(metadata)) return where.path;
  const { name, namespace } = metadata;
  if (typeof name !== 'string' || name === '') return where.path;
  const key = `${typeof namespace === 'string' && namespace !== '' ? namespace : 'default'}/${name}`;
  return key.length > 320 ? `${key.slice(0, 320)}...` : key;
}

/** A UID as a reason shows it: as it is when plain, else quoted and bounded. */
function shownUid(uid: string): string {
  return /^[\w.-]{1,80}$/.test(uid) ? uid : JSON.stringify(uid.length > 80 ? `${uid.slice(0, 80)}...` : uid);
}

/**
 * A step's pods: each checked by itself, then against the others (the UIDs stats are matched by
 * must each name one pod). A refused pod is left out with its reason; the rest are decided on.
 */
function checkPods(entries: Json[], where: Where): { pods: Pod[]; refusedPods: ReplayRefusedPod[] } {
  const refusals: (ReplayInputError | null)[] = [];
  const checked: (Pod | null)[] = entries.map((entry, i) => {
    try {
      const pod = validatePod(entry, where.index(i));
      refusals.push(null);
      return pod;
    } catch (err) {
      if (!(err instanceof ReplayInputError)) throw err;
      refusals.push(err);
      return null;
    }
  });
  const refuse = (i: number, error: ReplayInputError): void => {
    refusals[i] ??= error;
  };
  const names = entries.map((entry, i) => entryName(entry, where.index(i)));
  const shown = (j: number): string => (names[j] === where.index(j).path ? names[j] : `${where.index(j).path} (${names[j]})`);

  // The API server gives every pod its own UID: pods sharing one are none of them trusted, whatever
  // else is wrong with them (as the agent's node pod filter judges a node's pods).
  const byUid = new Map<string, number[]>();
  entries.forEach((entry, i) => {
    const metadata = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? entry.metadata : undefined;
    const uid = typeof metadata === 'object' && metadata !== null && !Array.isArray(metadata) ? metadata.uid : undefined;
    if (typeof uid !== 'string' || uid === '') return;
    const list = byUid.get(uid);
    if (list === undefined) byUid.set(uid, [i]);
    else list.push(i);
  });
  for (const [uid, list] of byUid) {
    if (list.length < 2) continue;
    for (const i of list) {
      // The first others only, so that many pods sharing one UID cost linear time.
      const others = list.slice(0, 4).filter((j) => j !== i);
      refuse(i, where.index(i).key('metadata').key('uid').error(sharedPodUidReason(shownUid(uid), others, shown, list.length - 1)));
    }
  }

  // A static pod's UID names its stats: it must be no other pod's, API or static. The pod whose
  // API UID it is keeps it (the API server's UIDs come first); mirror pods claiming one static UID
  // are all refused.
  const byStaticUid = new Map<string, number[]>();
  checked.forEach((pod, i) => {
    if (pod === null || refusals[i] !== null) return;
    const id = nodePodUid(pod);
    if (!id.ok || !id.mirror) return;
    const list = byStaticUid.get(id.uid);
    if (list === undefined) byStaticUid.set(id.uid, [i]);
    else list.push(i);
  });
  for (const [uid, list] of byStaticUid) {
    for (const i of list) {
      const field = where.index(i).key('metadata').key('annotations').key(CONFIG_MIRROR_ANNOTATION_KEY);
      const apiOwner = byUid.get(uid)?.find((j) => j !== i);
      const otherMirror = list.find((j) => j !== i);
      if (apiOwner !== undefined) refuse(i, field.error(`static pod UID ${uid} is also the UID of ${shown(apiOwner)}`));
      else if (otherMirror !== undefined) refuse(i, field.error(`static pod UID ${uid} is also the static pod UID of ${shown(otherMirror)}`));
    }
  }

  const pods: Pod[] = [];
  const refusedPods: ReplayRefusedPod[] = [];
  checked.forEach((pod, i) => {
    const refusal = refusals[i] ?? null;
    if (refusal !== null) refusedPods.push({ pod: names[i] ?? where.index(i).path, reason: refusal.message });
    else if (pod !== null) pods.push(pod);
  });
  return { pods, refusedPods };
}

function validateNode(value: unknown, where: Where): Node | null {
  if (value === null) return null;
  const node = expectObject(value, where);
  const metadata = expectObject(node.metadata ?? {}, where.key('metadata'));
  optionalString(metadata, 'name', where.key('metadata'));
  if (node.spec !== undefined && node.spec !== null) {
    const sw = where.key('spec');
    const spec = expectObject(node.spec, sw);
    if (spec.taints !== undefined && spec.taints !== null) {
      expectArray(spec.taints, sw.key('taints')).forEach((t, i) => {
        const tw = sw.key('taints').index(i);
        const taint = expectObject(t, tw);
        requiredString(taint, 'key', tw);
        requiredString(taint, 'effect', tw);
        optionalString(taint, 'value', tw);
      });
    }
  }
  return node as unknown as Node;
}

/**
 * A line read as far as its time: its JSON, its keys and its `time`, checked; the rest of the
 * step not yet validated. What `parseReplayLine` does in three parts, so that a line can be read
 * and validated without knowing the previous step's time (on another thread), and its order be
 * checked afterwards, before any error found past its time is reported.
 */
export interface ReplayLineHead {
  readonly line: number;
  readonly timeMs: number;
  /** `time` as the line spells it, for the "time goes backwards" message. */
  readonly timeText: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The first part of {@link parseReplayLine}: everything up to the time's order. */
export function readReplayLineHead(text: string, line: number): ReplayLineHead {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReplayInputError(line, '', `invalid JSON: ${errorMessage(err)}`);
  }
  const where = new Where(line, '');
  const step = expectObject(value, where);
  for (const key of Object.keys(step)) {
    if (!STEP_KEYS.has(key)) throw where.key(key).error(`unknown key (expected one of ${[...STEP_KEYS].join(', ')})`);
  }
  if (step.time === undefined) throw where.key('time').error('is required');
  if (typeof step.time !== 'string') throw where.key('time').error(`expected an RFC 3339 timestamp, got ${typeName(step.time)}`);
  const timeMs = parseRfc3339(step.time);
  if (timeMs === null) throw where.key('time').error(`expected an RFC 3339 timestamp, got ${JSON.stringify(step.time)}`);
  return { line, timeMs, timeText: step.time, fields: step };
}

/** The second part: time never goes backwards. */
export function checkReplayTimeOrder(line: number, timeMs: number, timeText: string, previousTimeMs: number | null): void {
  if (previousTimeMs !== null && timeMs < previousTimeMs) {
    throw new Where(line, '').key('time').error(`time goes backwards: ${timeText} is before the previous step's ${formatRfc3339(previousTimeMs)}`);
  }
}

/** The third part: the step's summary, pods, node and flags, validated. */
export function completeReplayLine(head: ReplayLineHead): ReplayStep {
  const { line, timeMs } = head;
  const step = head.fields as Readonly<Record<string, Json>>;
  const where = new Where(line, '');
  const result: { -readonly [K in keyof ReplayStep]: ReplayStep[K] } = { line, timeMs };
  if (step.summary !== undefined) result.summary = validateSummary(step.summary, where.key('summary'));
  if (step.pods !== undefined) {
    const { pods, refusedPods } = checkPods(expectArray(step.pods, where.key('pods')), where.key('pods'));
    result.pods = pods;
    result.refusedPods = refusedPods;
  }
  if (step.node !== undefined) result.node = validateNode(step.node, where.key('node'));
  for (const key of ['dedicatedImageFs', 'splitContainerFs'] as const) {
    const v = step[key];
    if (v === undefined) continue;
    if (typeof v !== 'boolean') throw where.key(key).error(`expected a boolean, got ${typeName(v)}`);
    result[key] = v;
  }
  return result;
}

/**
 * Parses one input line. `previousTimeMs` enforces that time never goes backwards.
 * Throws {@link ReplayInputError} naming the line and the field.
 */
export function parseReplayLine(text: string, line: number, previousTimeMs: number | null): ReplayStep {
  const head = readReplayLineHead(text, line);
  checkReplayTimeOrder(line, head.timeMs, head.timeText, previousTimeMs);
  return completeReplayLine(head);
}
