// The kill path on the real kernel (root, cgroup v1): its own thread waits on a memcg threshold
// armed on a sandbox node, a real allocation crosses it, and the planned victim's containers are
// signalled by that thread, and nothing else (the pod's sandbox process, a sibling pod, processes
// around the node); a victim process that left its cgroup before the crossing is never signalled;
// a plan whose victim another pod may have overtaken, or whose node lock file moved, is declined;
// a plan taken back never fires; and a stop while armed ends the thread at once and leaves no
// descriptor behind.

import { statSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { ThreadedKillPath } from '../../src/act/kill-path.js';
import { createPodTerminator } from '../../src/act/pod-terminator.js';
import type { KillPathPlan, KillPathReport } from '../../src/daemon/ports.js';
import { memoryStatValue } from '../../src/host/memory-stat.js';
import { observeSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable, CGROUP_V1_MEMORY_ROOT, type SandboxProcess } from '../helpers/cgroup-sandbox.js';
import { openFds } from '../helpers/open-fds.js';
import { containerIdOf, NODE_CGROUP_IN_SANDBOX, startBystanders, startScenePod, type ScenePod } from '../helpers/terminator-scene.js';
import { waitFor } from '../helpers/wait-for.js';
import { processAlive as alive } from './cgroup-v2/guest/kernel-numbers.js';

const MiB = 1024n * 1024n;
const unavailable = cgroupV1Unavailable();
let sandbox: CgroupSandbox | undefined;
beforeAll(async () => {
  if (unavailable === null) sandbox = await CgroupSandbox.create();
});
afterAll(async () => {
  await sandbox?.cleanup();
});

const skip = (): boolean => {
  if (unavailable === null) return false;
  console.log(`skipped: ${unavailable}`);
  return true;
};

function theSandbox(): CgroupSandbox {
  if (sandbox === undefined) throw new Error('no sandbox');
  return sandbox;
}

const settings = observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', procRoot: '/proc', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' });

interface Harness {
  readonly killPath: ThreadedKillPath;
  readonly reports: KillPathReport[];
}

function startKillPath(s: CgroupSandbox): Harness {
  const nodeCgroup = `${s.name}/${NODE_CGROUP_IN_SANDBOX}`;
  const terminator = createPodTerminator(settings, { nodeCgroup, clock: systemClock, logger: silentLogger });
  const killPath = new ThreadedKillPath({ memoryMount: CGROUP_V1_MEMORY_ROOT, nodeCgroup, podCgroupRoot: `${nodeCgroup}/kubepods`, terminator, clock: systemClock, logger: silentLogger });
  const reports: KillPathReport[] = [];
  killPath.start((report) => reports.push(report));
  return { killPath, reports };
}

// A cgroup's usage and working set now (usage less its hierarchical inactive file pages).
function memoryOf(dir: string): { usageBytes: bigint; workingSetBytes: bigint } {
  const s = theSandbox();
  const usageBytes = BigInt(s.read(dir, 'memory.usage_in_bytes').trim());
  const inactive = memoryStatValue(s.read(dir, 'memory.stat'), 'total_inactive_file') ?? 0n;
  return { usageBytes, workingSetBytes: usageBytes > inactive ? usageBytes - inactive : 0n };
}

/** A plan whose hard memory.available threshold is met `headroomBytes` above the node's working set now. */
function planFor(victim: Pod, victimDir: string, options: { headroomBytes?: bigint; rivals?: KillPathPlan['rivals']; lock?: KillPathPlan['lock'] } = {}): KillPathPlan {
  const headroom = options.headroomBytes ?? 24n * MiB;
  const node = memoryOf(NODE_CGROUP_IN_SANDBOX);
  return {
    victim,
    gracePeriodMs: 1000,
    thresholds: [
      {
        description: 'hard memory eviction threshold',
        signal: 'memory.available',
        wakeUsageBytes: node.usageBytes + headroom,
        workingSetLimitBytes: node.workingSetBytes + headroom,
        approachUsageBytes: null,
      },
    ],
    rivals: options.rivals ?? [],
    victimWorkingSetBytes: memoryOf(victimDir).workingSetBytes,
    victimShrinkAllowanceBytes: null,
    lock: options.lock ?? null,
  };
}

