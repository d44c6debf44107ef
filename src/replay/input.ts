// The replay input format: JSON Lines, one step per line. This file parses and validates one
// line into a step, and names the line and the field path of anything wrong, so an operator can
// fix a recording without guessing. Only `time` is required; absent keys keep their previous value.

import type { Node, Pod } from '../api/pod.js';
import type { Summary } from '../api/summary.js';
import { ReplayInputError } from '../errors.js';

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

// Summary numbers are unsigned integers (bytes, inodes, counts).
function optionalCount(obj: Record<string, Json>, key: string, where: Where): void {
  const value = obj[key];
  if (value === undefined || value === null) return;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw where.key(key).error(`expected a non-negative integer, got ${JSON.stringify(value)}`);
}

/** Parses an RFC 3339 timestamp to ms since the epoch. */
export function parseRfc3339(value: string): number | null {
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value)) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

function optionalTime(obj: Record<string, Json>, key: string, where: Where): void {
  const value = obj[key];
  if (value === undefined || value === null) return;
  if (typeof value !== 'string' || parseRfc3339(value) === null) throw where.key(key).error(`expected an RFC 3339 timestamp, got ${JSON.stringify(value)}`);
}

function validateMemory(value: Json | undefined, where: Where): void {
  if (value === undefined || value === null) return;
  const memory = expectObject(value, where);
  optionalTime(memory, 'time', where);
  for (const key of ['availableBytes', 'usageBytes', 'workingSetBytes', 'rssBytes']) optionalCount(memory, key, where);
}

function validateFs(value: Json | undefined, where: Where): void {
  if (value === undefined || value === null) return;
  const fs = expectObject(value, where);
  optionalTime(fs, 'time', where);
  for (const key of ['availableBytes', 'capacityBytes', 'usedBytes', 'inodesFree', 'inodes', 'inodesUsed']) optionalCount(fs, key, where);
}

/** Validates the fields of a kubelet Summary the engine reads; other fields are accepted and ignored. */
export function validateSummary(value: unknown, where: Where): Summary {
  const summary = expectObject(value, where);
  const nodeWhere = where.key('node');
  const node = expectObject(summary.node ?? {}, nodeWhere);
  validateMemory(node.memory, nodeWhere.key('memory'));
  validateFs(node.fs, nodeWhere.key('fs'));
  if (node.systemContainers !== undefined && node.systemContainers !== null) {
    expectArray(node.systemContainers, nodeWhere.key('systemContainers')).forEach((c, i) => {
      const cw = nodeWhere.key('systemContainers').index(i);
      const container = expectObject(c, cw);
      requiredString(container, 'name', cw);
      validateMemory(container.memory, cw.key('memory'));
    });
  }
  if (node.runtime !== undefined && node.runtime !== null) {
    const rw = nodeWhere.key('runtime');
    const runtime = expectObject(node.runtime, rw);
    validateFs(runtime.imageFs, rw.key('imageFs'));
    validateFs(runtime.containerFs, rw.key('containerFs'));
  }
  if (node.rlimit !== undefined && node.rlimit !== null) {
    const lw = nodeWhere.key('rlimit');
    const rlimit = expectObject(node.rlimit, lw);
    optionalTime(rlimit, 'time', lw);
    optionalCount(rlimit, 'maxpid', lw);
    optionalCount(rlimit, 'curproc', lw);
  }
  if (summary.pods !== undefined && summary.pods !== null) {
    expectArray(summary.pods, where.key('pods')).forEach((p, i) => validatePodStats(p, where.key('pods').index(i)));
  }
  return { ...(summary as unknown as Summary), node: node as unknown as Summary['node'] };
}

function validatePodStats(value: Json, where: Where): void {
  const stats = expectObject(value, where);
  const refWhere = where.key('podRef');
  const ref = expectObject(stats.podRef, refWhere);
  requiredString(ref, 'uid', refWhere);
  optionalString(ref, 'name', refWhere);
  optionalString(ref, 'namespace', refWhere);
  validateMemory(stats.memory, where.key('memory'));
  validateFs(stats['ephemeral-storage'], where.key('ephemeral-storage'));
  if (stats.containers !== undefined && stats.containers !== null) {
    expectArray(stats.containers, where.key('containers')).forEach((c, i) => {
      const cw = where.key('containers').index(i);
      const container = expectObject(c, cw);
      requiredString(container, 'name', cw);
      validateMemory(container.memory, cw.key('memory'));
      validateFs(container.rootfs, cw.key('rootfs'));
      validateFs(container.logs, cw.key('logs'));
    });
  }
  if (stats.volume !== undefined && stats.volume !== null) {
    expectArray(stats.volume, where.key('volume')).forEach((v, i) => {
      const vw = where.key('volume').index(i);
      requiredString(expectObject(v, vw), 'name', vw);
      validateFs(v, vw);
    });
  }
  if (stats.process_stats !== undefined && stats.process_stats !== null) {
    optionalCount(expectObject(stats.process_stats, where.key('process_stats')), 'process_count', where.key('process_stats'));
  }
}

function validateResources(value: Json | undefined, where: Where): void {
  if (value === undefined || value === null) return;
  const resources = expectObject(value, where);
  for (const kind of ['requests', 'limits']) {
    const list = resources[kind];
    if (list === undefined || list === null) continue;
    const lw = where.key(kind);
    const entries = expectObject(list, lw);
    for (const [name, quantity] of Object.entries(entries)) {
      // kubectl prints quantities as strings; a bare number is accepted as the same quantity.
      if (typeof quantity === 'number') entries[name] = String(quantity);
      else if (typeof quantity !== 'string') throw lw.key(name).error(`expected a quantity string, got ${typeName(quantity)}`);
    }
  }
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

/** Validates the fields of a v1.Pod the engine reads. A pod needs a UID: stats are matched by it. */
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
  }
  if (metadata.namespace === undefined) metadata.namespace = 'default';
  const sw = where.key('spec');
  const spec = expectObject(pod.spec, sw);
  validateContainers(spec.containers, sw.key('containers'), true);
  validateContainers(spec.initContainers, sw.key('initContainers'), false);
  validateResources(spec.resources, sw.key('resources'));
  for (const key of ['priority', 'terminationGracePeriodSeconds']) {
    const v = spec[key];
    if (v !== undefined && v !== null && (typeof v !== 'number' || !Number.isInteger(v))) throw sw.key(key).error(`expected an integer, got ${JSON.stringify(v)}`);
  }
  if (spec.volumes !== undefined && spec.volumes !== null) {
    expectArray(spec.volumes, sw.key('volumes')).forEach((v, i) => requiredString(expectObject(v, sw.key('volumes').index(i)), 'name', sw.key('volumes').index(i)));
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
    throw new ReplayInputError(line, '', `invalid JSON: ${(err as Error).message}`);
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

/** RFC 3339 in UTC, without fractional seconds when they are zero (`2026-01-01T00:00:10Z`). */
export function formatRfc3339(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}
