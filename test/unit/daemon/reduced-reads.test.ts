// Reduced reads against full reads, step by step. A pass reads the pods' cgroup figures (memory,
// process counts) only when the decision on the node's fresh figures reads them
// (EvictionManager.podStatsNeeded), and otherwise carries them from the last reading; this proves
// that such a pass decides exactly as one that reads everything, at every step of a sequence: the
// evictions and their fallbacks, the ranking, the node conditions, the thresholds met (with and
// without grace periods), the threshold acted on, the next grace-period end, the dry-run decision,
// the notes. Recorded nodes (the example recording, the replay golden recording under three
// configurations) go through the engine, the figures a pass does not read taken from the last
// reading or dropped altogether; generated nodes go through the cgroup observer itself, on a host
// in memory whose every figure moves between passes, pods coming and going, with the stats-coverage
// guard in between, as the loop runs them.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { silentLogger } from '../../../src/api/logger.js';
import type { Pod } from '../../../src/api/pod.js';
import type { ContainerStats, PodStats, PodStatsReads, Summary } from '../../../src/api/summary.js';
import { parseConfigText } from '../../../src/config/load.js';
import { PodStatsGuard } from '../../../src/daemon/pod-stats-guard.js';
import type { EventRecorder, Observation } from '../../../src/daemon/ports.js';
import { EvictionManager } from '../../../src/eviction/manager.js';
import type { SynchronizeResult } from '../../../src/eviction/types.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import { parseReplayLine } from '../../../src/replay/input.js';
import { REPO_ROOT } from '../../cli/run-cli.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { MemoryHostFs } from '../../fakes/memory-host-fs.js';
import { GOLDEN_CONFIG, GOLDEN_KUBELET_CONFIG, goldenRecording } from '../../fixtures/replay-recording.js';
import { observeSettings } from '../../fixtures/settings.js';
import { prng, type Prng } from '../../helpers/prng.js';

const Ki = 1024;
const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

/**
 * Everything a pass decides and reports, as plain data: pods by UID, quantities as text, so that two
 * decisions compare as two strings (a mismatch is then shown in full by the matcher).
 */
function decision(result: SynchronizeResult): string {
  return JSON.stringify(result, (key, value: unknown) => {
    if (typeof value === 'bigint') return `${value}n`;
    if (value instanceof Map) return [...value];
    if (key === 'pod' && typeof value === 'object' && value !== null) return (value as Pod).metadata.uid;
    return value;
  });
}

function expectSameDecision(label: Record<string, unknown>, reduced: SynchronizeResult, full: SynchronizeResult): void {
  const [a, b] = [decision(reduced), decision(full)];
  if (a !== b) expect({ ...label, decided: JSON.parse(a) as unknown }).toEqual({ ...label, decided: JSON.parse(b) as unknown });
}

// ---- Recorded nodes, through the engine ----

// The golden recording's configuration with some of its thresholds in dry run: they are ranked on
// their own, and a pass that meets only them still reads the pods.
const GOLDEN_DRY_RUN_CONFIG = `${GOLDEN_CONFIG}dryRunThresholds:\n  evictionHard: [nodefs.available, pid.available]\n  evictionSoft: [memory.available]\n`;

const RECORDINGS = [
  { name: 'examples/memory-pressure.jsonl', config: readFileSync(join(REPO_ROOT, 'examples/memory-pressure.config.yaml'), 'utf8'), lines: () => readFileSync(join(REPO_ROOT, 'examples/memory-pressure.jsonl'), 'utf8').split('\n') },
  { name: 'the golden recording, agent configuration', config: GOLDEN_CONFIG, lines: () => goldenRecording(400, 14, 14) },
  { name: 'the golden recording, kubelet configuration', config: GOLDEN_KUBELET_CONFIG, lines: () => goldenRecording(400, 14, 7) },
  { name: 'the golden recording, thresholds in dry run', config: GOLDEN_DRY_RUN_CONFIG, lines: () => goldenRecording(400, 14, 3) },
];

// About a second of CPU for the largest; generously, for a machine whose cores are busy elsewhere.
const RECORDED_TIMEOUT_MS = 60_000;

/** How a pass that does not read a figure sees it: as last read, or not at all. */
type Unread = 'last-read' | 'dropped';

