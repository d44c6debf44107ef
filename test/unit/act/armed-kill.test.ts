// The kill thread's decisions (src/act/armed-kill.ts), run here on the test's own thread: a
// simulated kernel (eventfds, epoll, the cgroups' memory files) and a simulated node (cgroup.procs,
// /proc, pidfds that record every signal). A wake-up fires only the armed plan, only for a working
// set past the threshold, only while no rival pod's working set has reached the point at which it
// would rank before the victim (less what the victim shrank), and the node lock file is the one locked, only once the shared word is swapped from armed to fired;
// it signals the victim's containers and nothing else, and reports after. Plans replace one another
// without a moment unarmed, a plan taken back never arms, and a stop closes every descriptor.

import { nodeHostFs } from '../../../src/host/host-fs.js';
import { ArmedKill } from '../../../src/act/armed-kill.js';
import { controlWord, generationOf, KillState, SHARED_WORDS, stateOf, WAKE_VERDICTS, type FromThread, type ThreadPlan, type ToThread } from '../../../src/act/kill-protocol.js';
import type { EventFd } from '../../../native/native-events.js';
import { FakeNative } from '../../fakes/fake-native.js';
import { FakeProcessTable } from '../../fakes/fake-process-table.js';

const MiB = 1024n * 1024n;
const UID = '0d5f5c6e-1b2a-4c3d-9e8f-7a6b5c4d3e2f';
const POD_DIR = `kubepods/burstable/pod${UID}`;
const RIVAL_DIR = 'kubepods/burstable/pod1111';
const id = (digit: string): string => digit.repeat(64);
const DESCRIPTION = 'hard memory eviction threshold';
const LOCK_PATH = '/var/run/kube-eviction-agent/node.lock';

interface Scene {
  readonly node: FakeProcessTable;
  readonly native: FakeNative;
  readonly control: Int32Array;
  readonly posted: FromThread[];
  readonly inbox: ToThread[];
  readonly kill: ArmedKill;
  readonly wake: EventFd;
  /** The lock file's `dev:ino` now, by path. */
  readonly files: Map<string, string>;
  readonly nodeUsage: string;
  readonly nodeStat: string;
}

let scene: Scene;
let clockNs = 1_000n;

beforeEach(() => {
  const node = new FakeProcessTable();
  node.start(10, `${POD_DIR}/${id('0')}`, 100); // the sandbox (pause)
  node.start(11, `${POD_DIR}/${id('a')}`, 200);
  node.start(12, `${POD_DIR}/${id('a')}`, 210);
  node.start(20, `${RIVAL_DIR}/${id('b')}`, 300); // a bystander pod, the victim's rival
  const native = new FakeNative();
  const nodeUsage = `${node.memoryRoot}/memory.usage_in_bytes`;
  const nodeStat = `${node.memoryRoot}/memory.stat`;
  native.setFile(nodeUsage, '0\n');
  native.setFile(nodeStat, 'total_inactive_file 0\n');
  native.setFile(`${node.memoryRoot}/${POD_DIR}/memory.usage_in_bytes`, `${100n * MiB}\n`);
  native.setFile(`${node.memoryRoot}/${POD_DIR}/memory.stat`, 'total_inactive_file 0\n');
  native.setFile(`${node.memoryRoot}/${RIVAL_DIR}/memory.usage_in_bytes`, `${300n * MiB}\n`);
  native.setFile(`${node.memoryRoot}/${RIVAL_DIR}/memory.stat`, 'total_inactive_file 0\n');
  const control = new Int32Array(new SharedArrayBuffer(SHARED_WORDS * 4));
  const posted: FromThread[] = [];
  const inbox: ToThread[] = [];
  const wake = native.createEventFd();
  const files = new Map([[LOCK_PATH, '8:42']]);
  const kill = new ArmedKill({
    native,
    fs: nodeHostFs,
    handles: node.processHandles(),
    control,
    wake,
    post: (message) => posted.push(message),
    receive: () => inbox.shift(),
    nowNs: () => (clockNs += 1_000n),
    fileId: (path) => files.get(path) ?? null,
  });
  scene = { node, native, control, posted, inbox, kill, wake, files, nodeUsage, nodeStat };
});

afterEach(() => scene.node.remove());

