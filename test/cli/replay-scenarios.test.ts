// The kubelet's decisions, driven end to end through the `replay` command: each scenario is a
// recording and a config, and the assertions are on the command's output lines. The tables run
// the command in process; the shipped example and a bad line go through the built command line.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { emptyDirVolume, makeContainer, makePod, makePodStats, mirrorAnnotations } from '../fixtures/pods.js';
import { replay, replayThroughCli, REPO_ROOT, runCli } from './run-cli.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

interface OutLine {
  time: string;
  nodeConditions: string[];
  thresholdsMet: { signal: string; hard: boolean; quantity: string; available: string }[];
  evictions: { pod: string; uid: string; signal: string; gracePeriodSeconds: number; message: string; annotations: Record<string, string> }[];
  taintEvictions: { pod: string; action: string; at: string; fireAt?: string }[];
}

async function run(configYaml: string, steps: unknown[]): Promise<OutLine[]> {
  const result = await replay(configYaml, steps);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  expect(result.lines).toHaveLength(steps.length);
  return result.lines as unknown as OutLine[];
}

const evicted = (line: OutLine | undefined): string[] => (line?.evictions ?? []).map((e) => e.pod);

function memorySummary(capacityBytes: number, availableBytes: number, podStats: unknown[] = [], time?: string): unknown {
  const memory: Record<string, unknown> = { availableBytes, workingSetBytes: capacityBytes - availableBytes, usageBytes: capacityBytes - availableBytes };
  if (time !== undefined) memory.time = time;
  return { node: { nodeName: 'node-a', memory }, pods: podStats };
}

