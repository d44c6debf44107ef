// What the kill path is armed with, and when, in the running agent on fakes and a fake clock: after
// a pass, the engine's first-ranked pod for a hard memory threshold with the figures the thread
// confirms it by; nothing where the main thread would not end a pod at once itself (dry run, local
// termination off, the Node not this host, a standby of the node lock, every pod critical, the
// first pod without stats, a threshold already met); taken back at once on a pod change, a
// reload or the Node changing, and armed again on the next turn; a kill it reports handed over to
// the executor (the terminator keeps it ended, the DELETE follows) and never doubled by the main
// thread; and the main thread, when it acts first, takes the plan back so the thread cannot fire.

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeLockFile } from '../../../src/act/node-lock-file.js';
import type { Node, Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { APPROACH_DISTANCE_BYTES } from '../../../src/daemon/kill-path-arming.js';
import type { NodeLockFile } from '../../../src/daemon/ports.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeKillPath, FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../../fakes/fake-node.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { makePod, mirrorAnnotations, STATIC_POD_UID } from '../../fixtures/pods.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const HARD = `
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 5s
`;

const UID = { leaky: '1eaf0000-0000-4000-8000-000000000001', batch: 'ba7c0000-0000-4000-8000-000000000002', mirror: '3e770000-0000-4000-8000-000000000003', hog: '40900000-0000-4000-8000-000000000004' } as const;

interface Harness {
  readonly clock: FakeClock;
  readonly cluster: FakeCluster;
  readonly observer: FakeObserver;
  readonly notifier: FakeNotifier;
  readonly terminator: FakeTerminator;
  readonly killPath: FakeKillPath;
  readonly logger: RecordingLogger;
  readonly agent: RunningAgent;
  /** Working sets by UID (the observer's Summary follows them and the node's available memory). */
  readonly usage: Record<string, { name: string; bytes: number }>;
  setAvailable(bytes: number): void;
}

// `leaky` far over its 100Mi request, `batch` a little over, `mirror` (critical) the largest.
function defaultPods(): Pod[] {
  return [
    makePod({ name: 'leaky', uid: UID.leaky, requests: { memory: '100Mi' }, tgps: 30 }),
    makePod({ name: 'batch', uid: UID.batch, requests: { memory: '100Mi' }, tgps: 30 }),
    makePod({ name: 'mirror', uid: UID.mirror, annotations: mirrorAnnotations() }),
  ];
}

async function start(options: { config?: string; dryRun?: boolean; pods?: Pod[]; node?: Node; reload?: { path: string; text: string }; nodeLock?: NodeLockFile; refuse?: string } = {}): Promise<Harness> {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const cluster = fakeCluster({ pods: options.pods ?? defaultPods(), node: options.node ?? testNode('node-a'), clock });
  const observer = new FakeObserver().withMemoryReader();
  const notifier = new FakeNotifier();
  const terminator = new FakeTerminator();
  const killPath = new FakeKillPath();
  killPath.refuse = options.refuse ?? null;
  const logger = new RecordingLogger();
  const usage: Harness['usage'] = {
    [UID.leaky]: { name: 'leaky', bytes: 3 * Gi },
    [UID.batch]: { name: 'batch', bytes: 200 * Mi },
    [STATIC_POD_UID]: { name: 'mirror', bytes: 4 * Gi },
  };
  let available = 4 * Gi;
  const setAvailable = (bytes: number): void => {
    available = bytes;
    observer.summary = memorySummary(8 * Gi, available, usage);
  };
  setAvailable(available);
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const reload = options.reload === undefined ? null : { ...options.reload, parse: (text: string) => parseConfigText(text, options.reload?.path ?? '') };
  const agent = await startAgent(
    { config: parseConfigText(options.config ?? HARD, 'test.yaml'), nodeName: 'node-a', reload, dryRun: options.dryRun, serverPort: 0 },
    {
      cluster: view,
      actions: cluster.actions,
      events: cluster.events,
      nodeReporter: cluster.reporter,
      observer,
      notifier,
      terminator,
      killPath,
      hostIdentity: TEST_HOST,
      clock,
      logger,
      ...(options.nodeLock === undefined ? {} : { nodeLock: { lock: options.nodeLock, self: { pid: 1001, pod: 'kube-system/kea-a', release: 'kea', image: 'kea:1', startedAtMs: clock.nowMs() } } }),
    },
  );
  await flushMicrotasks();
  return { clock, cluster, observer, notifier, terminator, killPath, logger, agent, usage, setAvailable };
}

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.agent.stop();
  harness = null;
});