// The cgroup part of a pod's stats (what a reading of its cgroups gives), and the disk part of now.
function cgroupPart(stats: PodStats): { memory?: PodStats['memory']; containers: Map<string, ContainerStats['memory']> } {
  return { ...(stats.memory === undefined ? {} : { memory: stats.memory }), containers: new Map((stats.containers ?? []).flatMap((c) => (c.memory === undefined ? [] : [[c.name, c.memory] as const]))) };
}

/**
 * One pass's summary as a reduced pass sees it: the node's figures and the pods' disk figures of
 * now, each pod's memory as last read (or none) unless `reads.memory`, its process count as last
 * read (or none) unless `reads.processes`. Reading both gives the recorded summary back.
 */
class ReducedView {
  private readonly memory = new Map<string, ReturnType<typeof cgroupPart>>();
  private readonly counts = new Map<string, number | undefined>();

  constructor(private readonly unread: Unread) {}

  view(summary: Summary, reads: PodStatsReads): Summary {
    const pods = (summary.pods ?? []).flatMap((stats) => {
      const uid = stats.podRef.uid;
      if (reads.memory) this.memory.set(uid, cgroupPart(stats));
      if (reads.processes) this.counts.set(uid, stats.process_stats?.process_count);
      const part = this.unread === 'dropped' && !reads.memory ? undefined : this.memory.get(uid);
      const count = this.unread === 'dropped' && !reads.processes ? undefined : this.counts.get(uid);
      const { memory: _memory, process_stats: _processes, containers, ...disk } = stats;
      const seen: PodStats = { ...disk };
      if (part?.memory !== undefined) seen.memory = part.memory;
      if (count !== undefined) seen.process_stats = { process_count: count };
      const seenContainers = (containers ?? []).map(({ memory: _m, ...rest }) => {
        const memory = part?.containers.get(rest.name);
        return memory === undefined ? rest : { ...rest, memory };
      });
      if (seenContainers.length > 0) seen.containers = seenContainers;
      // Dropping a pod's figures drops the pod when nothing else is left of it.
      return Object.keys(seen).length === 1 && Object.keys(stats).length > 1 ? [] : [seen];
    });
    return { node: summary.node, pods };
  }
}

describe('recorded nodes: a reduced pass decides as a full pass', () => {
  test.each(RECORDINGS)('$name', ({ config, lines }) => {
    const eviction = parseConfigText(config, 'recording.yaml').eviction;
    const full = new EvictionManager(eviction);
    const reduced = (['last-read', 'dropped'] as const).map((unread) => ({ unread, manager: new EvictionManager(eviction), view: new ReducedView(unread) }));
    let summary: Summary | null = null;
    let pods: Pod[] = [];
    let layout = { dedicatedImageFs: false, splitContainerFs: false };
    let previousMs: number | null = null;
    let steps = 0;
    let withoutPodReads = 0;
    let evicting = 0;
    for (const [index, text] of lines().entries()) {
      if (text.trim() === '') continue;
      const step = parseReplayLine(text, index + 1, previousMs);
      previousMs = step.timeMs;
      summary = step.summary ?? summary;
      if (step.pods !== undefined) pods = step.pods.filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed');
      layout = { dedicatedImageFs: step.dedicatedImageFs ?? layout.dedicatedImageFs, splitContainerFs: step.splitContainerFs ?? layout.splitContainerFs };
      if (summary === null) continue;
      const expected = full.synchronize({ nowMs: step.timeMs, summary, pods, ...layout });
      for (const { unread, manager, view } of reduced) {
        const reads = manager.podStatsNeeded({ summary: view.view(summary, { memory: false, processes: false }), pods, ...layout });
        const decided = manager.synchronize({ nowMs: step.timeMs, summary: view.view(summary, reads), pods, ...layout });
        expectSameDecision({ line: index + 1, unread }, decided, expected);
        if (unread === 'dropped' && !reads.memory) withoutPodReads++;
      }
      steps++;
      if (expected.evictions.length > 0) evicting++;
    }
    // The recording exercises both: passes that read no pod, and passes that evict.
    expect(steps).toBeGreaterThan(0);
    if (steps > 50) {
      expect(withoutPodReads).toBeGreaterThan(steps / 10);
      expect(evicting).toBeGreaterThan(steps / 20);
    }
  }, RECORDED_TIMEOUT_MS);
});

// ---- Generated nodes, through the cgroup observer ----

