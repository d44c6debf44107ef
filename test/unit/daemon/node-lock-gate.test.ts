// The node lock gate on the real kernel's flock (a temporary directory; root not needed) and fake
// clocks: one acting agent among several, the standby's takeover the moment the lock is released
// (a stop, or a holder's descriptor closed as the kernel closes it at kill -9), what carries over
// (the engine state, the evictions in flight, waited for), a hung holder's lock broken and the old
// holder stopping at once when it wakes, a second installation reported, and a lock that cannot
// be used leaving the agent acting, said loudly.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { createNodeLockFile } from '../../../src/act/node-lock-file.js';
import type { Pod } from '../../../src/api/pod.js';
import type { CarriedEngineState } from '../../../src/eviction/carried-state.js';
import { NodeLockGate, type AgentInstance, type InFlightEviction, type NodeLockSettings } from '../../../src/daemon/node-lock-gate.js';
import type { AgentEvent, EventRecorder, LocalTerminator, NodeLockFile, PodActions } from '../../../src/daemon/ports.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const SETTINGS: NodeLockSettings = { pollIntervalMs: 20, heartbeatIntervalMs: 1000, hungHolderMs: 10_000, podCleanupTimeoutMs: 30_000 };
const UID = '0d5f5c6e-1b2a-4c3d-9e8f-7a6b5c4d3e2f';
const VICTIM: Pod = { metadata: { name: 'leak', namespace: 'default', uid: UID }, spec: { containers: [{ name: 'main' }] }, status: { phase: 'Running' } };
const ENGINE: CarriedEngineState = { thresholdsFirstObservedAt: [{ key: 'memory.available/30000/true/q1', observedAtMs: 5 }], nodeConditionsLastObservedAt: [{ condition: 'MemoryPressure', observedAtMs: 7 }] };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-lock-gate-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

interface Agent {
  readonly gate: NodeLockGate;
  readonly lock: NodeLockFile;
  readonly events: AgentEvent[];
  readonly takeovers: ({ engine: CarriedEngineState | null; inFlight: readonly InFlightEviction[] } | null)[];
  readonly logger: RecordingLogger;
  readonly registry: Registry;
  gone: Set<string>;
}

function instance(pid: number, pod: string | null, release: string | null): AgentInstance {
  return { pid, pod, release, image: `kea:${release ?? 'dev'}`, startedAtMs: 1 };
}

function agent(clock: FakeClock, self: AgentInstance, directory = dir, settings: NodeLockSettings = SETTINGS): Agent {
  const events: AgentEvent[] = [];
  const recorder: EventRecorder = { podEvent: async () => {}, nodeEvent: async (e) => void events.push(e), objectEvent: async () => {} };
  const logger = new RecordingLogger();
  const lock = createNodeLockFile(directory);
  const registry = new Registry();
  const takeovers: Agent['takeovers'] = [];
  const a: Agent = {
    lock,
    events,
    takeovers,
    logger,
    registry,
    gone: new Set(),
    gate: null as unknown as NodeLockGate,
  };
  (a as { gate: NodeLockGate }).gate = new NodeLockGate(settings, {
    lock,
    self,
    clock,
    logger,
    events: recorder,
    registry,
    engineState: () => ENGINE,
    podGone: (uid) => a.gone.has(uid),
    onTakeover: (previous) => takeovers.push(previous === null ? null : { engine: previous.engine, inFlight: previous.inFlight }),
  });
  return a;
}

async function metric(a: Agent, name: string, label = ''): Promise<number | undefined> {
  const values = (await a.registry.getSingleMetric(name)?.get())?.values ?? [];
  return values.find((v) => label === '' || Object.values(v.labels).includes(label))?.value;
}

const actions: PodActions = {
  getPod: async () => null,
  evictPod: async () => ({ result: 'accepted', status: 201 }),
  deletePod: async () => ({ result: 'accepted', status: 200 }),
  addDisruptionTarget: async () => ({ result: 'accepted', status: 200 }),
};
const terminator: LocalTerminator = { terminate: async () => ({ signalled: 1 }) };

