// What a kernel OOM kill is attributed to, by table: the kind (node, allocatable, pod or container
// limit, other), the pod and container, what the agent was doing (dry run, evicting, saw the
// crossing, had not seen it, had no threshold, a limit kill it does not cover), and the Event
// messages in the kubelet's style; then the reporter: one Warning Event on the pod and one on the
// Node, the metric by kind, a log line, and a pod deleted just after its kill still found.

import { attributeOomKill, OOM_KILLED_BY_KERNEL } from '../../../src/daemon/oom-attribution.js';
import type { AgentActivitySnapshot, PassActivity } from '../../../src/daemon/agent-activity.js';
import { AgentActivity } from '../../../src/daemon/agent-activity.js';
import { createAgentMetrics } from '../../../src/daemon/metrics.js';
import { OomKillReporter } from '../../../src/daemon/oom-kill-reporter.js';
import type { KernelOomKill, OomCgroup, OomKillWatcher } from '../../../src/daemon/ports.js';
import type { Pod } from '../../../src/api/pod.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { FakeClusterView, FakeEventRecorder } from '../../fakes/fake-cluster.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { threshold } from '../../fixtures/memory-thresholds.js';
import { makeContainer, makePod } from '../../fixtures/pods.js';

const MI = 1n << 20n;
const AT_MS = 1_000_000;
const UID = '5f0c8a2e-4a61-4c1e-9d55-3f2b8e6b7c10';
const ID = 'c'.repeat(64);
const hardMemory = threshold('memory.available', '100Mi');
const softMemory = threshold('memory.available', '300Mi', 60_000);

function leakyPod(): Pod {
  const pod = makePod({ name: 'leaky', namespace: 'shop', uid: UID, containers: [makeContainer('app', { requests: { memory: '64Mi' } })] });
  pod.status = { ...pod.status, containerStatuses: [{ name: 'app', containerID: `containerd://${ID}` }] };
  return pod;
}

const container: OomCgroup = { path: `/kubepods/burstable/pod${UID}/${ID}`, level: 'container', podUid: UID, containerIds: [ID], memory: { limitBytes: null, usageBytes: 0n, peakBytes: 900n * MI } };
const nodeCgroup: OomCgroup = { path: '/', level: 'node', podUid: null, containerIds: [], memory: null };

function kill(overrides: Partial<KernelOomKill> = {}): KernelOomKill {
  return {
    atMs: AT_MS,
    detectedAtMs: AT_MS + 6,
    source: 'kernel-log',
    oomSignalledAtMs: null,
    constraint: 'CONSTRAINT_NONE',
    scope: 'node',
    victim: container,
    oomCgroup: null,
    oomCgroupInferred: false,
    pid: 4242,
    process: 'leak',
    rssBytes: 880n * MI,
    ...overrides,
  };
}

const pass = (overrides: Partial<PassActivity> = {}): PassActivity => ({
  atMs: AT_MS - 2000,
  trigger: 'housekeeping',
  available: new Map([['memory.available', 150n * MI]]),
  memoryMet: [],
  decided: null,
  ...overrides,
});

function activity(overrides: Partial<AgentActivitySnapshot> = {}): AgentActivitySnapshot {
  return { dryRun: false, notifierMode: 'memcg-v1', memoryThresholds: [hardMemory], armed: null, lastNotification: null, lastPass: pass(), memoryMetSinceMs: null, lastEviction: null, ...overrides };
}

