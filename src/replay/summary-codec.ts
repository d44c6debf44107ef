// Carries validated Summaries from a thread that parsed them to the thread that decides on them,
// as numbers and strings instead of objects: rebuilding a step's Summary from typed arrays costs
// the deciding thread a fraction of a JSON.parse of it, and a structured clone costs twice a
// JSON.parse. The objects rebuilt are the validator's (api/summary-validation.ts) field for field,
// in the same key order (a field of the Summary types it did not carry would not compile). Strings
// (names, UIDs, times) repeat from step to step: each is sent once, then by its number in a
// dictionary both sides keep in step, started over once it holds MAX_DICTIONARY_STRINGS.

import type { ContainerStats, FsStats, MemoryStats, NodeStats, PodReference, PodStats, RlimitStats, RuntimeStats, Summary, SystemContainerStats, VolumeStats } from '../api/summary.js';

/** One batch of encoded Summaries, in the order they were added. */
export interface EncodedSummaries {
  /** Presence masks, counts and string numbers. */
  readonly codes: Int32Array<ArrayBuffer>;
  readonly numbers: Float64Array<ArrayBuffer>;
  /** The strings new to the dictionary in this batch, in the order of their numbers. */
  readonly strings: readonly string[];
  /** The dictionary starts empty at this batch. */
  readonly restart: boolean;
}

/** Past this many strings the dictionary starts over at the next batch (it holds at most one batch's more). */
export const MAX_DICTIONARY_STRINGS = 1 << 16;

// Compiles only while the codec carries every field of the Summary types, which are all the engine
// can read: a field added to one of them fails here until it is carried both ways below. (A field
// the validator kept outside them would be read by nothing, so leaving it behind decides nothing.)
type Carries<T, Fields extends PropertyKey> = [Exclude<keyof T, Fields>] extends [never] ? true : false;
type Assert<T extends true> = T;
export type SummaryCodecCarriesEveryField = [
  Assert<Carries<Summary, 'node' | 'pods'>>,
  Assert<Carries<NodeStats, 'nodeName' | 'memory' | 'systemContainers' | 'fs' | 'runtime' | 'rlimit'>>,
  Assert<Carries<MemoryStats, 'time' | 'availableBytes' | 'usageBytes' | 'workingSetBytes' | 'rssBytes'>>,
  Assert<Carries<FsStats, 'time' | 'availableBytes' | 'capacityBytes' | 'usedBytes' | 'inodesFree' | 'inodes' | 'inodesUsed'>>,
  Assert<Carries<VolumeStats, 'name' | keyof FsStats>>,
  Assert<Carries<RuntimeStats, 'imageFs' | 'containerFs'>>,
  Assert<Carries<RlimitStats, 'time' | 'maxpid' | 'curproc'>>,
  Assert<Carries<SystemContainerStats, 'name' | 'memory'>>,
  Assert<Carries<PodStats, 'podRef' | 'memory' | 'containers' | 'volume' | 'ephemeral-storage' | 'process_stats'>>,
  Assert<Carries<PodReference, 'name' | 'namespace' | 'uid'>>,
  Assert<Carries<NonNullable<PodStats['process_stats']>, 'time' | 'process_count'>>,
  Assert<Carries<ContainerStats, 'name' | 'memory' | 'rootfs' | 'logs'>>,
];

/** Encodes Summaries batch by batch; the encoding of each part mirrors the decoder's below, bit for bit. */
export class SummaryEncoder {
  private codes = new Int32Array(4096);
  private codeCount = 0;
  private numbers = new Float64Array(1024);
  private numberCount = 0;
  private readonly ids = new Map<string, number>();
  private newStrings: string[] = [];
  private restart = false;
  private previousStrings: (string | undefined)[] = [];
  private previousIds: number[] = [];
  private stringSlot = 0;
  private lastString: string | undefined;
  private lastId = 0;

