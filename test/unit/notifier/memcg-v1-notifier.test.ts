// The cgroup v1 notifier on the simulated kernel (test/fakes/fake-native.ts) and a fake clock:
// what it registers where, the re-arming rules, events (counter reset, several thresholds, late
// events for removed registrations), failures, and stop with everything released.

import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { EBADF, EMFILE, FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { summary, summaryArming, threshold } from '../../fixtures/memory-thresholds.js';
import type { NotifierEvent } from '../../../src/daemon/ports.js';
import { MemcgV1Notifier } from '../../../src/notifier/memcg-v1-notifier.js';

const MOUNT = '/fake/sys/fs/cgroup/memory';
const PODS = `${MOUNT}/kubepods`;
const GI = 1n << 30n;
const T = 6n * GI;

const hardMemory = threshold('memory.available', '1Gi');
const softMemory = threshold('memory.available', '2Gi', 60_000);
const hardAllocatable = threshold('allocatableMemory.available', '1Gi');

function setup(podCgroupRoot = 'kubepods') {
  const native = new FakeNative();
  native.addCgroup(MOUNT, 0n);
  native.addCgroup(PODS, 0n);
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const notifier = new MemcgV1Notifier({ memoryMount: MOUNT, nodeCgroup: '', podCgroupRoot, clock, logger, native });
  const events: NotifierEvent[] = [];
  const start = (): void => notifier.start((event) => events.push(event));
  /** updateThresholds, then waits for the registrations it started. */
  const update = async (...args: Parameters<MemcgV1Notifier['updateThresholds']>): Promise<void> => {
    notifier.updateThresholds(...args);
    await notifier.settled();
  };
  return { native, clock, logger, notifier, events, start, update };
}

/** Started, armed for the hard threshold at T, and crossed there once: one event delivered. */
async function crossedOnce(): Promise<ReturnType<typeof setup>> {
  const set = setup();
  set.start();
  await set.update(summaryArming(T), [hardMemory]);
  set.clock.step(1_000);
  set.native.setUsage(MOUNT, T);
  await flushMicrotasks();
  expect(set.events).toHaveLength(1);
  return set;
}

describe('MemcgV1Notifier arming', () => {
  test('arms each threshold on its cgroup with the kubelet formula and closes the watch and control files', async () => {
    const { native, notifier, update } = setup();
    await update(summaryArming(T, 3n * GI), [hardMemory, softMemory, hardAllocatable]);
    expect(native.registrations(MOUNT)).toEqual([T, T - GI]);
    expect(native.registrations(PODS)).toEqual([3n * GI]);
    for (const write of native.writes) expect(write.text).toMatch(/^\d+ \d+ \d+$/);
    expect(native.writes.map((w) => [w.path, w.text.split(' ')[2]])).toEqual([
      [`${MOUNT}/cgroup.event_control`, `${T}`],
      [`${MOUNT}/cgroup.event_control`, `${T - GI}`],
      [`${PODS}/cgroup.event_control`, `${3n * GI}`],
    ]);
    expect(native.openPaths()).toEqual([]);
    // the epoll set, its wake-up eventfd, and one eventfd per threshold
    expect(native.openFdCount).toBe(5);
    expect(notifier.armedThresholds().map((a) => [a.description, a.cgroupPath, a.memcgThresholdBytes])).toEqual([
      ['hard memory eviction threshold', MOUNT, T],
      ['soft memory eviction threshold', MOUNT, T - GI],
      ['hard allocatable memory eviction threshold', PODS, 3n * GI],
    ]);
  });

  test('a node cgroup other than the root is watched under the mount point', async () => {
    const native = new FakeNative();
    native.addCgroup(`${MOUNT}/kea-node`, 0n);
    const notifier = new MemcgV1Notifier({ memoryMount: MOUNT, nodeCgroup: 'kea-node', podCgroupRoot: 'kubepods', clock: new FakeClock(), logger: new RecordingLogger(), native });
    notifier.updateThresholds(summaryArming(T), [hardMemory]);
    await notifier.settled();
    expect(native.registrations(`${MOUNT}/kea-node`)).toEqual([T]);
  });

  test('an incomplete summary is reported once while it persists, and again when it comes back', async () => {
    const { native, logger, update } = setup();
    const incomplete = summary({ availableBytes: 1, usageBytes: 1 });
    for (let i = 0; i < 3; i++) await update(incomplete, [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([]);
    expect(logger.at('warn').map((l) => l.fields['problem'])).toEqual(['summary was incomplete: expected usageBytes, workingSetBytes and availableBytes in node.memory']);
    await update(summaryArming(T), [hardMemory]);
    await update(incomplete, [hardMemory]);
    expect(logger.at('warn')).toHaveLength(2);
    // the last good value stays armed, as the kubelet keeps its last notifier when an update fails
    expect(native.registrations(MOUNT)).toEqual([T]);
  });

  test('a missing kubepods cgroup is reported once and the node thresholds are still armed', async () => {
    const { native, logger, update } = setup('no-such-kubepods');
    for (let i = 0; i < 3; i++) await update(summaryArming(T, GI), [hardMemory, hardAllocatable]);
    expect(native.registrations(MOUNT)).toEqual([T]);
    const warnings = logger.at('warn');
    expect(warnings).toHaveLength(1);
    expect(String(warnings[0]?.fields['problem'])).toContain(`cannot arm the threshold on ${MOUNT}/no-such-kubepods: open failed with errno 2`);
    // nothing left open by the failed attempts: epoll, wake-up, one threshold
    expect(native.openFdCount).toBe(3);
  });

  test('a threshold removed from the configuration is disarmed and its eventfd closed', async () => {
    const { native, notifier, update } = setup();
    await update(summaryArming(T), [hardMemory, softMemory]);
    await update(summaryArming(T), [softMemory]);
    expect(native.registrations(MOUNT)).toEqual([T - GI]);
    expect(native.openFdCount).toBe(3);
    expect(notifier.armedThresholds().map((a) => a.description)).toEqual(['soft memory eviction threshold']);
  });
});

describe('MemcgV1Notifier re-arming', () => {
  test('an unchanged value is never re-armed, however much time passes', async () => {
    const { native, clock, update } = setup();
    await update(summaryArming(T), [hardMemory]);
    const created = native.createdFds;
    for (let i = 0; i < 5; i++) {
      clock.step(11_000);
      await update(summaryArming(T), [hardMemory]);
    }
    expect(native.createdFds).toBe(created);
    expect(native.registrations(MOUNT)).toEqual([T]);
  });

  test('a changed value waits for more than 10 s since the last arming (kubelet notifierRefreshInterval)', async () => {
    const { native, clock, update } = setup();
    await update(summaryArming(T), [hardMemory]);
    clock.step(5_000);
    await update(summaryArming(T + 1n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T]);
    clock.step(5_000);
    await update(summaryArming(T + 2n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T]);
    clock.step(1);
    await update(summaryArming(T + 3n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + 3n]);
    // the old eventfd is closed: epoll, wake-up, one threshold
    expect(native.openFdCount).toBe(3);
    clock.step(1_000);
    await update(summaryArming(T + 4n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + 3n]);
  });

  test('a crossing lets a changed value re-arm at once', async () => {
    const { native, notifier, clock, update } = await crossedOnce();
    clock.step(1_000);
    await update(summaryArming(T + GI), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + GI]);
    // the crossing is used up by that re-arm
    clock.step(1_000);
    await update(summaryArming(T + 2n * GI), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + GI]);
    await notifier.stop();
  });

  test('a crossing whose pass finds the same point moves it one page up, once', async () => {
    const { native, notifier, clock, events, update } = await crossedOnce();
    // The pass computes the same point: the kernel would stay silent at it, so it moves a page up.
    await update(summaryArming(T), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + 4096n]);
    // Not passed at registration: no event; the next pass within 10 s keeps it.
    expect(events).toHaveLength(1);
    clock.step(1_000);
    await update(summaryArming(T), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + 4096n]);
    await notifier.stop();
  });

  test('a crossing of one threshold lets the others re-arm at once too', async () => {
    const { native, notifier, clock, start, update } = setup();
    start();
    await update(summaryArming(T), [hardMemory, softMemory]);
    native.setUsage(MOUNT, T - GI);
    await flushMicrotasks();
    clock.step(1_000);
    await update(summaryArming(T + GI), [hardMemory, softMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + GI, T]);
    await notifier.stop();
  });

  test('when re-arming fails the previous value stays armed and the failure is reported', async () => {
    const { native, notifier, clock, logger, update } = setup();
    await update(summaryArming(T), [hardMemory]);
    clock.step(10_001);
    native.failNext('openFile', EMFILE);
    await update(summaryArming(T + 1n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T]);
    expect(String(logger.at('warn')[0]?.fields['problem'])).toContain('open failed with errno 24');
    await update(summaryArming(T + 1n), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([T + 1n]);
    expect(native.openFdCount).toBe(3);
    await notifier.stop();
  });
});