const MEMORY_ROOT = '/sys/fs/cgroup/memory';
const KUBEPODS = `${MEMORY_ROOT}/kubepods`;
const KUBELET_ROOT = '/var/lib/kubelet';
const IMAGE_FS = '/var/lib/containerd';
const POD_LOGS = '/var/log/pods';
const CAPACITY_BYTES = 16 * Gi;
const ALLOCATABLE_BYTES = 14 * Gi;
const MAX_PID = 32_768;
const FS_BLOCKS = 1_000_000;
const FS_INODES = 500_000;
const T0 = Date.UTC(2026, 5, 1);

type Qos = 'Guaranteed' | 'Burstable' | 'BestEffort';
type CgroupState = 'present' | 'missing' | 'no-stat';

interface GenContainer {
  readonly name: string;
  readonly id: string;
  /** Its cgroup is there (a container being restarted has none for a while). */
  cgroup: boolean;
  workingSetBytes: number;
  inactiveBytes: number;
  processes: number;
  logBytes: number;
}

interface GenPod {
  readonly pod: Pod;
  readonly uid: string;
  readonly qos: Qos;
  readonly containers: GenContainer[];
  readonly emptyDir: string | null;
  emptyDirBytes: number;
  cgroup: CgroupState;
}

const TIER: Record<Qos, string> = { Guaranteed: '', Burstable: 'burstable/', BestEffort: 'besteffort/' };
const hex = (rng: Prng, length: number): string => Array.from({ length }, () => '0123456789abcdef'[rng.int(16)]).join('');

function generatePod(rng: Prng, seed: number, n: number, nowMs: number): GenPod {
  const qos = rng.pick(['Guaranteed', 'Burstable', 'Burstable', 'BestEffort'] as const);
  const uid = `${(seed >>> 0).toString(16).padStart(8, '0')}-${n.toString(16).padStart(4, '0')}-4000-8000-${'0'.repeat(12)}`;
  const containers: GenContainer[] = Array.from({ length: 1 + rng.int(3) }, (_, c) => ({ name: `c${c}`, id: hex(rng, 64), cgroup: true, workingSetBytes: 0, inactiveBytes: 0, processes: 1, logBytes: 0 }));
  const emptyDir = rng.chance(0.4) ? 'scratch' : null;
  const limits = (): Record<string, string> => (rng.chance(0.5) ? { 'ephemeral-storage': rng.pick(['4Ki', '16Ki', '64Ki']) } : {});
  const critical = rng.chance(0.05);
  const priority = critical ? 2_000_000_000 : rng.pick([undefined, 0, 0, 100, 1000]);
  const startedAt = new Date(nowMs - rng.pick([5_000, 60_000, 3_600_000])).toISOString();
  const pod: Pod = {
    metadata: { name: `pod-${n}`, namespace: rng.pick(['default', 'jobs']), uid },
    spec: {
      nodeName: 'node-a',
      ...(priority === undefined ? {} : { priority }),
      containers: containers.map((c) => ({ name: c.name, resources: { requests: qos === 'BestEffort' ? {} : { memory: rng.pick(['64Mi', '256Mi', '1Gi']), 'ephemeral-storage': '2Ki' }, limits: limits() } })),
      ...(emptyDir === null ? {} : { volumes: [{ name: emptyDir, emptyDir: rng.chance(0.5) ? { sizeLimit: rng.pick(['8Ki', '32Ki']) } : {} }] }),
    },
    status: { phase: 'Running', qosClass: qos, containerStatuses: containers.map((c) => ({ name: c.name, containerID: `containerd://${c.id}`, state: { running: { startedAt } } })) },
  };
  return { pod, uid, qos, containers, emptyDir, emptyDirBytes: 0, cgroup: rng.pick(['present', 'present', 'present', 'present', 'present', 'present', 'missing', 'no-stat']) };
}

type Pressed = 'memory' | 'allocatable' | 'nodefs' | 'nodefs-inodes' | 'imagefs' | 'imagefs-inodes' | 'pid' | null;
const PRESSED: readonly Pressed[] = [null, null, null, null, 'memory', 'allocatable', 'nodefs', 'nodefs-inodes', 'imagefs', 'imagefs-inodes', 'pid'];

/**
 * The available amount of a signal whose thresholds sit at `thresholdAvailable` (and twice that for
 * soft ones): far above them while it is not the signal under pressure; otherwise at one of a few
 * levels around them: above, in a minimum-reclaim band, just under, far under.
 */