describe('replay reproduces the kubelet eviction manager (through the command)', () => {
  test('the shipped example: soft grace period, minimum reclaim, a critical pod skipped, hard eviction, transition period', () => {
    const result = runCli(['replay', '--config', join(REPO_ROOT, 'examples/memory-pressure.config.yaml'), join(REPO_ROOT, 'examples/memory-pressure.jsonl')]);
    expect(result.status).toBe(0);
    const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as OutLine);
    expect(lines.map((l) => l.nodeConditions.join(','))).toEqual(['', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', 'MemoryPressure', '']);
    expect(lines.map(evicted)).toEqual([[], [], [], [], ['default/leaky'], ['default/batch'], [], ['default/web'], [], [], []]);
    // Soft: grace min(evictionMaxPodGracePeriod 30, terminationGracePeriodSeconds 30); hard: 1.
    expect(lines[4]?.evictions[0]?.gracePeriodSeconds).toBe(30);
    expect(lines[7]?.evictions[0]?.gracePeriodSeconds).toBe(1);
    expect(lines[4]?.thresholdsMet).toEqual([{ signal: 'memory.available', hard: false, quantity: '1Gi', available: '860Mi' }]);
    expect(lines[4]?.evictions[0]?.message).toBe(
      'The node was low on resource: memory. Threshold quantity: 1Gi, available: 860Mi. Container app was using 1536Mi, request is 512Mi, has larger consumption of memory. ',
    );
    expect(lines[4]?.evictions[0]?.annotations).toEqual({ offending_containers: 'app', offending_containers_usage: '1536Mi', starved_resource: 'memory' });
    // Within the grace period the soft threshold raises the condition but is not "met".
    expect(lines[1]?.thresholdsMet).toEqual([]);
  });

  test('the shipped example with the leaking pod annotated config.source: file, through the command line: the leaking pod is still the one evicted', async () => {
    // Before, the annotation made `leaky` a static pod to the agent: passed over, and `default/batch` evicted in its place.
    const recording = readFileSync(join(REPO_ROOT, 'examples/memory-pressure.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((text) => {
        const step = JSON.parse(text) as { pods?: { metadata: { name: string; annotations?: Record<string, string> } }[] };
        for (const pod of step.pods ?? []) if (pod.metadata.name === 'leaky') pod.metadata.annotations = { ...pod.metadata.annotations, 'kubernetes.io/config.source': 'file' };
        return JSON.stringify(step);
      });
    expect(recording.join('\n')).toContain('"name":"leaky","namespace":"default","uid":"uid-leaky","annotations":{"kubernetes.io/config.source":"file"}');
    const result = await replayThroughCli(readFileSync(join(REPO_ROOT, 'examples/memory-pressure.config.yaml'), 'utf8'), `${recording.join('\n')}\n`);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.lines as unknown as OutLine[];
    expect(lines.map(evicted)).toEqual([[], [], [], [], ['default/leaky'], ['default/batch'], [], ['default/web'], [], [], []]);
  });

  test('minimum reclaim keeps a resolved threshold met until the reclaim is done (kubelet TestMinReclaim)', async () => {
    const config = 'evictionHard:\n  memory.available: 1Gi\nevictionMinimumReclaim:\n  memory.available: 500Mi\n';
    const pods = [makePod({ name: 'best-effort-high', priority: 0 }), makePod({ name: 'best-effort-low', priority: 0 })];
    const stats = (a: number, b: number): unknown[] => [makePodStats(pods[0]!, { workingSetBytes: a, containerWorkingSetBytes: a }), makePodStats(pods[1]!, { workingSetBytes: b, containerWorkingSetBytes: b })];
    const lines = await run(config, [
      { time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats(2 * Gi, Gi)), pods },
      { time: at(10), summary: memorySummary(8 * Gi, Math.trunc(1.2 * Gi), stats(2 * Gi, Gi)) },
      { time: at(20), summary: memorySummary(8 * Gi, 2 * Gi, stats(2 * Gi, Gi)) },
      { time: at(30), summary: memorySummary(8 * Gi, 2 * Gi, stats(2 * Gi, Gi)) },
    ]);
    expect(evicted(lines[0])).toEqual(['default/best-effort-high']);
    // 1.2Gi is above 1Gi but below 1Gi + 500Mi: still met, evict again.
    expect(evicted(lines[1])).toEqual(['default/best-effort-high']);
    expect(lines[1]?.thresholdsMet[0]).toEqual({ signal: 'memory.available', hard: true, quantity: '1Gi', available: `${Math.trunc(1.2 * Gi)}` });
    // 2Gi resolves it: no eviction, but the condition stays for the transition period.
    expect(evicted(lines[2])).toEqual([]);
    expect(lines[2]?.thresholdsMet).toEqual([]);
    expect(lines[2]?.nodeConditions).toEqual(['MemoryPressure']);
  });

  test('PID pressure ranks by priority, then by process count', async () => {
    const config = 'evictionHard:\n  pid.available: "1000"\n';
    const pods = [makePod({ name: 'low-priority-few', priority: 0 }), makePod({ name: 'low-priority-many', priority: 0 }), makePod({ name: 'high-priority-most', priority: 1000 })];
    const counts = [5, 50, 500];
    const lines = await run(config, [
      { time: at(0), summary: { node: { rlimit: { maxpid: 32768, curproc: 32000 } }, pods: pods.map((p, i) => makePodStats(p, { processCount: counts[i] })) }, pods },
    ]);
    expect(lines[0]?.nodeConditions).toEqual(['PIDPressure']);
    expect(lines[0]?.thresholdsMet).toEqual([{ signal: 'pid.available', hard: true, quantity: '1k', available: '768' }]);
    expect(evicted(lines[0])).toEqual(['default/low-priority-many']);
    expect(lines[0]?.evictions[0]?.message).toBe('The node was low on resource: pids. Threshold quantity: 1k, available: 768. ');
  });

  describe('disk pressure in each filesystem layout', () => {
    // Same priority; two pods request 1Gi of ephemeral storage, `light` requests none.
    const pods = [
      makePod({ name: 'rootfs-heavy', requests: { 'ephemeral-storage': '1Gi' } }),
      makePod({ name: 'volume-heavy', requests: { 'ephemeral-storage': '1Gi' }, volumes: [emptyDirVolume('scratch')] }),
      makePod({ name: 'light' }),
    ];
    const podStats = [
      makePodStats(pods[0]!, { rootfsBytes: 3 * Gi, logsBytes: 100 * Mi }),
      makePodStats(pods[1]!, { rootfsBytes: 10 * Mi, logsBytes: 10 * Mi, volumes: { scratch: 5 * Gi } }),
      makePodStats(pods[2]!, { rootfsBytes: 100 * Mi, logsBytes: 10 * Mi }),
    ];
    const fs = (availableBytes: number): unknown => ({ capacityBytes: 100 * Gi, availableBytes, inodes: 1_000_000, inodesFree: 900_000 });
    const config = 'evictionHard:\n  nodefs.available: 1Gi\n  imagefs.available: 1Gi\n';

    const cases: { name: string; dedicatedImageFs: boolean; splitContainerFs: boolean; node: unknown; runtime: unknown; signal: string; victim: string }[] = [
      {
        name: 'single filesystem: nodefs ranks every kind of usage, so the emptyDir-heavy pod goes',
        dedicatedImageFs: false,
        splitContainerFs: false,
        node: fs(500 * Mi),
        runtime: { imageFs: fs(500 * Mi) },
        signal: 'nodefs.available',
        victim: 'default/volume-heavy',
      },
      {
        name: 'dedicated imagefs: nodefs pressure ranks logs and volumes',
        dedicatedImageFs: true,
        splitContainerFs: false,
        node: fs(500 * Mi),
        runtime: { imageFs: fs(50 * Gi) },
        signal: 'nodefs.available',
        victim: 'default/volume-heavy',
      },
      {
        name: 'dedicated imagefs: imagefs pressure ranks writable layers',
        dedicatedImageFs: true,
        splitContainerFs: false,
        node: fs(50 * Gi),
        runtime: { imageFs: fs(500 * Mi) },
        signal: 'imagefs.available',
        victim: 'default/rootfs-heavy',
      },
      {
        name: 'split containerfs: imagefs pressure counts images only (no per-pod usage): the smallest request goes first',
        dedicatedImageFs: true,
        splitContainerFs: true,
        node: fs(50 * Gi),
        runtime: { imageFs: fs(500 * Mi), containerFs: fs(50 * Gi) },
        signal: 'imagefs.available',
        victim: 'default/light',
      },
      {
        name: 'split containerfs: nodefs pressure counts logs, volumes and writable layers',
        dedicatedImageFs: true,
        splitContainerFs: true,
        node: fs(500 * Mi),
        runtime: { imageFs: fs(50 * Gi), containerFs: fs(500 * Mi) },
        signal: 'nodefs.available',
        victim: 'default/volume-heavy',
      },
    ];
    for (const tc of cases) {
      test(tc.name, async () => {
        const lines = await run(config, [
          { time: at(0), summary: { node: { fs: tc.node, runtime: tc.runtime }, pods: podStats }, pods, dedicatedImageFs: tc.dedicatedImageFs, splitContainerFs: tc.splitContainerFs },
        ]);
        expect(lines[0]?.nodeConditions).toEqual(['DiskPressure']);
        expect(lines[0]?.thresholdsMet.map((t) => t.signal)).toContain(tc.signal);
        expect(lines[0]?.evictions.map((e) => [e.pod, e.signal, e.gracePeriodSeconds])).toEqual([[tc.victim, tc.signal, 1]]);
      });
    }

    test('inode pressure: every pod using inodes exceeds its (zero) inode request', async () => {
      const inodeConfig = 'evictionHard:\n  nodefs.inodesFree: "1000"\n';
      const inodeStats = [
        makePodStats(pods[0]!, { rootfsInodes: 100, logsInodes: 1 }),
        makePodStats(pods[1]!, { rootfsInodes: 10, logsInodes: 1, volumes: { scratch: { usedBytes: 0, inodesUsed: 50_000 } } }),
        makePodStats(pods[2]!, { rootfsInodes: 10, logsInodes: 1 }),
      ];
      const lines = await run(inodeConfig, [{ time: at(0), summary: { node: { fs: { ...(fs(50 * Gi) as object), inodesFree: 500 } }, pods: inodeStats }, pods }]);
      // On a single filesystem the containerfs threshold is a copy of nodefs's, on the same stats.
      expect(lines[0]?.thresholdsMet).toEqual([
        { signal: 'nodefs.inodesFree', hard: true, quantity: '1k', available: '500' },
        { signal: 'containerfs.inodesFree', hard: true, quantity: '1k', available: '500' },
      ]);
      // All exceed their zero inode request; then inodes minus the ephemeral-storage *byte*
      // request (a kubelet quirk): the 1Gi requests push the heavy pods behind `light`.
      expect(evicted(lines[0])).toEqual(['default/light']);
    });
  });

  test('local ephemeral-storage limits evict every violator at once, before thresholds', async () => {
    const pods = [
      makePod({ name: 'emptydir-over', volumes: [emptyDirVolume('cache', { sizeLimit: '1Gi' })] }),
      makePod({ name: 'container-over', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '100Mi' } })] }),
      makePod({ name: 'within-limits', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })] }),
    ];
    const lines = await run('evictionHard:\n  memory.available: 100Mi\n', [
      {
        time: at(0),
        summary: {
          node: { memory: { availableBytes: 4 * Gi, workingSetBytes: 4 * Gi } },
          pods: [
            makePodStats(pods[0]!, { volumes: { cache: 2 * Gi } }),
            makePodStats(pods[1]!, { rootfsBytes: 150 * Mi, logsBytes: 60 * Mi }),
            makePodStats(pods[2]!, { rootfsBytes: 10 * Mi, logsBytes: 10 * Mi }),
          ],
        },
        pods,
      },
    ]);
    expect(lines[0]?.nodeConditions).toEqual([]);
    expect(lines[0]?.evictions).toEqual([
      { pod: 'default/emptydir-over', uid: 'uid-default-emptydir-over', signal: 'emptydirfs.limit', gracePeriodSeconds: 1, message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Gi". ', annotations: {} },
      { pod: 'default/container-over', uid: 'uid-default-container-over', signal: 'ephemeralcontainerfs.limit', gracePeriodSeconds: 1, message: 'Container app exceeded its local ephemeral storage limit "100Mi". ', annotations: {} },
    ]);
  });

  test('critical pods are never evicted: mirror and system-critical priority', async () => {
    const pods = [makePod({ name: 'mirror', annotations: mirrorAnnotations() }), makePod({ name: 'node-critical', priority: 2000001000 })];
    const stats = pods.map((p) => makePodStats(p, { workingSetBytes: Gi, containerWorkingSetBytes: Gi }));
    const lines = await run('evictionHard:\n  memory.available: 1Gi\n', [{ time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats), pods }]);
    expect(lines[0]?.nodeConditions).toEqual(['MemoryPressure']);
    expect(lines[0]?.thresholdsMet).toHaveLength(1);
    expect(lines[0]?.evictions).toEqual([]);
  });

  test('a pod claiming to be static through the annotations the kubelet overwrites (config.source, config.hash, config.seen) is evicted like any other', async () => {
    const claimed = { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': '5e1d0c9b8a7f46e3a2b1c0d9e8f7a6b5', 'kubernetes.io/config.seen': '2026-11-01T12:00:00.000000000Z' };
    const pods = [makePod({ name: 'claims-static', annotations: claimed }), makePod({ name: 'mirror', annotations: mirrorAnnotations() })];
    const stats = pods.map((p) => makePodStats(p, { workingSetBytes: Gi, containerWorkingSetBytes: Gi }));
    const lines = await run('evictionHard:\n  memory.available: 1Gi\n', [{ time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats), pods }]);
    expect(evicted(lines[0])).toEqual(['default/claims-static']);
  });

  test('stale stats: no eviction when the signal\'s timestamp has not advanced', async () => {
    const pods = [makePod({ name: 'victim' })];
    const stats = [makePodStats(pods[0]!, { workingSetBytes: Gi })];
    const lines = await run('evictionHard:\n  memory.available: 1Gi\n', [
      { time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats, at(0)), pods },
      { time: at(10), summary: memorySummary(8 * Gi, 500 * Mi, stats, at(0)) },
      { time: at(20), summary: memorySummary(8 * Gi, 500 * Mi, stats, at(15)) },
    ]);
    expect(lines.map(evicted)).toEqual([['default/victim'], [], ['default/victim']]);
    // The condition and the met threshold are still reported on stale data.
    expect(lines[1]?.nodeConditions).toEqual(['MemoryPressure']);
    expect(lines[1]?.thresholdsMet).toHaveLength(1);
  });

  test('a soft threshold\'s grace timer restarts after one pass without pressure', async () => {
    const pods = [makePod({ name: 'victim' })];
    const stats = [makePodStats(pods[0]!, { workingSetBytes: Gi })];
    const config = 'evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 20s\n';
    const lines = await run(config, [
      { time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats), pods },
      { time: at(10), summary: memorySummary(8 * Gi, 2 * Gi, stats) },
      { time: at(20), summary: memorySummary(8 * Gi, 500 * Mi, stats) },
      { time: at(30), summary: memorySummary(8 * Gi, 500 * Mi, stats) },
      { time: at(40), summary: memorySummary(8 * Gi, 500 * Mi, stats) },
    ]);
    // Without the reset, 20 s after the first observation (at 20) would evict.
    expect(lines.map(evicted)).toEqual([[], [], [], [], ['default/victim']]);
    // Soft evictions use evictionMaxPodGracePeriod (0 by default).
    expect(lines[4]?.evictions[0]?.gracePeriodSeconds).toBe(0);
  });

  test('a KubeletConfiguration file is accepted as is', async () => {
    const config = readFileSync(join(REPO_ROOT, 'examples/config/kubelet-config.yaml'), 'utf8');
    const pods = [makePod({ name: 'victim' })];
    const lines = await run(config, [{ time: at(0), summary: memorySummary(8 * Gi, 10 * Mi, [makePodStats(pods[0]!, { workingSetBytes: Gi })]), pods }]);
    expect(lines[0]?.nodeConditions).toEqual(['MemoryPressure']);
  });
});