  add(summary: Summary): void {
    this.stringSlot = 0;
    this.code(summary.pods === undefined ? 0 : 1);
    this.node(summary.node);
    if (summary.pods !== undefined) {
      this.code(summary.pods.length);
      for (const pod of summary.pods) this.pod(pod);
    }
  }

  /** What was added since the last call; the arrays are the caller's (transferable). */
  take(): EncodedSummaries {
    const batch = { codes: this.codes.slice(0, this.codeCount), numbers: this.numbers.slice(0, this.numberCount), strings: this.newStrings, restart: this.restart };
    this.codeCount = 0;
    this.numberCount = 0;
    this.newStrings = [];
    this.restart = this.ids.size >= MAX_DICTIONARY_STRINGS;
    if (this.restart) {
      this.ids.clear();
      this.previousStrings = [];
      this.previousIds = [];
      this.lastString = undefined;
    }
    return batch;
  }

  private code(value: number): void {
    if (this.codeCount === this.codes.length) {
      const grown = new Int32Array(this.codes.length * 2);
      grown.set(this.codes);
      this.codes = grown;
    }
    this.codes[this.codeCount++] = value;
  }

  private number(value: number): void {
    if (this.numberCount === this.numbers.length) {
      const grown = new Float64Array(this.numbers.length * 2);
      grown.set(this.numbers);
      this.numbers = grown;
    }
    this.numbers[this.numberCount++] = value;
  }

  // The k-th string of a Summary is most often the k-th string of the one before (the same pod's
  // name and UID), or else the string just before it (the step's time, in every pod's stats):
  // comparing with those is cheaper than hashing a string JSON.parse has just made.
  private string(value: string): void {
    const slot = this.stringSlot++;
    let id: number | undefined;
    if (this.previousStrings[slot] === value) id = this.previousIds[slot] as number;
    else {
      id = value === this.lastString ? this.lastId : this.ids.get(value);
      if (id === undefined) {
        id = this.ids.size;
        this.ids.set(value, id);
        this.newStrings.push(value);
      }
      this.previousStrings[slot] = value;
      this.previousIds[slot] = id;
    }
    this.lastString = value;
    this.lastId = id;
    this.code(id);
  }

  private optionalNumber(value: number | undefined): void {
    if (value !== undefined) this.number(value);
  }

  private memory(memory: MemoryStats): void {
    const { time, availableBytes, usageBytes, workingSetBytes, rssBytes } = memory;
    this.code((time === undefined ? 0 : 1) | (availableBytes === undefined ? 0 : 2) | (usageBytes === undefined ? 0 : 4) | (workingSetBytes === undefined ? 0 : 8) | (rssBytes === undefined ? 0 : 16));
    if (time !== undefined) this.string(time);
    this.optionalNumber(availableBytes);
    this.optionalNumber(usageBytes);
    this.optionalNumber(workingSetBytes);
    this.optionalNumber(rssBytes);
  }

  private fs(fs: FsStats): void {
    const { time, availableBytes, capacityBytes, usedBytes, inodesFree, inodes, inodesUsed } = fs;
    this.code(
      (time === undefined ? 0 : 1) |
        (availableBytes === undefined ? 0 : 2) |
        (capacityBytes === undefined ? 0 : 4) |
        (usedBytes === undefined ? 0 : 8) |
        (inodesFree === undefined ? 0 : 16) |
        (inodes === undefined ? 0 : 32) |
        (inodesUsed === undefined ? 0 : 64),
    );
    if (time !== undefined) this.string(time);
    this.optionalNumber(availableBytes);
    this.optionalNumber(capacityBytes);
    this.optionalNumber(usedBytes);
    this.optionalNumber(inodesFree);
    this.optionalNumber(inodes);
    this.optionalNumber(inodesUsed);
  }

