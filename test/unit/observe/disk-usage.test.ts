// The disk-usage walk (kubelet DiskUsage semantics, checked against GNU du), its event-loop
// budget, and the per-pod ephemeral-storage cache: what it measures, what `ephemeral-storage`
// sums, and that it is refreshed at most once per interval and never by a memory sync.

import { cpSync, linkSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FakeClock } from '../../fakes/fake-clock.js';
import { FaultyHostFs } from '../../fakes/faulty-host-fs.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { fixturesDir, podA, UID_A } from '../../fixtures/cgroup-tree-pods.js';
import { observeSettings } from '../../fixtures/settings.js';
import type { Pod } from '../../../src/api/pod.js';
import { nodeHostFs } from '../../../src/host/host-fs.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import { diskUsage, filesUsage, WalkBudget } from '../../../src/observe/disk-usage.js';
import { isLocalEphemeralVolume } from '../../../src/observe/pod-disk-usage.js';
import { duBytes, duInodes } from './du-oracle.js';

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), 'kea-disk-'));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

function file(path: string, sizeBytes: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, Buffer.alloc(sizeBytes, 7));
}

describe('diskUsage', () => {
  test('matches du for bytes and inodes, hard links counted once', async () => {
    file(join(scratch, 't/a.bin'), 10_000);
    file(join(scratch, 't/sub/deeper/b.bin'), 70_000);
    file(join(scratch, 't/sub/empty.bin'), 0);
    linkSync(join(scratch, 't/a.bin'), join(scratch, 't/sub/a-link.bin'));
    symlinkSync('a.bin', join(scratch, 't/a-symlink'));
    const usage = await diskUsage(nodeHostFs, join(scratch, 't'), new WalkBudget(1000));
    expect(usage).toEqual({ usedBytes: duBytes(join(scratch, 't')), inodesUsed: duInodes(join(scratch, 't')) });
    // t, a.bin, sub, deeper, b.bin, empty.bin, a-symlink (the link is the same inode as a.bin).
    expect(usage?.inodesUsed).toBe(7n);
  });

  test('a single file is one inode and its blocks', async () => {
    file(join(scratch, 'one.log'), 5000);
    expect(await diskUsage(nodeHostFs, join(scratch, 'one.log'), new WalkBudget(10))).toEqual({ usedBytes: duBytes(join(scratch, 'one.log')), inodesUsed: 1n });
  });

  test('a missing path is no stat, not an error', async () => {
    expect(await diskUsage(nodeHostFs, join(scratch, 'nope'), new WalkBudget(10))).toBeUndefined();
  });

  test('an entry deleted during the walk is ignored; other errors propagate', async () => {
    file(join(scratch, 't/a'), 100);
    file(join(scratch, 't/b'), 100);
    const fs = new FaultyHostFs();
    fs.injectError('lstat', '/t/a', 'ENOENT');
    expect((await diskUsage(fs, join(scratch, 't'), new WalkBudget(10)))?.inodesUsed).toBe(2n);
    fs.injectError('lstat', '/t/b', 'EACCES');
    await expect(diskUsage(fs, join(scratch, 't'), new WalkBudget(10))).rejects.toMatchObject({ code: 'EACCES' });
  });

  test('filesUsage sums the files directly in a directory, subdirectories skipped', async () => {
    file(join(scratch, 'logs/0.log'), 3000);
    file(join(scratch, 'logs/1.log.gz'), 9000);
    file(join(scratch, 'logs/nested/x.log'), 50_000);
    const usage = await filesUsage(nodeHostFs, join(scratch, 'logs'), new WalkBudget(10));
    expect(usage).toEqual({ usedBytes: duBytes(join(scratch, 'logs/0.log')) + duBytes(join(scratch, 'logs/1.log.gz')), inodesUsed: 2n });
  });
});

