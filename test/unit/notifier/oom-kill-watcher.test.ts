// The kernel OOM kill watcher on a fake kernel (FakeNative: oom_control eventfds, /dev/kmsg,
// memory.events) over cgroup files in a temporary directory, on a fake clock: each kill reported
// once, with the kernel log's details when they come and without them when they do not (the
// kernel rate-limits the line naming the cgroups, or the log cannot be read), a node-wide OOM that
// no cgroup v1 eventfd announces found by the periodic scan, records lost to a full ring buffer,
// cgroup v2's memory.events, and every descriptor released at stop.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KernelOomKill } from '../../../src/daemon/ports.js';
import { KernelOomKillWatcher } from '../../../src/notifier/oom-kill-watcher.js';
import { SharedEpollLoop } from '../../../src/notifier/shared-epoll-loop.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { FakeNative } from '../../fakes/fake-native.js';
import { FaultyHostFs } from '../../fakes/faulty-host-fs.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const UID = '5f0c8a2e-4a61-4c1e-9d55-3f2b8e6b7c10';
const ID = 'c'.repeat(64);
const CONTAINER = `/kubepods/burstable/pod${UID}/${ID}`;
const KMSG = '/dev/kmsg';
const MI = 1n << 20n;
// The fake clock's epoch is 2026-01-01; the kernel's timestamps count from a boot 1000 s before.
const BOOT_US = 1000n * 1_000_000n;

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kea-oom-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function cgroupFiles(path: string, files: { limit?: bigint; peak?: bigint; oomKills?: number; events?: string }): void {
  const dir = join(root, path);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'memory.limit_in_bytes'), `${files.limit ?? 9223372036854771712n}\n`);
  writeFileSync(join(dir, 'memory.usage_in_bytes'), `${files.peak ?? 0n}\n`);
  writeFileSync(join(dir, 'memory.max_usage_in_bytes'), `${files.peak ?? 0n}\n`);
  writeFileSync(join(dir, 'memory.oom_control'), `oom_kill_disable 0\nunder_oom 0\noom_kill ${files.oomKills ?? 0}\n`);
}

function setup(options: { kernelLog?: boolean; version?: 'v1' | 'v2'; nodeCgroup?: string } = {}) {
  const fs = new FaultyHostFs();
  // The machine's count of OOM kills (/proc/vmstat), raised with every cgroup's.
  const vmstat = join(root, 'vmstat');
  const machineKills = (count: number): void => writeFileSync(vmstat, `pgfault 12345\noom_kill ${count}\n`);
  machineKills(0);
  const clock = new FakeClock();
  const native = new FakeNative();
  const logger = new RecordingLogger();
  const kills: KernelOomKill[] = [];
  if (options.kernelLog !== false) native.addKernelLog(KMSG);
  cgroupFiles('/kubepods', {});
  cgroupFiles(CONTAINER, { limit: 128n * MI, peak: 50n * MI });
  native.addCgroup(join(root, CONTAINER));
  const startUs = BigInt(clock.nowMs()) * 1000n;
  const watcher = new KernelOomKillWatcher({
    version: options.version ?? 'v1',
    memoryRoot: root,
    nodeCgroup: options.nodeCgroup ?? '',
    podCgroupRoot: 'kubepods',
    kernelLogPath: options.kernelLog === false ? null : KMSG,
    scanIntervalMs: 10_000,
    machineKillCountPath: vmstat,
    kernelLogWaitMs: 500,
    fs,
    native,
    loop: new SharedEpollLoop(native, logger),
    clock,
    // CLOCK_MONOTONIC follows the fake clock, from the boot.
    monotonicUs: () => BOOT_US + BigInt(clock.nowMs()) * 1000n - startUs,
    logger,
  });
  /** The kernel's timestamp now (µs since boot). */
  const kernelNowUs = (): bigint => BOOT_US + BigInt(clock.nowMs()) * 1000n - startUs;
  let sequence = 100;
  const printk = (...messages: string[]): void => native.printk(KMSG, ...messages.map((m) => `6,${sequence++},${kernelNowUs()},-;${m}\n`));
  /** The kernel at the container's limit: the counter goes up (the victim is picked and killed). */
  const killInContainer = (kills: number, peak = 128n * MI): void => {
    machineKills(kills);
    cgroupFiles(CONTAINER, { limit: 128n * MI, peak, oomKills: kills });
  };
  /** How many times the container's counter has been read. */
  const counterReads = (): number => fs.checkedPaths.filter((path) => path.endsWith(`${CONTAINER}/memory.oom_control`)).length;
  /** How many times the container's cgroup v2 counter (memory.events) has been read: once a scan. */
  const v2CounterReads = (): number => fs.checkedPaths.filter((path) => path.endsWith(`${CONTAINER}/memory.events`)).length;
  return { clock, native, logger, kills, watcher, printk, killInContainer, machineKills, counterReads, v2CounterReads, start: () => watcher.start((kill) => kills.push(kill)) };
}

