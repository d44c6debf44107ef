// The cgroup v2 notifier on the simulated kernel and a fake clock: the PSI trigger lines and where
// they go (including the 2 s window without CAP_SYS_RESOURCE), stall events, the fast check's
// crossings in both directions, its adaptive interval, which files it reads and when, its
// failures, and stop.

import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { EMFILE, FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { summary, threshold } from '../../fixtures/memory-thresholds.js';
import type { NotifierEvent } from '../../../src/daemon/ports.js';
import { PsiNotifier, type PsiNotifierOptions } from '../../../src/notifier/psi-notifier.js';
import { unprivilegedWindowMs } from '../../../src/notifier/psi-trigger.js';

const ROOT = '/fake/cgroup2';
const PROC = '/fake/proc';
const NODE_PRESSURE = `${ROOT}/kea-node/memory.pressure`;
const PODS_PRESSURE = `${ROOT}/kubepods/memory.pressure`;
const GI = 1024 ** 3;

// Node: capacity 8Gi; with a 1Gi hard threshold the working set may reach 7Gi.
const nodeSummary = summary({ availableBytes: 4 * GI, usageBytes: 5 * GI, workingSetBytes: 4 * GI }, { availableBytes: 2 * GI, usageBytes: 2 * GI, workingSetBytes: 2 * GI });
const hardMemory = threshold('memory.available', '1Gi');
const softMemory = threshold('memory.available', '2Gi', 60_000);
const hardAllocatable = threshold('allocatableMemory.available', '1Gi');
// 1 GiB/s: a working set 1 GiB from the nearest crossing is checked again a second later.
const TIMING = { minIntervalMs: 10, maxIntervalMs: 1000, allocationBytesPerSecond: GI };

function setup(overrides: Partial<PsiNotifierOptions> = {}, existing: string[] = [NODE_PRESSURE, PODS_PRESSURE]) {
  const native = new FakeNative();
  for (const path of existing) native.addPressureFile(path);
  native.addPressureFile(`${PROC}/pressure/memory`);
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const reads = native.reads;
  const setMemory = (cgroup: string, currentBytes: number, inactiveFileBytes: number): void => {
    native.setFile(`${ROOT}/${cgroup}/memory.current`, `${currentBytes}\n`);
    native.setFile(`${ROOT}/${cgroup}/memory.stat`, `anon 1\nactive_file 2\ninactive_file ${inactiveFileBytes}\n`);
  };
  const notifier = new PsiNotifier({
    cgroupRoot: ROOT,
    nodeCgroup: 'kea-node',
    podCgroupRoot: 'kubepods',
    procRoot: PROC,
    psiStallThresholdMs: 100,
    psiWindowMs: 1000,
    fastCheck: TIMING,
    memoryHighWakeup: false,
    clock,
    logger,
    native,
    files: native.files,
    fileExists: (path) => existing.includes(path) || native.files.exists(path),
    ...overrides,
  });
  const events: NotifierEvent[] = [];
  /** start(), then waits for the PSI triggers to be armed. */
  const start = async (): Promise<void> => {
    notifier.start((event) => events.push(event));
    await notifier.settled();
  };
  return { native, clock, logger, reads, setMemory, notifier, events, start };
}

describe('PsiNotifier PSI triggers', () => {
  test('arms "some <stall us> <window us>" on the node and kubepods memory.pressure, NUL-terminated', async () => {
    const { native, notifier, start } = setup();
    await start();
    expect(native.triggers()).toEqual([
      { path: NODE_PRESSURE, trigger: 'some 100000 1000000' },
      { path: PODS_PRESSURE, trigger: 'some 100000 1000000' },
    ]);
    expect(native.writes.map((w) => w.text)).toEqual(['some 100000 1000000\0', 'some 100000 1000000\0']);
    expect(notifier.psiTriggers()).toEqual([
      { description: 'psi memory pressure', pressurePath: NODE_PRESSURE, windowMs: 1000 },
      { description: 'psi allocatable memory pressure', pressurePath: PODS_PRESSURE, windowMs: 1000 },
    ]);
    await notifier.stop();
  });

  test('the root cgroup without memory.pressure uses the system-wide /proc/pressure/memory', async () => {
    const { native, notifier, start } = setup({ nodeCgroup: '' }, []);
    await start();
    expect(native.triggers()).toEqual([{ path: `${PROC}/pressure/memory`, trigger: 'some 100000 1000000' }]);
    await notifier.stop();
  });

  test('a stall calls onEvent with the trigger that fired', async () => {
    const { native, notifier, start, events, clock } = setup();
    await start();
    clock.step(42);
    native.stall(PODS_PRESSURE);
    await flushMicrotasks();
    native.stall(NODE_PRESSURE);
    await flushMicrotasks();
    expect(events).toEqual([
      { description: 'psi allocatable memory pressure', atMs: clock.nowMs() },
      { description: 'psi memory pressure', atMs: clock.nowMs() },
    ]);
    expect(native.maxOutstandingWaits).toBe(1);
    await notifier.stop();
  });

  test('a trigger the kernel refuses is reported and the fast check still runs', async () => {
    const { native, notifier, start, logger, clock, setMemory, events } = setup({ psiStallThresholdMs: 0 });
    await start();
    expect(native.triggers()).toEqual([]);
    expect(logger.at('warn').map((l) => String(l.fields['problem']))).toEqual([
      `cannot arm the PSI trigger on ${NODE_PRESSURE}: write failed with errno 22: some 0 1000000; with a 2000 ms window: write failed with errno 22: some 0 2000000`,
      `cannot arm the PSI trigger on ${PODS_PRESSURE}: write failed with errno 22: some 0 1000000; with a 2000 ms window: write failed with errno 22: some 0 2000000`,
    ]);
    // epoll set and wake-up eventfd only: the refused trigger descriptors were closed
    expect(native.openFdCount).toBe(2);
    setMemory('kea-node', 8 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await clock.stepAsync(250);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('without CAP_SYS_RESOURCE the window is widened to the next multiple of 2 s, and that is logged', async () => {
    const { native, notifier, start, logger } = setup({ psiWindowMs: 1500 });
    native.psiPrivileged = false;
    await start();
    expect(native.triggers()).toEqual([
      { path: NODE_PRESSURE, trigger: 'some 100000 2000000' },
      { path: PODS_PRESSURE, trigger: 'some 100000 2000000' },
    ]);
    expect(notifier.psiTriggers().map((t) => t.windowMs)).toEqual([2000, 2000]);
    expect(logger.at('warn').map((l) => [l.fields['psiWindowMs'], l.fields['windowMs']])).toEqual([
      [1500, 2000],
      [1500, 2000],
    ]);
    expect(native.openFdCount).toBe(4);
    await notifier.stop();
    expect(native.openFdCount).toBe(0);
  });

  test('stop while a trigger write is in flight waits for it, then closes its descriptor', async () => {
    const { native, notifier } = setup();
    native.holdWrites();
    notifier.start(() => {});
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    await flushMicrotasks();
    expect(stopped).toBe(false);
    native.releaseWrites();
    await stopping;
    expect(native.openFdCount).toBe(0);
    expect(notifier.psiTriggers()).toEqual([]);
  });

  test('a trigger whose cgroup went away (EPOLLERR) is dropped and closed', async () => {
    const { native, notifier, start, logger, events } = setup();
    await start();
    native.breakPressureFile(PODS_PRESSURE);
    await flushMicrotasks();
    expect(events).toEqual([]);
    expect(notifier.psiTriggers().map((t) => t.pressurePath)).toEqual([NODE_PRESSURE]);
    expect(native.openPaths()).toEqual([NODE_PRESSURE]);
    expect(logger.at('warn').map((l) => l.msg)).toEqual(['a PSI trigger stopped working']);
    await notifier.stop();
  });
});

describe('unprivilegedWindowMs', () => {
  const cases = [
    { windowMs: 1000, expected: 2000 },
    { windowMs: 500, expected: 2000 },
    { windowMs: 2000, expected: null },
    { windowMs: 9000, expected: 10_000 },
    { windowMs: 10_000, expected: null },
    { windowMs: 100, expected: null },
  ];
  for (const tc of cases) test(`${tc.windowMs} ms -> ${tc.expected}`, () => expect(unprivilegedWindowMs(tc.windowMs)).toBe(tc.expected));
});

describe('PsiNotifier fast check', () => {
  test('reports each crossing of capacity - threshold by the working set, in either direction, once', async () => {
    const { notifier, start, events, clock, setMemory } = setup();
    setMemory('kea-node', 6 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory, softMemory]);
    await start();
    await clock.stepAsync(1000);
    // working set 6Gi: exactly at the soft limit (available 2Gi, not below it)
    expect(events).toEqual([]);
    setMemory('kea-node', 6 * GI + 1, 0);
    await clock.stepAsync(1000);
    expect(events).toEqual([{ description: 'soft memory eviction threshold', atMs: expect.any(Number) }]);
    // usage far above 7Gi, but mostly inactive page cache: the working set is what counts
    setMemory('kea-node', 9 * GI, 2 * GI + 512);
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold']);
    setMemory('kea-node', 9 * GI, GI);
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold', 'hard memory eviction threshold']);
    setMemory('kea-node', 5 * GI, 0);
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual([
      'soft memory eviction threshold',
      'hard memory eviction threshold',
      'hard memory eviction threshold',
      'soft memory eviction threshold',
    ]);
    await notifier.stop();
  });

  test('the crossing is reported at the check that sees it, on the injected clock', async () => {
    const { notifier, start, events, clock, setMemory } = setup();
    setMemory('kea-node', 5 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(0);
    setMemory('kea-node', 8 * GI, 0);
    // 2Gi from the 7Gi crossing at 1 GiB/s: the next check is the longest interval away.
    await clock.stepAsync(999);
    expect(events).toEqual([]);
    await clock.stepAsync(1);
    expect(events).toEqual([{ description: 'hard memory eviction threshold', atMs: clock.nowMs() }]);
    await notifier.stop();
  });

  const intervals: { name: string; usageBytes: number; expectedMs: number }[] = [
    { name: 'far from the crossing (2Gi at 1 GiB/s): the longest interval', usageBytes: 5 * GI, expectedMs: 1000 },
    { name: '512Mi short: half a second', usageBytes: 6.5 * GI, expectedMs: 500 },
    { name: '64Mi short: 62 ms', usageBytes: 7 * GI - 64 * 1024 ** 2, expectedMs: 62 },
    { name: '1Mi short: the shortest interval', usageBytes: 7 * GI - 1024 ** 2, expectedMs: 10 },
    { name: 'past it (met, 256Mi over): the time to come back down', usageBytes: 7 * GI + 256 * 1024 ** 2, expectedMs: 250 },
  ];
  for (const tc of intervals) {
    test(`the next check comes after distance / rate: ${tc.name}`, async () => {
      const { notifier, start, clock, setMemory, reads } = setup();
      setMemory('kea-node', tc.usageBytes, 0);
      notifier.updateThresholds(nodeSummary, [hardMemory]);
      await start();
      await clock.stepAsync(0);
      const afterFirst = reads.filter((r) => r.endsWith('memory.current')).length;
      await clock.stepAsync(tc.expectedMs - 1);
      expect(reads.filter((r) => r.endsWith('memory.current')).length).toBe(afterFirst);
      await clock.stepAsync(1);
      expect(reads.filter((r) => r.endsWith('memory.current')).length).toBe(afterFirst + 1);
      await notifier.stop();
    });
  }

  test('memory.stat is read only when the usage is past a crossing; a usage below every crossing settles the check', async () => {
    const { notifier, start, clock, setMemory, reads } = setup();
    setMemory('kea-node', 5 * GI, 0);
    setMemory('kubepods', GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory, softMemory, hardAllocatable]);
    await start();
    await clock.stepAsync(0);
    expect(reads.sort()).toEqual([`${ROOT}/kea-node/memory.current`, `${ROOT}/kubepods/memory.current`]);
    reads.length = 0;
    // Usage past the soft crossing (6Gi), but page cache: the working set decides, from memory.stat.
    setMemory('kea-node', 6.5 * GI, GI);
    expect(notifier.checkNow().statRead).toEqual(['memory.available']);
    expect(reads.sort()).toEqual([`${ROOT}/kea-node/memory.current`, `${ROOT}/kea-node/memory.stat`, `${ROOT}/kubepods/memory.current`]);
    expect(notifier.fastCheckCounts().statReads).toBe(1);
    await notifier.stop();
  });

  test('the files are kept open between checks and closed on stop', async () => {
    const { native, notifier, start, clock, setMemory } = setup();
    // The usage a byte past the crossing, the working set a byte short of it: both files are read, every 10 ms.
    setMemory('kea-node', 7 * GI + 1, 2);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(1000);
    expect(notifier.fastCheckCounts()).toEqual({ checks: 101, statReads: 101 });
    expect(native.files.openCount).toBe(2);
    await notifier.stop();
    expect(native.files.openCount).toBe(0);
  });

  test('new figures bring the next check forward', async () => {
    const { notifier, start, clock, setMemory, events } = setup();
    setMemory('kea-node', 5 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(0);
    // A threshold that this working set already meets: checked at once, not a second later.
    notifier.updateThresholds(nodeSummary, [threshold('memory.available', '4Gi')]);
    await clock.stepAsync(0);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('the allocatable threshold is checked on the kubepods cgroup', async () => {
    const { notifier, start, events, clock, setMemory } = setup();
    setMemory('kea-node', GI, 0);
    setMemory('kubepods', GI + 1, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory, hardAllocatable]);
    await start();
    await clock.stepAsync(1000);
    // kubepods capacity 4Gi, threshold 1Gi: a working set over 3Gi meets it
    expect(events).toEqual([]);
    setMemory('kubepods', 3 * GI + 1, 0);
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual(['hard allocatable memory eviction threshold']);
    await notifier.stop();
  });

  test('a threshold already met at the first check is reported once', async () => {
    const { notifier, start, events, clock, setMemory } = setup();
    setMemory('kea-node', 8 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(3000);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('the root cgroup, without memory.current, is read from its memory.stat as the observer reads it', async () => {
    const { native, notifier, start, events, clock, reads } = setup({ nodeCgroup: '' }, []);
    // anon 6Gi + file 1.5Gi - inactive file 256Mi: working set 7.25Gi, over the 7Gi the threshold allows.
    native.setFile(`${ROOT}/memory.stat`, `anon ${6 * GI}\nfile ${1.5 * GI}\nkernel ${2 * GI}\ninactive_file ${GI / 4}\n`);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(0);
    expect(reads).toEqual([`${ROOT}/memory.stat`]);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('kernel memory beside the root cgroup anon and file pages is no crossing (meminfo would count it)', async () => {
    const { native, notifier, start, events, clock } = setup({ nodeCgroup: '' }, []);
    // Working set 6Gi: below the 7Gi line, whatever slab and page tables hold besides (MemTotal - MemFree would say 7.5Gi).
    native.setFile(`${ROOT}/memory.stat`, `anon ${5 * GI}\nfile ${1.5 * GI}\ninactive_file ${GI / 2}\nslab ${1.5 * GI}\n`);
    native.setFile(`${PROC}/meminfo`, `MemTotal: ${8 * 1024 * 1024} kB\nMemFree: ${512 * 1024} kB\nInactive(file): ${512 * 1024} kB\n`);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(1000);
    expect(events).toEqual([]);
    await notifier.stop();
  });

  test('an unreadable cgroup is reported once, and checks go on', async () => {
    const { notifier, start, events, clock, logger, setMemory } = setup();
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(3000);
    expect(logger.at('warn').map((l) => l.fields['problem'])).toEqual([`cannot read the usage: ENOENT: ${ROOT}/kea-node/memory.current`]);
    setMemory('kea-node', 8 * GI, 0);
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('a cgroup removed and made again is read through a fresh descriptor', async () => {
    const { native, notifier, start, events, clock, setMemory } = setup();
    setMemory('kea-node', 5 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(0);
    native.removeFile(`${ROOT}/kea-node/memory.current`);
    notifier.checkNow();
    setMemory('kea-node', 8 * GI, 0);
    notifier.checkNow();
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('an incomplete summary keeps the last good figures and is reported once', async () => {
    const { notifier, start, events, clock, logger, setMemory } = setup();
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    for (let i = 0; i < 3; i++) notifier.updateThresholds(summary(null), [hardMemory]);
    expect(logger.at('warn')).toHaveLength(1);
    setMemory('kea-node', 8 * GI, 0);
    await start();
    await clock.stepAsync(1000);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('with nothing to check against there is no check and no timer, until figures arrive', async () => {
    const { notifier, start, clock, setMemory, reads } = setup();
    setMemory('kea-node', 5 * GI, 0);
    await start();
    await clock.stepAsync(60_000);
    expect(clock.pendingTimers()).toBe(0);
    expect(notifier.fastCheckCounts().checks).toBe(0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    expect(clock.pendingTimers()).toBe(1);
    await clock.stepAsync(0);
    expect(reads).toEqual([`${ROOT}/kea-node/memory.current`]);
    // Thresholds gone (none configured any more): the timer goes too.
    notifier.updateThresholds(nodeSummary, []);
    expect(clock.pendingTimers()).toBe(0);
    await notifier.stop();
  });

  test('one check timer at a time, however often new figures arrive', async () => {
    const { notifier, start, clock, setMemory } = setup();
    setMemory('kea-node', 5 * GI, 0);
    await start();
    for (let i = 0; i < 5; i++) notifier.updateThresholds(nodeSummary, [hardMemory]);
    expect(clock.pendingTimers()).toBe(1);
    await clock.stepAsync(5000);
    expect(clock.pendingTimers()).toBe(1);
    await notifier.stop();
  });
});

describe('PsiNotifier stop', () => {
  test('stop wakes the wait, cancels the fast check and closes every descriptor', async () => {
    const { native, notifier, start, clock, events, setMemory } = setup();
    setMemory('kea-node', 5 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await flushMicrotasks();
    expect(native.outstandingWaits).toBe(1);
    expect(clock.pendingTimers()).toBe(1);
    await notifier.stop();
    expect(native.outstandingWaits).toBe(0);
    expect(native.openFdCount).toBe(0);
    expect(clock.pendingTimers()).toBe(0);
    setMemory('kea-node', 8 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await clock.stepAsync(3000);
    expect(events).toEqual([]);
    expect(notifier.stop()).toBe(notifier.stop());
  });

  test('without an epoll set the fast check alone runs', async () => {
    const { native, notifier, start, clock, events, setMemory, logger } = setup();
    native.failNext('createEpoll', EMFILE);
    setMemory('kea-node', 8 * GI, 0);
    notifier.updateThresholds(nodeSummary, [hardMemory]);
    await start();
    await clock.stepAsync(0);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    expect(logger.at('error').map((l) => l.msg)).toEqual(['cannot create the epoll set; PSI triggers and the memory.high wake-up are off, the fast check still runs']);
    await notifier.stop();
    expect(native.openFdCount).toBe(0);
  });
});
