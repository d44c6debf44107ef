// The cgroup observer against fixture trees: node, `pods` and per-pod memory as cAdvisor computes
// it, for cgroup v1 and v2 and both cgroup drivers; process counts; PID limits; filesystem stats
// and layout; and every degradation rule (a missing source leaves its stat out, is reported, and is
// logged once).

import { cpSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../fakes/fake-clock.js';
import { FaultyHostFs } from '../../fakes/faulty-host-fs.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { CID_A, CID_A_INIT, fixturesDir, lostPod, pendingPod, podA, podB, podC, UID_A, UID_C, withRuntime } from '../../fixtures/cgroup-tree-pods.js';
import { mirrorAnnotations, STATIC_POD_UID } from '../../fixtures/pods.js';
import { observeSettings } from '../../fixtures/settings.js';
import type { ObserveSettings } from '../../../src/api/agent-settings.js';
import type { Pod } from '../../../src/api/pod.js';
import type { Observation } from '../../../src/daemon/ports.js';
import { createCgroupObserver, type CgroupObserverContext } from '../../../src/observe/cgroup-observer.js';

const MEM_TOTAL_BYTES = 8048576 * 1024;

function observer(hostRoot: string, settings: Partial<ObserveSettings> = {}, context: Partial<CgroupObserverContext> = {}) {
  const clock = new FakeClock(Date.UTC(2026, 0, 1, 12));
  const logger = new RecordingLogger();
  const hostFs = new FaultyHostFs();
  // The fixture's own (absent) hugepage pools, never the machine's: the figures stay the fixture's.
  const hugepagesDir = `${hostRoot}/sys/kernel/mm/hugepages`;
  const obs = createCgroupObserver(observeSettings({ hostRoot, ...settings }), { clock, logger, hostFs, processCountIntervalMs: 10_000, hugepagesDir, ...context });
  return { obs, clock, logger, hostFs };
}

const TIME = '2026-01-01T12:00:00.000Z';

describe('cgroup v1 (fixture)', () => {
  const cases = [
    { name: 'cgroupfs-driver', root: 'cgroup-v1/cgroupfs', pods: [podA, podB, podC] },
    { name: 'systemd-driver', root: 'cgroup-v1/systemd', pods: [podA, podC] },
  ];
  for (const tc of cases) {
    test(`${tc.name}: node, pods container and rlimit`, async () => {
      const { obs } = observer(fixturesDir + tc.root);
      const { summary } = await obs.observe(tc.pods);
      // usage 3e9 - total_inactive_file 1e9; capacity MemTotal (the root limit is the v1 sentinel).
      expect(summary.node.memory).toEqual({ time: TIME, usageBytes: 3e9, workingSetBytes: 2e9, availableBytes: MEM_TOTAL_BYTES - 2e9 });
      expect(summary.node.systemContainers).toEqual([{ name: 'pods', memory: { time: TIME, usageBytes: 2e9, workingSetBytes: 1.5e9, availableBytes: 7e9 - 1.5e9 } }]);
      expect(summary.node.rlimit).toEqual({ time: TIME, maxpid: 63304, curproc: 1234 });
    });

    test(`${tc.name}: per-pod and per-container working sets and process counts`, async () => {
      const { obs } = observer(fixturesDir + tc.root);
      const { summary, problems } = await obs.observe(tc.pods);
      const a = summary.pods?.find((p) => p.podRef.uid === UID_A);
      expect(a).toEqual({
        podRef: { name: 'web', namespace: 'default', uid: UID_A },
        memory: { time: TIME, usageBytes: 8e8, workingSetBytes: 7e8 },
        containers: [{ name: 'app', memory: { time: TIME, usageBytes: 7e8, workingSetBytes: 6.1e8 } }],
        // app's two processes plus the sandbox's one.
        process_stats: { process_count: 3 },
      });
      const c = summary.pods?.find((p) => p.podRef.uid === UID_C);
      expect(c?.memory).toEqual({ time: TIME, usageBytes: 5e8, workingSetBytes: 5e8 });
      expect(c?.containers).toEqual([{ name: 'postgres', memory: { time: TIME, usageBytes: 4.99e8, workingSetBytes: 4.99e8 } }]);
      expect(c?.process_stats?.process_count).toBe(tc.name === 'cgroupfs-driver' ? 4 : 2);
      expect(problems).toEqual([]);
    });
  }

  test('a working set floors at zero when inactive file pages exceed usage', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    const { summary } = await obs.observe([podB]);
    expect(summary.pods?.[0]?.memory?.workingSetBytes).toBe(0);
    expect(summary.pods?.[0]?.containers?.[0]?.memory?.workingSetBytes).toBe(2.8e8);
    expect(summary.pods?.[0]?.process_stats?.process_count).toBe(2);
  });

  test('a node cgroup with a limit below MemTotal caps the capacity', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`, {}, { nodeCgroup: `kubepods/pod${UID_C}` });
    const { summary, problems } = await obs.observe([]);
    // limit 536870912 < MemTotal; working set 5e8.
    expect(summary.node.memory?.availableBytes).toBe(536870912 - 5e8);
    expect(problems.some((p) => p.startsWith('allocatable memory not observed: no pod cgroup root found'))).toBe(true);
  });
});

describe('cgroup v2 (fixture)', () => {
  test('systemd driver with CRI-O: root usage emulated as anon + file, container scopes matched', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v2/systemd`);
    const { summary, problems } = await obs.observe([withRuntime(podA, 'cri-o')]);
    // anon 1.5e9 + file 1e9 - inactive_file 6e8.
    expect(summary.node.memory).toEqual({ time: TIME, usageBytes: 2.5e9, workingSetBytes: 1.9e9, availableBytes: MEM_TOTAL_BYTES - 1.9e9 });
    expect(summary.node.systemContainers?.[0]?.memory).toEqual({ time: TIME, usageBytes: 2e9, workingSetBytes: 1.5e9, availableBytes: 5.5e9 });
    expect(summary.pods).toEqual([
      {
        podRef: { name: 'web', namespace: 'default', uid: UID_A },
        memory: { time: TIME, usageBytes: 8e8, workingSetBytes: 7e8 },
        containers: [{ name: 'app', memory: { time: TIME, usageBytes: 7e8, workingSetBytes: 6.1e8 } }],
        // app 2, conmon 1, sandbox 1: every process in the pod's tree.
        process_stats: { process_count: 4 },
      },
    ]);
    expect(problems).toEqual([]);
  });

  test('cgroupfs driver: an unlimited kubepods (`max`) has no availableBytes', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v2/cgroupfs`);
    const { summary } = await obs.observe([podB]);
    expect(summary.node.systemContainers).toEqual([{ name: 'pods', memory: { time: TIME, usageBytes: 2e9, workingSetBytes: 1.5e9 } }]);
    expect(summary.pods?.[0]?.memory).toEqual({ time: TIME, usageBytes: 3e8, workingSetBytes: 2.5e8 });
    expect(summary.pods?.[0]?.containers).toEqual([{ name: 'worker', memory: { time: TIME, usageBytes: 2.9e8, workingSetBytes: 2.5e8 } }]);
    expect(summary.pods?.[0]?.process_stats).toEqual({ process_count: 4 });
  });

  test('the processes left in a pod: an emptied cgroup.procs counts one while cgroup.events still says populated', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-v2-populated-'));
    try {
      cpSync(`${fixturesDir}cgroup-v2/cgroupfs`, root, { recursive: true });
      const { obs } = observer(root);
      await obs.observe([podB]);
      const memory = obs.memory;
      if (memory === undefined) throw new Error('no memory reader');
      expect(memory.podProcessCount(podB)).toBe(4);
      // Killed: its last thread is exiting (gone from cgroup.procs), its memory not yet given back.
      const podDir = join(root, 'sys/fs/cgroup/kubepods/besteffort/pod0a1b2c3d-0000-4000-8000-00000000000b');
      for (const dir of [podDir, join(podDir, 'b'.repeat(63) + '0'), join(podDir, 'b'.repeat(63) + '1')]) writeFileSync(join(dir, 'cgroup.procs'), '');
      writeFileSync(join(podDir, 'cgroup.events'), 'populated 1\nfrozen 0\n');
      expect(memory.podProcessCount(podB)).toBe(1);
      writeFileSync(join(podDir, 'cgroup.events'), 'populated 0\nfrozen 0\n');
      expect(memory.podProcessCount(podB)).toBe(0);
      // Without cgroup.events (an older fixture), the count stands.
      rmSync(join(podDir, 'cgroup.events'));
      expect(memory.podProcessCount(podB)).toBe(0);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a v2 hierarchy without the memory controller is not taken for memory', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      mkdirSync(join(root, 'sys/fs/cgroup'), { recursive: true });
      // A hybrid host's unified mount: cgroup2, but memory is not one of its controllers.
      writeFileSync(join(root, 'sys/fs/cgroup/cgroup.controllers'), 'cpu io pids\n');
      const { obs } = observer(root);
      const { summary, problems } = await obs.observe([]);
      expect(summary.node.memory).toBeUndefined();
      expect(problems).toContain(`memory not observed: the cgroup v2 hierarchy at ${root}/sys/fs/cgroup has no memory controller`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('pod cgroup discovery', () => {
  const driverCases = [
    { name: 'auto-finds-cgroupfs', root: 'cgroup-v1/cgroupfs', driver: 'auto' as const, found: true },
    { name: 'auto-finds-systemd', root: 'cgroup-v1/systemd', driver: 'auto' as const, found: true },
    { name: 'explicit-cgroupfs', root: 'cgroup-v1/cgroupfs', driver: 'cgroupfs' as const, found: true },
    { name: 'explicit-systemd-on-cgroupfs-tree', root: 'cgroup-v1/cgroupfs', driver: 'systemd' as const, found: false },
    { name: 'explicit-cgroupfs-on-systemd-tree', root: 'cgroup-v1/systemd', driver: 'cgroupfs' as const, found: false },
  ];
  for (const tc of driverCases) {
    test(tc.name, async () => {
      const { obs } = observer(fixturesDir + tc.root, { cgroupDriver: tc.driver });
      const { summary, problems } = await obs.observe([podA]);
      expect(summary.pods?.length).toBe(tc.found ? 1 : 0);
      expect(summary.node.systemContainers !== undefined).toBe(tc.found);
      expect(summary.node.memory).toBeDefined();
      if (!tc.found) expect(problems).toEqual([expect.stringMatching(/^allocatable memory not observed: no pod cgroup root found/)]);
    });
  }

  test('an explicit pod cgroup root picks its driver by name', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/systemd`, { podCgroupRoot: '/kubepods.slice' });
    const { summary } = await obs.observe([podA]);
    expect(summary.pods?.[0]?.memory?.workingSetBytes).toBe(7e8);
  });

  test('a pending pod without containers is neither reported nor a problem', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    const { summary, problems } = await obs.observe([pendingPod, podA]);
    expect(summary.pods?.map((p) => p.podRef.name)).toEqual(['web']);
    expect(problems).toEqual([]);
  });

  test('a running pod without a cgroup is left out, reported, and logged once', async () => {
    const { obs, logger } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    const reason = `no cgroup found for pod default/lost (uid ${lostPod.metadata.uid})`;
    for (let i = 0; i < 3; i++) {
      const { summary, problems } = await obs.observe([lostPod, podA]);
      expect(summary.pods?.map((p) => p.podRef.name)).toEqual(['web']);
      expect(problems).toEqual([reason]);
    }
    expect(obs.problems()).toEqual([reason]);
    expect(logger.lines.filter((l) => l.fields.reason === reason)).toHaveLength(1);
    expect(logger.lines[0]).toMatchObject({ level: 'warn', msg: 'Observation degraded', fields: { component: 'cgroup-observer' } });
  });

  test('a remembered cgroup is not probed again, and is found again after it moves', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
      const { obs, hostFs } = observer(root);
      await obs.observe([podA]);
      const existsAfterFirst = hostFs.calls.get('exists') ?? 0;
      await obs.observe([podA]);
      expect(hostFs.calls.get('exists')).toBe(existsAfterFirst);
      // The pod's QoS tier changed: same UID, now under besteffort.
      const kubepods = join(root, 'sys/fs/cgroup/memory/kubepods');
      renameSync(join(kubepods, `burstable/pod${UID_A}`), join(kubepods, `besteffort/pod${UID_A}`));
      const { summary, problems } = await obs.observe([podA]);
      expect(summary.pods?.[0]?.memory?.workingSetBytes).toBe(7e8);
      expect(problems).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a steady pod costs no directory listing; containers that come, go or are replaced are seen at once', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
      const podDir = join(root, `sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}`);
      const { obs, hostFs } = observer(root, {}, { processCountIntervalMs: 0 });
      const listings = () => hostFs.calls.get('subdirectories') ?? 0;
      await obs.observe([podA]);
      const afterFirst = listings();
      await obs.observe([podA]);
      await obs.observe([podA]);
      expect(listings()).toBe(afterFirst);

      // A second container starts: the pod directory gains a subdirectory.
      const sidecarId = 'd'.repeat(64);
      cpSync(join(podDir, CID_A), join(podDir, sidecarId), { recursive: true });
      const withSidecar: Pod = { ...podA, status: { ...podA.status, containerStatuses: [...(podA.status?.containerStatuses ?? []), { name: 'sidecar', containerID: `containerd://${sidecarId}` }] } };
      let { summary } = await obs.observe([withSidecar]);
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['app', 'sidecar']);
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(5);

      // The sidecar is replaced by a new one: same number of subdirectories, different name.
      const replacementId = 'e'.repeat(64);
      renameSync(join(podDir, sidecarId), join(podDir, replacementId));
      const replaced: Pod = { ...podA, status: { ...podA.status, containerStatuses: [...(podA.status?.containerStatuses ?? []), { name: 'sidecar', containerID: `containerd://${replacementId}` }] } };
      ({ summary } = await obs.observe([replaced]));
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['app', 'sidecar']);
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(5);

      // It stops: one subdirectory fewer.
      rmSync(join(podDir, replacementId), { recursive: true });
      ({ summary } = await obs.observe([podA]));
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['app']);
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(3);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('process counts are reused for processCountIntervalMs; memory and replaced containers are read every pass', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
      const podDir = join(root, `sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}`);
      const { obs, clock, hostFs } = observer(root, {}, { processCountIntervalMs: 10_000 });
      const procsReads = (): number => hostFs.checkedPaths.filter((p) => p.endsWith('cgroup.procs')).length;
      let { summary } = await obs.observe([podA]);
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(3);
      const readsAfterFirst = procsReads();
      expect(readsAfterFirst).toBeGreaterThan(0);

      // A second container starts 1 s later: its memory is read at once, the count is reused.
      const sidecarId = 'd'.repeat(64);
      cpSync(join(podDir, CID_A), join(podDir, sidecarId), { recursive: true });
      const withSidecar: Pod = { ...podA, status: { ...podA.status, containerStatuses: [...(podA.status?.containerStatuses ?? []), { name: 'sidecar', containerID: `containerd://${sidecarId}` }] } };
      clock.step(1_000);
      ({ summary } = await obs.observe([withSidecar]));
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['app', 'sidecar']);
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(3);
      expect(procsReads()).toBe(readsAfterFirst);

      // Replaced under the same number of subdirectories: still seen without counting.
      const replacementId = 'e'.repeat(64);
      renameSync(join(podDir, sidecarId), join(podDir, replacementId));
      const replaced: Pod = { ...podA, status: { ...podA.status, containerStatuses: [...(podA.status?.containerStatuses ?? []), { name: 'sidecar', containerID: `containerd://${replacementId}` }] } };
      clock.step(1_000);
      ({ summary } = await obs.observe([replaced]));
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['app', 'sidecar']);

      // The interval passes: counted again.
      clock.step(10_000);
      ({ summary } = await obs.observe([replaced]));
      expect(summary.pods?.[0]?.process_stats?.process_count).toBe(5);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a running init container is named from initContainerStatuses', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
      const podDir = join(root, `sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}`);
      cpSync(join(podDir, CID_A), join(podDir, CID_A_INIT), { recursive: true });
      const { obs } = observer(root);
      const { summary } = await obs.observe([podA]);
      expect(summary.pods?.[0]?.containers?.map((c) => c.name)).toEqual(['init', 'app']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('pods without a UID are skipped', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    const noUid: Pod = { ...podA, metadata: { name: 'x', namespace: 'y' } };
    expect((await obs.observe([noUid])).summary.pods).toEqual([]);
  });
});