describe('WalkBudget', () => {
  test('yields to the event loop once per batch, not before', async () => {
    const budget = new WalkBudget(100);
    let immediateRan = false;
    setImmediate(() => {
      immediateRan = true;
    });
    for (let i = 0; i < 99; i++) await budget.spend(1);
    expect(immediateRan).toBe(false);
    await budget.spend(1);
    expect(immediateRan).toBe(true);
    expect(budget.entriesExamined).toBe(100);
  });

  test('a large walk lets other work run between batches', async () => {
    for (let i = 0; i < 600; i++) file(join(scratch, `many/${i % 7}/f${i}`), 10);
    let ticks = 0;
    let walking = true;
    const tick = (): void => {
      ticks++;
      if (walking) setImmediate(tick);
    };
    setImmediate(tick);
    const budget = new WalkBudget(64);
    await diskUsage(nodeHostFs, join(scratch, 'many'), budget);
    walking = false;
    expect(budget.entriesExamined).toBe(608);
    expect(ticks).toBeGreaterThanOrEqual(Math.floor(608 / 64));
  });
});

describe('isLocalEphemeralVolume', () => {
  const pod: Pod = {
    metadata: { uid: 'u' },
    spec: {
      containers: [],
      volumes: [
        { name: 'cache', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory' } },
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'repo', gitRepo: { repository: 'r' } },
        { name: 'tok', secret: { secretName: 's' } },
        { name: 'host', hostPath: { path: '/x' } },
      ],
    },
  };
  const cases = [
    { name: 'cache', want: true },
    { name: 'mem', want: false },
    { name: 'cfg', want: true },
    { name: 'repo', want: true },
    { name: 'tok', want: false },
    { name: 'host', want: false },
    { name: 'unknown', want: false },
  ];
  for (const tc of cases) test(tc.name, () => expect(isLocalEphemeralVolume(pod, tc.name)).toBe(tc.want));
});