// A recording of a real node holds what the kubelet accepted. What is wrong with one pod refuses
// that pod alone, as the running agent refuses it: the rest is decided on, the refused pod is never
// evicted, and the output line of the step that brought it says which pod and why.
describe('replay refuses an odd pod and decides on the rest', () => {
  const config = 'evictionHard:\n  memory.available: 1Gi\n';
  // The kubelet keeps the metadata.uid a static pod's manifest sets, and its mirror pod carries it.
  const etcd = makePod({ name: 'etcd-node-a', namespace: 'kube-system', annotations: { 'kubernetes.io/config.mirror': 'abc', 'kubernetes.io/config.hash': 'abc', 'kubernetes.io/config.source': 'file' } });
  const leaky = makePod({ name: 'leaky', requests: { memory: '100Mi' } });
  const batch = makePod({ name: 'batch', requests: { memory: '100Mi' } });
  const ETCD_REFUSAL = { pod: 'kube-system/etcd-node-a', reason: 'line 1: pods[0].metadata.annotations["kubernetes.io/config.mirror"]: "abc" is not a static pod UID (32 lowercase hex digits, or a UUID)' };
  const steps = (pods: unknown[]): unknown[] => {
    const stats = [
      { podRef: { name: 'etcd-node-a', namespace: 'kube-system', uid: 'abc' }, memory: { workingSetBytes: 3 * Gi }, containers: [{ name: 'app', memory: { workingSetBytes: 3 * Gi } }] },
      makePodStats(leaky, { workingSetBytes: 2 * Gi, containerWorkingSetBytes: 2 * Gi }),
      makePodStats(batch, { workingSetBytes: 200 * Mi, containerWorkingSetBytes: 200 * Mi }),
    ];
    return [
      { time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats), pods },
      { time: at(10), summary: memorySummary(8 * Gi, 500 * Mi, stats) },
    ];
  };

  test('a mirror pod with a custom static pod UID ("abc"): refused and named on its step\'s line, the others decided on, through the command line', async () => {
    const result = await replayThroughCli(config, steps([etcd, leaky, batch]));
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const lines = result.lines as unknown as (OutLine & { refusedPods?: unknown })[];
    expect(lines.map(evicted)).toEqual([['default/leaky'], ['default/leaky']]);
    expect(lines[0]?.refusedPods).toEqual([ETCD_REFUSAL]);
    // Only the line of the step that brought the pods says it; the refusal holds for the steps that keep them.
    expect(lines[1]).not.toHaveProperty('refusedPods');
    expect(Object.keys(lines[0] ?? {})).toEqual(['time', 'nodeConditions', 'thresholdsMet', 'evictions', 'taintEvictions', 'refusedPods']);
  });

  test('a step whose pods have no refusal prints no refusedPods key, and lifts the earlier refusal', async () => {
    const [first] = steps([etcd, leaky, batch]);
    const later = { time: at(20), pods: [leaky, batch] };
    const lines = (await run(config, [first, later])) as (OutLine & { refusedPods?: unknown })[];
    expect(lines[0]?.refusedPods).toEqual([ETCD_REFUSAL]);
    expect(lines[1]).not.toHaveProperty('refusedPods');
  });

  const base = makePod({ name: 'odd', requests: { memory: '100Mi' } });
  const odd = (metadata: Record<string, unknown>, spec: Record<string, unknown> = {}): unknown => ({ ...base, metadata: { ...base.metadata, ...metadata }, spec: { ...base.spec, ...spec } });
  // Each odd pod is the biggest user of memory, so it would be the one evicted were it kept.
  const cases: { name: string; pod: unknown; reason: RegExp }[] = [
    { name: 'an invalid quantity in its requests', pod: odd({}, { containers: [{ name: 'app', resources: { requests: { memory: 'lots' } } }] }), reason: /^line 1: pods\[0\]\.spec\.containers\[0\]\.resources\.requests\.memory: invalid quantity "lots"/ },
    { name: 'a non-integer priority', pod: odd({}, { priority: 'low' }), reason: /^line 1: pods\[0\]\.spec\.priority: expected an integer, got "low"$/ },
    { name: 'a container without a name', pod: odd({}, { containers: [{ resources: {} }] }), reason: /^line 1: pods\[0\]\.spec\.containers\[0\]\.name: is required$/ },
    { name: 'a non-string annotation', pod: odd({ annotations: { 'example.com/owner': null } }), reason: /^line 1: pods\[0\]\.metadata\.annotations\["example\.com\/owner"\]: expected a string, got null$/ },
    { name: 'a malformed toleration', pod: odd({}, { tolerations: [{ key: 'k', operator: 'Exists', tolerationSeconds: 1.5 }] }), reason: /^line 1: pods\[0\]\.spec\.tolerations\[0\]\.tolerationSeconds: expected an integer, got 1\.5$/ },
    { name: 'the UID of another pod (both refused)', pod: odd({ uid: 'uid-default-batch' }), reason: /^line 1: pods\[0\]\.metadata\.uid: the pod UID uid-default-batch is also listed for pods\[2\] \(default\/batch\): the API server gives every pod its own$/ },
    { name: 'a static pod UID that is another pod\'s UID', pod: odd({ annotations: { 'kubernetes.io/config.mirror': '0a1b2c3d-0000-4000-8000-00000000000a' } }), reason: /^line 1: pods\[0\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: static pod UID 0a1b2c3d-0000-4000-8000-00000000000a is also the UID of pods\[1\] \(default\/leaky\)$/ },
  ];
  for (const tc of cases) {
    test(`a pod with ${tc.name} is refused, never evicted; the next in rank goes`, async () => {
      const victim = tc.name.startsWith('a static') ? { ...leaky, metadata: { ...leaky.metadata, uid: '0a1b2c3d-0000-4000-8000-00000000000a' } } : leaky;
      const stats = [
        { podRef: { name: 'odd', namespace: 'default', uid: 'uid-default-odd' }, memory: { workingSetBytes: 3 * Gi }, containers: [{ name: 'app', memory: { workingSetBytes: 3 * Gi } }] },
        makePodStats(victim, { workingSetBytes: 2 * Gi, containerWorkingSetBytes: 2 * Gi }),
        makePodStats(batch, { workingSetBytes: 200 * Mi, containerWorkingSetBytes: 200 * Mi }),
      ];
      const lines = (await run(config, [{ time: at(0), summary: memorySummary(8 * Gi, 500 * Mi, stats), pods: [tc.pod, victim, batch] }])) as (OutLine & { refusedPods?: { pod: string; reason: string }[] })[];
      const refused = lines[0]?.refusedPods ?? [];
      expect(refused[0]).toEqual({ pod: 'default/odd', reason: expect.stringMatching(tc.reason) });
      expect(evicted(lines[0])).not.toContain('default/odd');
      // Sharing batch's UID takes batch out too; the leak is evicted either way.
      expect(evicted(lines[0])).toEqual(['default/leaky']);
      expect(refused.map((r) => r.pod)).toEqual(tc.name.startsWith('the UID of another') ? ['default/odd', 'default/batch'] : ['default/odd']);
    });
  }
});

