// The opt-in memory.high wake-up of the cgroup v2 notifier on the simulated kernel: where it puts
// kubepods' memory.high, that a `high` event wakes a check at once, and everything it must undo or
// leave alone: the value restored on stop, a value a killed run left restored at the next start, a
// memory.high someone else set never touched, none while the agent does not act (a dry run), and no
// wake-up with the systemd driver.

import { FakeClock } from '../../fakes/fake-clock.js';
import { FakeNative } from '../../fakes/fake-native.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { summary, threshold } from '../../fixtures/memory-thresholds.js';
import type { NotifierEvent } from '../../../src/daemon/ports.js';
import { MEMORY_HIGH_XATTR } from '../../../src/notifier/memory-high-wakeup.js';
import { PsiNotifier } from '../../../src/notifier/psi-notifier.js';

const ROOT = '/fake/cgroup2';
const GI = 1024 ** 3;
const PAGE = 4096;
// kubepods: capacity 4Gi (2Gi available at a 2Gi working set, 1Gi of inactive page cache on top).
const podsSummary = summary({ availableBytes: 4 * GI, usageBytes: 5 * GI, workingSetBytes: 4 * GI }, { availableBytes: 2 * GI, usageBytes: 3 * GI, workingSetBytes: 2 * GI });
// A 1.5Gi threshold: the working set crosses at 2.5Gi, with the 1Gi of cache a usage of 3.5Gi.
const allocatable = threshold('allocatableMemory.available', '1536Mi');
const POINT = 3.5 * GI + PAGE;

function setup(podCgroupRoot = 'kubepods') {
  const native = new FakeNative();
  const clock = new FakeClock();
  const logger = new RecordingLogger();
  const pods = `${ROOT}/${podCgroupRoot}`;
  const setMemory = (cgroup: string, currentBytes: number, inactiveFileBytes: number): void => {
    native.setFile(`${cgroup}/memory.current`, `${currentBytes}\n`);
    native.setFile(`${cgroup}/memory.stat`, `anon 1\ninactive_file ${inactiveFileBytes}\n`);
  };
  setMemory(`${ROOT}/kea-node`, 2 * GI, 0);
  setMemory(pods, 2 * GI, GI);
  native.setFile(`${pods}/memory.high`, 'max\n');
  native.setFile(`${pods}/memory.events.local`, 'low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n');
  const notifier = new PsiNotifier({
    cgroupRoot: ROOT,
    nodeCgroup: 'kea-node',
    podCgroupRoot,
    procRoot: '/fake/proc',
    psiStallThresholdMs: 100,
    psiWindowMs: 1000,
    fastCheck: { minIntervalMs: 10, maxIntervalMs: 1000, allocationBytesPerSecond: GI },
    memoryHighWakeup: true,
    clock,
    logger,
    native,
    files: native.files,
    fileExists: (path) => native.files.exists(path),
  });
  const events: NotifierEvent[] = [];
  const high = (): string => (native.fileText(`${pods}/memory.high`) ?? '').trim();
  const highEvent = (count: number): void => {
    native.setFile(`${pods}/memory.events.local`, `low 0\nhigh ${count}\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n`);
    native.notifyFile(`${pods}/memory.events.local`);
  };
  const start = async (): Promise<void> => {
    notifier.start((event) => events.push(event));
    await notifier.settled();
    notifier.updateThresholds(podsSummary, [allocatable]);
    await clock.stepAsync(0);
  };
  return { native, clock, logger, pods, setMemory, notifier, events, high, highEvent, start };
}

