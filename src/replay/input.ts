// The replay input format: JSON Lines, one step per line. This file parses and validates one
// line into a step, and names the line and the field path of anything wrong, so an operator can
// fix a recording without guessing. Only `time` is required; absent keys keep their previous value.

import { CONFIG_MIRROR_ANNOTATION_KEY, nodePodUid } from '../api/node-pod-uid.js';
import type { Node, Pod } from '../api/pod.js';
import { parseQuantity, QuantityParseError } from '../api/quantity.js';
import type { Summary } from '../api/summary.js';
import { validateSummary as checkSummary } from '../api/summary-validation.js';
import { formatRfc3339, parseRfc3339 } from '../api/time.js';
import { errorMessage, ReplayInputError } from '../errors.js';

export { formatRfc3339, parseRfc3339 };

/** One parsed step. Absent keys are `undefined` and keep the previous step's value. */
export interface ReplayStep {
  readonly line: number;
  readonly timeMs: number;
  readonly summary?: Summary;
  readonly pods?: Pod[];
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
 * Validates the fields of a v1.Pod the engine reads. A pod needs a UID: stats are matched by it (a
 * mirror pod's by its static pod's UID, the `kubernetes.io/config.mirror` annotation).
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
 * Parses one input line. `previousTimeMs` enforces that time never goes backwards.
 * Throws {@link ReplayInputError} naming the line and the field.
 */
export function parseReplayLine(text: string, line: number, previousTimeMs: number | null): ReplayStep {
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
  if (previousTimeMs !== null && timeMs < previousTimeMs) {
    throw where.key('time').error(`time goes backwards: ${step.time} is before the previous step's ${formatRfc3339(previousTimeMs)}`);
  }

  const result: { -readonly [K in keyof ReplayStep]: ReplayStep[K] } = { line, timeMs };
  if (step.summary !== undefined) result.summary = validateSummary(step.summary, where.key('summary'));
  if (step.pods !== undefined) {
    const pods = expectArray(step.pods, where.key('pods')).map((p, i) => validatePod(p, where.key('pods').index(i)));
    const seen = new Map<string, number>();
    pods.forEach((pod, i) => {
      const uid = pod.metadata.uid as string;
      const first = seen.get(uid);
      if (first !== undefined) throw where.key('pods').index(i).key('metadata').key('uid').error(`duplicate pod UID ${uid} (also pods[${first}])`);
      seen.set(uid, i);
    });
    // A static pod's UID names its stats: it must be no other pod's.
    pods.forEach((pod, i) => {
      const id = nodePodUid(pod);
      const other = id.ok && id.mirror ? seen.get(id.uid) : undefined;
      if (id.ok && other !== undefined && other !== i) {
        throw where.key('pods').index(i).key('metadata').key('annotations').key(CONFIG_MIRROR_ANNOTATION_KEY).error(`static pod UID ${id.uid} is also the UID of pods[${other}]`);
      }
      if (id.ok && id.mirror) seen.set(id.uid, i);
    });
    result.pods = pods;
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