test('one agent acts, the other stands by and says who holds the lock; released, the standby acts within one poll interval', async () => {
  const clock = new FakeClock();
  const a = agent(clock, instance(101, 'kube-system/kea-old', 'kea'));
  const b = agent(clock, instance(202, 'kube-system/kea-new', 'kea'));
  a.gate.start();
  b.gate.start();
  expect([a.gate.state, b.gate.state]).toEqual(['active', 'standby']);
  expect(a.gate.refusal()).toBeNull();
  expect(b.gate.refusal()).toBe(`standby: the node lock in ${dir} is held by pod kube-system/kea-old (release kea, image kea:kea, pid 101)`);
  // One release's old and new pod: said, as an upgrade.
  expect(b.events).toEqual([expect.objectContaining({ type: 'Normal', reason: 'AgentStandby' })]);
  expect(await metric(b, 'kube_eviction_agent_node_lock_state', 'standby')).toBe(1);
  expect(await metric(b, 'kube_eviction_agent_node_agents')).toBe(2);
  await clock.stepAsync(1000);
  // The holder sees the standby's presence file.
  expect(await metric(a, 'kube_eviction_agent_node_agents')).toBe(2);

  // The holder goes as kill -9 takes it: its descriptor closed, nothing else written.
  a.lock.release();
  expect(a.gate.refusal()).not.toBeNull();
  await clock.stepAsync(SETTINGS.pollIntervalMs);
  expect(b.gate.state).toBe('active');
  expect(b.gate.refusal()).toBeNull();
  // What the holder published a heartbeat ago is carried over.
  expect(b.takeovers).toEqual([{ engine: ENGINE, inFlight: [] }]);
  expect(await metric(b, 'kube_eviction_agent_node_lock_takeovers_total', 'free')).toBe(1);
  b.gate.stop();
  a.gate.stop();
});

test('a stopped holder publishes a last state and releases; a state too old to describe the node is not carried', async () => {
  const clock = new FakeClock();
  const a = agent(clock, instance(101, 'kube-system/kea-a', 'kea'));
  a.gate.start();
  a.gate.stop();
  const b = agent(clock, instance(202, 'kube-system/kea-b', 'kea'));
  b.gate.start();
  expect(b.takeovers).toEqual([{ engine: ENGINE, inFlight: [] }]);
  b.gate.stop();
  // An hour later (a node rebooted, an agent reinstalled): nothing carried.
  await clock.stepAsync(3_600_000);
  const c = agent(clock, instance(303, 'kube-system/kea-c', 'kea'));
  c.gate.start();
  expect(c.takeovers).toEqual([null]);
  c.gate.stop();
});

test('an eviction in flight when the holder dies is waited for by the successor until its pod is gone', async () => {
  const clock = new FakeClock();
  const a = agent(clock, instance(101, 'kube-system/kea-a', 'kea'));
  const b = agent(clock, instance(202, 'kube-system/kea-b', 'kea'));
  a.gate.start();
  b.gate.start();
  const tracked = a.gate.track({ actions, terminator });
  await tracked.terminator.terminate(VICTIM, 2000);
  // Published at once, not at the next heartbeat.
  a.lock.release();
  await clock.stepAsync(SETTINGS.pollIntervalMs);
  expect(b.gate.state).toBe('active');
  expect(b.takeovers[0]?.inFlight).toEqual([{ uid: UID, pod: 'default/leak', action: 'local-termination', atMs: clock.nowMs() - SETTINGS.pollIntervalMs }]);
  // Node conditions and the like go ahead; an eviction waits for the victim.
  expect(b.gate.refusal()).toBeNull();
  expect(b.gate.evictionRefusal()).toBe('waiting for default/leak, evicted by the previous lock holder, to terminate');
  b.gone.add(UID);
  expect(b.gate.evictionRefusal()).toBeNull();
  b.gate.stop();
});

