// The cgroup observer against the kernel's own numbers on cgroup v2, for both cgroup drivers' names:
// a sandbox node cgroup with a memory.max, a kubepods cgroup with its own, and pods whose
// containers are real processes that allocate and touch memory, idle, or fill the page cache (so a
// working set below usage is seen). Each number the observer reports is compared with
// memory.current − inactive_file read right after; the root cgroup's with runc's emulation of its
// usage, and MemTotal for its capacity. The notifier's fast check reads the same working sets.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../../../../src/api/clock.js';
import { silentLogger } from '../../../../../src/api/logger.js';
import type { Pod } from '../../../../../src/api/pod.js';
import type { Summary } from '../../../../../src/api/summary.js';
import { parseQuantity } from '../../../../../src/api/quantity.js';
import type { Threshold } from '../../../../../src/api/threshold.js';
import { nodeHostFs } from '../../../../../src/host/host-fs.js';
import { CgroupMemoryReader, cgroupWorkingSetSource } from '../../../../../src/notifier/cgroup-v2-memory.js';
import { notifierSettings, observeSettings } from '../../../../fixtures/settings.js';
import { createMemoryThresholdNotifier } from '../../../../../src/notifier/create-memory-threshold-notifier.js';
import { createCgroupObserver, type CgroupObserver } from '../../../../../src/observe/cgroup-observer.js';
import { CgroupSandbox } from '../../../../helpers/cgroup-sandbox.js';
import { defineSuite, type GuestCase } from '../guest-suite.js';
import { currentBytes, kernelWorkingSetBytes, memTotalBytes, MiB, rootKernelWorkingSetBytes, sleepMs, waitFor } from '../kernel-numbers.js';
import { containerId, POD_LAYOUTS, runningPod, type PodLayout } from '../pod-layouts.js';
import { pageCacheCommand, PAGE_CACHE_MIN_BYTES, type PageCachePart } from '../page-cache.js';

// Idle processes: the slack covers per-CPU charge batching and a page a runtime touches between reads.
const TOLERANCE_BYTES = 4 * MiB;
const NODE_LIMIT_BYTES = 1024n * BigInt(MiB);
const PODS_LIMIT_BYTES = 768n * BigInt(MiB);
const APP_BYTES = 64 * MiB;
const DB_BYTES = 96 * MiB;

// The root cgroup covers the whole guest, this process included.
const ROOT_TOLERANCE_BYTES = 8 * MiB;
const ROOT_MARGIN_BYTES = 24 * MiB;

const uidSmall = '22222222-3333-4444-8555-000000000064';
const uidLarge = '22222222-3333-4444-8555-000000000096';

interface DriverScene {
  readonly layout: PodLayout;
  readonly sandbox: CgroupSandbox;
  readonly observer: CgroupObserver;
  readonly pods: readonly Pod[];
  /** Sandbox-relative cgroups by role. */
  readonly dirs: Readonly<Record<'kubepods' | 'small' | 'smallApp' | 'smallPause' | 'large' | 'largeDb' | 'largeSidecar' | 'largeCache', string>>;
}

const scenes = new Map<string, DriverScene>();

async function buildScene(layout: PodLayout, part: PageCachePart): Promise<DriverScene> {
  const sandbox = await CgroupSandbox.create({ version: 'v2', limitBytes: NODE_LIMIT_BYTES });
  const small = layout.burstablePod(uidSmall);
  const large = layout.guaranteedPod(uidLarge);
  const dirs = {
    kubepods: layout.kubepods,
    small,
    smallApp: `${small}/${layout.container(containerId('1'))}`,
    smallPause: `${small}/${layout.container(containerId('a'))}`,
    large,
    largeDb: `${large}/${layout.container(containerId('2'))}`,
    largeSidecar: `${large}/${layout.container(containerId('3'))}`,
    largeCache: `${large}/${layout.container(containerId('4'))}`,
  };
  sandbox.mkdir(dirs.kubepods);
  sandbox.setLimit(dirs.kubepods, PODS_LIMIT_BYTES);
  await Promise.all([
    sandbox.startAllocator(dirs.smallApp, APP_BYTES),
    sandbox.startIdle(dirs.smallPause),
    sandbox.startAllocator(dirs.largeDb, DB_BYTES),
    sandbox.startIdle(dirs.largeSidecar),
    sandbox.startIdle(dirs.largeSidecar),
  ]);
  // Its own part of the module tree, read after the others started: the page cache is its own.
  await sandbox.startCommand(dirs.largeCache, pageCacheCommand(part));
  const pods = [
    runningPod('small', uidSmall, 'Burstable', { app: containerId('1') }),
    runningPod('large', uidLarge, 'Guaranteed', { db: containerId('2'), sidecar: containerId('3'), cache: containerId('4') }),
  ];
  const observer = createCgroupObserver(observeSettings({ cgroupDriver: layout.driver, kubeletRootDir: '/tmp', imageFsPath: '/tmp', podLogsDir: '/tmp' }), {
    clock: systemClock,
    logger: silentLogger,
    nodeCgroup: sandbox.name,
    processCountIntervalMs: 0,
  });
  return { layout, sandbox, observer, pods, dirs };
}