describe('the memory.high wake-up', () => {
  test('sets kubepods memory.high one page above the usage at which the working set crosses, and records it', async () => {
    const { native, notifier, pods, high, start } = setup();
    await start();
    expect(high()).toBe(String(POINT));
    expect(notifier.memoryHighArmed()).toBe(String(POINT));
    expect(JSON.parse(native.xattrsOf(pods)[MEMORY_HIGH_XATTR] ?? 'null')).toEqual({ original: 'max', written: String(POINT) });
    await notifier.stop();
  });

  test('stop puts max back and removes the record', async () => {
    const { native, notifier, pods, high, start } = setup();
    await start();
    await notifier.stop();
    expect(high()).toBe('max');
    expect(native.xattrsOf(pods)).toEqual({});
  });

  test('a high event wakes a check at once: the crossing is reported without waiting for the interval', async () => {
    const { notifier, pods, setMemory, events, highEvent, clock, start } = setup();
    await start();
    // Far from the crossing when last checked: the next timed check is a second away.
    setMemory(pods, 3.5 * GI + 2 * PAGE, GI - 4 * PAGE);
    highEvent(1);
    await clock.stepAsync(0);
    expect(events.map((e) => e.description)).toEqual(['hard allocatable memory eviction threshold']);
    await notifier.stop();
  });

  test('the allocatable distance no longer shortens the interval: the kernel watches that crossing', async () => {
    const { native, notifier, pods, setMemory, clock, start } = setup();
    // 1 MiB from the crossing: without the wake-up, checked every 10 ms.
    setMemory(pods, 2.5 * GI - 1024 ** 2, 0);
    await start();
    const reads = (): number => native.reads.filter((r) => r === `${pods}/memory.current`).length;
    const before = reads();
    await clock.stepAsync(500);
    expect(reads() - before).toBeLessThanOrEqual(1);
    await notifier.stop();
  });

  test('a memory.high someone else set is never touched: the wake-up stays off', async () => {
    const { native, notifier, pods, logger, start } = setup();
    native.setFile(`${pods}/memory.high`, '3221225472\n');
    await start();
    expect(native.fileText(`${pods}/memory.high`)).toBe('3221225472\n');
    expect(notifier.memoryHighArmed()).toBeNull();
    expect(logger.at('warn').map((l) => l.msg).join('\n')).toContain('kubepods has a memory.high the agent did not set');
    await notifier.stop();
    expect(native.fileText(`${pods}/memory.high`)).toBe('3221225472\n');
  });

  test('a value a killed run left is restored at the next start, then armed afresh', async () => {
    const { native, notifier, pods, high, logger, start } = setup();
    native.setFile(`${pods}/memory.high`, '1073741824\n');
    native.setXattr(pods, MEMORY_HIGH_XATTR, JSON.stringify({ original: 'max', written: '1073741824' }));
    await start();
    expect(logger.at('info').map((l) => l.msg).join('\n')).toContain('restored the kubepods memory.high a previous run left');
    expect(high()).toBe(String(POINT));
    await notifier.stop();
    expect(high()).toBe('max');
  });

  test('a record whose value was since changed by someone else leaves that value alone', async () => {
    const { native, notifier, pods, start } = setup();
    native.setFile(`${pods}/memory.high`, '2147483648\n');
    native.setXattr(pods, MEMORY_HIGH_XATTR, JSON.stringify({ original: 'max', written: '1073741824' }));
    await start();
    expect(native.fileText(`${pods}/memory.high`)).toBe('2147483648\n');
    expect(native.xattrsOf(pods)).toEqual({});
    expect(notifier.memoryHighArmed()).toBeNull();
    await notifier.stop();
  });

  test('someone changing memory.high after it was armed makes the wake-up stop and leave their value', async () => {
    const { native, notifier, pods, logger, start, clock } = setup();
    await start();
    native.setFile(`${pods}/memory.high`, '2147483648\n');
    // New figures move the point: the write finds a value it did not write.
    notifier.updateThresholds(podsSummary, [threshold('allocatableMemory.available', '1Gi')]);
    await clock.stepAsync(0);
    expect(native.fileText(`${pods}/memory.high`)).toBe('2147483648\n');
    expect(logger.at('warn').map((l) => l.msg).join('\n')).toContain('was changed by someone else');
    await notifier.stop();
    expect(native.fileText(`${pods}/memory.high`)).toBe('2147483648\n');
  });

  test('while the agent does not act (a dry run) memory.high is max and the fast check watches the crossing itself; acting again arms it', async () => {
    const { native, notifier, pods, setMemory, high, start, clock } = setup();
    await start();
    expect(high()).toBe(String(POINT));
    notifier.setActing(false);
    await clock.stepAsync(0);
    // No eviction would follow to end the throttling past the point: the kernel is left as it was.
    expect(high()).toBe('max');
    expect(native.xattrsOf(pods)).toEqual({});
    expect(notifier.memoryHighArmed()).toBeNull();
    // Every pass brings new figures: they arm nothing while the agent does not act.
    notifier.updateThresholds(podsSummary, [allocatable]);
    await clock.stepAsync(0);
    expect(high()).toBe('max');
    // 1 MiB from the crossing: the fast check shortens its interval for it again (10 ms).
    setMemory(pods, 2.5 * GI - 1024 ** 2, 0);
    const reads = (): number => native.reads.filter((r) => r === `${pods}/memory.current`).length;
    await clock.stepAsync(1000);
    const before = reads();
    await clock.stepAsync(500);
    expect(reads() - before).toBeGreaterThan(10);
    notifier.setActing(true);
    await clock.stepAsync(0);
    expect(high()).toBe(String(POINT));
    await notifier.stop();
    expect(high()).toBe('max');
  });

  test('a point at or past memory.max puts max back', async () => {
    const { notifier, high, start, clock } = setup();
    await start();
    expect(high()).toBe(String(POINT));
    // 512Mi: the working set crosses at 3.5Gi, a usage of 4.5Gi, past the 4Gi capacity.
    notifier.updateThresholds(podsSummary, [threshold('allocatableMemory.available', '512Mi')]);
    await clock.stepAsync(0);
    expect(high()).toBe('max');
    expect(notifier.memoryHighArmed()).toBeNull();
    await notifier.stop();
  });

  test('kubepods removed: the watch ends and says so, and nothing is written after', async () => {
    const { native, notifier, pods, logger, start, clock } = setup();
    await start();
    const writes = native.writes.length;
    native.removeFile(`${pods}/memory.events.local`);
    await clock.stepAsync(0);
    expect(logger.at('warn').map((l) => l.msg)).toContain('the memory.high wake-up ended');
    expect(native.writes.length).toBe(writes);
    await notifier.stop();
  });

  test('with the systemd driver it stays off: systemd owns the slice memory.high', async () => {
    const { native, notifier, logger, start } = setup('kubepods.slice');
    await start();
    expect(native.fileText(`${ROOT}/kubepods.slice/memory.high`)).toBe('max\n');
    expect(logger.at('warn').map((l) => l.msg).join('\n')).toContain('systemd cgroup driver');
    await notifier.stop();
  });
});