/** The node at 1 GiB of usage (capacity aside): the threshold met past 800 MiB of working set. */
function plan(changes: Partial<ThreadPlan> = {}): ThreadPlan {
  const { node, nodeUsage, nodeStat } = scene;
  return {
    victim: { key: 'default/web', uid: UID },
    podDir: `${node.memoryRoot}/${POD_DIR}`,
    containers: [`${node.memoryRoot}/${POD_DIR}/${id('a')}`],
    signal: 'SIGTERM',
    thresholds: [{ description: DESCRIPTION, usagePath: nodeUsage, statPath: nodeStat, wakeUsageBytes: 800n * MiB, workingSetLimitBytes: 800n * MiB }],
    rivals: [],
    victimWorkingSetBytes: 100n * MiB,
    victimShrinkAllowanceBytes: null,
    lock: null,
    place: { procRoot: node.procRoot, memoryRoot: node.memoryRoot, version: 'v1', selfPid: node.selfPid, namespaceRoot: '/' },
    ...changes,
  };
}

/** The bystander pod as a rival that would rank before the victim at `pointBytes` of working set. */
function rival(pointBytes: bigint): ThreadPlan['rivals'] {
  const dir = `${scene.node.memoryRoot}/${RIVAL_DIR}`;
  return [{ key: 'default/batch', usagePath: `${dir}/memory.usage_in_bytes`, statPath: `${dir}/memory.stat`, overtakingWorkingSetBytes: pointBytes }];
}

/** Sends `messages` as the main thread does (then a write of the wake-up eventfd), and runs one turn. */
function send(...messages: ToThread[]): void {
  scene.inbox.push(...messages);
  scene.native.signalEventFd(scene.wake, 1n);
  expect(scene.kill.step(0)).toBe(true);
}

/** As the main thread arms: the word to pending (unless a plan is armed), the plan sent. */
function arm(generation: number, threadPlan: ThreadPlan = plan()): void {
  if (stateOf(Atomics.load(scene.control, 0)) !== KillState.armed) Atomics.store(scene.control, 0, controlWord(generation, KillState.pending));
  send({ kind: 'plan', generation, plan: threadPlan });
}

/** A registered wake point handed over; returns its eventfd (the kernel's side). */
function watch(passed = false): EventFd {
  const eventFd = scene.native.createEventFd();
  send({ kind: 'watch', description: DESCRIPTION, role: 'wake', eventFd, passed });
  return eventFd;
}

function memory(usageBytes: bigint, inactiveBytes = 0n, victimBytes = 100n * MiB, rivalMemory: { usageBytes: bigint; inactiveBytes: bigint } | 'gone' = { usageBytes: 300n * MiB, inactiveBytes: 0n }): void {
  const { native, node, nodeUsage, nodeStat } = scene;
  native.setFile(nodeUsage, `${usageBytes}\n`);
  native.setFile(nodeStat, `cache 1\ntotal_inactive_file ${inactiveBytes}\n`);
  native.setFile(`${node.memoryRoot}/${POD_DIR}/memory.usage_in_bytes`, `${victimBytes}\n`);
  const rivalDir = `${node.memoryRoot}/${RIVAL_DIR}`;
  if (rivalMemory === 'gone') {
    native.removeFile(`${rivalDir}/memory.usage_in_bytes`);
    native.removeFile(`${rivalDir}/memory.stat`);
    return;
  }
  native.setFile(`${rivalDir}/memory.usage_in_bytes`, `${rivalMemory.usageBytes}\n`);
  native.setFile(`${rivalDir}/memory.stat`, `total_inactive_file ${rivalMemory.inactiveBytes}\n`);
}

/** The kernel signals the point; one turn of the thread. */
function kernelSignals(eventFd: EventFd): void {
  scene.native.signalEventFd(eventFd, 1n);
  expect(scene.kill.step(0)).toBe(true);
}

const kinds = (): string[] => scene.posted.map((m) => m.kind);
const state = (): number => stateOf(Atomics.load(scene.control, 0));

