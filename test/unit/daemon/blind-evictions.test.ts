// The running agent with the real cgroup observer on the fixture cgroup trees, under hard memory
// pressure: with the right host root it evicts; pointed at the wrong place (a host root that shows
// a container's own cgroups, the wrong cgroup driver, a runtime layout whose pod cgroups it cannot
// find) it evicts nothing, reports not ready naming the likely misconfiguration, and says so once in
// the log and in a node Event. One pod started moments ago without a cgroup is ranked as the
// kubelet ranks it: first.

import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ObserveSettings } from '../../../src/api/agent-settings.js';
import type { ContainerStatus, Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeTerminator } from '../../fakes/fake-node.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { fixturesDir, lostPod, podA, podB, podC } from '../../fixtures/cgroup-tree-pods.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { observeSettings } from '../../fixtures/settings.js';

// The fixture node's memory.available is about 6.2e9 bytes: a hard threshold of 7Gi is met. The
// fixture's files never change, so an evicted pod never frees its memory: the escalation timeout is
// set past the passes these tests run, which are about the first choice.
const CONFIG = 'evictionHard:\n  memory.available: 7Gi\nenforceNodeAllocatable: []\nhousekeepingInterval: 10s\nactions:\n  escalationTimeout: 10m\n';
const NOW_MS = Date.UTC(2026, 10, 1, 12);

// The pod with its containers running since `startedMs`, as the kubelet reports a running pod.
function runningSince(pod: Pod, startedMs: number): Pod {
  const startedAt = new Date(startedMs).toISOString();
  const status = pod.status ?? {};
  const containerStatuses: ContainerStatus[] = (status.containerStatuses ?? []).map((s) => ({ ...s, state: { running: { startedAt } } }));
  return { ...pod, spec: { ...pod.spec, nodeName: 'node-a' }, status: { ...status, containerStatuses } };
}

const longRunning = (pod: Pod): Pod => runningSince(pod, NOW_MS - 3_600_000);

interface Harness {
  readonly agent: RunningAgent;
  readonly cluster: FakeCluster;
  readonly terminator: FakeTerminator;
  readonly logger: RecordingLogger;
  readonly clock: FakeClock;
}