function otherBoot(): Node {
  const node = testNode('node-a');
  return { ...node, status: { ...node.status, nodeInfo: { bootID: 'another-boot', machineID: TEST_HOST.machineID ?? '', systemUUID: TEST_HOST.systemUUID ?? '' } } };
}

const victimOf = (h: Harness): string | null => h.killPath.plan?.victim.metadata.name ?? null;
const notArmedReasons = (h: Harness): string[] => h.logger.find('kill path not armed; the main thread answers memory notifications').map((l) => String(l.fields.reason));

describe('what the kill path is armed with', () => {
  test('after the first pass: the first non-critical pod of the memory ranking, with the figures the thread confirms a crossing by', async () => {
    harness = await start();
    const plan = harness.killPath.plan;
    expect(plan?.victim.metadata.uid).toBe(UID.leaky);
    // The engine's eviction of a hard threshold: the local grace period is its 1 s.
    expect(plan?.gracePeriodMs).toBe(1000);
    const limit = BigInt(8 * Gi - 500 * Mi);
    expect(plan?.thresholds).toEqual([
      { description: 'hard memory eviction threshold', signal: 'memory.available', wakeUsageBytes: limit, workingSetLimitBytes: limit, approachUsageBytes: limit - APPROACH_DISTANCE_BYTES },
    ]);
    // batch comes first once over its request by leaky's excess and one byte (it comes after leaky
    // in the node's order); mirror, critical, never does.
    expect(plan?.rivals.map((r) => [r.pod.metadata.name, r.overtakingWorkingSetBytes])).toEqual([['batch', BigInt(100 * Mi + 3 * Gi - 100 * Mi + 1)]]);
    expect(plan?.victimWorkingSetBytes).toBe(BigInt(3 * Gi));
    expect(plan?.victimShrinkAllowanceBytes).toBe(BigInt(3 * Gi - 100 * Mi));
    expect(plan?.lock).toBeNull();
  });

  const notArmed: readonly { readonly name: string; readonly options: Parameters<typeof start>[0]; readonly available?: number; readonly reason: RegExp }[] = [
    { name: 'a dry run', options: { dryRun: true }, reason: /^dry run$/ },
    { name: 'local termination off', options: { config: `${HARD}actions:\n  localTermination: false\n` }, reason: /do not end pods locally/ },
    { name: 'no hard memory threshold', options: { config: 'evictionHard:\n  memory.available: "0%"\n  nodefs.available: 10%\n' }, reason: /no hard memory threshold can be armed/ },
    { name: 'every pod critical', options: { pods: [makePod({ name: 'mirror', uid: UID.mirror, annotations: mirrorAnnotations() })] }, reason: /no pod may be evicted for memory/ },
    { name: 'the threshold already met (the pass decides)', options: { pods: [makePod({ name: 'mirror', uid: UID.mirror, annotations: mirrorAnnotations() })] }, available: 300 * Mi, reason: /met now: the pass decides/ },
    { name: 'the first-ranked pod without stats', options: { pods: [...defaultPods(), makePod({ name: 'new', uid: '0e000000-0000-4000-8000-000000000009', requests: { memory: '100Mi' } })] }, reason: /default\/new ranks first without memory stats/ },
    { name: 'the Node not this host (another boot)', options: { node: otherBoot() }, reason: /boot/i },
    { name: 'the victim\'s containers not found', options: { refuse: 'no container of default/leaky found in its cgroup yet' }, reason: /no container of default\/leaky/ },
  ];
  test.each(notArmed)('nothing armed: $name', async ({ options, available, reason }) => {
    harness = await start(options);
    if (available !== undefined) {
      harness.setAvailable(available);
      await harness.clock.stepAsync(10_000);
    }
    expect(harness.killPath.armed).toBe(false);
    expect(notArmedReasons(harness).at(-1)).toMatch(reason);
  });

  test('a standby of the node lock arms nothing; once it holds the lock, the plan names the lock file it holds', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-kill-lock-'));
    const other = createNodeLockFile(dir);
    try {
      expect(other.tryAcquire()).toBe(true);
      harness = await start({ nodeLock: createNodeLockFile(dir) });
      expect(harness.killPath.armed).toBe(false);
      expect(notArmedReasons(harness).at(-1)).toMatch(/^standby/);
      other.release();
      await harness.clock.stepAsync(100);
      const locked = statSync(join(dir, 'node.lock'));
      expect(harness.killPath.plan?.lock).toEqual({ path: join(dir, 'node.lock'), fileId: `${locked.dev}:${locked.ino}` });
    } finally {
      await harness?.agent.stop();
      harness = null;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the figures the plan is made from', () => {
  test('the pods\' memory read when arming, not the figures a pass that did not read the pods carried', async () => {
    harness = await start();
    const h = harness;
    expect(victimOf(h)).toBe('leaky');
    // The passes from now on carry the pods' figures of the first one (leaky far first)...
    h.observer.carriedPods = h.observer.summary.pods ?? [];
    // ...while batch grows past it and leaky shrinks, the node's total unchanged (no threshold near).
    h.usage[UID.batch] = { name: 'batch', bytes: 3 * Gi };
    h.usage[UID.leaky] = { name: 'leaky', bytes: 200 * Mi };
    h.setAvailable(4 * Gi);
    await h.clock.stepAsync(10_000);
    expect(h.observer.observedPods.length).toBeGreaterThan(1);
    expect(victimOf(h)).toBe('batch');
    expect(h.killPath.plan?.victimWorkingSetBytes).toBe(BigInt(3 * Gi));
    expect(h.killPath.plan?.rivals.map((r) => [r.pod.metadata.name, r.overtakingWorkingSetBytes])).toEqual([['leaky', BigInt(100 * Mi + 3 * Gi - 100 * Mi)]]);
  });
});

describe('when the plan is taken back and made again', () => {
  test('a pod added takes it back at once; the next turn arms the new first-ranked pod', async () => {
    harness = await start();
    const h = harness;
    h.usage[UID.hog] = { name: 'hog', bytes: 3.5 * Gi };
    h.setAvailable(3 * Gi);
    h.cluster.view.upsertPod(makePod({ name: 'hog', uid: UID.hog, requests: { memory: '100Mi' } }));
    expect(h.killPath.armed).toBe(false);
    await h.clock.stepAsync(0);
    expect(victimOf(h)).toBe('hog');
  });

  test('a pod that becomes a mirror pod is never the victim: the next one is armed', async () => {
    harness = await start();
    const h = harness;
    h.cluster.view.updatePod('default', 'leaky', (pod) => (pod.metadata.annotations = mirrorAnnotations('1eaf0000000000000000000000000001')));
    expect(h.killPath.armed).toBe(false);
    await h.clock.stepAsync(0);
    expect(victimOf(h)).toBe('batch');
  });

  test('a reload to a dry run takes it back before it applies, and nothing is armed after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kea-kill-reload-'));
    const path = join(dir, 'config.yaml');
    try {
      harness = await start({ reload: { path, text: HARD } });
      const h = harness;
      expect(h.killPath.armed).toBe(true);
      const { writeFileSync } = await import('node:fs');
      writeFileSync(path, `${HARD}actions:\n  dryRun: true\n`);
      expect(await h.agent.reloadNow()).toBe('applied');
      expect(h.killPath.armed).toBe(false);
      await h.clock.stepAsync(1000);
      expect(h.killPath.armed).toBe(false);
      expect(notArmedReasons(h).at(-1)).toBe('dry run');
    } finally {
      await harness?.agent.stop();
      harness = null;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a kill the kill path reports', () => {
  test('is handed over: kept ended by the terminator, the DELETE and the Event follow, the node reports the pressure; nothing is armed until its processes are gone', async () => {
    harness = await start();
    const h = harness;
    h.setAvailable(300 * Mi);
    h.killPath.fire(h.clock.nowMs(), BigInt(8 * Gi - 300 * Mi));
    h.killPath.deliver();
    await flushMicrotasks();
    expect(h.terminator.adopted).toEqual([{ uid: UID.leaky, gracePeriodMs: 1000 }]);
    expect(h.terminator.calls).toEqual([]);
    expect(h.cluster.actions.callsOf('deletePod').map((c) => [c.name, c.gracePeriodSeconds])).toEqual([['leaky', 1]]);
    const evicted = h.cluster.events.events.find((e) => e.reason === 'Evicted');
    expect(evicted?.message).toMatch(/^The node was low on resource: memory\. Threshold quantity: 500Mi, available: 300Mi\. /);
    expect(await h.agent.metrics.registry.getSingleMetric('kube_eviction_agent_notification_to_eviction_seconds')?.get().then((m) => m.values.some((v) => v.labels.action === 'local-termination'))).toBe(true);
    // The pass the kill woke sees memory still short and leaky's processes still there: it waits.
    await h.clock.stepAsync(10);
    expect(h.terminator.calls).toEqual([]);
    expect(h.killPath.armed).toBe(false);
    // Gone: memory back, the pod and its processes gone; the next pass arms the next pod.
    h.observer.processes.set(UID.leaky, 0);
    delete h.usage[UID.leaky];
    h.setAvailable(4 * Gi);
    h.cluster.view.removePod('default', 'leaky');
    await h.clock.stepAsync(2000);
    expect(victimOf(h)).toBe('batch');
    expect(h.terminator.calls).toEqual([]);
  });

  test('the main thread\'s own notification of the same crossing ends no second pod', async () => {
    harness = await start();
    const h = harness;
    h.setAvailable(300 * Mi);
    // Fired on its thread, reported only when the main thread takes it in: its notification does first.
    h.killPath.fire(h.clock.nowMs(), BigInt(8 * Gi - 300 * Mi));
    h.notifier.fire(h.clock.nowMs());
    await flushMicrotasks();
    await h.clock.stepAsync(10);
    expect(h.terminator.calls).toEqual([]);
    expect(h.terminator.adopted.map((a) => a.uid)).toEqual([UID.leaky]);
    expect(h.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
  });

  test('when the main thread acts first it takes the plan back: the thread can no longer fire', async () => {
    harness = await start();
    const h = harness;
    h.setAvailable(300 * Mi);
    // The kill path declined (another pod may have overtaken): the main thread's shortcut decides.
    const plan = h.killPath.plan;
    const threshold = plan?.thresholds[0];
    if (plan === undefined || threshold === undefined) throw new Error('nothing armed');
    h.killPath.report({ kind: 'declined', plan, threshold, reason: 'the working set beside default/leaky grew' });
    h.notifier.fire(h.clock.nowMs());
    await flushMicrotasks();
    expect(h.terminator.calls).toEqual([{ uid: UID.leaky, gracePeriodMs: 1000 }]);
    expect(h.killPath.armed).toBe(false);
    expect(() => h.killPath.fire(h.clock.nowMs(), 1n)).toThrow('nothing armed');
  });

  test('stopping the agent stops the kill path', async () => {
    harness = await start();
    await harness.agent.stop();
    expect(harness.killPath.stopped).toBe(true);
    expect(harness.killPath.armed).toBe(false);
    harness = null;
  });
});
