// The running agent follows each eviction to its outcome, on fakes and a fake clock: the Event on
// the pod and on the Node, the metrics, and the ops endpoint's /outcomes that `explain` reads.

import type { Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../../src/daemon/agent.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../../fakes/fake-node.js';
import { TEST_HOST, testNode } from '../../fixtures/host-identity.js';
import { makePod } from '../../fixtures/pods.js';
import type { KernelOomKill, OomKillWatcher } from '../../../src/daemon/ports.js';

// Stands in for the kernel OOM kill watcher: the test reports kills through `kill`.
class FakeOomKills implements OomKillWatcher {
  private onKill: ((kill: KernelOomKill) => void) | null = null;
  sources(): readonly [] {
    return [];
  }
  start(onKill: (kill: KernelOomKill) => void): void {
    this.onKill = onKill;
  }
  async stop(): Promise<void> {
    this.onKill = null;
  }
  kill(atMs: number, constraint: 'CONSTRAINT_NONE' | 'CONSTRAINT_MEMCG'): void {
    this.onKill?.({ atMs, detectedAtMs: atMs, source: 'kernel-log', oomSignalledAtMs: null, constraint, scope: constraint === 'CONSTRAINT_NONE' ? 'node' : 'memcg', victim: null, oomCgroup: null, oomCgroupInferred: false, pid: 4242, process: 'leak', rssBytes: null });
  }
}

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const T0 = Date.UTC(2026, 10, 1, 12);

// Hard 500Mi with 100Mi of minimum reclaim: the signal is back at 600Mi.
const CONFIG = `
evictionHard:
  memory.available: 500Mi
evictionMinimumReclaim:
  memory.available: 100Mi
reporting:
  retriggerWindow: 10s
`;

const UID = { leaky: '1eaf0000-0000-4000-8000-000000000001', batch: 'ba7c0000-0000-4000-8000-000000000002' } as const;

interface Harness {
  clock: FakeClock;
  cluster: FakeCluster;
  notifier: FakeNotifier;
  agent: RunningAgent;
  oomKills: FakeOomKills;
  setAvailable(bytes: number): void;
}

async function start(options: { dryRun?: boolean } = {}): Promise<Harness> {
  const clock = new FakeClock(T0);
  const pods: Pod[] = [makePod({ name: 'leaky', uid: UID.leaky, requests: { memory: '100Mi' }, tgps: 30 }), makePod({ name: 'batch', uid: UID.batch, requests: { memory: '100Mi' }, tgps: 30 })];
  const cluster = fakeCluster({ pods, node: testNode('node-a'), clock });
  const observer = new FakeObserver();
  const notifier = new FakeNotifier();
  const usage = { [UID.leaky]: { name: 'leaky', bytes: 3 * Gi }, [UID.batch]: { name: 'batch', bytes: 200 * Mi } };
  const setAvailable = (bytes: number): void => {
    observer.summary = memorySummary(8 * Gi, bytes, usage);
  };
  setAvailable(4 * Gi);
  const view = Object.assign(cluster.view, { start: async () => {}, stop: async () => {} });
  const oomKills = new FakeOomKills();
  const agent = await startAgent(
    { config: parseConfigText(CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null, dryRun: options.dryRun, serverPort: 0 },
    { cluster: view, actions: cluster.actions, events: cluster.events, nodeReporter: cluster.reporter, observer, notifier, terminator: new FakeTerminator(), hostIdentity: TEST_HOST, clock, logger: new RecordingLogger(), oomKills },
  );
  await flushMicrotasks();
  return { clock, cluster, notifier, agent, oomKills, setAvailable };
}

let harness: Harness | null = null;
afterEach(async () => {
  await harness?.agent.stop();
  harness = null;
});

async function metric(agent: RunningAgent, name: string): Promise<string> {
  const text = await agent.metrics.registry.metrics();
  return text.split('\n').filter((l) => l.startsWith(name)).join('\n');
}

// The pressure a kernel notification reports: the full pass decides and acts.
async function crossing(h: Harness, availableBytes: number): Promise<void> {
  h.setAvailable(availableBytes);
  h.notifier.fire(h.clock.nowMs());
  await flushMicrotasks();
}

describe('eviction outcomes in the running agent', () => {
  test('relieved: one outcome Event on the pod and the Node with the figures, the metrics, and /outcomes', async () => {
    harness = await start();
    const h = harness;
    await crossing(h, 300 * Mi);
    expect(h.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky']);
    expect(h.cluster.events.events.filter((e) => e.reason === 'EvictionOutcome')).toEqual([]);

    // Two seconds later the pod is gone and memory is back; the notifier's upward crossing wakes a pass.
    await h.clock.stepAsync(2000);
    h.cluster.view.removePod('default', 'leaky');
    await crossing(h, 3 * Gi);
    // Reported when the re-trigger window after relief is over (10 s), not at the next pass.
    await h.clock.stepAsync(9999);
    expect(h.cluster.events.events.filter((e) => e.reason === 'EvictionOutcome')).toEqual([]);
    await h.clock.stepAsync(1);
    await flushMicrotasks();

    const outcomeEvents = h.cluster.events.events.filter((e) => e.reason === 'EvictionOutcome');
    expect(outcomeEvents.map((e) => [e.object, e.type, e.pod?.metadata.name ?? null])).toEqual([
      ['pod', 'Normal', 'leaky'],
      ['node', 'Normal', null],
    ]);
    // Needed: 500Mi + 100Mi - 300Mi; freed: 3Gi - 300Mi.
    expect(outcomeEvents[0]?.message).toContain('Eviction outcome for memory.available (threshold 500.0 MiB, target 600.0 MiB): relieved; pod default/leaky (local-termination) freed 2772.0 MiB of the 300.0 MiB needed (ratio 9.24), 2.000 s from the first kill to relief');
    expect(outcomeEvents[0]?.message).toContain('pod gone +2000 ms, back +2000 ms; not re-triggered within 10 s; no kernel OOM kill');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_outcomes_total')).toContain('kube_eviction_agent_eviction_outcomes_total{signal="memory.available",result="relieved"} 1');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_reclaimed_ratio_bucket')).toContain('kube_eviction_agent_eviction_reclaimed_ratio_bucket{le="5",signal="memory.available"} 0');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_reclaimed_ratio_bucket')).toContain('kube_eviction_agent_eviction_reclaimed_ratio_bucket{le="10",signal="memory.available"} 1');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_time_to_relief_seconds_sum')).toContain('kube_eviction_agent_eviction_time_to_relief_seconds_sum{signal="memory.available",action="local-termination"} 2');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_retriggers_total')).not.toContain('} 1');

    const response = await fetch(`http://127.0.0.1:${h.agent.opsPort}/outcomes`);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as Record<string, unknown>[];
    expect(body).toHaveLength(1);
    expect(body[0]).toMatchObject({ signal: 'memory.available', result: 'relieved', reclaimedAmount: String(2772 * Mi), neededAmount: String(300 * Mi), timeToReliefMs: 2000, pods: [{ pod: 'default/leaky', uid: UID.leaky, action: 'local-termination' }] });
  });

  test('under-eviction and a re-trigger: a Warning, counted', async () => {
    harness = await start();
    const h = harness;
    await crossing(h, 300 * Mi);
    // Its processes are taken to be gone (the fake counts none) 3 s after the kill: its 1 s grace and 2 s of slack.
    await h.clock.stepAsync(3500);
    h.cluster.view.removePod('default', 'leaky');
    // Still short once the first pod is gone: the next pass evicts the second.
    await crossing(h, 400 * Mi);
    expect(h.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['leaky', 'batch']);
    await h.clock.stepAsync(3500);
    h.cluster.view.removePod('default', 'batch');
    await crossing(h, 2 * Gi);
    // Pressure again within the window, though no pod is left to evict.
    await h.clock.stepAsync(3000);
    await crossing(h, 450 * Mi);
    await h.clock.stepAsync(10_000);
    await h.clock.stepAsync(10_000);
    await flushMicrotasks();
    const outcome = h.cluster.events.events.find((e) => e.reason === 'EvictionOutcome' && e.object === 'node');
    expect(outcome?.type).toBe('Warning');
    expect(outcome?.message).toContain('under-eviction (a further pod had to go); 2 pods (default/leaky local-termination, default/batch local-termination) freed 1748.0 MiB of the 300.0 MiB needed');
    expect(outcome?.message).toContain('re-triggered +10000 ms');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_outcomes_total')).toContain('result="under-eviction"} 1');
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_retriggers_total')).toContain('kube_eviction_agent_eviction_retriggers_total{signal="memory.available"} 1');
  });

  test('a node-wide kernel OOM kill within the window is counted, a container limit kill is not', async () => {
    harness = await start();
    const h = harness;
    await crossing(h, 300 * Mi);
    await h.clock.stepAsync(500);
    h.oomKills.kill(h.clock.nowMs(), 'CONSTRAINT_NONE');
    h.oomKills.kill(h.clock.nowMs(), 'CONSTRAINT_MEMCG');
    await flushMicrotasks();
    await h.clock.stepAsync(1500);
    h.cluster.view.removePod('default', 'leaky');
    await crossing(h, 3 * Gi);
    await h.clock.stepAsync(10_000);
    await flushMicrotasks();
    const outcome = h.cluster.events.events.find((e) => e.reason === 'EvictionOutcome' && e.object === 'node');
    expect(outcome?.type).toBe('Warning');
    expect(outcome?.message).toMatch(/; 1 kernel OOM kill meanwhile$/);
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_outcome_kernel_oom_kills_total{signal="memory.available"}')).toBe('kube_eviction_agent_eviction_outcome_kernel_oom_kills_total{signal="memory.available"} 1');
  });

  test('a dry run evicts nothing and so reports no outcome', async () => {
    harness = await start({ dryRun: true });
    const h = harness;
    await crossing(h, 300 * Mi);
    await h.clock.stepAsync(30_000);
    await flushMicrotasks();
    expect(h.agent.outcomes.recent()).toEqual([]);
    // Each result starts at 0 for the signals the thresholds watch (memory.available, and the
    // allocatable threshold the kubelet derives from it), and stays there.
    const samples = (await metric(h.agent, 'kube_eviction_agent_eviction_outcomes_total{')).split('\n');
    expect(samples).toHaveLength(8);
    for (const sample of samples) expect(sample).toMatch(/^kube_eviction_agent_eviction_outcomes_total\{signal="(memory|allocatableMemory)\.available",result="(relieved|not-relieved|under-eviction|over-eviction)"\} 0$/);
    expect(await metric(h.agent, 'kube_eviction_agent_eviction_retriggers_total{')).toContain('kube_eviction_agent_eviction_retriggers_total{signal="memory.available"} 0');
  });
});