  private node(node: NodeStats): void {
    const { nodeName, memory, systemContainers, fs, runtime, rlimit } = node;
    this.code((nodeName === undefined ? 0 : 1) | (memory === undefined ? 0 : 2) | (systemContainers === undefined ? 0 : 4) | (fs === undefined ? 0 : 8) | (runtime === undefined ? 0 : 16) | (rlimit === undefined ? 0 : 32));
    if (nodeName !== undefined) this.string(nodeName);
    if (memory !== undefined) this.memory(memory);
    if (systemContainers !== undefined) {
      this.code(systemContainers.length);
      for (const container of systemContainers) {
        this.code(container.memory === undefined ? 0 : 1);
        this.string(container.name);
        if (container.memory !== undefined) this.memory(container.memory);
      }
    }
    if (fs !== undefined) this.fs(fs);
    if (runtime !== undefined) {
      this.code((runtime.imageFs === undefined ? 0 : 1) | (runtime.containerFs === undefined ? 0 : 2));
      if (runtime.imageFs !== undefined) this.fs(runtime.imageFs);
      if (runtime.containerFs !== undefined) this.fs(runtime.containerFs);
    }
    if (rlimit !== undefined) {
      this.code((rlimit.time === undefined ? 0 : 1) | (rlimit.maxpid === undefined ? 0 : 2) | (rlimit.curproc === undefined ? 0 : 4));
      if (rlimit.time !== undefined) this.string(rlimit.time);
      this.optionalNumber(rlimit.maxpid);
      this.optionalNumber(rlimit.curproc);
    }
  }

  private pod(pod: PodStats): void {
    const { podRef, memory, containers, volume } = pod;
    // The validator keeps its time too (a `counters` record), which the type leaves out.
    const processStats = pod.process_stats as { time?: string; process_count?: number } | undefined;
    const ephemeral = pod['ephemeral-storage'];
    this.code((memory === undefined ? 0 : 1) | (containers === undefined ? 0 : 2) | (volume === undefined ? 0 : 4) | (ephemeral === undefined ? 0 : 8) | (processStats === undefined ? 0 : 16));
    this.string(podRef.name);
    this.string(podRef.namespace);
    this.string(podRef.uid);
    if (memory !== undefined) this.memory(memory);
    if (containers !== undefined) {
      this.code(containers.length);
      for (const container of containers) {
        this.code((container.memory === undefined ? 0 : 1) | (container.rootfs === undefined ? 0 : 2) | (container.logs === undefined ? 0 : 4));
        this.string(container.name);
        if (container.memory !== undefined) this.memory(container.memory);
        if (container.rootfs !== undefined) this.fs(container.rootfs);
        if (container.logs !== undefined) this.fs(container.logs);
      }
    }
    if (volume !== undefined) {
      this.code(volume.length);
      for (const entry of volume) {
        this.string(entry.name);
        this.fs(entry);
      }
    }
    if (ephemeral !== undefined) this.fs(ephemeral);
    if (processStats !== undefined) {
      this.code((processStats.time === undefined ? 0 : 1) | (processStats.process_count === undefined ? 0 : 2));
      if (processStats.time !== undefined) this.string(processStats.time);
      this.optionalNumber(processStats.process_count);
    }
  }
}

/**
 * Rebuilds what a {@link SummaryEncoder} encoded, batch by batch in the order they were taken.
 * The objects are built key by key in the validator's order, with the keys written out (several
 * times faster than setting them by name from a list).
 */
export class SummaryDecoder {
  private readonly strings: string[] = [];
  private codes: Int32Array = new Int32Array(0);
  private numbers: Float64Array = new Float64Array(0);
  private codeAt = 0;
  private numberAt = 0;

  /** Starts on the next batch; its Summaries are read with {@link next}. */
  begin(batch: EncodedSummaries): void {
    if (batch.restart) this.strings.length = 0;
    for (const value of batch.strings) this.strings.push(value);
    this.codes = batch.codes;
    this.numbers = batch.numbers;
    this.codeAt = 0;
    this.numberAt = 0;
  }

  next(): Summary {
    const mask = this.code();
    const summary: Summary = { node: this.node() };
    if ((mask & 1) !== 0) summary.pods = this.list(() => this.pod());
    return summary;
  }