describe('MemcgV1Notifier events', () => {
  test('a crossing calls onEvent with the threshold and the clock time of the wake-up', async () => {
    const { native, notifier, clock, start, events, update } = setup();
    start();
    await update(summaryArming(T), [hardMemory]);
    clock.step(1_234);
    native.setUsage(MOUNT, T + 4096n);
    await flushMicrotasks();
    expect(events).toEqual([{ description: 'hard memory eviction threshold', atMs: clock.nowMs() }]);
    await notifier.stop();
  });

  test('the counter accumulates: crossings up and down before the wake-up are one event, and it is reset', async () => {
    const { native, notifier, start, events, update } = setup();
    start();
    await update(summaryArming(T), [hardMemory]);
    await flushMicrotasks();
    native.setUsage(MOUNT, T);
    native.setUsage(MOUNT, 0n);
    native.setUsage(MOUNT, T);
    await flushMicrotasks();
    expect(events).toHaveLength(1);
    // reset: the next wait blocks instead of returning the stale count
    expect(native.outstandingWaits).toBe(1);
    const waits = native.waitCalls;
    await flushMicrotasks();
    expect(native.waitCalls).toBe(waits);
    native.setUsage(MOUNT, 0n);
    await flushMicrotasks();
    expect(events).toHaveLength(2);
    await notifier.stop();
  });

  test('several thresholds at once: each reports which one fired', async () => {
    const { native, notifier, start, events, update } = setup();
    start();
    await update(summaryArming(T, 2n * GI), [hardMemory, softMemory, hardAllocatable]);
    native.setUsage(MOUNT, T - GI / 2n);
    await flushMicrotasks();
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold']);
    native.setUsage(PODS, 2n * GI);
    native.setUsage(MOUNT, T + 1n);
    await flushMicrotasks();
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold', 'hard allocatable memory eviction threshold', 'hard memory eviction threshold']);
    expect(native.maxOutstandingWaits).toBe(1);
    await notifier.stop();
  });

  test('never more than one epoll_wait is outstanding', async () => {
    const { native, notifier, start, events, clock, update } = setup();
    start();
    for (let i = 0; i < 50; i++) {
      clock.step(10_001);
      await update(summaryArming(T + BigInt(i)), [hardMemory, softMemory]);
      native.setUsage(MOUNT, i % 2 === 0 ? T + 2n * GI : 0n);
      await flushMicrotasks(2);
    }
    await flushMicrotasks();
    expect(events.length).toBeGreaterThanOrEqual(50);
    expect(native.maxOutstandingWaits).toBe(1);
    await notifier.stop();
  });

  test('a crossing before start is delivered once started', async () => {
    const { native, notifier, start, events, update } = setup();
    await update(summaryArming(T), [hardMemory]);
    native.setUsage(MOUNT, T);
    await flushMicrotasks();
    expect(events).toEqual([]);
    start();
    await flushMicrotasks();
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    await notifier.stop();
  });

  test('removing the cgroup signals the eventfd once, as the kernel does, and is reported', async () => {
    const { native, notifier, start, events, update } = setup();
    start();
    await update(summaryArming(T, GI), [hardAllocatable]);
    native.removeCgroup(PODS);
    await flushMicrotasks();
    expect(events.map((e) => e.description)).toEqual(['hard allocatable memory eviction threshold']);
    await notifier.stop();
  });

  test('an event for a registration removed meanwhile is dropped, not read from a reused descriptor', async () => {
    const { native, notifier, start, events, update } = setup();
    start();
    await update(summaryArming(T), [hardMemory]);
    await flushMicrotasks();
    // the wait returns for the eventfd; before its completion runs, the threshold is removed and
    // another one armed, which may get the same descriptor number
    native.setUsage(MOUNT, T);
    notifier.updateThresholds(summaryArming(T), []);
    await update(summaryArming(T), [softMemory]);
    await flushMicrotasks();
    expect(events).toEqual([]);
    native.setUsage(MOUNT, 0n);
    await flushMicrotasks();
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold']);
    await notifier.stop();
  });

  test('a threshold arms off the main turn: its registration write is asynchronous', async () => {
    const { native, notifier } = setup();
    native.holdWrites();
    notifier.updateThresholds(summaryArming(T), [hardMemory]);
    expect(native.registrations(MOUNT)).toEqual([]);
    expect(native.heldWriteCount).toBe(1);
    // a second update while the first registration is in flight starts no other one
    notifier.updateThresholds(summaryArming(T + 1n), [hardMemory]);
    expect(native.heldWriteCount).toBe(1);
    native.releaseWrites();
    await notifier.settled();
    expect(native.registrations(MOUNT)).toEqual([T]);
    expect(notifier.armedThresholds().map((a) => a.memcgThresholdBytes)).toEqual([T]);
    await notifier.stop();
  });

  test('a threshold removed while its registration is in flight is closed when the write completes', async () => {
    const { native, notifier } = setup();
    native.holdWrites();
    notifier.updateThresholds(summaryArming(T), [hardMemory]);
    notifier.updateThresholds(summaryArming(T), []);
    native.releaseWrites();
    await notifier.settled();
    expect(notifier.armedThresholds()).toEqual([]);
    expect(native.registrations(MOUNT)).toEqual([]);
    expect(native.openFdCount).toBe(2);
    await notifier.stop();
  });

  test('a handler that throws is logged and later events still arrive', async () => {
    const { native, notifier, logger, update } = setup();
    let calls = 0;
    notifier.start(() => {
      calls++;
      throw new Error('handler bug');
    });
    await update(summaryArming(T), [hardMemory]);
    native.setUsage(MOUNT, T);
    await flushMicrotasks();
    native.setUsage(MOUNT, 0n);
    await flushMicrotasks();
    expect(calls).toBe(2);
    expect(logger.at('error').map((l) => l.fields['error'])).toEqual(['handler bug', 'handler bug']);
    await notifier.stop();
  });

  test('a failed epoll_wait is logged and stop still releases everything', async () => {
    const { native, notifier, start, logger, update } = setup();
    native.failNext('waitEpoll', EBADF);
    await update(summaryArming(T), [hardMemory]);
    start();
    await flushMicrotasks();
    expect(logger.at('error').map((l) => l.msg)).toEqual(['epoll_wait failed; memory threshold notifications stop until restart']);
    await notifier.stop();
    expect(native.openFdCount).toBe(0);
  });
});