const rootObserver = (): CgroupObserver => createCgroupObserver(observeSettings({ kubeletRootDir: '/tmp', imageFsPath: '/tmp', podLogsDir: '/tmp' }), { clock: systemClock, logger: silentLogger, processCountIntervalMs: 0 });

function scene(driver: string): DriverScene {
  const found = scenes.get(driver);
  if (found === undefined) throw new Error(`no ${driver} scene`);
  return found;
}

/** One observation, and the kernel's working set of every cgroup of the scene read right after it. */
async function observeNow(s: DriverScene): Promise<{ summary: Summary; problems: readonly string[]; kernel: Record<string, number>; usage: Record<string, number> }> {
  const { summary, problems } = await s.observer.observe(s.pods);
  const kernel: Record<string, number> = { node: kernelWorkingSetBytes(s.sandbox.path) };
  const usage: Record<string, number> = { node: currentBytes(s.sandbox.path) };
  for (const [role, dir] of Object.entries(s.dirs)) {
    kernel[role] = kernelWorkingSetBytes(s.sandbox.resolve(dir));
    usage[role] = currentBytes(s.sandbox.resolve(dir));
  }
  return { summary, problems, kernel, usage };
}

function near(what: string, observed: number | undefined, kernel: number | undefined, toleranceBytes = TOLERANCE_BYTES): void {
  assert.ok(observed !== undefined, `${what}: not observed`);
  assert.ok(kernel !== undefined, `${what}: no kernel number`);
  assert.ok(Math.abs(observed - kernel) <= toleranceBytes, `${what}: observed ${observed}, the kernel says ${kernel} (more than ${toleranceBytes} apart)`);
}

const podStats = (summary: Summary, uid: string) => summary.pods?.find((p) => p.podRef.uid === uid);
const containerWs = (summary: Summary, uid: string, name: string): number | undefined => podStats(summary, uid)?.containers?.find((c) => c.name === name)?.memory?.workingSetBytes;

function driverCases(layout: PodLayout): GuestCase[] {
  const d = layout.driver;
  return [
    {
      name: `${d}: the node working set and capacity are the node cgroup's memory.current − inactive_file and memory.max`,
      async run({ note }) {
        const { summary, problems, kernel } = await observeNow(scene(d));
        assert.deepEqual(problems.filter((p) => !p.includes('mountinfo')), []);
        const memory = summary.node.memory;
        near('node working set', memory?.workingSetBytes, kernel.node);
        assert.equal((memory?.availableBytes ?? 0) + (memory?.workingSetBytes ?? 0), Number(NODE_LIMIT_BYTES));
        note('nodeWorkingSetMiB', Math.round((memory?.workingSetBytes ?? 0) / MiB));
      },
    },
    {
      name: `${d}: the pods system container is ${layout.kubepods}, its memory.max the allocatable`,
      async run() {
        const { summary, kernel } = await observeNow(scene(d));
        const pods = summary.node.systemContainers?.find((c) => c.name === 'pods')?.memory;
        near(`${layout.kubepods} working set`, pods?.workingSetBytes, kernel.kubepods);
        assert.ok((pods?.workingSetBytes ?? 0) >= APP_BYTES + DB_BYTES, `${layout.kubepods} holds the allocations`);
        assert.equal((pods?.availableBytes ?? 0) + (pods?.workingSetBytes ?? 0), Number(PODS_LIMIT_BYTES));
      },
    },
    {
      name: `${d}: pod working sets match the kernel's and hold the allocations`,
      async run() {
        const { summary, kernel } = await observeNow(scene(d));
        near('small pod', podStats(summary, uidSmall)?.memory?.workingSetBytes, kernel.small);
        near('large pod', podStats(summary, uidLarge)?.memory?.workingSetBytes, kernel.large);
        assert.ok((podStats(summary, uidSmall)?.memory?.workingSetBytes ?? 0) >= APP_BYTES);
        assert.ok((podStats(summary, uidLarge)?.memory?.workingSetBytes ?? 0) >= DB_BYTES);
        assert.deepEqual(podStats(summary, uidSmall)?.process_stats, { process_count: 2 });
        assert.deepEqual(podStats(summary, uidLarge)?.process_stats, { process_count: 4 });
      },
    },
    {
      name: `${d}: container working sets match the kernel's; page cache counts in usage, not in the working set`,
      async run({ note }) {
        const { summary, kernel, usage } = await observeNow(scene(d));
        near('app', containerWs(summary, uidSmall, 'app'), kernel.smallApp);
        near('db', containerWs(summary, uidLarge, 'db'), kernel.largeDb);
        near('sidecar', containerWs(summary, uidLarge, 'sidecar'), kernel.largeSidecar);
        near('cache', containerWs(summary, uidLarge, 'cache'), kernel.largeCache);
        // The pause stand-in is not a container the pod lists: no entry for it.
        assert.deepEqual(podStats(summary, uidSmall)?.containers?.map((c) => c.name), ['app']);
        const cache = podStats(summary, uidLarge)?.containers?.find((c) => c.name === 'cache')?.memory;
        assert.ok(cache?.usageBytes !== undefined && cache.workingSetBytes !== undefined);
        near('cache usage', cache.usageBytes, usage.largeCache);
        const stat = readFileSync(join(scene(d).sandbox.resolve(scene(d).dirs.largeCache), 'memory.stat'), 'utf8');
        assert.ok(cache.usageBytes - cache.workingSetBytes >= PAGE_CACHE_MIN_BYTES, `the page cache (${cache.usageBytes - cache.workingSetBytes} bytes) is left out of the working set; memory.stat:\n${stat}`);
        note('cachePageCacheMiB', Math.round((cache.usageBytes - cache.workingSetBytes) / MiB));
      },
    },
    {
      name: `${d}: the fast check reads the node and ${layout.kubepods} working sets as the observer does`,
      async run() {
        const s = scene(d);
        const { summary } = await observeNow(s);
        const readNow = (dir: string): number => {
          const reader = new CgroupMemoryReader(nodeHostFs, cgroupWorkingSetSource(dir));
          try {
            return Number(reader.read().workingSetBytes);
          } finally {
            reader.close();
          }
        };
        const fastNode = readNow(s.sandbox.path);
        const fastPods = readNow(s.sandbox.resolve(layout.kubepods));
        near('node, fast check vs observer', fastNode, summary.node.memory?.workingSetBytes);
        near(`${layout.kubepods}, fast check vs observer`, fastPods, summary.node.systemContainers?.find((c) => c.name === 'pods')?.memory?.workingSetBytes);
      },
    },
  ];
}

