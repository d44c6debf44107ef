// Signal observations from a Summary (kubelet `makeSignalObservations`): which fields feed which
// signal, exact capacities, timestamps, missing stats, the containerfs stand-in, and the pod-stats lookup.

import type { Pod } from '../../../src/api/pod.js';
import type { Signal } from '../../../src/api/signals.js';
import type { Summary } from '../../../src/api/summary.js';
import { formatQuantity } from '../../../src/api/quantity.js';
import {
  makeSignalObservations,
  signalQuantity,
  signalQuantityFormat,
  statTimeMs,
  type FilesystemLayout,
} from '../../../src/eviction/observations.js';
import type { SignalObservation } from '../../../src/eviction/types.js';

const T0 = '2026-01-01T00:00:00Z';
const T0_MS = Date.UTC(2026, 0, 1);
const GiB = 1024 ** 3;

function fullSummary(): Summary {
  return {
    node: {
      nodeName: 'node-a',
      memory: { time: T0, availableBytes: 3 * GiB, usageBytes: 6 * GiB, workingSetBytes: 5 * GiB },
      systemContainers: [
        { name: 'kubelet', memory: { time: T0, availableBytes: 1, workingSetBytes: 1 } },
        { name: 'pods', memory: { time: '2026-01-01T00:00:01Z', availableBytes: 2 * GiB, usageBytes: 5 * GiB, workingSetBytes: 4 * GiB } },
      ],
      fs: { time: '2026-01-01T00:00:02Z', availableBytes: 10 * GiB, capacityBytes: 100 * GiB, usedBytes: 90 * GiB, inodesFree: 9000, inodes: 100000, inodesUsed: 91000 },
      runtime: {
        imageFs: { time: '2026-01-01T00:00:03Z', availableBytes: 20 * GiB, capacityBytes: 200 * GiB, inodesFree: 8000, inodes: 200000 },
        containerFs: { time: '2026-01-01T00:00:04Z', availableBytes: 30 * GiB, capacityBytes: 300 * GiB, inodesFree: 7000, inodes: 300000 },
      },
      rlimit: { time: '2026-01-01T00:00:05Z', maxpid: 4194304, curproc: 3518 },
    },
    pods: [],
  };
}

const big = (n: number): bigint => BigInt(n);

