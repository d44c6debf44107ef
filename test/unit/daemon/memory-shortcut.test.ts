// The memory notification's shortcut against the full pass, on many generated nodes: the same
// threshold met or not, the same pod chosen, the same message. Each node (cgroup v1 or v2, up to 80
// pods, ties, critical and mirror pods, pods without a cgroup, with an unreadable memory.stat, in
// another QoS tier than their status says, with disk stats only) is observed once, then every figure
// moves, and the shortcut (through the same observer, reading only what the ranking needs) and a
// fresh full pass (observe + synchronize) decide on the moved node. Then the search alone against
// the engine's ranking, on random bounds.

import type { Pod } from '../../../src/api/pod.js';
import type { PodMemoryBound } from '../../../src/api/pod-memory.js';
import { silentLogger } from '../../../src/api/logger.js';
import { parseConfigText } from '../../../src/config/load.js';
import { memoryShortcut } from '../../../src/daemon/memory-shortcut.js';
import { EvictionManager } from '../../../src/eviction/manager.js';
import { isCriticalPod } from '../../../src/eviction/critical.js';
import { MemoryVictimSearch } from '../../../src/eviction/memory-shortcut.js';
import { makeStatsFunc } from '../../../src/eviction/observations.js';
import { rankedPods } from '../../../src/eviction/ranking.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { MemoryHostFs } from '../../fakes/memory-host-fs.js';
import { observeSettings } from '../../fixtures/settings.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

/** A small deterministic PRNG (mulberry32), so a failing seed can be replayed. */
function prng(seed: number): { next(): number; int(n: number): number; pick<T>(items: readonly T[]): T; chance(p: number): boolean } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n) => Math.floor(next() * n), pick: (items) => items[Math.floor(next() * items.length)] as (typeof items)[number], chance: (p) => next() < p };
}

type Rng = ReturnType<typeof prng>;
type Qos = 'Guaranteed' | 'Burstable' | 'BestEffort';
type CgroupState = 'present' | 'missing' | 'no-stat' | 'other-tier' | 'disk-only';

interface GenPod {
  readonly pod: Pod;
  readonly qos: Qos;
  readonly containerIds: readonly string[];
  state: CgroupState;
}

const hex = (rng: Rng, length: number): string => Array.from({ length }, () => '0123456789abcdef'[rng.int(16)]).join('');
const uidOf = (seed: number, i: number): string => `${(seed >>> 0).toString(16).padStart(8, '0')}-${i.toString(16).padStart(4, '0')}-4000-8000-${'0'.repeat(12)}`;

function generatePods(rng: Rng, seed: number): GenPod[] {
  const count = rng.int(81);
  const pods: GenPod[] = [];
  for (let i = 0; i < count; i++) {
    const qos = rng.pick(['Guaranteed', 'Burstable', 'Burstable', 'BestEffort'] as const);
    const containers = 1 + rng.int(3);
    const containerIds = Array.from({ length: containers }, () => hex(rng, 64));
    const request = (): Record<string, string> => (qos === 'BestEffort' || rng.chance(0.2) ? {} : { memory: rng.pick(['64Mi', '128Mi', '256Mi', '1Gi', '300M']) });
    const critical = rng.chance(0.06);
    const mirror = rng.chance(0.04);
    const priority = critical ? 2_000_000_000 : rng.pick([undefined, 0, 0, 100, 1000, -5]);
    const pod: Pod = {
      metadata: { name: `pod-${i}`, namespace: rng.pick(['default', 'jobs']), uid: uidOf(seed, i), ...(mirror ? { annotations: { 'kubernetes.io/config.mirror': 'hash' } } : {}) },
      spec: {
        nodeName: 'node-a',
        ...(priority === undefined ? {} : { priority }),
        containers: containerIds.map((_, c) => ({ name: `c${c}`, resources: { requests: request() } })),
      },
      status: { phase: 'Running', qosClass: qos, containerStatuses: containerIds.map((id, c) => ({ name: `c${c}`, containerID: `containerd://${id}` })) },
    };
    pods.push({ pod, qos, containerIds, state: 'present' });
  }
  return pods;
}