function around(rng: Prng, pressed: boolean, thresholdAvailable: number, band: number, floor = 0): number {
  const level = pressed ? rng.pick([3, 2.2, 2, 1.8, 1.2, 1, 0.98, 0.5]) : rng.pick([4, 5]);
  return Math.max(floor, Math.round(thresholdAvailable * level + (rng.next() - 0.5) * band));
}

// A cgroup's files as the observer reads them.
function writeCgroup(fs: MemoryHostFs, dir: string, workingSetBytes: number, inactiveBytes: number, processes: number, stat = true): void {
  fs.mkdir(dir);
  fs.write(`${dir}/memory.usage_in_bytes`, `${workingSetBytes + inactiveBytes}\n`);
  fs.write(`${dir}/cgroup.procs`, Array.from({ length: processes }, (_, i) => `${1000 + i}\n`).join(''));
  if (stat) fs.write(`${dir}/memory.stat`, `cache ${inactiveBytes}\ntotal_inactive_file ${inactiveBytes}\n`);
  else fs.remove(`${dir}/memory.stat`);
}

/** Moves every figure of the node and its pods, `pressed` near its thresholds; writes them where the observer reads them. */
function writeNode(fs: MemoryHostFs, rng: Prng, pods: readonly GenPod[], pressed: Pressed): void {
  fs.write('/proc/meminfo', `MemTotal:       ${CAPACITY_BYTES / Ki} kB\n`);
  fs.write('/proc/sys/kernel/pid_max', `${MAX_PID}\n`);
  fs.write('/proc/sys/kernel/threads-max', '1000000\n');
  fs.write('/proc/loadavg', `0.1 0.1 0.1 2/${MAX_PID - around(rng, pressed === 'pid', 1000, 200, 1)} 1\n`);
  writeCgroup(fs, MEMORY_ROOT, CAPACITY_BYTES - around(rng, pressed === 'memory', Gi, 256 * Mi), rng.int(Gi), 1);
  fs.write(`${MEMORY_ROOT}/memory.limit_in_bytes`, '9223372036854771712\n');
  writeCgroup(fs, KUBEPODS, ALLOCATABLE_BYTES - around(rng, pressed === 'allocatable', 512 * Mi, 128 * Mi), 0, 0);
  fs.write(`${KUBEPODS}/memory.limit_in_bytes`, `${ALLOCATABLE_BYTES}\n`);
  for (const tier of ['burstable', 'besteffort']) fs.mkdir(`${KUBEPODS}/${tier}`);
  const statfs = (path: string, bytesAvailable: number, inodesFree: number): void => {
    const blocksAvailable = BigInt(Math.min(FS_BLOCKS, Math.floor(bytesAvailable / 4096)));
    fs.setStatfs(path, { blockSizeBytes: 4096n, blocks: BigInt(FS_BLOCKS), blocksFree: blocksAvailable, blocksAvailable, files: BigInt(FS_INODES), filesFree: BigInt(Math.min(FS_INODES, inodesFree)) });
  };
  // Thresholds at 10 % of the bytes and 5 % of the inodes (see configFor).
  statfs(KUBELET_ROOT, around(rng, pressed === 'nodefs', 0.1 * FS_BLOCKS * 4096, 20 * Mi), around(rng, pressed === 'nodefs-inodes', 0.05 * FS_INODES, 1000));
  statfs(IMAGE_FS, around(rng, pressed === 'imagefs', 0.1 * FS_BLOCKS * 4096, 20 * Mi), around(rng, pressed === 'imagefs-inodes', 0.05 * FS_INODES, 1000));

  for (const gen of pods) {
    // Ties on purpose: a few sizes only, and now and then a pod whose figures stay.
    for (const c of gen.containers) {
      if (rng.chance(0.8)) c.workingSetBytes = rng.chance(0.3) ? rng.pick([0, 64 * Mi, 256 * Mi]) : rng.int(2 * Gi);
      if (rng.chance(0.8)) c.inactiveBytes = rng.chance(0.5) ? 0 : rng.int(256 * Mi);
      if (rng.chance(0.5)) c.processes = rng.chance(0.3) ? rng.pick([1, 5]) : rng.int(40);
      // Logs and emptyDirs grow past their limits now and then.
      if (rng.chance(0.1)) c.logBytes = rng.chance(0.3) ? rng.int(40 * Ki) : rng.int(2 * Ki);
      if (rng.chance(0.05)) c.cgroup = !c.cgroup;
    }
    if (rng.chance(0.1)) gen.emptyDirBytes = rng.chance(0.3) ? rng.int(40 * Ki) : rng.int(4 * Ki);
    writePodCgroups(fs, gen);
  }
}