describe('makeSignalObservations', () => {
  test('every signal from a full summary, exact, with its own stat time', () => {
    const { observations } = makeSignalObservations(fullSummary());
    const expected: [Signal, SignalObservation][] = [
      ['memory.available', { available: big(3 * GiB), capacity: big(8 * GiB), timeMs: T0_MS }],
      ['allocatableMemory.available', { available: big(2 * GiB), capacity: big(6 * GiB), timeMs: T0_MS + 1000 }],
      ['nodefs.available', { available: big(10 * GiB), capacity: big(100 * GiB), timeMs: T0_MS + 2000 }],
      ['nodefs.inodesFree', { available: 9000n, capacity: 100000n, timeMs: T0_MS + 2000 }],
      ['imagefs.available', { available: big(20 * GiB), capacity: big(200 * GiB), timeMs: T0_MS + 3000 }],
      ['imagefs.inodesFree', { available: 8000n, capacity: 200000n, timeMs: T0_MS + 3000 }],
      ['containerfs.available', { available: big(30 * GiB), capacity: big(300 * GiB), timeMs: T0_MS + 4000 }],
      ['containerfs.inodesFree', { available: 7000n, capacity: 300000n, timeMs: T0_MS + 4000 }],
      ['pid.available', { available: 4194304n - 3518n, capacity: 4194304n, timeMs: T0_MS + 5000 }],
    ];
    expect([...observations.entries()]).toEqual(expected);
  });

  interface MissingCase {
    readonly name: string;
    readonly edit: (s: Summary) => void;
    readonly absent: readonly Signal[];
  }
  const missingCases: MissingCase[] = [
    { name: 'memory-without-working-set', edit: (s) => delete s.node.memory!.workingSetBytes, absent: ['memory.available'] },
    { name: 'memory-without-available', edit: (s) => delete s.node.memory!.availableBytes, absent: ['memory.available'] },
    { name: 'no-node-memory', edit: (s) => delete s.node.memory, absent: ['memory.available'] },
    { name: 'no-pods-system-container', edit: (s) => (s.node.systemContainers = s.node.systemContainers!.filter((c) => c.name !== 'pods')), absent: ['allocatableMemory.available'] },
    { name: 'no-system-containers', edit: (s) => delete s.node.systemContainers, absent: ['allocatableMemory.available'] },
    { name: 'pods-container-without-memory', edit: (s) => delete s.node.systemContainers![1]!.memory, absent: ['allocatableMemory.available'] },
    { name: 'nodefs-without-capacity', edit: (s) => delete s.node.fs!.capacityBytes, absent: ['nodefs.available'] },
    { name: 'nodefs-without-inodes', edit: (s) => delete s.node.fs!.inodes, absent: ['nodefs.inodesFree'] },
    { name: 'nodefs-without-inodes-free', edit: (s) => delete s.node.fs!.inodesFree, absent: ['nodefs.inodesFree'] },
    { name: 'imagefs-without-available', edit: (s) => delete s.node.runtime!.imageFs!.availableBytes, absent: ['imagefs.available'] },
    { name: 'rlimit-without-curproc', edit: (s) => delete s.node.rlimit!.curproc, absent: ['pid.available'] },
    { name: 'no-rlimit', edit: (s) => delete s.node.rlimit, absent: ['pid.available'] },
    { name: 'not-a-number', edit: (s) => (s.node.fs!.availableBytes = Number.NaN), absent: ['nodefs.available'] },
  ];
  for (const tc of missingCases) {
    test(`missing fields give no observation: ${tc.name}`, () => {
      const summary = fullSummary();
      tc.edit(summary);
      const { observations } = makeSignalObservations(summary);
      for (const signal of tc.absent) expect(observations.has(signal)).toBe(false);
      // Every other signal is still observed.
      expect(observations.size).toBe(9 - tc.absent.length);
    });
  }

  test('an empty node gives no observations at all', () => {
    expect(makeSignalObservations({ node: {} }).observations.size).toBe(0);
  });

  test('pid.available can go negative when more tasks run than the limit allows (no clamping)', () => {
    const summary = fullSummary();
    summary.node.rlimit = { maxpid: 100, curproc: 120 };
    expect(makeSignalObservations(summary).observations.get('pid.available')).toEqual({ available: -20n, capacity: 100n, timeMs: 0 });
  });

  interface ContainerFsCase {
    readonly name: string;
    readonly edit: (s: Summary) => void;
    readonly layout?: FilesystemLayout;
    readonly expectedAvailableBytes: number | null;
  }
  const containerFsCases: ContainerFsCase[] = [
    { name: 'containerfs-stat-wins-whatever-the-layout', edit: () => {}, layout: { dedicatedImageFs: true, splitContainerFs: true }, expectedAvailableBytes: 30 * GiB },
    { name: 'absent-not-split-uses-imagefs', edit: (s) => delete s.node.runtime!.containerFs, layout: { dedicatedImageFs: true, splitContainerFs: false }, expectedAvailableBytes: 20 * GiB },
    { name: 'absent-split-uses-nodefs', edit: (s) => delete s.node.runtime!.containerFs, layout: { dedicatedImageFs: true, splitContainerFs: true }, expectedAvailableBytes: 10 * GiB },
    { name: 'absent-no-layout-uses-imagefs', edit: (s) => delete s.node.runtime!.containerFs, expectedAvailableBytes: 20 * GiB },
    { name: 'absent-and-no-imagefs-uses-nodefs', edit: (s) => delete s.node.runtime, layout: { dedicatedImageFs: false, splitContainerFs: false }, expectedAvailableBytes: 10 * GiB },
    { name: 'nothing-at-all', edit: (s) => { delete s.node.runtime; delete s.node.fs; }, expectedAvailableBytes: null },
  ];
  for (const tc of containerFsCases) {
    test(`containerfs stats: ${tc.name}`, () => {
      const summary = fullSummary();
      tc.edit(summary);
      const observed = makeSignalObservations(summary, tc.layout).observations.get('containerfs.available');
      expect(observed?.available ?? null).toBe(tc.expectedAvailableBytes === null ? null : BigInt(tc.expectedAvailableBytes));
    });
  }

  test('statsFunc finds pod stats by UID only', () => {
    const summary = fullSummary();
    const stats = { podRef: { name: 'a', namespace: 'default', uid: 'uid-a' }, memory: { workingSetBytes: 42 } };
    summary.pods = [stats, { podRef: { name: 'nameless', namespace: 'default', uid: '' } }];
    const { statsFunc } = makeSignalObservations(summary);
    const pod = (name: string, uid?: string): Pod => ({ metadata: { name, namespace: 'default', ...(uid === undefined ? {} : { uid }) }, spec: { containers: [] } });
    expect(statsFunc(pod('renamed', 'uid-a'))).toBe(stats);
    expect(statsFunc(pod('a', 'uid-other'))).toBeUndefined();
    expect(statsFunc(pod('nameless'))).toBeUndefined();
    expect(statsFunc(pod('nameless', ''))).toBeUndefined();
  });

  test("statsFunc finds a mirror pod's stats under its static pod's UID, as the kubelet reports them", () => {
    const summary = fullSummary();
    const staticUid = '9b1f7c3ad2e84f6a0c5b8e1d3f7a9c2e';
    const staticStats = { podRef: { name: 'etcd-node-a', namespace: 'kube-system', uid: staticUid }, memory: { workingSetBytes: 7 } };
    const byApiUid = { podRef: { name: 'etcd-node-a', namespace: 'kube-system', uid: 'uid-mirror' }, memory: { workingSetBytes: 8 } };
    summary.pods = [staticStats, byApiUid];
    const { statsFunc } = makeSignalObservations(summary);
    const mirror = (annotation: string): Pod => ({
      metadata: { name: 'etcd-node-a', namespace: 'kube-system', uid: 'uid-mirror', annotations: { 'kubernetes.io/config.mirror': annotation, 'kubernetes.io/config.source': 'file' } },
      spec: { containers: [] },
    });
    expect(statsFunc(mirror(staticUid))).toBe(staticStats);
    // A refused annotation matches nothing, not even stats under the mirror pod's API UID.
    expect(statsFunc(mirror('uid-mirror'))).toBeUndefined();
    expect(statsFunc(mirror(''))).toBeUndefined();
  });

  test('a summary without pods gives a statsFunc that finds nothing', () => {
    const { statsFunc } = makeSignalObservations({ node: {} });
    expect(statsFunc({ metadata: { uid: 'x' }, spec: { containers: [] } })).toBeUndefined();
  });
});