describe('MemcgV1Notifier stop', () => {
  test('stop while a wait is outstanding wakes it, waits for it, then closes every descriptor', async () => {
    const { native, notifier, start, events, update } = setup();
    start();
    await update(summaryArming(T, GI), [hardMemory, softMemory, hardAllocatable]);
    await flushMicrotasks();
    expect(native.outstandingWaits).toBe(1);
    await notifier.stop();
    expect(native.outstandingWaits).toBe(0);
    expect(native.openFdCount).toBe(0);
    expect(native.registrations(MOUNT)).toEqual([]);
    expect(events).toEqual([]);
    expect(notifier.armedThresholds()).toEqual([]);
  });

  test('stop is idempotent and nothing is armed or started after it', async () => {
    const { native, notifier, start, update } = setup();
    start();
    const first = notifier.stop();
    const second = notifier.stop();
    expect(second).toBe(first);
    await first;
    await notifier.stop();
    await update(summaryArming(T), [hardMemory]);
    start();
    expect(native.openFdCount).toBe(0);
    expect(native.registrations(MOUNT)).toEqual([]);
  });

  test('stop during a registration waits for the write, then closes its eventfd too', async () => {
    const { native, notifier, start } = setup();
    start();
    native.holdWrites();
    notifier.updateThresholds(summaryArming(T), [hardMemory]);
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    await flushMicrotasks();
    expect(stopped).toBe(false);
    native.releaseWrites();
    await stopping;
    expect(native.openFdCount).toBe(0);
    expect(native.registrations(MOUNT)).toEqual([]);
  });

  test('stop without start closes what updateThresholds opened', async () => {
    const { native, notifier, update } = setup();
    await update(summaryArming(T), [hardMemory]);
    expect(native.openFdCount).toBe(3);
    await notifier.stop();
    expect(native.openFdCount).toBe(0);
  });

  test('when the epoll set cannot be created the notifier reports it once and stays a no-op', async () => {
    const { native, notifier, logger, start, update } = setup();
    native.failNext('createEpoll', EMFILE);
    start();
    await update(summaryArming(T), [hardMemory]);
    expect(logger.at('error').map((l) => l.msg)).toEqual(['cannot create the epoll set; memory threshold notifications are off']);
    expect(native.openFdCount).toBe(0);
    await notifier.stop();
  });
});