export const suite = defineSuite({
  name: 'observe',
  title: 'the observer and the fast check read the kernel\'s numbers',
  async setUp() {
    // Side by side (each reads its own part of the module tree into its own page cache); what did
    // start is kept for the tear-down even when the other failed.
    const settled = await Promise.allSettled(POD_LAYOUTS.map((layout, index) => buildScene(layout, index as PageCachePart)));
    for (const result of settled) if (result.status === 'fulfilled') scenes.set(result.value.layout.driver, result.value);
    for (const result of settled) if (result.status === 'rejected') throw result.reason;
  },
  async tearDown() {
    for (const s of scenes.values()) {
      s.observer.close();
      await s.sandbox.cleanup();
    }
  },
  cases: [
    ...POD_LAYOUTS.flatMap(driverCases),
    {
      name: 'the root cgroup: working set as runc emulates it (anon + file − inactive_file), capacity MemTotal',
      async run({ note }) {
        const observer = rootObserver();
        try {
          const { summary } = await observer.observe([]);
          const kernel = rootKernelWorkingSetBytes();
          // The whole guest moves between two reads (this process allocates as it runs).
          near('root working set', summary.node.memory?.workingSetBytes, kernel, ROOT_TOLERANCE_BYTES);
          assert.equal((summary.node.memory?.availableBytes ?? 0) + (summary.node.memory?.workingSetBytes ?? 0), memTotalBytes());
          note('rootWorkingSetMiB', Math.round(kernel / MiB));
        } finally {
          observer.close();
        }
      },
    },
    {
      name: 'the root cgroup: the fast check reports a crossing when the observer would see one, not before',
      async run({ note }) {
        const observer = rootObserver();
        const sandbox = await CgroupSandbox.create({ version: 'v2' });
        const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'psi', fastCheckMinIntervalMs: 50, fastCheckMaxIntervalMs: 50 }), { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: '', podCgroupRoot: `${sandbox.name}/none`, procRoot: '/proc', clock: systemClock, logger: silentLogger });
        const crossings: number[] = [];
        try {
          notifier.start((event) => {
            if (event.description === 'hard memory eviction threshold') crossings.push(performance.now());
          });
          const { summary } = await observer.observe([]);
          const availableBytes = summary.node.memory?.availableBytes ?? 0;
          // Met once the working set grows by more than the margin: not yet, but after the allocation.
          const threshold: Threshold = { signal: 'memory.available', value: { kind: 'quantity', quantity: parseQuantity(String(availableBytes - ROOT_MARGIN_BYTES)) }, gracePeriodMs: 0, minReclaim: null };
          notifier.updateThresholds(summary, [threshold]);
          await sleepMs(1000);
          assert.deepEqual(crossings, [], `the fast check reported a crossing ${ROOT_MARGIN_BYTES / MiB} MiB before the observer would`);
          const allocatedAtMs = performance.now();
          await sandbox.startAllocator('allocator', 4 * ROOT_MARGIN_BYTES);
          await waitFor('the crossing', () => crossings.length > 0, 10_000);
          note('crossingSeenAfterMs', Math.round((crossings[0] ?? 0) - allocatedAtMs));
          const after = (await observer.observe([])).summary.node.memory?.availableBytes ?? Infinity;
          assert.ok(after < availableBytes - ROOT_MARGIN_BYTES, 'the observer sees the crossing too');
        } finally {
          await notifier.stop();
          observer.close();
          await sandbox.cleanup();
        }
      },
    },
  ],
});