describe('static pods', () => {
  // The mirror pod of a static pod: another UID in the API than the static pod's own, which
  // names its cgroup, its log directory and pods/<uid>, and comes in the mirror annotation.
  const MIRROR_API_UID = '0a1b2c3d-0000-4000-8000-0000000000aa';
  const mirrorOf = (staticUid: string, annotations: Record<string, string> = mirrorAnnotations(staticUid)): Pod => ({
    ...podA,
    metadata: { name: 'web-node-a', namespace: 'kube-system', uid: MIRROR_API_UID, annotations },
  });

  // The fixture tree with podA's cgroup, pods/<uid> and log directory named after a static pod's UID.
  function staticPodTree(staticUid: string): string {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
    const burstable = join(root, 'sys/fs/cgroup/memory/kubepods/burstable');
    renameSync(join(burstable, `pod${UID_A}`), join(burstable, `pod${staticUid}`));
    mkdirSync(join(root, `var/lib/kubelet/pods/${staticUid}/volumes/kubernetes.io~empty-dir/data`), { recursive: true });
    writeFileSync(join(root, `var/lib/kubelet/pods/${staticUid}/volumes/kubernetes.io~empty-dir/data/file`), Buffer.alloc(8192));
    mkdirSync(join(root, `var/log/pods/kube-system_web-node-a_${staticUid}/app`), { recursive: true });
    writeFileSync(join(root, `var/log/pods/kube-system_web-node-a_${staticUid}/app/0.log`), Buffer.alloc(4096));
    return root;
  }

  test("a mirror pod is observed under its static pod's own UID: memory, containers, processes and disk", async () => {
    const root = staticPodTree(STATIC_POD_UID);
    try {
      const { obs } = observer(root);
      const mirror = mirrorOf(STATIC_POD_UID);
      await obs.refreshDiskUsage([mirror]);
      const { summary, problems } = await obs.observe([mirror]);
      expect(problems).toEqual([]);
      const stats = summary.pods?.[0];
      // As the kubelet reports it: the static pod's UID, the mirror pod's name.
      expect(stats?.podRef).toEqual({ name: 'web-node-a', namespace: 'kube-system', uid: STATIC_POD_UID });
      expect(stats?.memory).toEqual({ time: TIME, usageBytes: 8e8, workingSetBytes: 7e8 });
      expect(stats?.containers?.find((c) => c.name === 'app')?.memory?.workingSetBytes).toBe(6.1e8);
      expect(stats?.process_stats).toEqual({ process_count: 3 });
      expect(stats?.volume?.map((v) => v.name)).toEqual(['data']);
      expect(stats?.volume?.[0]?.usedBytes).toBeGreaterThanOrEqual(8192);
      expect(stats?.containers?.find((c) => c.name === 'app')?.logs?.usedBytes).toBeGreaterThanOrEqual(4096);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  const refusals = [
    { name: 'not a static pod UID', annotations: { 'kubernetes.io/config.mirror': '../../burstable/podX' }, reason: 'is not a static pod UID' },
    { name: 'upper-case hex', annotations: mirrorAnnotations(STATIC_POD_UID.toUpperCase()), reason: 'is not a static pod UID' },
    { name: 'empty', annotations: { 'kubernetes.io/config.mirror': '' }, reason: 'is not a static pod UID' },
    { name: 'disagrees with config.hash', annotations: { ...mirrorAnnotations(), 'kubernetes.io/config.hash': 'f'.repeat(32) }, reason: 'differs from its kubernetes.io/config.hash' },
    { name: "another pod's API UID", annotations: mirrorAnnotations(UID_C), reason: `its static pod UID ${UID_C} is another pod's UID on this node` },
  ];
  for (const tc of refusals) {
    test(`a mirror annotation refused (${tc.name}): no stats for the pod, reported`, async () => {
      const root = staticPodTree(STATIC_POD_UID);
      try {
        const { obs } = observer(root);
        const { summary, problems } = await obs.observe([mirrorOf(STATIC_POD_UID, tc.annotations), podC]);
        expect(summary.pods?.map((p) => p.podRef.uid)).toEqual([UID_C]);
        expect(problems).toEqual([expect.stringContaining(`pod kube-system/web-node-a not observed: `)]);
        expect(problems[0]).toContain(tc.reason);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }
});

describe('degradation', () => {
  const v1 = `${fixturesDir}cgroup-v1/cgroupfs`;
  const cases: { name: string; fault: (fs: FaultyHostFs) => void; check: (obs: Awaited<ReturnType<ReturnType<typeof createCgroupObserver>['observe']>>) => void; problem: string }[] = [
    {
      name: 'meminfo-missing-leaves-node-available-out',
      fault: (fs) => fs.injectError('readSingleRecordFile', '/proc/meminfo', 'ENOENT'),
      check: ({ summary }) => expect(summary.node.memory).toEqual({ time: TIME, usageBytes: 3e9, workingSetBytes: 2e9 }),
      problem: `cannot read ${v1}/proc/meminfo: ENOENT`,
    },
    {
      name: 'root-usage-unreadable-leaves-node-memory-out',
      fault: (fs) => fs.injectError('readSingleRecordFile', 'memory/memory.usage_in_bytes', 'EACCES'),
      check: ({ summary }) => {
        expect(summary.node.memory).toBeUndefined();
        expect(summary.node.systemContainers?.[0]?.memory?.availableBytes).toBe(5.5e9);
      },
      problem: `node memory not observed: cannot read ${v1}/sys/fs/cgroup/memory/memory.usage_in_bytes: EACCES`,
    },
    {
      name: 'kubepods-limit-unreadable-leaves-pods-available-out',
      fault: (fs) => fs.injectError('readSingleRecordFile', 'kubepods/memory.limit_in_bytes', 'EACCES'),
      check: ({ summary }) => expect(summary.node.systemContainers?.[0]?.memory).toEqual({ time: TIME, usageBytes: 2e9, workingSetBytes: 1.5e9 }),
      problem: `allocatable memory has no availableBytes: cannot read ${v1}/sys/fs/cgroup/memory/kubepods/memory.limit_in_bytes: EACCES`,
    },
    {
      name: 'working-set-above-limit-is-not-turned-into-pressure',
      fault: (fs) => fs.contentOverrides.set('kubepods/memory.limit_in_bytes', '1000000000\n'),
      check: ({ summary }) => expect(summary.node.systemContainers?.[0]?.memory?.availableBytes).toBeUndefined(),
      problem: 'pods memory: working set 1500000000 exceeds capacity 1000000000; availableBytes not reported',
    },
    {
      name: 'pod-memory-unreadable-leaves-the-pod-out',
      fault: (fs) => fs.injectError('readSingleRecordFile', `pod${UID_A}/memory.stat`, 'EACCES'),
      check: ({ summary }) => expect(summary.pods?.map((p) => p.podRef.name)).toEqual(['batch', 'db']),
      problem: `pod default/web: memory not observed: cannot read ${v1}/sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}/memory.stat: EACCES`,
    },
    {
      name: 'container-memory-unreadable-leaves-the-container-out',
      fault: (fs) => fs.injectError('readSingleRecordFile', /\/a{63}1\/memory.usage_in_bytes$/, 'EIO'),
      check: ({ summary }) => {
        const a = summary.pods?.find((p) => p.podRef.name === 'web');
        expect(a?.memory?.workingSetBytes).toBe(7e8);
        expect(a?.containers).toBeUndefined();
      },
      problem: `pod default/web: memory of container app not observed: cannot read ${v1}/sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}/${'a'.repeat(63)}1/memory.usage_in_bytes: EIO`,
    },
    {
      name: 'procs-unreadable-leaves-process-count-out',
      fault: (fs) => fs.injectError('readSmallFile', /\/pod0a1b2c3d-0000-4000-8000-00000000000a\/cgroup.procs$/, 'EACCES'),
      check: ({ summary }) => expect(summary.pods?.find((p) => p.podRef.name === 'web')?.process_stats).toBeUndefined(),
      problem: `pod default/web: processes not counted: cannot read ${v1}/sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}/cgroup.procs: EACCES`,
    },
    {
      name: 'a-sandbox-procs-unreadable-leaves-process-count-out',
      fault: (fs) => fs.injectError('readSmallFile', /\/a{63}0\/cgroup.procs$/, 'EACCES'),
      check: ({ summary }) => {
        const a = summary.pods?.find((p) => p.podRef.name === 'web');
        expect(a?.process_stats).toBeUndefined();
        expect(a?.containers?.map((c) => c.name)).toEqual(['app']);
      },
      problem: `pod default/web: processes not counted: cannot read ${v1}/sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}/${'a'.repeat(63)}0/cgroup.procs: EACCES`,
    },
    {
      name: 'pod-cgroup-unlistable-keeps-pod-memory',
      fault: (fs) => fs.injectError('subdirectoryCount', `/pod${UID_A}`, 'EACCES'),
      check: ({ summary }) => {
        const a = summary.pods?.find((p) => p.podRef.name === 'web');
        expect(a?.memory?.workingSetBytes).toBe(7e8);
        expect([a?.containers, a?.process_stats]).toEqual([undefined, undefined]);
      },
      problem: `pod default/web: containers and processes not observed: cannot list ${v1}/sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}: EACCES`,
    },
    {
      name: 'loadavg-missing-keeps-maxpid',
      fault: (fs) => fs.injectError('readSingleRecordFile', '/proc/loadavg', 'ENOENT'),
      check: ({ summary }) => expect(summary.node.rlimit).toEqual({ time: TIME, maxpid: 63304 }),
      problem: `cannot read ${v1}/proc/loadavg: ENOENT`,
    },
    {
      name: 'one-kernel-limit-missing-uses-the-other',
      fault: (fs) => fs.injectError('readSingleRecordFile', '/threads-max', 'ENOENT'),
      check: ({ summary }) => expect(summary.node.rlimit?.maxpid).toBe(4194304),
      problem: `cannot read ${v1}/proc/sys/kernel/threads-max: ENOENT`,
    },
    {
      name: 'nodefs-statfs-failure-leaves-fs-out',
      fault: (fs) => fs.injectError('statfs', '/var/lib/kubelet', 'EACCES'),
      check: ({ summary }) => {
        expect(summary.node.fs).toBeUndefined();
        expect(summary.node.runtime?.imageFs).toBeDefined();
      },
      problem: `nodefs not observed: statfs ${v1}/var/lib/kubelet: EACCES`,
    },
    {
      name: 'unknown-device-means-single-filesystem',
      fault: (fs) => fs.injectError('deviceOf', '/var/lib/containerd', 'ENOENT'),
      check: (o) => expect([o.dedicatedImageFs, o.splitContainerFs]).toEqual([false, false]),
      problem: `filesystem layout unknown: stat ${v1}/var/lib/containerd: ENOENT`,
    },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const { obs, hostFs, logger } = observer(v1);
      tc.fault(hostFs);
      const first = await obs.observe([podA, podB, podC]);
      tc.check(first);
      expect(first.problems).toContain(tc.problem);
      await obs.observe([podA, podB, podC]);
      expect(obs.problems()).toContain(tc.problem);
      expect(logger.lines.filter((l) => l.fields.reason === tc.problem)).toHaveLength(1);
      // Once the source is back, the problem is gone.
      hostFs.clearErrors();
      hostFs.contentOverrides.clear();
      const healed = await obs.observe([podA, podB, podC]);
      expect(healed.problems).toEqual([]);
      expect(obs.problems()).toEqual([]);
    });
  }

  test('no cgroup hierarchy at all: memory absent, nothing thrown', async () => {
    const { obs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`, { cgroupRoot: '/nonexistent' });
    const { summary, problems } = await obs.observe([podA]);
    expect(summary.node.memory).toBeUndefined();
    expect(summary.node.systemContainers).toBeUndefined();
    expect(summary.pods).toEqual([]);
    expect(summary.node.rlimit?.maxpid).toBe(63304);
    expect(problems[0]).toMatch(/^memory not observed: no memory cgroup found at /);
  });

  test('an empty host root: every stat absent, each reason reported', async () => {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      const { obs } = observer(root);
      const { summary, problems, dedicatedImageFs } = await obs.observe([podA]);
      expect(summary).toEqual({ node: {}, pods: [] });
      expect(dedicatedImageFs).toBe(false);
      expect(problems.length).toBeGreaterThanOrEqual(5);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('filesystems', () => {
  const v1 = `${fixturesDir}cgroup-v1/cgroupfs`;

  test('statfs figures become FsStats as cAdvisor computes them', async () => {
    const { obs, hostFs } = observer(v1, {}, { nodeName: 'node-a' });
    hostFs.statfsOverrides.set(`${v1}/var/lib/kubelet`, { blockSizeBytes: 4096n, blocks: 1000n, blocksFree: 300n, blocksAvailable: 250n, files: 500n, filesFree: 120n });
    const { summary } = await obs.observe([]);
    expect(summary.node.nodeName).toBe('node-a');
    expect(summary.node.fs).toEqual({ time: TIME, capacityBytes: 4096000, availableBytes: 1024000, usedBytes: 2867200, inodes: 500, inodesFree: 120, inodesUsed: 380 });
  });

  test('imagefs and containerfs default to the same path', async () => {
    const { obs } = observer(v1);
    const { summary, dedicatedImageFs, splitContainerFs } = await obs.observe([]);
    expect(summary.node.runtime?.imageFs?.capacityBytes).toBe(summary.node.fs?.capacityBytes);
    expect(summary.node.runtime?.containerFs?.capacityBytes).toBe(summary.node.runtime?.imageFs?.capacityBytes);
    expect([dedicatedImageFs, splitContainerFs]).toEqual([false, false]);
  });

  const layoutCases = [
    { name: 'single-filesystem', devices: [1n, 1n, 1n], want: [false, false] },
    { name: 'dedicated-imagefs', devices: [1n, 2n, 2n], want: [true, false] },
    { name: 'dedicated-imagefs-split-containerfs', devices: [1n, 2n, 3n], want: [true, true] },
    { name: 'containerfs-on-nodefs-with-imagefs-apart', devices: [1n, 2n, 1n], want: [true, true] },
    { name: 'impossible-split-without-imagefs-reported-as-single', devices: [1n, 1n, 2n], want: [false, false] },
  ];
  for (const tc of layoutCases) {
    test(`layout ${tc.name}`, async () => {
      const { obs, hostFs } = observer(v1, { containerFsPath: '/var/lib/containerfs' });
      const [nodeDev, imageDev, containerDev] = tc.devices as [bigint, bigint, bigint];
      hostFs.deviceOverrides.set(`${v1}/var/lib/kubelet`, nodeDev);
      hostFs.deviceOverrides.set(`${v1}/var/lib/containerd`, imageDev);
      hostFs.deviceOverrides.set(`${v1}/var/lib/containerfs`, containerDev);
      hostFs.statfsOverrides.set(`${v1}/var/lib/containerfs`, { blockSizeBytes: 4096n, blocks: 1n, blocksFree: 1n, blocksAvailable: 1n, files: 1n, filesFree: 1n });
      const { dedicatedImageFs, splitContainerFs } = await obs.observe([]);
      expect([dedicatedImageFs, splitContainerFs]).toEqual(tc.want);
    });
  }
});

describe('timestamps', () => {
  test('every stat carries the clock time of the observation', async () => {
    const { obs, clock } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    clock.step(1500);
    const { summary } = await obs.observe([podA]);
    const time = '2026-01-01T12:00:01.500Z';
    expect([summary.node.memory?.time, summary.node.systemContainers?.[0]?.memory?.time, summary.node.rlimit?.time, summary.node.fs?.time, summary.pods?.[0]?.memory?.time]).toEqual([
      time,
      time,
      time,
      time,
      time,
    ]);
  });
});

describe('concurrency', () => {
  test('overlapping observations run one after the other, each with its own problems', async () => {
    const { obs, hostFs } = observer(`${fixturesDir}cgroup-v1/cgroupfs`);
    hostFs.injectError('readSingleRecordFile', '/proc/loadavg', 'ENOENT', 1);
    const [first, second] = await Promise.all([obs.observe([podA]), obs.observe([podA])]);
    expect(first.problems).toEqual([`cannot read ${fixturesDir}cgroup-v1/cgroupfs/proc/loadavg: ENOENT`]);
    expect(second.problems).toEqual([]);
    expect(second.summary.node.rlimit?.curproc).toBe(1234);
  });
});

describe('observations with a plan: the pods\' cgroups read only as the plan needs them', () => {
  const NONE = { memory: false, processes: false };
  const MEMORY = { memory: true, processes: false };

  // A fixture copy whose pod A can be changed, observed by an observer whose first planned pass is a full read.
  async function planned(run: (tree: { root: string; podDir: string; obs: ReturnType<typeof observer>['obs']; clock: FakeClock; hostFs: FaultyHostFs }) => Promise<void>): Promise<void> {
    const root = mkdtempSync(join(tmpdir(), 'kea-observe-'));
    try {
      cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, root, { recursive: true });
      const { obs, clock, hostFs } = observer(root, {}, { fullReadIntervalMs: 60_000 });
      await run({ root, podDir: join(root, `sys/fs/cgroup/memory/kubepods/burstable/pod${UID_A}`), obs, clock, hostFs });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }
  const plan = (needs: { memory: boolean; processes: boolean }, seen: Observation[] = []) => ({
    podStatsNeeded: (preliminary: Observation) => {
      seen.push(preliminary);
      return needs;
    },
  });

  test('a pass that needs nothing of the pods reads none of their files, and carries each pod\'s last reading with its time and problems', async () => {
    await planned(async ({ podDir, obs, clock, hostFs }) => {
      const first = await obs.observe([podA, lostPod], plan(NONE));
      expect(first.podStatsRead).toEqual({ memory: true, processes: true });
      writeFileSync(join(podDir, 'memory.usage_in_bytes'), '900000000\n');
      clock.step(10_000);
      const readsBefore = hostFs.checkedPaths.length;
      const seen: Observation[] = [];
      const carried = await obs.observe([podA, lostPod], plan(NONE, seen));
      expect(hostFs.checkedPaths.slice(readsBefore).filter((p) => p.includes('/kubepods/burstable/'))).toEqual([]);
      expect(carried.podStatsRead).toEqual(NONE);
      expect(carried.summary.pods).toEqual(first.summary.pods);
      expect(carried.problems).toEqual(first.problems);
      // The node's own figures are fresh, and the plan saw them with the pods as last read.
      expect(carried.summary.node.memory?.time).toBe('2026-01-01T12:00:10.000Z');
      expect(seen[0]?.summary).toEqual(carried.summary);
    });
  });

  test('memory needed: read afresh, with process counts carried; processes needed: counted afresh', async () => {
    await planned(async ({ podDir, obs, clock }) => {
      await obs.observe([podA], plan(NONE));
      writeFileSync(join(podDir, 'memory.usage_in_bytes'), '900000000\n');
      writeFileSync(join(podDir, 'cgroup.procs'), '1\n2\n3\n4\n');
      clock.step(10_000);
      const memory = await obs.observe([podA], plan(MEMORY));
      expect(memory.podStatsRead).toEqual(MEMORY);
      expect(memory.summary.pods?.[0]?.memory).toEqual({ time: '2026-01-01T12:00:10.000Z', usageBytes: 9e8, workingSetBytes: 8e8 });
      expect(memory.summary.pods?.[0]?.process_stats).toEqual({ process_count: 3 });
      clock.step(10_000);
      const counted = await obs.observe([podA], plan({ memory: false, processes: true }));
      expect(counted.podStatsRead).toEqual({ memory: true, processes: true });
      expect(counted.summary.pods?.[0]?.process_stats).toEqual({ process_count: 7 });
    });
  });

  test('a full read once per fullReadIntervalMs, whatever the plan needs', async () => {
    await planned(async ({ obs, clock }) => {
      const reads = [];
      for (const stepMs of [0, 30_000, 29_999, 1, 10_000]) {
        clock.step(stepMs);
        reads.push((await obs.observe([podA], plan(NONE))).podStatsRead);
      }
      expect(reads).toEqual([{ memory: true, processes: true }, NONE, NONE, { memory: true, processes: true }, NONE]);
    });
  });

  test('a pod that leaves is gone at once; one that comes has no stats until a pass reads the pods', async () => {
    await planned(async ({ obs, clock }) => {
      await obs.observe([podA], plan(NONE));
      clock.step(10_000);
      const carried = await obs.observe([podC], plan(NONE));
      expect(carried.summary.pods).toEqual([]);
      const read = await obs.observe([podC], plan(MEMORY));
      expect(read.summary.pods?.map((p) => [p.podRef.uid, p.memory?.workingSetBytes, p.process_stats?.process_count])).toEqual([[UID_C, 5e8, 4]]);
    });
  });
});