describe('the kill thread (simulated kernel and node)', () => {
  const cases: readonly {
    readonly name: string;
    readonly plan?: Partial<ThreadPlan>;
    readonly usageBytes: bigint;
    readonly inactiveBytes?: bigint;
    readonly victimBytes?: bigint;
    /** The bystander pod as a rival, ranking before the victim from this working set on. */
    readonly rivalPoint?: bigint;
    readonly rivalMemory?: { usageBytes: bigint; inactiveBytes: bigint } | 'gone';
    readonly lockNow?: string;
    readonly fires: boolean;
    readonly declined?: RegExp;
  }[] = [
    { name: 'the working set past the limit: fires', usageBytes: 820n * MiB, fires: true },
    { name: 'usage below the wake point (a crossing downwards): nothing', usageBytes: 790n * MiB, fires: false },
    { name: 'usage past the wake point, the working set not past the limit (the page cache grew): nothing', usageBytes: 820n * MiB, inactiveBytes: 30n * MiB, fires: false },
    { name: 'exactly at the limit (equality never meets a threshold): nothing', usageBytes: 800n * MiB, fires: false },
    { name: 'every rival below its point: fires', rivalPoint: 400n * MiB, usageBytes: 820n * MiB, fires: true },
    // Memory moved between pods since the plan was made: another pod freed what the rival took, so
    // the node's working set says nothing of it; the rival ranks first on this moment's figures.
    {
      name: 'a rival past its point, the node\'s working set barely moved (another pod freed what it took): declined',
      rivalPoint: 400n * MiB,
      usageBytes: 801n * MiB,
      rivalMemory: { usageBytes: 450n * MiB, inactiveBytes: 0n },
      fires: false,
      declined: /default\/batch may rank before default\/web now: its working set 471859200 bytes is past the 419430400/,
    },
    { name: 'a rival\'s usage past its point, its working set not (page cache): fires', rivalPoint: 400n * MiB, usageBytes: 820n * MiB, rivalMemory: { usageBytes: 450n * MiB, inactiveBytes: 100n * MiB }, fires: true },
    { name: 'the victim shrank: a rival\'s point comes down by as much: declined', rivalPoint: 400n * MiB, usageBytes: 820n * MiB, victimBytes: 60n * MiB, rivalMemory: { usageBytes: 370n * MiB, inactiveBytes: 0n }, fires: false, declined: /past the 377487360 at which it would/ },
    { name: 'a rival\'s memory cannot be read (its cgroup gone): declined', rivalPoint: 400n * MiB, usageBytes: 820n * MiB, rivalMemory: 'gone', fires: false, declined: /the working set of default\/batch cannot be read/ },
    { name: 'the victim shrank back to its request: declined', plan: { victimShrinkAllowanceBytes: 10n * MiB }, rivalPoint: 400n * MiB, usageBytes: 820n * MiB, victimBytes: 90n * MiB, fires: false, declined: /fell back to its memory request/ },
    { name: 'the node lock file is the one locked: fires', plan: { lock: { path: LOCK_PATH, fileId: '8:42' } }, usageBytes: 820n * MiB, fires: true },
    { name: 'the node lock file was moved aside: declined', plan: { lock: { path: LOCK_PATH, fileId: '8:42' } }, lockNow: '8:43', usageBytes: 820n * MiB, fires: false, declined: /node lock file .* is not the one this agent locked/ },
  ];
  test.each(cases)('$name', ({ plan: changes, rivalPoint, usageBytes, inactiveBytes, victimBytes, rivalMemory, lockNow, fires, declined }) => {
    arm(1, plan({ ...changes, ...(rivalPoint === undefined ? {} : { rivals: rival(rivalPoint) }) }));
    expect(state()).toBe(KillState.armed);
    const point = watch();
    memory(usageBytes, inactiveBytes, victimBytes, rivalMemory);
    if (lockNow !== undefined) scene.files.set(LOCK_PATH, lockNow);
    kernelSignals(point);
    const { node } = scene;
    if (fires) {
      expect(kinds()).toEqual(['fired', 'crossed']);
      const fired = scene.posted[0];
      expect(fired?.kind === 'fired' && { usage: fired.usageBytes, signalled: fired.signalled, generation: fired.generation }).toEqual({ usage: usageBytes, signalled: 2, generation: 1 });
      expect(node.signals).toEqual([
        { pid: 11, signal: 'SIGTERM' },
        { pid: 12, signal: 'SIGTERM' },
      ]);
      expect(state()).toBe(KillState.reported);
    } else {
      expect(kinds()).toEqual([...(declined === undefined ? [] : ['declined']), 'crossed']);
      expect(scene.posted.at(-1)?.kind === 'crossed' && scene.posted.at(-1)).toMatchObject({ outcome: declined === undefined ? 'not met' : 'declined' });
      if (declined !== undefined) expect(scene.posted[0]?.kind === 'declined' && scene.posted[0].reason).toMatch(declined);
      expect(node.signals).toEqual([]);
      expect(state()).toBe(KillState.armed);
    }
    expect([10, 20].map((pid) => node.alive(pid))).toEqual([true, true]);
    // Judged, whatever came of it: a main thread standing aside for it goes on.
    expect(Atomics.load(scene.control, WAKE_VERDICTS)).toBe(1);
  });

  test('a plan the main thread took back does not fire, and a plan sent after it was taken back is not armed', () => {
    arm(1);
    const point = watch();
    // The main thread's disarm: armed to idle, by compare-and-swap.
    expect(Atomics.compareExchange(scene.control, 0, controlWord(1, KillState.armed), controlWord(1, KillState.idle))).toBe(controlWord(1, KillState.armed));
    memory(820n * MiB);
    kernelSignals(point);
    expect(kinds()).toEqual(['crossed']);
    expect(scene.node.signals).toEqual([]);
    // A plan on its way, then taken back before the thread had it ready: it stays unarmed.
    Atomics.store(scene.control, 0, controlWord(2, KillState.pending));
    Atomics.store(scene.control, 0, controlWord(2, KillState.idle));
    send({ kind: 'plan', generation: 2, plan: plan() });
    expect(state()).toBe(KillState.idle);
  });

  test('a new plan replaces the armed one without a moment unarmed; the replaced one no longer fires', () => {
    arm(1);
    const point = watch();
    expect(generationOf(Atomics.load(scene.control, 0))).toBe(1);
    // Armed all along: the main thread leaves the word alone while the thread readies plan 2.
    arm(2, plan({ containers: [`${scene.node.memoryRoot}/kubepods/burstable/pod1111/${id('b')}`], podDir: `${scene.node.memoryRoot}/${POD_DIR}` }));
    expect([state(), generationOf(Atomics.load(scene.control, 0))]).toEqual([KillState.armed, 2]);
    memory(820n * MiB);
    kernelSignals(point);
    const fired = scene.posted.find((m) => m.kind === 'fired');
    expect(fired?.kind === 'fired' && fired.generation).toBe(2);
    expect(scene.node.signals).toEqual([{ pid: 20, signal: 'SIGTERM' }]);
  });

  test('a point usage had already passed when registered is confirmed at once; a fired plan fires once', () => {
    arm(1);
    memory(820n * MiB);
    watch(true);
    expect(scene.posted.map((m) => (m.kind === 'crossed' ? m.outcome : m.kind))).toEqual(['fired', 'fired']);
    const again = watch(true);
    kernelSignals(again);
    expect(scene.posted.map((m) => (m.kind === 'crossed' ? m.outcome : m.kind))).toEqual(['fired', 'fired', 'not armed', 'not armed']);
    expect(scene.node.signals.length).toBe(2);
  });

  test('SIGKILL with no grace period; a replaced wake point is closed; a stop closes every descriptor it owns', () => {
    const baseline = scene.native.openFdCount;
    arm(1, plan({ signal: 'SIGKILL' }));
    const first = watch();
    const second = watch();
    // The first eventfd went when the second came; the four files the plan reads stay open.
    expect(scene.native.openFdCount).toBe(baseline + 4 + 1);
    expect(() => scene.native.signalEventFd(first, 1n)).toThrow();
    memory(820n * MiB);
    kernelSignals(second);
    expect(scene.node.signals).toEqual([
      { pid: 11, signal: 'SIGKILL' },
      { pid: 12, signal: 'SIGKILL' },
    ]);
    scene.inbox.push({ kind: 'stop' });
    scene.native.signalEventFd(scene.wake, 1n);
    expect(scene.kill.step(0)).toBe(false);
    // Only the main thread's wake-up eventfd is left, its own to close.
    expect(scene.native.openFdCount).toBe(baseline - 1);
  });
});