describe('pod ephemeral storage through the observer', () => {
  const upperDir = '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/7/fs';
  const pod: Pod = {
    ...podA,
    spec: {
      ...podA.spec,
      volumes: [
        { name: 'cache', emptyDir: {} },
        { name: 'mem', emptyDir: { medium: 'Memory' } },
        { name: 'cfg', configMap: { name: 'c' } },
        { name: 'tok', secret: { secretName: 's' } },
        { name: 'data', persistentVolumeClaim: { claimName: 'd' } },
      ],
    },
  };

  function buildHost() {
    const host = join(scratch, 'host');
    cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, host, { recursive: true });
    const podDir = join(host, `var/lib/kubelet/pods/${UID_A}`);
    const logDir = join(host, `var/log/pods/default_web_${UID_A}`);
    const paths = {
      appLogs: join(logDir, 'app'),
      initLogs: join(logDir, 'init'),
      podLog: join(logDir, 'pod-level.log'),
      cache: join(podDir, 'volumes/kubernetes.io~empty-dir/cache'),
      mem: join(podDir, 'volumes/kubernetes.io~empty-dir/mem'),
      cfg: join(podDir, 'volumes/kubernetes.io~configmap/cfg'),
      tok: join(podDir, 'volumes/kubernetes.io~secret/tok'),
      data: join(podDir, 'volumes/kubernetes.io~csi/data'),
      etcHosts: join(podDir, 'etc-hosts'),
      rootfs: join(host, upperDir),
    };
    file(join(paths.appLogs, '0.log'), 20_000);
    file(join(paths.appLogs, '0.log.20260101-000000.gz'), 4000);
    file(join(paths.initLogs, '0.log'), 1000);
    file(paths.podLog, 100);
    file(join(paths.cache, 'blob'), 300_000);
    file(join(paths.cache, 'dir/more'), 5000);
    file(join(paths.mem, 'm'), 8000);
    file(join(paths.cfg, 'config.yaml'), 200);
    file(join(paths.tok, 'token'), 900);
    file(join(paths.data, 'huge'), 1_000_000);
    file(paths.etcHosts, 250);
    file(join(paths.rootfs, 'tmp/scratch'), 40_000);
    return { host, paths };
  }

  const usage = (path: string) => ({ usedBytes: Number(duBytes(path)), inodesUsed: Number(duInodes(path)) });
  const filesIn = (...paths: string[]) => ({ usedBytes: paths.reduce((sum, p) => sum + Number(duBytes(p)), 0), inodesUsed: paths.length });

  test('logs, local volumes, etc-hosts and the containerd writable layer, summed as ephemeral-storage', async () => {
    const { host, paths } = buildHost();
    const clock = new FakeClock();
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock, logger: new RecordingLogger(), processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([pod]);
    const { summary, problems } = await obs.observe([pod]);
    expect(problems).toEqual([]);
    const stats = summary.pods?.[0];
    const time = new Date(clock.nowMs()).toISOString();
    const appLogs = filesIn(join(paths.appLogs, '0.log'), join(paths.appLogs, '0.log.20260101-000000.gz'));
    const initLogs = filesIn(join(paths.initLogs, '0.log'));
    const rootfs = usage(paths.rootfs);
    expect(stats?.containers).toEqual([
      { name: 'app', memory: expect.any(Object), rootfs: { time, ...rootfs }, logs: { time, ...appLogs } },
      { name: 'init', logs: { time, ...initLogs } },
    ]);
    const volumes = new Map(stats?.volume?.map((v) => [v.name, v]));
    expect([...volumes.keys()].sort()).toEqual(['cache', 'cfg', 'mem', 'tok']);
    expect(volumes.get('cache')).toEqual({ name: 'cache', time, ...usage(paths.cache) });
    expect(volumes.get('tok')).toEqual({ name: 'tok', time, ...usage(paths.tok) });
    const podLog = filesIn(paths.podLog);
    const etcHosts = filesIn(paths.etcHosts);
    const parts = [rootfs, appLogs, initLogs, usage(paths.cache), usage(paths.cfg), podLog, etcHosts];
    expect(stats?.['ephemeral-storage']).toEqual({
      time,
      usedBytes: parts.reduce((s, p) => s + p.usedBytes, 0),
      inodesUsed: parts.reduce((s, p) => s + p.inodesUsed, 0),
    });
  });

  test('walked in the background at most once per interval, never by the memory sync itself', async () => {
    const { host, paths } = buildHost();
    const clock = new FakeClock();
    const hostFs = new FaultyHostFs();
    const obs = createCgroupObserver(observeSettings({ hostRoot: host, diskUsageIntervalMs: 60_000 }), { clock, logger: new RecordingLogger(), hostFs, processCountIntervalMs: 10_000 });

    // The first sync starts a walk but does not wait for it.
    const first = await obs.observe([pod]);
    expect(first.summary.pods?.[0]?.['ephemeral-storage']).toBeUndefined();
    await obs.refreshDiskUsage([pod]); // joins the walk already running
    const lstatsAfterWalk = hostFs.calls.get('lstat') ?? 0;
    const before = (await obs.observe([pod])).summary.pods?.[0]?.['ephemeral-storage']?.usedBytes;
    expect(before).toBeGreaterThan(0);

    // Usage grows, but inside the interval nothing is walked again.
    file(join(paths.cache, 'grown'), 500_000);
    clock.step(59_999);
    for (let i = 0; i < 5; i++) await obs.observe([pod]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(hostFs.calls.get('lstat') ?? 0).toBe(lstatsAfterWalk);
    expect((await obs.observe([pod])).summary.pods?.[0]?.['ephemeral-storage']?.usedBytes).toBe(before);

    // Once the interval has passed, the next sync starts a walk that sees the growth.
    clock.step(1);
    await obs.observe([pod]);
    await obs.refreshDiskUsage([pod]);
    const after = (await obs.observe([pod])).summary.pods?.[0]?.['ephemeral-storage']?.usedBytes ?? 0;
    expect(after - (before ?? 0)).toBe(Number(duBytes(join(paths.cache, 'grown'))));
  });

  test('a pod is looked for only where its directories are: one listing of each it lacks, no volume plugin it has not', async () => {
    const { host, paths } = buildHost();
    // A second pod with nothing on disk, and the first without its secret volume's plugin.
    const bare: Pod = { ...pod, metadata: { ...pod.metadata, name: 'bare', uid: '0b6d1d2e-7a3c-4e5f-8a9b-1c2d3e4f5a6b' }, status: { phase: 'Running' } };
    rmSync(dirname(paths.tok), { recursive: true });
    const hostFs = new FaultyHostFs();
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock: new FakeClock(), logger: new RecordingLogger(), hostFs, processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([bare]);
    // Its log directory and its kubelet directory, each tried once; nothing stat'ed.
    expect([hostFs.calls.get('readDir') ?? 0, hostFs.calls.get('lstat') ?? 0]).toEqual([2, 0]);

    hostFs.calls.clear();
    await obs.refreshDiskUsage([pod]);
    const plugins = ['kubernetes.io~empty-dir', 'kubernetes.io~configmap', 'kubernetes.io~secret'].filter((plugin) => hostFs.checkedPaths.some((path) => path.endsWith(`/volumes/${plugin}`)));
    expect(plugins).toEqual(['kubernetes.io~empty-dir', 'kubernetes.io~configmap']);
    const { summary, problems } = await obs.observe([pod]);
    expect(problems).toEqual([]);
    expect(summary.pods?.[0]?.volume?.map((v) => v.name).sort()).toEqual(['cache', 'cfg', 'mem']);
  });

  test('a pod that left the node is dropped from the cache at the next walk', async () => {
    const { host } = buildHost();
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock: new FakeClock(), logger: new RecordingLogger(), processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([pod]);
    expect((await obs.observe([pod])).summary.pods).toHaveLength(1);
    await obs.refreshDiskUsage([]);
    const { summary } = await obs.observe([{ ...pod, status: { phase: 'Running' } }]);
    expect(summary.pods?.[0]?.['ephemeral-storage']).toBeUndefined();
  });

  test('an unreadable volume is reported, the rest still measured', async () => {
    const { host, paths } = buildHost();
    const hostFs = new FaultyHostFs();
    hostFs.injectError('lstat', '/kubernetes.io~empty-dir/cache/blob', 'EACCES');
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock: new FakeClock(), logger: new RecordingLogger(), hostFs, processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([pod]);
    const { summary, problems } = await obs.observe([pod]);
    expect(problems).toEqual(['volume cache of pod default/web not measured: EACCES (reading what another user owns needs CAP_DAC_READ_SEARCH)']);
    expect(summary.pods?.[0]?.volume?.map((v) => v.name).sort()).toEqual(['cfg', 'mem', 'tok']);
    expect(summary.pods?.[0]?.volume?.find((v) => v.name === 'cfg')?.usedBytes).toBe(Number(duBytes(paths.cfg)));
  });

  test('without mountinfo the writable layers are absent and the reason reported', async () => {
    const { host } = buildHost();
    const hostFs = new FaultyHostFs();
    hostFs.injectError('readTextFile', '/proc/1/mountinfo', 'EACCES');
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock: new FakeClock(), logger: new RecordingLogger(), hostFs, processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([pod]);
    const { summary, problems } = await obs.observe([pod]);
    expect(summary.pods?.[0]?.containers?.find((c) => c.name === 'app')?.rootfs).toBeUndefined();
    expect(summary.pods?.[0]?.containers?.find((c) => c.name === 'app')?.logs).toBeDefined();
    expect(problems).toEqual([`container writable layers not measured: cannot read ${host}/proc/1/mountinfo: EACCES`]);
  });

  test('the writable layer of a container the pod does not list is not attributed', async () => {
    const { host } = buildHost();
    const other: Pod = { ...pod, status: { ...pod.status, containerStatuses: [{ name: 'app', containerID: 'containerd://different' }] } };
    const obs = createCgroupObserver(observeSettings({ hostRoot: host }), { clock: new FakeClock(), logger: new RecordingLogger(), processCountIntervalMs: 10_000 });
    await obs.refreshDiskUsage([other]);
    const { summary } = await obs.observe([other]);
    expect(summary.pods?.[0]?.containers?.find((c) => c.name === 'app')?.rootfs).toBeUndefined();
  });
});