const killLine = (pid: number, oomMemcg = CONTAINER): string =>
  `oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=${oomMemcg},task_memcg=${CONTAINER},task=leak,pid=${pid},uid=0`;
const killedLine = (pid: number): string => `Memory cgroup out of memory: Killed process ${pid} (leak) total-vm:200000kB, anon-rss:130000kB, file-rss:1000kB, shmem-rss:0kB, UID:0 pgtables:300kB oom_score_adj:0`;

describe('KernelOomKillWatcher', () => {
  test('a container at its limit: the eventfd, the counter, then the log line; reported once, with everything', async () => {
    const { clock, native, kills, watcher, printk, killInContainer, start } = setup();
    start();
    expect(watcher.sources()).toEqual(['kernel-log', 'oom-control', 'counter-scan']);
    expect(native.oomRegistrationCount(join(root, CONTAINER))).toBe(1);
    // The kernel signals the OOM before it picks the victim; the counter rises when it is killed.
    native.oom(join(root, CONTAINER));
    await flushMicrotasks();
    killInContainer(1);
    await clock.stepAsync(5);
    expect(kills).toEqual([]);
    await clock.stepAsync(3);
    printk(killLine(4242), killedLine(4242));
    await flushMicrotasks();
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({
      source: 'oom-control',
      constraint: 'CONSTRAINT_MEMCG',
      scope: 'memcg',
      pid: 4242,
      process: 'leak',
      rssBytes: 131000n * 1024n,
      oomCgroupInferred: false,
      victim: { path: CONTAINER, level: 'container', podUid: UID, containerIds: [ID], memory: { limitBytes: 128n * MI, peakBytes: 128n * MI } },
      oomCgroup: { path: CONTAINER, level: 'container' },
    });
    expect(kills[0]?.oomSignalledAtMs).toBe(kills[0]!.atMs - 8);
    // Nothing more from the rescans or the scan.
    await clock.stepAsync(20_000);
    expect(kills).toHaveLength(1);
    await watcher.stop();
    expect(native.openFdCount).toBe(0);
  });

  test('the line naming the cgroups rate-limited: the counters say where the kill was, the log says who', async () => {
    const { clock, native, kills, printk, killInContainer, start } = setup();
    start();
    native.oom(join(root, CONTAINER));
    killInContainer(1);
    await clock.stepAsync(1);
    printk(killedLine(77));
    await flushMicrotasks();
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({ pid: 77, process: 'leak', constraint: null, victim: { path: CONTAINER }, oomCgroup: { path: CONTAINER, level: 'container' }, oomCgroupInferred: true });
  });

  test('no log line within kernelLogWait: reported from the counters alone, once', async () => {
    const { clock, native, kills, killInContainer, start } = setup();
    start();
    native.oom(join(root, CONTAINER));
    killInContainer(1);
    await clock.stepAsync(499);
    expect(kills).toEqual([]);
    await clock.stepAsync(10);
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({ source: 'oom-control', pid: null, victim: { path: CONTAINER }, oomCgroup: { path: CONTAINER }, oomCgroupInferred: true });
    await clock.stepAsync(20_000);
    expect(kills).toHaveLength(1);
  });

  test('kills before the start are history; a node-wide OOM, which no v1 eventfd announces, is found by the scan', async () => {
    const { clock, kills, killInContainer, start } = setup({ kernelLog: false });
    killInContainer(2, 60n * MI);
    start();
    await clock.stepAsync(9_000);
    // The node ran out: the container was far below its limit.
    killInContainer(3, 60n * MI);
    expect(kills).toEqual([]);
    await clock.stepAsync(1_000);
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({ source: 'counter-scan', victim: { path: CONTAINER, level: 'container' }, oomCgroup: null });
  });

  test('while the machine\'s count of OOM kills stays put, the periodic scan reads no container\'s counter', async () => {
    const { clock, kills, killInContainer, counterReads, start } = setup({ kernelLog: false });
    start();
    const atStart = counterReads();
    await clock.stepAsync(60_000);
    expect(counterReads()).toBe(atStart);
    // A node-wide OOM: the count moves, the counters are read on that scan and the next.
    killInContainer(1, 60n * MI);
    await clock.stepAsync(10_000);
    expect(kills).toHaveLength(1);
    await clock.stepAsync(30_000);
    expect(counterReads()).toBe(atStart + 2);
  });

  test('the machine\'s count raised before the cgroup\'s: a scan between the two finds the kill at the next one', async () => {
    const { clock, kills, killInContainer, machineKills, start } = setup({ kernelLog: false });
    start();
    await clock.stepAsync(9_000);
    machineKills(1);
    await clock.stepAsync(1_000);
    expect(kills).toEqual([]);
    killInContainer(1, 60n * MI);
    await clock.stepAsync(10_000);
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({ source: 'counter-scan', victim: { path: CONTAINER, level: 'container' } });
  });

  test('records overwritten before they were read are reported once; the counters still count the kill', async () => {
    const { clock, native, logger, kills, printk, killInContainer, start } = setup();
    start();
    printk('noise 1', 'noise 2');
    native.overwriteKernelLog(KMSG, 2);
    native.oom(join(root, CONTAINER));
    killInContainer(1);
    await clock.stepAsync(600);
    expect(logger.at('warn').map((l) => l.msg)).toEqual(['kernel log records were overwritten before they could be read; OOM kills are still counted from the cgroups']);
    expect(kills).toHaveLength(1);
    expect(kills[0]?.victim?.path).toBe(CONTAINER);
  });

  test.each([
    ['no CAP_SYSLOG', 1 /* EPERM */],
    ['no /dev/kmsg in the container, as with the default DaemonSet', 2 /* ENOENT */],
  ])('without the kernel log (%s): says so once, and goes on from the cgroups', async (_case, errno) => {
    const { native, logger, watcher, start } = setup();
    native.failNext('openFile', errno);
    start();
    expect(watcher.sources()).toEqual(['oom-control', 'counter-scan']);
    const warnings = logger.at('warn').map((l) => l.msg);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('cannot read the kernel log (it needs the /dev/kmsg device in the container, and CAP_SYSLOG where kernel.dmesg_restrict is 1');
  });

  test('a node that is a cgroup of its own (a sandbox): kills outside it, in the machine\'s kernel log, are not its own', async () => {
    const { clock, kills, printk, start } = setup({ nodeCgroup: 'kea-node' });
    start();
    printk(killLine(9), killedLine(9));
    await clock.stepAsync(1000);
    expect(kills).toEqual([]);
  });

  test('cgroup v2: a change of the pods\' memory.events starts a scan of the counters', async () => {
    const { clock, native, kills, start } = setup({ kernelLog: false, version: 'v2' });
    const events = (kills: number): string => `low 0\nhigh 0\nmax 3\noom 1\noom_kill ${kills}\noom_group_kill 0\n`;
    native.setFile(join(root, 'kubepods', 'memory.events'), events(0));
    writeFileSync(join(root, CONTAINER, 'memory.events'), events(0));
    writeFileSync(join(root, CONTAINER, 'memory.max'), `${128n * MI}\n`);
    writeFileSync(join(root, CONTAINER, 'memory.peak'), `${128n * MI}\n`);
    start();
    writeFileSync(join(root, CONTAINER, 'memory.events'), events(1));
    native.modifyFile(join(root, 'kubepods', 'memory.events'), events(1));
    await clock.stepAsync(1);
    expect(kills).toHaveLength(1);
    expect(kills[0]).toMatchObject({ source: 'memory-events', victim: { path: CONTAINER }, oomCgroup: { path: CONTAINER, memory: { limitBytes: 128n * MI } } });
  });

  test('cgroup v2: only the OOM counters of memory.events start a scan, not high or max (memory.high throttling moves those all the time)', async () => {
    const { clock, native, logger, v2CounterReads: scans, start, watcher } = setup({ kernelLog: false, version: 'v2' });
    const events = (high: number, oom: number): string => `low 0\nhigh ${high}\nmax ${high}\noom ${oom}\noom_kill 0\noom_group_kill 0\n`;
    const podsEvents = join(root, 'kubepods', 'memory.events');
    native.setFile(podsEvents, events(0, 0));
    writeFileSync(join(root, CONTAINER, 'memory.events'), events(0, 0));
    start();
    const atStart = scans();
    native.modifyFile(podsEvents, events(40, 0));
    await clock.stepAsync(1);
    expect(scans()).toBe(atStart);
    native.modifyFile(podsEvents, events(41, 1));
    await clock.stepAsync(1);
    expect(scans()).toBe(atStart + 1);
    await watcher.stop();
    expect(native.openFdCount).toBe(0);
    expect(logger.at('warn')).toEqual([]);
  });
});