async function armed(harness: Harness, plan: KillPathPlan): Promise<void> {
  expect(harness.killPath.arm(plan)).toBeNull();
  await harness.killPath.settled();
  await waitFor('the plan armed on the thread', () => harness.killPath.armed, 10_000);
}

// 64 MiB more in `relative` (a Node process that touches it); it may be killed before it is ready.
function allocate(relative: string): Promise<SandboxProcess | null> {
  return theSandbox()
    .startAllocator(relative, 64 * 1024 * 1024)
    .catch(() => null);
}

async function victimScene(): Promise<{ victim: ScenePod; bystanders: SandboxProcess[] }> {
  const s = theSandbox();
  return { victim: await startScenePod(s, 'victim', { app: 'a' }), bystanders: await startBystanders(s) };
}

const settle = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('the kill path on cgroup v1 (root, real kernel)', () => {
  test('a real allocation past the armed threshold ends the victim\'s containers from the kill path\'s thread, and nothing else', async () => {
    if (skip()) return;
    const s = theSandbox();
    const { victim, bystanders } = await victimScene();
    const harness = startKillPath(s);
    try {
      const plan = planFor(victim.pod, victim.dir);
      await armed(harness, plan);
      const grower = allocate(victim.container(containerIdOf('a')));
      await waitFor('the kill report', () => harness.reports.some((r) => r.kind === 'killed'), 20_000);
      const report = harness.reports.find((r) => r.kind === 'killed');
      if (report?.kind !== 'killed') throw new Error('no kill');
      const threshold = plan.thresholds[0];
      expect(report.plan).toBe(plan);
      expect(report.usageBytes >= (threshold?.wakeUsageBytes ?? 0n)).toBe(true);
      expect(report.workingSetBytes > (threshold?.workingSetLimitBytes ?? 0n)).toBe(true);
      expect(report.issuedAtNs >= report.wokeAtNs).toBe(true);
      expect(report.termination.signalled).toBeGreaterThanOrEqual(1);
      await waitFor('the victim container\'s process gone', () => !alive(victim.containers.app?.pid ?? 0), 10_000);
      const started = await grower;
      if (started !== null) await waitFor('the allocating process gone', () => !alive(started.pid), 10_000);
      await settle(100);
      expect([victim.pause, ...bystanders].filter((p) => !alive(p.pid)).map((p) => p.cgroup)).toEqual([]);
      expect(harness.killPath.armed).toBe(false);
    } finally {
      await harness.killPath.stop();
    }
  });

  test('a victim process that left its container before the crossing is not signalled', async () => {
    if (skip()) return;
    const s = theSandbox();
    const { victim, bystanders } = await victimScene();
    const harness = startKillPath(s);
    try {
      await armed(harness, planFor(victim.pod, victim.dir));
      const moved = victim.containers.app;
      if (moved === undefined) throw new Error('no container');
      // Moved out of the pod, beside the node: listed nowhere the plan names.
      writeFileSync(join(s.resolve('outer/beside-middle'), 'cgroup.procs'), String(moved.pid));
      const grower = allocate(`${NODE_CGROUP_IN_SANDBOX}/system.slice/grower`);
      await waitFor('the kill report', () => harness.reports.some((r) => r.kind === 'killed'), 20_000);
      const report = harness.reports.find((r) => r.kind === 'killed');
      expect(report?.kind === 'killed' && report.termination.signalled).toBe(0);
      await settle(200);
      const started = await grower;
      expect([moved, victim.pause, ...bystanders, ...(started === null ? [] : [started])].filter((p) => !alive(p.pid)).map((p) => p.cgroup)).toEqual([]);
      expect(started).not.toBeNull();
      if (started !== null) await s.kill(started);
      await s.kill(moved);
    } finally {
      await harness.killPath.stop();
    }
  });

  test('a plan is declined when a rival pod grew past the point at which it would rank first, or the node lock file is not the one locked', async () => {
    if (skip()) return;
    const s = theSandbox();
    const { victim, bystanders } = await victimScene();
    const rival = await startScenePod(s, 'rival', { app: 'c' });
    const lockDir = mkdtempSync(join(tmpdir(), 'kea-kill-path-'));
    const harness = startKillPath(s);
    try {
      const cases = [
        {
          label: 'rival',
          // The rival would rank first 8 MiB above its working set now; its own allocation crosses.
          plan: (): KillPathPlan => planFor(victim.pod, victim.dir, { rivals: [{ pod: rival.pod, overtakingWorkingSetBytes: memoryOf(rival.dir).workingSetBytes + 8n * MiB }] }),
          grower: rival.container(containerIdOf('c')),
          reason: /termination\/rival may rank before termination\/victim now/,
        },
        {
          label: 'lock',
          plan: (): KillPathPlan => {
            const lockPath = join(lockDir, 'node.lock');
            writeFileSync(lockPath, '');
            const locked = statSync(lockPath);
            // The file this agent locked was moved aside, and another took its path.
            rmSync(lockPath);
            writeFileSync(join(lockDir, 'other'), '');
            writeFileSync(lockPath, '');
            return planFor(victim.pod, victim.dir, { lock: { path: lockPath, fileId: `${locked.dev}:${locked.ino}` } });
          },
          grower: `${NODE_CGROUP_IN_SANDBOX}/kubepods/burstable/podgrower-lock/${containerIdOf('f')}`,
          reason: /node lock file .* is not the one this agent locked/,
        },
      ];
      for (const { label, plan, grower: growerDir, reason } of cases) {
        harness.reports.length = 0;
        await armed(harness, plan());
        // Another pod grows: the victim does not.
        const grower = await allocate(growerDir);
        await waitFor(`the ${label} case declined`, () => harness.reports.some((r) => r.kind === 'declined'), 20_000);
        const declined = harness.reports.find((r) => r.kind === 'declined');
        expect([label, declined?.kind === 'declined' ? declined.reason : '']).toEqual([label, expect.stringMatching(reason)]);
        expect([label, harness.reports.filter((r) => r.kind === 'killed').length]).toEqual([label, 0]);
        expect([label, harness.killPath.armed]).toEqual([label, true]);
        if (grower !== null) await s.kill(grower);
      }
      await settle(100);
      expect([victim.pause, ...Object.values(victim.containers), rival.pause, ...Object.values(rival.containers), ...bystanders].filter((p) => !alive(p.pid)).map((p) => p.cgroup)).toEqual([]);
    } finally {
      await harness.killPath.stop();
      rmSync(lockDir, { recursive: true, force: true });
    }
  });

  test('a plan taken back never fires, and a stop while armed ends the thread at once with no descriptor left', async () => {
    if (skip()) return;
    const s = theSandbox();
    const { victim } = await victimScene();
    const before = openFds();
    const harness = startKillPath(s);
    await armed(harness, planFor(victim.pod, victim.dir));
    expect(harness.killPath.disarm()).toBe(true);
    const first = await allocate(victim.container(containerIdOf('a')));
    await settle(200);
    expect(harness.reports.filter((r) => r.kind === 'killed')).toEqual([]);
    expect(first === null ? false : alive(first.pid)).toBe(true);
    if (first !== null) await s.kill(first);

    await armed(harness, planFor(victim.pod, victim.dir));
    const startedMs = performance.now();
    await harness.killPath.stop();
    const stopMs = performance.now() - startedMs;
    expect(stopMs).toBeLessThan(1000);
    expect(openFds()).toBe(before);
    const second = await allocate(victim.container(containerIdOf('a')));
    await settle(200);
    expect(harness.reports.filter((r) => r.kind === 'killed')).toEqual([]);
    expect([victim.containers.app, second].every((p) => p !== null && p !== undefined && alive(p.pid))).toBe(true);
    if (second !== null) await s.kill(second);
  });
});