test('an inherited eviction whose pod never goes is waited for only until the escalation timeout (at most the pod cleanup timeout)', async () => {
  const clock = new FakeClock();
  const a = agent(clock, instance(101, 'kube-system/kea-a', 'kea'));
  a.gate.start();
  await a.gate.track({ actions, terminator }).actions.evictPod(VICTIM, 2);
  a.lock.release();
  const b = agent(clock, instance(202, 'kube-system/kea-b', 'kea'));
  b.gate.start();
  expect(b.gate.evictionRefusal()).not.toBeNull();
  await clock.stepAsync(SETTINGS.podCleanupTimeoutMs);
  expect(b.gate.evictionRefusal()).toBeNull();
  b.gate.stop();
  // With an escalation timeout of 5 s, a successor holds back no longer than the holder would have.
  await a.gate.track({ actions, terminator }).actions.evictPod({ ...VICTIM, metadata: { ...VICTIM.metadata } }, 2);
  const c = agent(clock, instance(303, 'kube-system/kea-c', 'kea'), dir, { ...SETTINGS, inheritedHoldMs: 5000 });
  a.gate.start();
  a.lock.release();
  c.gate.start();
  expect(c.gate.evictionRefusal()).not.toBeNull();
  await clock.stepAsync(5000);
  expect(c.gate.evictionRefusal()).toBeNull();
  c.gate.stop();
  a.gate.stop();
});

test('a hung holder (its clock frozen) has its lock broken after the hung-holder timeout; woken, it stops acting at once', async () => {
  const frozen = new FakeClock();
  const clock = new FakeClock();
  const hung = agent(frozen, instance(101, null, null));
  hung.gate.start();
  const b = agent(clock, instance(202, 'kube-system/kea-b', 'kea'));
  b.gate.start();
  // A process run by hand holds the lock: a second installation, a Warning.
  expect(b.events).toEqual([expect.objectContaining({ type: 'Warning', reason: 'DuplicateAgent' })]);
  expect(b.events[0]?.message).toContain('process 101 (not a pod; release unknown, image kea:dev, pid 101)');
  expect(b.events[0]?.message).toContain('pod kube-system/kea-b (release kea, image kea:kea, pid 202)');
  await clock.stepAsync(SETTINGS.hungHolderMs);
  expect(b.gate.state).toBe('standby');
  await clock.stepAsync(SETTINGS.heartbeatIntervalMs);
  expect(b.gate.state).toBe('active');
  expect(b.events.map((e) => e.reason)).toContain('NodeLockBroken');
  expect(await metric(b, 'kube_eviction_agent_node_lock_takeovers_total', 'broken')).toBe(1);
  // The hung holder's next action is refused: the path names another file now.
  expect(hung.gate.refusal()).toMatch(/^standby: /);
  expect(hung.gate.state).toBe('standby');
  expect(hung.logger.lines.map((l) => l.msg)).toContain('node lock lost: the lock file was moved aside (this agent was taken to be hung); acting stops now');
  expect(await metric(hung, 'kube_eviction_agent_node_lock_losses_total')).toBe(1);
  hung.gate.stop();
  b.gate.stop();
});

test('a holder that beats is never broken, however long the standby waits', async () => {
  const clock = new FakeClock();
  const a = agent(clock, instance(101, 'kube-system/kea-a', 'kea-a'));
  const b = agent(clock, instance(202, 'kube-system/kea-b', 'kea-b'));
  a.gate.start();
  b.gate.start();
  await clock.stepAsync(5 * SETTINGS.hungHolderMs);
  expect([a.gate.state, b.gate.state]).toEqual(['active', 'standby']);
  // Two releases: a Warning, once.
  expect(b.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'DuplicateAgent']]);
  a.gate.stop();
  b.gate.stop();
});

test('a lock directory that cannot be used: the agent acts without the lock and says so', async () => {
  const clock = new FakeClock();
  writeFileSync(join(dir, 'file'), '');
  const a = agent(clock, instance(101, 'kube-system/kea-a', 'kea'), join(dir, 'file', 'lock'));
  a.gate.start();
  expect(a.gate.state).toBe('unlocked');
  expect(a.gate.refusal()).toBeNull();
  expect(a.gate.describe()).toMatch(/^acting without the node lock \(the node lock in .* cannot be used: .*ENOTDIR/);
  expect(a.logger.lines.filter((l) => l.fields.code === 'EVA_ERR_NODE_LOCK')).toHaveLength(1);
  expect(await metric(a, 'kube_eviction_agent_node_lock_state', 'unlocked')).toBe(1);
  await clock.stepAsync(5000);
  expect(a.logger.lines.filter((l) => l.fields.code === 'EVA_ERR_NODE_LOCK')).toHaveLength(1);
  a.gate.stop();
});