const TIERS: Record<Qos, string> = { Guaranteed: '', Burstable: 'burstable/', BestEffort: 'besteffort/' };

/** Writes the node's memory figures: every file the observer reads, with fresh random values. */
function writeNode(fs: MemoryHostFs, rng: Rng, version: 'v1' | 'v2', pods: GenPod[], thresholdBytes: number): void {
  const memoryRoot = version === 'v1' ? '/sys/fs/cgroup/memory' : '/sys/fs/cgroup';
  const usageFile = version === 'v1' ? 'memory.usage_in_bytes' : 'memory.current';
  const inactiveKey = version === 'v1' ? 'total_inactive_file' : 'inactive_file';
  const writeCgroup = (dir: string, usageBytes: number, inactiveBytes: number, writeStat = true): void => {
    fs.mkdir(dir);
    fs.write(`${dir}/${usageFile}`, `${usageBytes}\n`);
    fs.write(`${dir}/cgroup.procs`, '');
    if (writeStat) fs.write(`${dir}/memory.stat`, `cache 1\n${inactiveKey} ${inactiveBytes}\nactive_file 0\n`);
    else fs.remove(`${dir}/memory.stat`);
  };
  const capacityBytes = 16 * Gi;
  fs.write('/proc/meminfo', `MemTotal:       ${capacityBytes / 1024} kB\nMemFree:        1 kB\n`);
  // Around the threshold, on either side of it.
  const nodeWorkingSet = capacityBytes - thresholdBytes + Math.round((rng.next() - 0.34) * 2 * Gi);
  const nodeInactive = rng.chance(0.5) ? 0 : rng.int(2 * Gi);
  if (version === 'v1') {
    writeCgroup(memoryRoot, nodeWorkingSet + nodeInactive, nodeInactive);
    fs.write(`${memoryRoot}/memory.limit_in_bytes`, '9223372036854771712\n');
  } else {
    // The v2 root: usage is anon + file of its memory.stat.
    fs.write(`${memoryRoot}/cgroup.controllers`, 'cpu memory pids\n');
    fs.write(`${memoryRoot}/memory.stat`, `anon ${nodeWorkingSet}\nfile ${nodeInactive}\n${inactiveKey} ${nodeInactive}\n`);
  }
  const kubepods = `${memoryRoot}/kubepods`;
  writeCgroup(kubepods, 12 * Gi, Gi);
  fs.write(`${kubepods}/${version === 'v1' ? 'memory.limit_in_bytes' : 'memory.max'}`, `${14 * Gi}\n`);
  for (const tier of ['burstable', 'besteffort']) fs.mkdir(`${kubepods}/${tier}`);

  for (const gen of pods) {
    const uid = gen.pod.metadata.uid ?? '';
    for (const tier of Object.values(TIERS)) fs.remove(`${kubepods}/${tier}pod${uid}`);
    if (gen.state === 'missing' || gen.state === 'disk-only') continue;
    const tier = gen.state === 'other-tier' ? TIERS[gen.qos === 'BestEffort' ? 'Burstable' : 'BestEffort'] : TIERS[gen.qos];
    const podDir = `${kubepods}/${tier}pod${uid}`;
    // Ties on purpose: a few working-set sizes only, some pods all page cache.
    let podUsage = 0;
    let podInactive = 0;
    for (const id of gen.containerIds) {
      const workingSet = rng.chance(0.3) ? rng.pick([0, 64 * Mi, 128 * Mi, 256 * Mi]) : rng.int(2 * Gi);
      const inactive = rng.chance(0.4) ? 0 : rng.int(Gi);
      writeCgroup(`${podDir}/${id}`, workingSet + inactive, inactive);
      podUsage += workingSet + inactive;
      podInactive += inactive;
    }
    // The sandbox: no container of the pod's, counted in the pod only.
    writeCgroup(`${podDir}/${hex(rng, 64)}`, Mi, 0);
    writeCgroup(podDir, podUsage + Mi, podInactive, gen.state !== 'no-stat');
  }
}

