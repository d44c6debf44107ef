// Checks a Summary that came from outside (the kubelet's /stats/summary, a replay recording) field
// by field and keeps only what has the right shape: a field of the wrong type is dropped and named
// in a problem (`node.memory.availableBytes: expected ...`), a pod without a complete podRef is
// dropped, unknown fields are ignored. The result holds only the fields the engine reads, so a
// kubelet that adds or changes fields cannot crash the agent. The kubelet client keeps what is
// valid; replay refuses a line with any problem.

import type { ContainerStats, FsStats, MemoryStats, NodeStats, PodStats, RuntimeStats, Summary, SystemContainerStats, VolumeStats } from './summary.js';
import { parseRfc3339 } from './time.js';

export interface ValidatedSummary {
  /** Null when the document is not a Summary at all (no `node` object). */
  readonly summary: Summary | null;
  readonly problems: readonly string[];
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 40 ? `${text.slice(0, 40)}...` : text;
}

class Checker {
  readonly problems: string[] = [];

  /**
   * Without `paths` the field paths are not built (a problem then names only the top of its path):
   * a valid Summary, the common case, is checked without the 1,200 path strings a step of 110 pods
   * would otherwise build, and only a Summary with problems is checked again to name them.
   */
  constructor(private readonly paths: boolean) {}

  at(path: string, key: string): string {
    return this.paths ? `${path}.${key}` : path;
  }

  item(path: string, index: number): string {
    return this.paths ? `${path}[${index}]` : path;
  }

  wrong(path: string, expected: string, value: unknown): void {
    this.problems.push(`${path}: expected ${expected}, got ${describe(value)}`);
  }

  object(value: unknown, path: string): Json | undefined {
    if (value === undefined || value === null) return undefined;
    if (isObject(value)) return value;
    this.wrong(path, 'an object', value);
    return undefined;
  }

  array(value: unknown, path: string): unknown[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (Array.isArray(value)) return value;
    this.wrong(path, 'an array', value);
    return undefined;
  }

  /** Copies the listed counters (non-negative integers) and `time` (a string) from `source`. */
  counters<T extends object>(source: Json, path: string, keys: readonly string[]): T {
    const out: Record<string, unknown> = {};
    this.time(source, out, path);
    for (const key of keys) this.counter(source, out, path, key);
    return out as T;
  }

  private time(source: Json, out: { time?: string }, path: string): void {
    if (source.time !== undefined && source.time !== null) {
      if (typeof source.time === 'string' && parseRfc3339(source.time) !== null) out.time = source.time;
      else this.wrong(`${path}.time`, 'an RFC 3339 timestamp', source.time);
    }
  }

  private counter(source: Json, out: Record<string, unknown>, path: string, key: string): void {
    const value = source[key];
    if (value === undefined || value === null) return;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0) out[key] = value;
    else this.wrong(`${path}.${key}`, 'a non-negative integer', value);
  }

  // Memory stats come with every pod and container: checked key by key with the keys written
  // out, which the generic loop above is several times slower at; the same result, in the same order.
  memory(value: unknown, path: string): MemoryStats | undefined {
    const source = this.object(value, path);
    if (source === undefined) return undefined;
    const out: MemoryStats = {};
    this.time(source, out, path);
    const { availableBytes, usageBytes, workingSetBytes, rssBytes } = source;
    if (isCount(availableBytes)) out.availableBytes = availableBytes;
    else if (availableBytes !== undefined && availableBytes !== null) this.wrong(`${path}.availableBytes`, 'a non-negative integer', availableBytes);
    if (isCount(usageBytes)) out.usageBytes = usageBytes;
    else if (usageBytes !== undefined && usageBytes !== null) this.wrong(`${path}.usageBytes`, 'a non-negative integer', usageBytes);
    if (isCount(workingSetBytes)) out.workingSetBytes = workingSetBytes;
    else if (workingSetBytes !== undefined && workingSetBytes !== null) this.wrong(`${path}.workingSetBytes`, 'a non-negative integer', workingSetBytes);
    if (isCount(rssBytes)) out.rssBytes = rssBytes;
    else if (rssBytes !== undefined && rssBytes !== null) this.wrong(`${path}.rssBytes`, 'a non-negative integer', rssBytes);
    return out;
  }

  fs(value: unknown, path: string): FsStats | undefined {
    const source = this.object(value, path);
    return source === undefined ? undefined : this.counters<FsStats>(source, path, ['availableBytes', 'capacityBytes', 'usedBytes', 'inodesFree', 'inodes', 'inodesUsed']);
  }

  name(source: Json, path: string): string | undefined {
    if (typeof source.name === 'string' && source.name !== '') return source.name;
    this.wrong(`${path}.name`, 'a name', source.name);
    return undefined;
  }

  /**
   * A list of named objects (containers, volumes): `build` makes one entry from each object that
   * has a name; undefined when the list is absent.
   */
  named<T>(value: unknown, path: string, build: (source: Json, name: string, path: string) => T | undefined): T[] | undefined {
    const items = this.array(value, path);
    if (items === undefined) return undefined;
    const out: T[] = [];
    items.forEach((item, i) => {
      const itemPath = this.item(path, i);
      const source = this.object(item, itemPath);
      const name = source === undefined ? undefined : this.name(source, itemPath);
      const entry = source === undefined || name === undefined ? undefined : build(source, name, itemPath);
      if (entry !== undefined) out.push(entry);
    });
    return out;
  }
}