  private code(): number {
    return this.codes[this.codeAt++] as number;
  }

  private number(): number {
    return this.numbers[this.numberAt++] as number;
  }

  private string(): string {
    return this.strings[this.code()] as string;
  }

  private list<T>(item: () => T): T[] {
    const count = this.code();
    const items: T[] = [];
    for (let i = 0; i < count; i++) items.push(item());
    return items;
  }

  private memory(): MemoryStats {
    const mask = this.code();
    const out: MemoryStats = {};
    if ((mask & 1) !== 0) out.time = this.string();
    if ((mask & 2) !== 0) out.availableBytes = this.number();
    if ((mask & 4) !== 0) out.usageBytes = this.number();
    if ((mask & 8) !== 0) out.workingSetBytes = this.number();
    if ((mask & 16) !== 0) out.rssBytes = this.number();
    return out;
  }

  private fsInto<T extends FsStats>(out: T): T {
    const mask = this.code();
    if ((mask & 1) !== 0) out.time = this.string();
    if ((mask & 2) !== 0) out.availableBytes = this.number();
    if ((mask & 4) !== 0) out.capacityBytes = this.number();
    if ((mask & 8) !== 0) out.usedBytes = this.number();
    if ((mask & 16) !== 0) out.inodesFree = this.number();
    if ((mask & 32) !== 0) out.inodes = this.number();
    if ((mask & 64) !== 0) out.inodesUsed = this.number();
    return out;
  }

  private fs(): FsStats {
    return this.fsInto({});
  }

  private node(): NodeStats {
    const mask = this.code();
    const node: NodeStats = {};
    if ((mask & 1) !== 0) node.nodeName = this.string();
    if ((mask & 2) !== 0) node.memory = this.memory();
    if ((mask & 4) !== 0) {
      node.systemContainers = this.list(() => {
        const parts = this.code();
        const container: SystemContainerStats = { name: this.string() };
        if ((parts & 1) !== 0) container.memory = this.memory();
        return container;
      });
    }
    if ((mask & 8) !== 0) node.fs = this.fs();
    if ((mask & 16) !== 0) {
      const parts = this.code();
      const runtime: NonNullable<NodeStats['runtime']> = {};
      if ((parts & 1) !== 0) runtime.imageFs = this.fs();
      if ((parts & 2) !== 0) runtime.containerFs = this.fs();
      node.runtime = runtime;
    }
    if ((mask & 32) !== 0) {
      const parts = this.code();
      const rlimit: NonNullable<NodeStats['rlimit']> = {};
      if ((parts & 1) !== 0) rlimit.time = this.string();
      if ((parts & 2) !== 0) rlimit.maxpid = this.number();
      if ((parts & 4) !== 0) rlimit.curproc = this.number();
      node.rlimit = rlimit;
    }
    return node;
  }

  private pod(): PodStats {
    const mask = this.code();
    const pod: PodStats = { podRef: { name: this.string(), namespace: this.string(), uid: this.string() } };
    if ((mask & 1) !== 0) pod.memory = this.memory();
    if ((mask & 2) !== 0) {
      pod.containers = this.list(() => {
        const parts = this.code();
        const container: ContainerStats = { name: this.string() };
        if ((parts & 1) !== 0) container.memory = this.memory();
        if ((parts & 2) !== 0) container.rootfs = this.fs();
        if ((parts & 4) !== 0) container.logs = this.fs();
        return container;
      });
    }
    if ((mask & 4) !== 0) pod.volume = this.list(() => this.fsInto<VolumeStats>({ name: this.string() }));
    if ((mask & 8) !== 0) pod['ephemeral-storage'] = this.fs();
    if ((mask & 16) !== 0) {
      const parts = this.code();
      const processStats: { time?: string; process_count?: number } = {};
      if ((parts & 1) !== 0) processStats.time = this.string();
      if ((parts & 2) !== 0) processStats.process_count = this.number();
      pod.process_stats = processStats;
    }
    return pod;
  }
}