/** A pod's cgroups as its figures are now: the pod's, its containers' that have one, its sandbox's. */
function writePodCgroups(fs: MemoryHostFs, gen: GenPod): void {
  for (const tier of Object.values(TIER)) fs.remove(`${KUBEPODS}/${tier}pod${gen.uid}`);
  if (gen.cgroup === 'missing') return;
  const podDir = `${KUBEPODS}/${TIER[gen.qos]}pod${gen.uid}`;
  for (const c of gen.containers) if (c.cgroup) writeCgroup(fs, `${podDir}/${c.id}`, c.workingSetBytes, c.inactiveBytes, c.processes);
  // The sandbox: no container of the pod's, counted in the pod only.
  writeCgroup(fs, `${podDir}/${'f'.repeat(64)}`, Mi, 0, 1);
  const sum = (f: (c: GenContainer) => number): number => gen.containers.reduce((total, c) => total + f(c), 0);
  writeCgroup(fs, podDir, sum((c) => c.workingSetBytes) + Mi, sum((c) => c.inactiveBytes), 0, gen.cgroup !== 'no-stat');
}

/** The pods' disk: container logs (written last container first, so their listing is not the pod's order) and emptyDirs. */
function writeDisk(fs: MemoryHostFs, pods: readonly GenPod[]): void {
  fs.write('/proc/1/mountinfo', '');
  fs.mkdir(IMAGE_FS);
  fs.mkdir(`${KUBELET_ROOT}/pods`);
  fs.mkdir(POD_LOGS);
  for (const gen of pods) {
    const logDir = `${POD_LOGS}/${gen.pod.metadata.namespace}_${gen.pod.metadata.name}_${gen.uid}`;
    for (const c of [...gen.containers].reverse()) fs.write(`${logDir}/${c.name}/0.log`, 'x'.repeat(c.logBytes));
    if (gen.emptyDir !== null) fs.write(`${KUBELET_ROOT}/pods/${gen.uid}/volumes/kubernetes.io~empty-dir/${gen.emptyDir}/data`, 'y'.repeat(gen.emptyDirBytes));
  }
}

function removePod(fs: MemoryHostFs, gen: GenPod): void {
  for (const tier of Object.values(TIER)) fs.remove(`${KUBEPODS}/${tier}pod${gen.uid}`);
  fs.remove(`${POD_LOGS}/${gen.pod.metadata.namespace}_${gen.pod.metadata.name}_${gen.uid}`);
  fs.remove(`${KUBELET_ROOT}/pods/${gen.uid}`);
}

/** Thresholds on every signal, hard and soft with grace periods, minimum reclaims, now and then some in dry run. */
function configFor(rng: Prng): string {
  const hard = ['memory.available: 1Gi', 'allocatableMemory.available: 512Mi', 'nodefs.available: 10%', 'nodefs.inodesFree: 5%', 'imagefs.available: 10%', 'imagefs.inodesFree: 5%', 'pid.available: "1000"'].filter(() => rng.chance(0.7));
  const soft = rng.pick([[], ['memory.available: 2Gi'], ['memory.available: 2Gi', 'nodefs.available: 20%'], ['pid.available: "2000"']]);
  const grace = soft.map((line) => `  ${line.split(':')[0]}: ${rng.pick(['5s', '30s', '1m'])}`);
  const minReclaim = rng.pick([[], ['memory.available: 512Mi'], ['memory.available: 1Gi', 'nodefs.available: 5%', 'pid.available: "500"']]);
  const signal = (line: string): string => line.split(':')[0] as string;
  const dryHard = hard.filter(() => rng.chance(0.2)).map(signal);
  const drySoft = soft.filter(() => rng.chance(0.3)).map(signal);
  return [
    ...(hard.length === 0 ? [] : ['evictionHard:', ...hard.map((l) => `  ${l}`)]),
    ...(soft.length === 0 ? [] : ['evictionSoft:', ...soft.map((l) => `  ${l}`), 'evictionSoftGracePeriod:', ...grace]),
    ...(minReclaim.length === 0 ? [] : ['evictionMinimumReclaim:', ...minReclaim.map((l) => `  ${l}`)]),
    `evictionPressureTransitionPeriod: ${rng.pick(['0s', '30s'])}`,
    `enforceNodeAllocatable: [${hard.some((l) => l.startsWith('allocatable')) ? 'pods' : ''}]`,
    `localStorageCapacityIsolation: ${rng.chance(0.8)}`,
    ...(dryHard.length + drySoft.length === 0 ? [] : ['dryRunThresholds:', `  evictionHard: [${dryHard.join(', ')}]`, `  evictionSoft: [${drySoft.join(', ')}]`]),
    '',
  ].join('\n');
}