function setIfDefined<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value !== undefined) target[key] = value;
}

function nodeStats(check: Checker, source: Json): NodeStats {
  const node: NodeStats = {};
  if (typeof source.nodeName === 'string') node.nodeName = source.nodeName;
  setIfDefined(node, 'memory', check.memory(source.memory, 'node.memory'));
  setIfDefined(
    node,
    'systemContainers',
    check.named(source.systemContainers, 'node.systemContainers', (container, name, path) => {
      const stats: SystemContainerStats = { name };
      setIfDefined(stats, 'memory', check.memory(container.memory, check.at(path, 'memory')));
      return stats;
    }),
  );
  setIfDefined(node, 'fs', check.fs(source.fs, 'node.fs'));
  const runtime = check.object(source.runtime, 'node.runtime');
  if (runtime !== undefined) {
    const stats: RuntimeStats = {};
    setIfDefined(stats, 'imageFs', check.fs(runtime.imageFs, 'node.runtime.imageFs'));
    setIfDefined(stats, 'containerFs', check.fs(runtime.containerFs, 'node.runtime.containerFs'));
    node.runtime = stats;
  }
  const rlimit = check.object(source.rlimit, 'node.rlimit');
  if (rlimit !== undefined) node.rlimit = check.counters(rlimit, 'node.rlimit', ['maxpid', 'curproc']);
  return node;
}

function podStats(check: Checker, item: unknown, path: string): PodStats | undefined {
  const source = check.object(item, path);
  if (source === undefined) return undefined;
  const ref = check.object(source.podRef, check.at(path, 'podRef'));
  if (ref === undefined || typeof ref.uid !== 'string' || ref.uid === '' || typeof ref.name !== 'string' || typeof ref.namespace !== 'string') {
    check.wrong(`${path}.podRef`, 'a name, namespace and uid', source.podRef);
    return undefined;
  }
  const pod: PodStats = { podRef: { name: ref.name, namespace: ref.namespace, uid: ref.uid } };
  setIfDefined(pod, 'memory', check.memory(source.memory, check.at(path, 'memory')));
  const containers = check.named(source.containers, check.at(path, 'containers'), (container, name, containerPath) => {
    const stats: ContainerStats = { name };
    setIfDefined(stats, 'memory', check.memory(container.memory, check.at(containerPath, 'memory')));
    setIfDefined(stats, 'rootfs', check.fs(container.rootfs, check.at(containerPath, 'rootfs')));
    setIfDefined(stats, 'logs', check.fs(container.logs, check.at(containerPath, 'logs')));
    return stats;
  });
  setIfDefined(pod, 'containers', containers);
  const volumes = check.named(source.volume, check.at(path, 'volume'), (volume, name, volumePath) => {
    const fs = check.fs(volume, volumePath);
    return fs === undefined ? undefined : ({ name, ...fs } satisfies VolumeStats);
  });
  setIfDefined(pod, 'volume', volumes);
  setIfDefined(pod, 'ephemeral-storage', check.fs(source['ephemeral-storage'], check.at(path, 'ephemeral-storage')));
  const processStats = check.object(source.process_stats, check.at(path, 'process_stats'));
  if (processStats !== undefined) pod.process_stats = check.counters(processStats, check.at(path, 'process_stats'), ['process_count']);
  return pod;
}

/** Validates a parsed JSON document as a Summary. */
export function validateSummary(document: unknown): ValidatedSummary {
  if (!isObject(document) || !isObject(document.node)) {
    return { summary: null, problems: [`summary: expected an object with a node object, got ${describe(document)}`] };
  }
  const quick = checkSummary(document, document.node, new Checker(false));
  // Checked again with its paths to name what is wrong; the Summary kept is the same.
  return quick.problems.length === 0 ? quick : checkSummary(document, document.node, new Checker(true));
}

function checkSummary(document: Json, node: Json, check: Checker): ValidatedSummary {
  const summary: Summary = { node: nodeStats(check, node) };
  const pods = check.array(document.pods, 'pods');
  if (pods !== undefined) {
    summary.pods = [];
    pods.forEach((item, i) => {
      const pod = podStats(check, item, check.item('pods', i));
      if (pod !== undefined) summary.pods?.push(pod);
    });
  }
  return { summary, problems: check.problems };
}