describe('statTimeMs', () => {
  const cases: { name: string; time: string | undefined; expectedMs: number }[] = [
    { name: 'absent', time: undefined, expectedMs: 0 },
    { name: 'empty', time: '', expectedMs: 0 },
    { name: 'garbage', time: 'yesterday-ish', expectedMs: 0 },
    { name: 'go-zero-time', time: '0001-01-01T00:00:00Z', expectedMs: 0 },
    { name: 'utc', time: '2026-01-01T00:00:00Z', expectedMs: T0_MS },
    { name: 'offset', time: '2026-01-01T01:00:00+01:00', expectedMs: T0_MS },
    { name: 'fractional-seconds', time: '2026-01-01T00:00:00.250Z', expectedMs: T0_MS + 250 },
  ];
  for (const tc of cases) test(tc.name, () => expect(statTimeMs(tc.time)).toBe(tc.expectedMs));
});

describe('signalQuantityFormat', () => {
  const cases: { signal: Signal; format: string; amount: bigint; printed: string }[] = [
    { signal: 'memory.available', format: 'BinarySI', amount: 1536n * 1024n * 1024n, printed: '1536Mi' },
    { signal: 'allocatableMemory.available', format: 'BinarySI', amount: 2n * 1024n ** 3n, printed: '2Gi' },
    // apimachinery prints a BinarySI amount below 1Ki in decimal.
    { signal: 'nodefs.available', format: 'BinarySI', amount: 1000n, printed: '1k' },
    { signal: 'imagefs.available', format: 'BinarySI', amount: 1024n, printed: '1Ki' },
    { signal: 'containerfs.available', format: 'BinarySI', amount: 1025n, printed: '1025' },
    { signal: 'nodefs.inodesFree', format: 'DecimalSI', amount: 40000n, printed: '40k' },
    { signal: 'imagefs.inodesFree', format: 'DecimalSI', amount: 4096n, printed: '4096' },
    { signal: 'containerfs.inodesFree', format: 'DecimalSI', amount: 0n, printed: '0' },
    { signal: 'pid.available', format: 'DecimalSI', amount: 1200n, printed: '1200' },
  ];
  for (const tc of cases) {
    test(tc.signal, () => {
      expect(signalQuantityFormat(tc.signal)).toBe(tc.format);
      expect(formatQuantity(signalQuantity(tc.signal, tc.amount))).toBe(tc.printed);
    });
  }
});