const noEvents: EventRecorder = { podEvent: async () => undefined, nodeEvent: async () => undefined, objectEvent: async () => undefined };

/**
 * One node observed by two agents' loops, pass for pass: one reading every figure every time, one
 * reading the pods only as the decision needs them (the plan the loop gives its observer); each
 * pass goes through the stats-coverage guard, then the engine.
 */
class TwoSides {
  private readonly sides;

  constructor(
    private readonly fs: MemoryHostFs,
    private readonly clock: FakeClock,
    config: string,
  ) {
    const eviction = parseConfigText(config, 'node.yaml').eviction;
    const settings = observeSettings({ hostRoot: '/', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods', kubeletRootDir: KUBELET_ROOT, imageFsPath: IMAGE_FS, podLogsDir: POD_LOGS, diskUsageIntervalMs: 24 * 3_600_000 });
    const context = { clock, logger: silentLogger, hostFs: fs, processCountIntervalMs: 0 };
    const side = () => ({ observer: createCgroupObserver(settings, context), manager: new EvictionManager(eviction), guard: new PodStatsGuard({ events: noEvents, logger: silentLogger }) });
    this.sides = { full: side(), reduced: side() };
  }

  /** One pass on both sides (after the disk walk when `walk`); fails unless they decide alike. */
  async pass(pods: readonly GenPod[], walk: boolean, label: string): Promise<{ full: SynchronizeResult; observation: Observation }> {
    const { full, reduced } = this.sides;
    const podList = pods.map((g) => g.pod);
    const nowMs = this.clock.nowMs();
    // The disk walk, at the same moments on both sides.
    if (walk) await Promise.all([full.observer.refreshDiskUsage(podList), reduced.observer.refreshDiskUsage(podList)]);
    const fullResult = this.decide(full, await full.observer.observe(podList), podList, nowMs);
    const observation = await reduced.observer.observe(podList, { podStatsNeeded: (preliminary) => reduced.manager.podStatsNeeded({ ...preliminary, pods: podList }) });
    expectSameDecision({ label }, this.decide(reduced, observation, podList, nowMs), fullResult);
    // A pass that read the pods judges them as a full read does.
    if (observation.podStatsRead?.memory === true) expect({ label, refusal: reduced.guard.refusal() }).toEqual({ label, refusal: full.guard.refusal() });
    return { full: fullResult, observation };
  }

  close(): void {
    this.sides.full.observer.close();
    this.sides.reduced.observer.close();
  }

  private decide(side: TwoSides['sides']['full'], observation: Observation, pods: readonly Pod[], nowMs: number): SynchronizeResult {
    const unrankableSignals = side.guard.assess(observation, pods, nowMs);
    return side.manager.synchronize({ nowMs, summary: observation.summary, pods, dedicatedImageFs: observation.dedicatedImageFs, splitContainerFs: observation.splitContainerFs, unrankableSignals });
  }
}

const NODES = 40;
const STEPS = 40;
// About 6 s of CPU; the test's time on a machine whose cores are all busy elsewhere, generously.
const GENERATED_TIMEOUT_MS = 180_000;

describe('generated nodes: the loop\'s observer, reading only what the decision needs, decides as full reads do', () => {
  test(`${NODES} nodes × ${STEPS} passes: the same decision at every pass`, async () => {
    let passes = 0;
    let readingNoPod = 0;
    let evicting = 0;
    const signalsActedOn = new Set<string>();
    for (let seed = 1; seed <= NODES; seed++) {
      const rng = prng(seed * 31);
      const clock = new FakeClock(T0);
      const fs = new MemoryHostFs();
      if (rng.chance(0.3)) fs.setDevice(IMAGE_FS, 2n);
      let next = 0;
      let pods = Array.from({ length: rng.int(30) }, () => generatePod(rng, seed, next++, clock.nowMs()));
      const sides = new TwoSides(fs, clock, configFor(rng));
      let pressed: Pressed = null;
      for (let step = 0; step < STEPS; step++) {
        // Pods come and go, cgroups vanish and come back, every figure moves, time passes.
        if (step > 0) {
          pods = pods.filter((gen) => {
            const leaves = rng.chance(0.04);
            if (leaves) removePod(fs, gen);
            return !leaves;
          });
          while (rng.chance(0.15)) pods.push(generatePod(rng, seed, next++, clock.nowMs()));
          for (const gen of pods) if (rng.chance(0.03)) gen.cgroup = rng.pick(['present', 'missing', 'no-stat']);
          clock.step(rng.pick([1_000, 5_000, 10_000, 10_000, 10_000, 30_000, 61_000]));
        }
        // One signal under pressure at a time, for a few passes; calm in between.
        if (step % 4 === 0) pressed = rng.pick(PRESSED);
        writeNode(fs, rng, pods, pressed);
        writeDisk(fs, pods);
        const { full, observation } = await sides.pass(pods, step % 3 === 0, `seed ${seed}, pass ${step}`);
        passes++;
        if (observation.podStatsRead?.memory === false) readingNoPod++;
        if (full.evictions.length > 0) evicting++;
        for (const e of full.evictions) signalsActedOn.add(e.reason.kind === 'threshold' ? e.reason.signal : e.reason.limit);
      }
      sides.close();
    }
    // The sequences mean something: many passes read no pod, many evict, every kind of pressure acts.
    expect(readingNoPod).toBeGreaterThan(passes / 5);
    expect(evicting).toBeGreaterThan(passes / 10);
    expect([...signalsActedOn].sort()).toEqual(
      expect.arrayContaining(['allocatableMemory.available', 'emptydirfs.limit', 'ephemeralcontainerfs.limit', 'imagefs.available', 'memory.available', 'nodefs.available', 'nodefs.inodesFree', 'pid.available']),
    );
  }, GENERATED_TIMEOUT_MS);

  // A local-storage limit's message names the first container over its limit in the pod's stats,
  // whose order follows which containers' cgroups were read: on a calm node, a pass after a
  // container's cgroup came back reads the pods again because a limit is violated.
  test('a container whose cgroup comes back, two containers over their limits: the same container named', async () => {
    const clock = new FakeClock(T0);
    const fs = new MemoryHostFs();
    const rng = prng(7);
    const limits = ['4Ki', '4Ki', '64Ki'];
    const containers = limits.map((_, c) => ({ name: `c${c}`, id: hex(rng, 64), cgroup: c !== 0, workingSetBytes: 64 * Mi, inactiveBytes: 0, processes: 1, logBytes: c === 2 ? 0 : 8 * Ki }));
    const generated = generatePod(rng, 7, 0, clock.nowMs() - 3_600_000);
    const gen: GenPod = {
      ...generated,
      pod: {
        ...generated.pod,
        spec: { nodeName: 'node-a', containers: containers.map((c, i) => ({ name: c.name, resources: { limits: { 'ephemeral-storage': limits[i] as string } } })) },
        status: { ...generated.pod.status, qosClass: 'BestEffort', containerStatuses: containers.map((c) => ({ name: c.name, containerID: `containerd://${c.id}`, state: { running: { startedAt: new Date(T0 - 3_600_000).toISOString() } } })) },
      },
      qos: 'BestEffort',
      containers,
      emptyDir: null,
      cgroup: 'present',
    };
    const sides = new TwoSides(fs, clock, 'evictionHard:\n  memory.available: 100Mi\nlocalStorageCapacityIsolation: true\n');
    // A calm node; only the pod's cgroups change between the passes.
    writeNode(fs, prng(1), [], null);
    writePodCgroups(fs, gen);
    writeDisk(fs, [gen]);
    const first = await sides.pass([gen], true, 'c0 without a cgroup');
    expect(first.full.evictions.map((e) => e.message)).toEqual(['Container c1 exceeded its local ephemeral storage limit "4Ki". ']);
    (containers[0] as GenContainer).cgroup = true;
    writePodCgroups(fs, gen);
    clock.step(10_000);
    const second = await sides.pass([gen], false, 'c0\'s cgroup back');
    expect(second.full.evictions.map((e) => e.message)).toEqual(['Container c0 exceeded its local ephemeral storage limit "4Ki". ']);
    expect(second.observation.podStatsRead).toEqual({ memory: true, processes: false });
    sides.close();
  });
});