describe('attributeOomKill', () => {
  test('a node-wide kill the agent had not seen coming: how far behind it was', () => {
    const a = attributeOomKill(kill(), leakyPod(), activity());
    expect(a).toMatchObject({ kind: 'node', nodeLevel: true, container: 'app', agentState: 'not-crossed', lastPassBeforeMs: 2000, crossingSeenBeforeMs: null });
    expect(a.podMessage).toBe(
      'The kernel OOM killer killed process leak (pid 4242) of container app: the node was out of memory. ' +
        'Container app was using 900Mi at its peak, request is 64Mi, limit is none. ' +
        'The agent had memory.available < 100Mi (hard) armed (memcg-v1) and had not seen it crossed: its last pass was 2.0s before the kill, which saw 150Mi available. ',
    );
    expect(a.nodeMessage).toMatch(/^The kernel OOM killer killed process leak \(pid 4242\) of pod shop\/leaky, container app: the node was out of memory\. /);
    expect(a.annotations).toEqual({ oom_kind: 'node', agent_state: 'not-crossed', victim_process: 'leak', victim_pid: '4242', victim_cgroup: container.path, oom_constraint: 'CONSTRAINT_NONE' });
  });

  test('a pass that ran between the kill and its report: said to come after the kill, never a negative time before it', () => {
    const a = attributeOomKill(kill(), leakyPod(), activity({ lastPass: pass({ atMs: AT_MS + 10 }) }));
    expect(a.lastPassBeforeMs).toBe(-10);
    expect(a.podMessage).toContain('had not seen it crossed: its last pass came 10ms after the kill, which saw 150Mi available. ');
  });

  test('the node cgroup at its limit is a node kill; a soft threshold seen crossed but still in its grace period', () => {
    const met = { threshold: softMemory, quantity: '300Mi', available: '200Mi' };
    const a = attributeOomKill(
      kill({ constraint: 'CONSTRAINT_MEMCG', scope: 'memcg', oomCgroup: { ...nodeCgroup, path: '/node-a', memory: { limitBytes: 2048n * MI, usageBytes: null, peakBytes: null } } }),
      leakyPod(),
      activity({ memoryThresholds: [softMemory], lastPass: pass({ memoryMet: [met] }), memoryMetSinceMs: AT_MS - 45_000 }),
    );
    expect(a).toMatchObject({ kind: 'node', agentState: 'saw-crossing', crossingSeenBeforeMs: 45_000 });
    expect(a.podMessage).toContain('the node was out of memory (/node-a at its limit 2048Mi). ');
    expect(a.podMessage).toContain('The agent had seen memory.available < 300Mi (soft) crossed 45s before the kill and had not evicted yet (soft: its grace period had not elapsed). ');
  });

  test.each([
    ['kubepods at its limit: allocatable', { level: 'pods' as const, path: '/kubepods' }, 'allocatable', 'not-crossed'],
    ['a QoS tier at its limit: allocatable', { level: 'qos' as const, path: '/kubepods/burstable' }, 'allocatable', 'not-crossed'],
    ['the pod at its limit', { level: 'pod' as const, path: `/kubepods/burstable/pod${UID}` }, 'pod-limit', 'not-applicable'],
    ['the container at its limit', { level: 'container' as const, path: container.path }, 'container-limit', 'not-applicable'],
    ['a system cgroup at its limit', { level: 'outside' as const, path: '/system.slice' }, 'other', 'not-applicable'],
  ])('%s', (_name, at, kind, agentState) => {
    const a = attributeOomKill(kill({ constraint: 'CONSTRAINT_MEMCG', scope: 'memcg', oomCgroup: { ...nodeCgroup, ...at } }), leakyPod(), activity());
    expect(a).toMatchObject({ kind, agentState, nodeLevel: kind === 'allocatable' });
  });

  test('in dry run, evicting, or with no memory threshold', () => {
    const met = { threshold: hardMemory, quantity: '100Mi', available: '80Mi' };
    const dry = attributeOomKill(kill(), leakyPod(), activity({ dryRun: true, lastPass: pass({ memoryMet: [met] }), memoryMetSinceMs: AT_MS - 1500 }));
    expect(dry.agentState).toBe('dry-run');
    expect(dry.podMessage).toContain('The agent had seen memory.available < 100Mi (hard) crossed 1.5s before the kill and, in dry run, did not act. ');
    const evicting = attributeOomKill(kill(), leakyPod(), activity({ memoryMetSinceMs: AT_MS - 900, lastEviction: { pod: 'shop/leaky', uid: UID, atMs: AT_MS - 300, action: 'deletion', result: 'accepted' } }));
    expect(evicting.agentState).toBe('evicting');
    expect(evicting.podMessage).toContain('The agent was evicting shop/leaky (deletion, 300ms before the kill). ');
    expect(attributeOomKill(kill(), leakyPod(), activity({ memoryThresholds: [] })).agentState).toBe('not-armed');
  });

  test('a victim outside the pods: an Event on the Node only', () => {
    const a = attributeOomKill(kill({ victim: { ...nodeCgroup, path: '/system.slice/containerd.service', level: 'outside' } }), null, activity());
    expect(a.podMessage).toBeNull();
    expect(a.nodeMessage).toMatch(/^The kernel OOM killer killed process leak \(pid 4242\) of cgroup \/system\.slice\/containerd\.service: the node was out of memory\. /);
  });
});

describe('OomKillReporter', () => {
  test('a Warning Event on the pod and on the Node, the metric by kind and state, a log line; a pod deleted since is still found', async () => {
    const clock = new FakeClock();
    const pod = leakyPod();
    const cluster = new FakeClusterView({ pods: [pod] });
    const events = new FakeEventRecorder();
    const metrics = createAgentMetrics(false);
    const logger = new RecordingLogger();
    let onKill: ((kill: KernelOomKill) => void) | null = null;
    const watcher: OomKillWatcher = { sources: () => ['kernel-log'], start: (fn) => void (onKill = fn), stop: async () => undefined };
    const seen: string[] = [];
    const act = new AgentActivity({ dryRun: () => false, notifierMode: 'memcg-v1', thresholds: () => [hardMemory], armed: () => null });
    const reporter = new OomKillReporter({ watcher, cluster, events, metrics, activity: act, clock, logger, onKill: (_k, a) => seen.push(a.summary) });
    reporter.start();
    // The pod is gone from the watch by the time the kill is read.
    cluster.removePod('shop', 'leaky');
    onKill!(kill({ atMs: clock.nowMs(), detectedAtMs: clock.nowMs() + 6 }));
    await flushMicrotasks();
    expect(events.events.map((e) => [e.object, e.type, e.reason])).toEqual([
      ['pod', 'Warning', OOM_KILLED_BY_KERNEL],
      ['node', 'Warning', OOM_KILLED_BY_KERNEL],
    ]);
    expect(events.events[0]?.pod?.metadata.name).toBe('leaky');
    expect(events.events[0]?.message).toContain('killed process leak (pid 4242) of container app: the node was out of memory');
    expect((await metrics.registry.getSingleMetricAsString('kube_eviction_agent_kernel_oom_kills_total')).split('\n')).toContain('kube_eviction_agent_kernel_oom_kills_total{kind="node",agent_state="not-crossed"} 1');
    expect(logger.at('warn').map((l) => [l.msg, l.fields['pod'], l.fields['kind']])).toEqual([['kernel OOM kill', 'shop/leaky', 'node']]);
    expect(seen).toHaveLength(1);
    await reporter.stop();
  });
});