function writeDisk(fs: MemoryHostFs, pods: GenPod[]): void {
  fs.mkdir('/var/lib/kubelet/pods');
  fs.mkdir('/var/log/pods');
  fs.write('/proc/1/mountinfo', '');
  for (const gen of pods) {
    if (gen.state !== 'disk-only') continue;
    const uid = gen.pod.metadata.uid ?? '';
    fs.write(`/var/lib/kubelet/pods/${uid}/volumes/kubernetes.io~empty-dir/data/file`, 'x'.repeat(5000));
  }
}

const STATES: readonly CgroupState[] = ['present', 'present', 'present', 'present', 'present', 'present', 'present', 'present', 'missing', 'no-stat', 'other-tier', 'disk-only'];

function thresholdConfig(rng: Rng): { yaml: string; thresholdBytes: number } {
  const choice = rng.pick([
    { value: '500Mi', bytes: 500 * Mi },
    { value: '2Gi', bytes: 2 * Gi },
    { value: '10%', bytes: 0.1 * 16 * Gi },
  ]);
  const allocatable = rng.chance(0.3);
  const yaml = [
    'evictionHard:',
    `  memory.available: ${choice.value}`,
    ...(allocatable ? ['  allocatableMemory.available: 1Gi'] : []),
    'evictionSoft:',
    '  memory.available: 4Gi',
    'evictionSoftGracePeriod:',
    '  memory.available: 30s',
    `enforceNodeAllocatable: [${allocatable ? 'pods' : ''}]`,
    '',
  ].join('\n');
  return { yaml, thresholdBytes: choice.bytes };
}

const NODES = 300;

