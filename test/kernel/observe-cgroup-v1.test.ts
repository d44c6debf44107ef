// The cgroup observer against the real kernel: pod hierarchies built in a cgroup v1 sandbox with
// both drivers' naming, real processes that allocate and touch known amounts, and the Summary's
// working sets compared with the kernel's own memory.usage_in_bytes and memory.stat read at the
// same moment. The sandbox's top cgroup stands in for the node (its limit is the capacity).

import { readdirSync, readFileSync, readlinkSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { observeSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable, type SandboxProcess } from '../helpers/cgroup-sandbox.js';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import type { Summary } from '../../src/api/summary.js';
import { createCgroupObserver, type CgroupObserver } from '../../src/observe/cgroup-observer.js';

const MiB = 1024 * 1024;
// Both reads happen within microseconds of each other on idle processes; the slack covers the
// kernel's per-CPU charge batching and the odd page a runtime touches in between.
const TOLERANCE_BYTES = 4 * MiB;
const NODE_LIMIT_BYTES = 4n << 30n;
const PODS_LIMIT_BYTES = 2n << 30n;

const unavailable = cgroupV1Unavailable();

// What the kernel says a cgroup's working set is right now (cAdvisor's formula, read independently).
function kernelWorkingSetBytes(dir: string): number {
  const usageBytes = Number(readFileSync(join(dir, 'memory.usage_in_bytes'), 'utf8'));
  const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
  const inactiveBytes = Number(/^total_inactive_file (\d+)$/m.exec(stat)?.[1]);
  return Math.max(0, usageBytes - inactiveBytes);
}

// Descriptors this process holds on files below `dir` (kept open by the observer).
function openFilesUnder(dir: string): number {
  let count = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${dir}/`)) count++;
    } catch {
      // The descriptor closed while listing.
    }
  }
  return count;
}

function pod(name: string, uid: string, qosClass: string, containers: Record<string, string>): Pod {
  return {
    metadata: { name, namespace: 'kernel-test', uid },
    spec: { containers: Object.keys(containers).map((n) => ({ name: n })) },
    status: { phase: 'Running', qosClass, containerStatuses: Object.entries(containers).map(([n, id]) => ({ name: n, containerID: `containerd://${id}` })) },
  };
}

const hex = (digit: string): string => digit.repeat(64);

interface Layout {
  readonly driver: 'cgroupfs' | 'systemd';
  readonly kubepods: string;
  readonly burstablePod: (uid: string) => string;
  readonly guaranteedPod: (uid: string) => string;
  readonly container: (id: string) => string;
}

const layouts: Layout[] = [
  {
    driver: 'cgroupfs',
    kubepods: 'kubepods',
    burstablePod: (uid) => `kubepods/burstable/pod${uid}`,
    guaranteedPod: (uid) => `kubepods/pod${uid}`,
    container: (id) => id,
  },
  {
    driver: 'systemd',
    kubepods: 'kubepods.slice',
    burstablePod: (uid) => `kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid.replaceAll('-', '_')}.slice`,
    guaranteedPod: (uid) => `kubepods.slice/kubepods-pod${uid.replaceAll('-', '_')}.slice`,
    container: (id) => `cri-containerd-${id}.scope`,
  },
];