describe('replay stops on bad input, naming the line and the field', () => {
  const cases: { name: string; input: string; printed: number; message: RegExp }[] = [
    { name: 'invalid JSON on line 2', input: `{"time":"${at(0)}"}\n{"time":\n`, printed: 1, message: /recording\.jsonl: line 2: invalid JSON/ },
    { name: 'time going backwards', input: `{"time":"${at(10)}"}\n{"time":"${at(0)}"}\n`, printed: 1, message: /line 2: time: time goes backwards/ },
    { name: 'pods that are not a list', input: `{"time":"${at(0)}"}\n\n{"time":"${at(1)}","pods":{"metadata":{"name":"p"}}}\n`, printed: 1, message: /line 3: pods: expected an array, got an object/ },
    { name: 'a node of the wrong shape', input: `{"time":"${at(0)}","node":{"metadata":{"name":"n"},"spec":{"taints":[{"key":"k"}]}}}\n`, printed: 0, message: /line 1: node\.spec\.taints\[0\]\.effect: is required/ },
    { name: 'a field of the wrong type', input: `{"time":"${at(0)}","summary":{"node":{"memory":{"availableBytes":"lots"}}}}\n`, printed: 0, message: /line 1: summary\.node\.memory\.availableBytes: expected a non-negative integer/ },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const result = await replay('{}\n', tc.input);
      expect(result.status).toBe(1);
      expect(result.lines).toHaveLength(tc.printed);
      expect(result.stderr).toMatch(tc.message);
    });
  }

  test('through the command line: exit status 1, the lines before the bad one printed, the line named', async () => {
    const result = await replayThroughCli('{}\n', `{"time":"${at(0)}"}\n{"time":\n`);
    expect(result.status).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(result.stderr).toMatch(/recording\.jsonl: line 2: invalid JSON/);
  });

  test('a line over the 64 MiB limit: exit status 1, the line named, no stack trace', async () => {
    // Valid JSON, padded past the limit: without one it was read whole (and near V8's string limit, a crash).
    const long = `{"time":"${at(1)}"${' '.repeat(64 * 1024 * 1024)}}`;
    const result = await replayThroughCli('{}\n', `{"time":"${at(0)}"}\n${long}\n{"time":"${at(2)}"}\n`);
    expect(result.status).toBe(1);
    expect(result.lines).toHaveLength(1);
    expect(result.stderr).toMatch(/^\S*recording\.jsonl: line 2: longer than 64 MiB, the limit of a replay input line \(one step per line: record shorter steps\)\n$/);
  });

  test('an invalid configuration is reported with every problem', async () => {
    const result = await replay('evictionHard:\n  mem.available: 1Gi\nevictionSoft:\n  memory.available: 1Gi\n', `{"time":"${at(0)}"}\n`);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/unsupported eviction signal mem\.available/);
    expect(result.stderr).toMatch(/grace period must be specified for the soft eviction threshold memory\.available/);
  });
});