describe('the memory shortcut decides as the full pass does', () => {
  test(`on ${NODES} generated nodes: the same threshold met, the same pod, the same message`, async () => {
    let evicting = 0;
    let workingSetsRead = 0;
    let podsOnEvictingNodes = 0;
    for (let seed = 1; seed <= NODES; seed++) {
      const rng = prng(seed);
      const version = rng.chance(0.5) ? 'v1' : 'v2';
      const fs = new MemoryHostFs();
      const pods = generatePods(rng, seed);
      const { yaml, thresholdBytes } = thresholdConfig(rng);
      const config = parseConfigText(yaml, `seed-${seed}.yaml`);
      writeDisk(fs, pods);
      for (const gen of pods) gen.state = rng.pick(STATES);
      writeNode(fs, rng, version, pods, thresholdBytes);
      const clock = new FakeClock(Date.UTC(2026, 0, 1) + seed * 1000);
      const settings = observeSettings({ hostRoot: '/', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' });
      const context = { clock, logger: silentLogger, hostFs: fs, processCountIntervalMs: 0 };
      const podList = pods.map((g) => g.pod);

      // The agent's observer has seen the node before (its cgroups located, files kept open)...
      const observer = createCgroupObserver(settings, context);
      await observer.refreshDiskUsage(podList);
      await observer.observe(podList);
      // ...then every figure moves, and a pod or two comes or goes.
      for (const gen of pods) if (rng.chance(0.1)) gen.state = rng.pick(STATES);
      writeNode(fs, rng, version, pods, thresholdBytes);
      clock.step(5000);

      const shortcut = memoryShortcut(new EvictionManager(config.eviction), observer.memory ?? fail('no memory reader'), podList);

      const fresh = createCgroupObserver(settings, context);
      await fresh.refreshDiskUsage(podList);
      const observation = await fresh.observe(podList);
      const full = new EvictionManager(config.eviction).synchronize({ nowMs: clock.nowMs(), summary: observation.summary, pods: podList, dedicatedImageFs: false, splitContainerFs: false });

      const label = `seed ${seed} (${version}, ${pods.length} pods)`;
      const hardMemory = full.reclaim !== null && full.reclaim.threshold.signal.endsWith('emory.available') && full.thresholdsMet.some((t) => t.threshold === full.reclaim?.threshold && t.threshold.gracePeriodMs === 0);
      const fullChoice = full.evictions[0];
      if (!hardMemory) {
        expect({ label, kind: shortcut.kind }).toEqual({ label, kind: 'not-met' });
        continue;
      }
      if (fullChoice === undefined) {
        expect({ label, kind: shortcut.kind }).toEqual({ label, kind: 'no-victim' });
        continue;
      }
      expect({ label, kind: shortcut.kind }).toEqual({ label, kind: 'evict' });
      if (shortcut.kind !== 'evict') continue;
      expect({ label, pod: shortcut.eviction.pod.metadata.uid }).toEqual({ label, pod: fullChoice.pod.metadata.uid });
      expect({ label, reclaim: shortcut.reclaim.threshold }).toEqual({ label, reclaim: full.reclaim?.threshold });
      expect(shortcut.eviction.message).toBe(fullChoice.message);
      expect(shortcut.eviction.annotations).toEqual(fullChoice.annotations);
      expect(shortcut.eviction.gracePeriodSeconds).toBe(fullChoice.gracePeriodSeconds);
      evicting++;
      workingSetsRead += shortcut.workingSetsRead;
      podsOnEvictingNodes += pods.length;
    }
    // Enough nodes evict for the comparison to mean something, and the shortcut reads a small
    // part of the working sets the full pass reads.
    expect(evicting).toBeGreaterThan(NODES / 5);
    expect(workingSetsRead).toBeLessThan(podsOnEvictingNodes / 4);
  });
});

function fail(message: string): never {
  throw new Error(message);
}

describe('the victim search against the ranking', () => {
  // Random pods with random bounds and exact working sets below them: the search's victim is the
  // first non-critical pod of rankMemoryPressure on the exact figures, whatever it reads.
  test('on 2,000 random nodes it finds the ranking\'s first non-critical pod', () => {
    for (let seed = 1; seed <= 2000; seed++) {
      const rng = prng(seed * 7);
      const gens = generatePods(rng, seed).slice(0, 1 + rng.int(40));
      const pods = gens.map((g) => g.pod);
      const exact = new Map<Pod, PodMemoryBound>();
      const vanishing = new Map<Pod, number>();
      const read = new Set<Pod>();
      const bounds = pods.map((pod): PodMemoryBound => {
        const roll = rng.next();
        if (roll < 0.03) {
          exact.set(pod, { kind: 'absent' });
          return { kind: 'absent' };
        }
        if (roll < 0.06) {
          exact.set(pod, { kind: 'exact', workingSetBytes: 0 });
          return { kind: 'exact', workingSetBytes: 0 };
        }
        const workingSetBytes = rng.chance(0.3) ? rng.pick([0, 64 * Mi, 128 * Mi]) : rng.int(2 * Gi);
        // Read now, the working set may be gone (the pod left): the decision's snapshot holds what was
        // read, and for a pod not read, its stats as they were when its bound was read.
        if (rng.chance(0.02)) vanishing.set(pod, workingSetBytes);
        exact.set(pod, { kind: 'exact', workingSetBytes });
        return { kind: 'bounded', usageBytes: workingSetBytes + (rng.chance(0.5) ? 0 : rng.int(Gi)) };
      });
      const search = new MemoryVictimSearch(pods, bounds);
      for (let pod = search.next(); pod !== null; pod = search.next()) {
        const reading = vanishing.has(pod) ? ({ kind: 'absent' } as const) : exact.get(pod);
        if (reading === undefined || reading.kind === 'bounded') throw new Error('no exact figure');
        read.add(pod);
        search.settle(reading);
      }
      const stats = makeStatsFunc(
        pods.flatMap((pod) => {
          const reading = vanishing.has(pod) && read.has(pod) ? ({ kind: 'absent' } as const) : exact.get(pod);
          const podRef = { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: pod.metadata.uid ?? '' };
          if (reading === undefined || reading.kind === 'absent') return [];
          if (reading.kind === 'exact' && reading.workingSetBytes === 0 && rng.chance(0.5)) return [{ podRef }];
          return [{ podRef, memory: { workingSetBytes: reading.kind === 'exact' ? reading.workingSetBytes : 0 } }];
        }),
      );
      const expected = rankedPods('memory.available', false, false, pods, stats).find((r) => !r.critical)?.pod ?? null;
      expect({ seed, victim: search.victim?.metadata.uid ?? null }).toEqual({ seed, victim: expected?.metadata.uid ?? null });
    }
  });
});

describe('the victim\'s lead over the other pods (the kill path\'s check)', () => {
  // The victim ranked on exact working sets (some pods read, the others bounded by their usage):
  // every other pod that could come first is a rival, and ranks before the victim at exactly its
  // overtaking point, not a byte sooner (its own working set wherever it was); with the victim shrunk
  // by less than its allowance and every rival just under its point less that shrink, all at once,
  // the victim still ranks first. Checked against the engine's ranking.
  test('on 300 random nodes each rival overtakes the victim at its point and not a byte below, whatever it was before', () => {
    let checked = 0;
    let shrunk = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const rng = prng(seed * 13);
      const pods = generatePods(rng, seed)
        .slice(0, 2 + rng.int(30))
        .map((g) => g.pod);
      const allRead = rng.chance(0.5);
      const exact = new Map<Pod, number>();
      const bounds = pods.map((pod): PodMemoryBound => {
        const workingSetBytes = rng.chance(0.3) ? rng.pick([0, 64 * Mi, 128 * Mi]) : rng.int(2 * Gi);
        exact.set(pod, workingSetBytes);
        return allRead ? { kind: 'exact', workingSetBytes } : { kind: 'bounded', usageBytes: workingSetBytes + (rng.chance(0.5) ? 0 : rng.int(Gi)) };
      });
      const search = new MemoryVictimSearch(pods, bounds);
      for (let pod = search.next(); pod !== null; pod = search.next()) search.settle({ kind: 'exact', workingSetBytes: exact.get(pod) ?? 0 });
      const victim = search.victim;
      const lead = search.lead;
      if (victim === null || lead === null) continue;
      const first = (changed: ReadonlyMap<Pod, number>): string | null => {
        const stats = makeStatsFunc(pods.map((pod) => ({ podRef: { name: pod.metadata.name ?? '', namespace: pod.metadata.namespace ?? '', uid: pod.metadata.uid ?? '' }, memory: { workingSetBytes: changed.get(pod) ?? exact.get(pod) ?? 0 } })));
        return rankedPods('memory.available', false, false, pods, stats).find((r) => !r.critical)?.pod.metadata.uid ?? null;
      };
      expect({ seed, victim: first(new Map()), workingSet: lead.workingSetBytes }).toEqual({ seed, victim: victim.metadata.uid, workingSet: BigInt(exact.get(victim) ?? 0) });
      const rivals = new Map(lead.rivals.map((r) => [r.pod, Number(r.overtakingWorkingSetBytes)]));
      for (const other of pods.filter((p) => p !== victim && !isCriticalPod(p))) {
        const point = rivals.get(other);
        const label = { seed, other: other.metadata.name };
        // Not a rival: no working set puts it first.
        if (point === undefined) {
          expect({ ...label, first: first(new Map([[other, 64 * Gi]])) }).toEqual({ ...label, first: victim.metadata.uid });
          continue;
        }
        expect({ ...label, below: first(new Map([[other, point - 1]])), at: first(new Map([[other, point]])) }).toEqual({ ...label, below: victim.metadata.uid, at: other.metadata.uid });
        checked++;
      }
      // What the thread checks: the victim shrunk by less than its allowance, and every rival just
      // under its point less that shrink, all at once: the victim still ranks first.
      const victimBytes = exact.get(victim) ?? 0;
      const shrinkBytes = lead.shrinkAllowanceBytes === null ? 0 : rng.int(Math.min(Number(lead.shrinkAllowanceBytes), victimBytes + 1));
      const grown = new Map([[victim, victimBytes - shrinkBytes], ...lead.rivals.map((r): [Pod, number] => [r.pod, Number(r.overtakingWorkingSetBytes) - shrinkBytes - 1])]);
      if ([...grown.values()].some((bytes) => bytes < 0)) continue;
      expect({ seed, shrinkBytes, first: first(grown) }).toEqual({ seed, shrinkBytes, first: victim.metadata.uid });
      if (shrinkBytes > 0) shrunk++;
    }
    expect(checked).toBeGreaterThan(600);
    expect(shrunk).toBeGreaterThan(30);
  });
});