for (const layout of layouts) {
  describe(`${layout.driver} naming (root, cgroup v1)`, () => {
    let sandbox: CgroupSandbox | undefined;
    // One observer for the whole scenario, so later syncs read through the files it keeps open.
    let observer: CgroupObserver | undefined;
    // The large pod's processes, ended when its cgroup moves.
    let largeProcesses: SandboxProcess[] = [];
    const uidSmall = '11111111-2222-4333-8444-000000000064';
    const uidLarge = '11111111-2222-4333-8444-000000000128';
    const pods = [
      pod('small', uidSmall, 'Burstable', { app: hex('1') }),
      pod('large', uidLarge, 'Guaranteed', { db: hex('2'), sidecar: hex('3') }),
    ];
    const dirs = {
      small: layout.burstablePod(uidSmall),
      smallApp: `${layout.burstablePod(uidSmall)}/${layout.container(hex('1'))}`,
      smallPause: `${layout.burstablePod(uidSmall)}/${layout.container(hex('a'))}`,
      large: layout.guaranteedPod(uidLarge),
      largeDb: `${layout.guaranteedPod(uidLarge)}/${layout.container(hex('2'))}`,
      largeSidecar: `${layout.guaranteedPod(uidLarge)}/${layout.container(hex('3'))}`,
    };

    beforeAll(async () => {
      if (unavailable !== null) return;
      sandbox = await CgroupSandbox.create({ limitBytes: NODE_LIMIT_BYTES });
      observer = createCgroupObserver(observeSettings({ cgroupDriver: layout.driver }), { clock: systemClock, logger: silentLogger, nodeCgroup: sandbox.name, processCountIntervalMs: 0 });
      sandbox.mkdir(layout.kubepods);
      sandbox.setLimit(layout.kubepods, PODS_LIMIT_BYTES);
      const started = await Promise.all([
        sandbox.startAllocator(dirs.smallApp, 64 * MiB),
        sandbox.startIdle(dirs.smallPause),
        sandbox.startAllocator(dirs.largeDb, 128 * MiB),
        sandbox.startIdle(dirs.largeSidecar),
        sandbox.startIdle(dirs.largeSidecar),
      ]);
      largeProcesses = started.slice(2);
    }, 60_000);

    afterAll(async () => {
      observer?.close();
      await sandbox?.cleanup();
    }, 60_000);

    function skipped(): boolean {
      if (sandbox !== undefined) return false;
      console.log(`skipped: ${unavailable ?? 'sandbox not created'}`);
      return true;
    }

    async function observeNow(observed: readonly Pod[] = pods): Promise<{ summary: Summary; problems: readonly string[]; kernel: Record<string, number> }> {
      const s = sandbox as CgroupSandbox;
      const { summary, problems } = await (observer as CgroupObserver).observe(observed);
      const kernel: Record<string, number> = { node: kernelWorkingSetBytes(s.path), kubepods: kernelWorkingSetBytes(s.resolve(layout.kubepods)) };
      for (const [key, dir] of Object.entries(dirs)) kernel[key] = kernelWorkingSetBytes(s.resolve(dir));
      return { summary, problems, kernel };
    }

    test(`pod and container working sets match the kernel and hold the allocation (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const { summary, problems, kernel } = await observeNow();
      expect(problems.filter((p) => !p.includes('var/lib') && !p.includes('mountinfo'))).toEqual([]);
      const small = summary.pods?.find((p) => p.podRef.uid === uidSmall);
      const large = summary.pods?.find((p) => p.podRef.uid === uidLarge);
      const ws = (name: string, stats: typeof small) => stats?.containers?.find((c) => c.name === name)?.memory?.workingSetBytes ?? -1;

      expect(Math.abs((small?.memory?.workingSetBytes ?? -1) - (kernel.small as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(Math.abs(ws('app', small) - (kernel.smallApp as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(Math.abs((large?.memory?.workingSetBytes ?? -1) - (kernel.large as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(Math.abs(ws('db', large) - (kernel.largeDb as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(Math.abs(ws('sidecar', large) - (kernel.largeSidecar as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);

      expect(ws('app', small)).toBeGreaterThanOrEqual(64 * MiB);
      expect(ws('db', large)).toBeGreaterThanOrEqual(128 * MiB);
      expect(small?.memory?.workingSetBytes).toBeGreaterThanOrEqual(64 * MiB);
      expect(large?.memory?.workingSetBytes).toBeGreaterThanOrEqual(128 * MiB);
      // The pause stand-in is not a container the pod lists, so it has no container entry.
      expect(small?.containers?.map((c) => c.name)).toEqual(['app']);
    });

    test(`process counts cover the pod's whole cgroup tree (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const { summary } = await observeNow();
      expect(summary.pods?.find((p) => p.podRef.uid === uidSmall)?.process_stats).toEqual({ process_count: 2 });
      expect(summary.pods?.find((p) => p.podRef.uid === uidLarge)?.process_stats).toEqual({ process_count: 3 });
      // A process that comes and goes within a second is counted and then not: cgroup v1 keeps a
      // per-cgroup PID list for a second after each read, which a kept-open cgroup.procs would reuse.
      const s = sandbox as CgroupSandbox;
      const transient = await s.startIdle(dirs.smallPause);
      const during = await observeNow();
      await s.kill(transient);
      const after = await observeNow();
      expect(during.summary.pods?.find((p) => p.podRef.uid === uidSmall)?.process_stats).toEqual({ process_count: 3 });
      expect(after.summary.pods?.find((p) => p.podRef.uid === uidSmall)?.process_stats).toEqual({ process_count: 2 });
    });

    test(`the pods system container is the kubepods cgroup, its limit the allocatable (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const { summary, kernel } = await observeNow();
      const podsMemory = summary.node.systemContainers?.find((c) => c.name === 'pods')?.memory;
      expect(Math.abs((podsMemory?.workingSetBytes ?? -1) - (kernel.kubepods as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(podsMemory?.workingSetBytes).toBeGreaterThanOrEqual(192 * MiB);
      expect((podsMemory?.availableBytes ?? 0) + (podsMemory?.workingSetBytes ?? 0)).toBe(Number(PODS_LIMIT_BYTES));
    });

    test(`the node is the sandbox: its limit below MemTotal is the capacity (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const { summary, kernel } = await observeNow();
      const nodeMemory = summary.node.memory;
      expect(Math.abs((nodeMemory?.workingSetBytes ?? -1) - (kernel.node as number))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect((nodeMemory?.availableBytes ?? 0) + (nodeMemory?.workingSetBytes ?? 0)).toBe(Number(NODE_LIMIT_BYTES));
    });

    test(`a container that stops leaves the pod's working set and process count, and its files are closed (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const s = sandbox as CgroupSandbox;
      const extraDir = `${dirs.small}/${layout.container(hex('4'))}`;
      const withExtra = pods.map((p) =>
        p.metadata.uid === uidSmall ? { ...p, status: { ...p.status, containerStatuses: [...(p.status?.containerStatuses ?? []), { name: 'extra', containerID: `containerd://${hex('4')}` }] } } : p,
      );
      const extra = await s.startAllocator(extraDir, 32 * MiB);
      const before = (await observeNow(withExtra)).summary.pods?.find((p) => p.podRef.uid === uidSmall);
      expect(before?.containers?.map((c) => c.name)).toEqual(['app', 'extra']);
      expect(before?.process_stats?.process_count).toBe(3);
      expect(openFilesUnder(s.resolve(extraDir))).toBeGreaterThan(0);

      // The runtime stops the container and removes its cgroup.
      await s.kill(extra);
      rmdirSync(s.resolve(extraDir));
      const { summary: afterSummary, problems } = await observeNow(withExtra);
      const after = afterSummary.pods?.find((p) => p.podRef.uid === uidSmall);
      expect((before?.memory?.workingSetBytes ?? 0) - (after?.memory?.workingSetBytes ?? 0)).toBeGreaterThanOrEqual(32 * MiB);
      expect(after?.containers?.map((c) => c.name)).toEqual(['app']);
      expect(after?.process_stats?.process_count).toBe(2);
      expect(problems.filter((p) => p.includes(uidSmall) || p.includes('small'))).toEqual([]);
      expect(openFilesUnder(s.resolve(extraDir))).toBe(0);
    });

    test(`the memory shortcut's bounds are each pod's usage as the kernel reads it, and follow a pod cgroup recreated in another QoS tier (root, cgroup v1, ${layout.driver})`, async () => {
      if (skipped()) return;
      const s = sandbox as CgroupSandbox;
      await observeNow();
      const memory = (observer as CgroupObserver).memory;
      if (memory === undefined) throw new Error('no memory reader');
      const usageOf = (dir: string): number => Number(s.read(dir, 'memory.usage_in_bytes'));
      const boundsNow = (): number[] => memory.podBounds(pods).map((b) => (b.kind === 'bounded' ? b.usageBytes : -1));
      // Read twice: the second time through the descriptors the first one kept.
      for (let i = 0; i < 2; i++) {
        const [small, large] = boundsNow();
        expect(Math.abs((small as number) - usageOf(dirs.small))).toBeLessThanOrEqual(TOLERANCE_BYTES);
        expect(Math.abs((large as number) - usageOf(dirs.large))).toBeLessThanOrEqual(TOLERANCE_BYTES);
        expect(large).toBeGreaterThanOrEqual(128 * MiB);
      }

      // The large pod's cgroup goes, and one for the same UID appears in the Burstable tier.
      const moved = { ...dirs, large: layout.burstablePod(uidLarge), largeDb: `${layout.burstablePod(uidLarge)}/${layout.container(hex('2'))}` };
      const oldTree = [dirs.largeDb, dirs.largeSidecar, dirs.large];
      for (const proc of largeProcesses) await s.kill(proc);
      for (const dir of oldTree) rmdirSync(s.resolve(dir));
      await s.startAllocator(moved.largeDb, 48 * MiB);
      const [, large] = boundsNow();
      expect(Math.abs((large as number) - usageOf(moved.large))).toBeLessThanOrEqual(TOLERANCE_BYTES);
      expect(large).toBeGreaterThanOrEqual(48 * MiB);
      expect(large).toBeLessThan(128 * MiB);
      // The next full pass lets go of every descriptor it kept in the removed cgroup.
      await (observer as CgroupObserver).observe(pods);
      expect(openFilesUnder(s.resolve(dirs.large))).toBe(0);
    });
  });
}