const started: Harness[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const h of started.splice(0)) await h.agent.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function start(pods: readonly Pod[], settings: Partial<ObserveSettings>): Promise<Harness> {
  const clock = new FakeClock(NOW_MS);
  const logger = new RecordingLogger();
  const cluster = fakeCluster({ pods, node: testNode('node-a'), clock });
  const observer = createCgroupObserver(observeSettings(settings), { clock, logger, processCountIntervalMs: 10_000 });
  const terminator = new FakeTerminator();
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const agent = await startAgent(
    { config: parseConfigText(CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null },
    { cluster: view, actions: cluster.actions, events: cluster.events, nodeReporter: cluster.reporter, observer, notifier: new FakeNotifier(), terminator, hostIdentity: TEST_HOST, clock, logger },
  );
  const harness = { agent, cluster, terminator, logger, clock };
  started.push(harness);
  // The start-up pass, then two housekeeping passes. A pass reads real files (the thread pool, not
  // microtasks), so each is waited for in real time, until the loop sleeps again on the fake clock,
  // before the clock moves on: a step taken while a pass still reads finds no timer to fire.
  for (let i = 0; i < 3; i++) {
    await asleep(clock);
    await clock.stepAsync(10_000);
  }
  await asleep(clock);
  return harness;
}

// Waits (real time, 10 s at most) until a timer is pending on the fake clock again: the loop's
// sleep until its next pass, set once the pass that ran has decided and acted.
async function asleep(clock: FakeClock): Promise<void> {
  await flushMicrotasks();
  for (const deadlineMs = Date.now() + 10_000; clock.pendingTimers() === 0 && Date.now() < deadlineMs; ) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  await flushMicrotasks();
}

const acted = (h: Harness): string[] => h.cluster.actions.calls.filter((c) => c.method !== 'getPod').map((c) => `${c.method} ${c.name}`);
const deleted = (h: Harness): string[] => acted(h).filter((a) => a.startsWith('deletePod'));
const podStatsEvents = (h: Harness) => h.cluster.events.events.filter((e) => e.reason === 'PodStatsMissing');
const refusalLogs = (h: Harness) => h.logger.find('refusing to evict for signals whose pods cannot be ranked');

// A host root showing the fixture's memory hierarchy without the pods' parent cgroup: what a
// container sees of its own cgroups when hostRoot is `/` instead of the host's mount.
function containerView(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kea-blind-'));
  dirs.push(dir);
  cpSync(`${fixturesDir}cgroup-v1/cgroupfs`, dir, { recursive: true });
  rmSync(join(dir, 'sys/fs/cgroup/memory/kubepods'), { recursive: true });
  return dir;
}

describe('blind evictions are refused', () => {
  test('with the right host root, the pod the kubelet ranks first is evicted and the agent is ready', async () => {
    const h = await start([podA, podB, podC].map(longRunning), { hostRoot: `${fixturesDir}cgroup-v1/cgroupfs` });
    expect(deleted(h)).toEqual(['deletePod web']);
    expect(h.agent.readiness.reason()).toBeNull();
    expect(podStatsEvents(h)).toEqual([]);
  });

  const wrong: { name: string; settings: () => Partial<ObserveSettings>; pods: Pod[]; reason: RegExp }[] = [
    {
      name: 'a host root that shows a container its own cgroups (no kubepods)',
      settings: () => ({ hostRoot: containerView() }),
      pods: [podA, podB, podC],
      reason: /no pod cgroup root found \(looked for .*kubepods.*\), so none of the 3 running pods can be measured/,
    },
    {
      name: 'a host root with no cgroup hierarchy at all',
      settings: () => ({ hostRoot: join(fixturesDir, 'cgroup-v1') }),
      pods: [podA, podB, podC],
      reason: /no memory cgroup hierarchy found under .*, so none of the 3 running pods can be measured/,
    },
    {
      name: 'the cgroupfs driver on a systemd node',
      settings: () => ({ hostRoot: `${fixturesDir}cgroup-v1/systemd`, cgroupDriver: 'cgroupfs' }),
      pods: [podA, podC],
      reason: /no pod cgroup root found/,
    },
    {
      name: 'a runtime layout whose pod cgroups are not found',
      settings: () => ({ hostRoot: `${fixturesDir}cgroup-v1/cgroupfs` }),
      pods: [podA, ...['x1', 'x2', 'x3'].map((name, i) => ({ ...lostPod, metadata: { ...lostPod.metadata, name, uid: `0a1b2c3d-0000-4000-8000-0000000000e${i}` } }))],
      reason: /3 of 4 running pods have no stats \(default\/x1, default\/x2, default\/x3\)/,
    },
  ];
  for (const tc of wrong) {
    test(`${tc.name}: nothing is evicted, readiness says why, one log line and one Event`, async () => {
      const h = await start(tc.pods.map(longRunning), tc.settings());
      expect(acted(h)).toEqual([]);
      expect(h.terminator.calls).toEqual([]);
      const reason = h.agent.readiness.reason() ?? '';
      expect(reason).toMatch(tc.reason);
      expect(reason).toMatch(/not evicting for memory\.available, allocatableMemory\.available, pid\.available rather than rank pods blindly; likely a wrong observe\.hostRoot/);
      expect(h.agent.readiness.failing().map((f) => f.check)).toContain('pod-stats');
      // Three passes, one report.
      expect(refusalLogs(h)).toHaveLength(1);
      expect(podStatsEvents(h)).toEqual([expect.objectContaining({ object: 'node', type: 'Warning', message: expect.stringMatching(tc.reason) as unknown })]);
    });
  }

  test('a single pod started moments ago, its cgroup not there yet, is ranked first as the kubelet ranks it', async () => {
    const fresh = runningSince({ ...lostPod, metadata: { ...lostPod.metadata, name: 'just-started' } }, NOW_MS);
    const h = await start([...[podA, podB, podC].map(longRunning), fresh], { hostRoot: `${fixturesDir}cgroup-v1/cgroupfs` });
    // First; the pressure lasting (the fixture does not change), the next pod follows it.
    expect(deleted(h)[0]).toBe('deletePod just-started');
    expect(h.agent.readiness.reason()).toBeNull();
    expect(refusalLogs(h)).toEqual([]);
  });

  test('the cgroups appearing again (the host root fixed) lifts the refusal, says so once, and evicts', async () => {
    const dir = containerView();
    const h = await start([podA, podB, podC].map(longRunning), { hostRoot: dir });
    expect(acted(h)).toEqual([]);
    cpSync(`${fixturesDir}cgroup-v1/cgroupfs/sys/fs/cgroup/memory/kubepods`, join(dir, 'sys/fs/cgroup/memory/kubepods'), { recursive: true });
    await h.clock.stepAsync(10_000);
    // The pass reads the real files (the thread pool, not microtasks), and its Event and deletion
    // follow the readiness change: wait for all three in real time.
    const statsFound = (): number => h.cluster.events.events.filter((e) => e.reason === 'PodStatsFound').length;
    for (const deadlineMs = Date.now() + 10_000; (h.agent.readiness.reason() !== null || statsFound() === 0 || deleted(h).length === 0) && Date.now() < deadlineMs; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await flushMicrotasks();
    expect(h.agent.readiness.reason()).toBeNull();
    expect(h.cluster.events.events.filter((e) => e.reason === 'PodStatsFound')).toHaveLength(1);
    expect(deleted(h)).toEqual(['deletePod web']);
  });
});