describe('the real root memory cgroup (root, cgroup v1)', () => {
  test('node memory capacity is MemTotal and the working set is the kernel root one (root, cgroup v1)', async () => {
    if (unavailable !== null) return void console.log(`skipped: ${unavailable}`);
    const observer = createCgroupObserver(observeSettings(), { clock: systemClock, logger: silentLogger, processCountIntervalMs: 0 });
    const { summary } = await observer.observe([]);
    const memTotalBytes = Number(/^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
    const kernelBytes = kernelWorkingSetBytes('/sys/fs/cgroup/memory');
    expect((summary.node.memory?.availableBytes ?? 0) + (summary.node.memory?.workingSetBytes ?? 0)).toBe(memTotalBytes);
    // The whole machine moves more than one idle cgroup does (other tests run beside this one).
    expect(Math.abs((summary.node.memory?.workingSetBytes ?? 0) - kernelBytes)).toBeLessThanOrEqual(64 * MiB);
    const [pidMax, threadsMax] = ['pid_max', 'threads-max'].map((f) => Number(readFileSync(`/proc/sys/kernel/${f}`, 'utf8')));
    expect(summary.node.rlimit?.maxpid).toBe(Math.min(pidMax as number, threadsMax as number));
    expect(summary.node.rlimit?.curproc).toBeGreaterThan(0);
  });
});
