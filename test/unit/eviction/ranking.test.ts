import type { Pod } from '../../../src/api/pod.js';
import type { Signal } from '../../../src/api/signals.js';
import {
  cmpBool,
  disk,
  exceedDiskRequests,
  exceedMemoryRequests,
  fsStatsForSignal,
  localVolumeNames,
  memory,
  orderedBy,
  podDiskUsage,
  priority,
  process,
  rankDiskPressureFunc,
  rankedPods,
  rankFuncForSignal,
  rankMemoryPressure,
  rankPIDPressure,
  type CmpFunc,
  type FsStatsType,
  type StatsFunc,
} from '../../../src/eviction/ranking.js';
import {
  configMapVolume,
  downwardAPIVolume,
  emptyDirVolume,
  gitRepoVolume,
  hostPathVolume,
  makeContainerStats,
  makePod,
  makePodStats,
  podNames,
  secretVolume,
  statsFuncOf,
} from '../../fixtures/pods.js';

const Mi = 1024n * 1024n;

function sortedNames(pods: Pod[], ...cmp: CmpFunc[]): string[] {
  const copy = [...pods];
  orderedBy(...cmp).sort(copy);
  return podNames(copy);
}

describe('cmpBool places true before false', () => {
  const cases: { name: string; a: boolean; b: boolean; expected: number }[] = [
    { name: 'true, true', a: true, b: true, expected: 0 },
    { name: 'false, false', a: false, b: false, expected: 0 },
    { name: 'true, false', a: true, b: false, expected: -1 },
    { name: 'false, true', a: false, b: true, expected: 1 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(cmpBool(tc.a, tc.b)).toBe(tc.expected);
    });
  }
});

describe('priority puts lower priority first', () => {
  const cases: { name: string; p1?: number | null | undefined; p2?: number | null | undefined; expected: number }[] = [
    { name: 'lower first', p1: -1, p2: 1, expected: -1 },
    { name: 'higher after', p1: 1000, p2: 0, expected: 1 },
    { name: 'equal', p1: 5, p2: 5, expected: 0 },
    { name: 'unset equals 0', p1: undefined, p2: 0, expected: 0 },
    { name: 'null equals 0', p1: null, p2: 0, expected: 0 },
    { name: 'unset after negative', p1: undefined, p2: -1, expected: 1 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(priority(makePod({ name: 'p1', priority: tc.p1 }), makePod({ name: 'p2', priority: tc.p2 }))).toBe(tc.expected);
    });
  }
});

describe('orderedBy', () => {
  const key = (values: Record<string, number>): CmpFunc => (p1, p2) => Math.sign((values[p1.metadata.name ?? ''] ?? 0) - (values[p2.metadata.name ?? ''] ?? 0));
  const a = makePod({ name: 'a' });
  const b = makePod({ name: 'b' });
  const c = makePod({ name: 'c' });
  const d = makePod({ name: 'd' });
  const first = key({ a: 1, b: 0, c: 1, d: 0 });
  const second = key({ a: 2, b: 1, c: 1, d: 1 });

  test('the first key that tells pods apart decides', () => {
    expect(sortedNames([a, b, c, d], first)).toEqual(['b', 'd', 'a', 'c']);
  });
  test('a later key breaks ties of the earlier ones', () => {
    expect(sortedNames([a, b, c, d], first, second)).toEqual(['b', 'd', 'c', 'a']);
  });
  test('pods every key ties keep their input order', () => {
    expect(sortedNames([d, c, b, a], first, second)).toEqual(['d', 'b', 'c', 'a']);
  });
  test('no keys keep the input order', () => {
    expect(sortedNames([c, a, d, b])).toEqual(['c', 'a', 'd', 'b']);
  });
  test('compare returns the deciding key result', () => {
    const sorter = orderedBy(first, second);
    expect(sorter.compare(a, c)).toBe(1);
    expect(sorter.compare(b, a)).toBe(-1);
    expect(sorter.compare(b, d)).toBe(0);
  });
});

describe('exceedMemoryRequests', () => {
  test('a pod over its request goes before one below it (upstream TestOrderedByExceedsRequestMemory)', () => {
    const below = makePod({ name: 'below-requests', priority: -1, requests: { memory: '200Mi' } });
    const exceeds = makePod({ name: 'exceeds-requests', priority: 1, requests: { memory: '100Mi' } });
    const stats = statsFuncOf(makePodStats(below, { workingSetBytes: '199Mi' }), makePodStats(exceeds, { workingSetBytes: '101Mi' }));
    expect(sortedNames([below, exceeds], exceedMemoryRequests(stats))).toEqual(['exceeds-requests', 'below-requests']);
  });

  const cases: { name: string; request?: string; workingSet?: string; expected: number }[] = [
    { name: 'usage equal to the request does not exceed it', request: '100Mi', workingSet: '100Mi', expected: 0 },
    { name: 'one byte over exceeds', request: '100Mi', workingSet: String(100n * Mi + 1n), expected: -1 },
    { name: 'best-effort with any usage exceeds', workingSet: '1', expected: -1 },
    { name: 'best-effort without a working set does not exceed', expected: 0 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod({ name: 'candidate', requests: tc.request === undefined ? undefined : { memory: tc.request } });
      const reference = makePod({ name: 'reference', requests: { memory: '1Gi' } });
      const stats = statsFuncOf(makePodStats(pod, { workingSetBytes: tc.workingSet }), makePodStats(reference, { workingSetBytes: '1Mi' }));
      expect(exceedMemoryRequests(stats)(pod, reference)).toBe(tc.expected);
    });
  }
});

describe('memory', () => {
  test('orders by usage above request, largest first (upstream TestOrderedbyMemory)', () => {
    const pods = [
      makePod({ name: 'best-effort-high' }),
      makePod({ name: 'best-effort-low' }),
      makePod({ name: 'burstable-high', requests: { memory: '100Mi' } }),
      makePod({ name: 'burstable-low', requests: { memory: '100Mi' } }),
      makePod({ name: 'guaranteed-high', requests: { memory: '1Gi' }, limits: { memory: '1Gi' } }),
      makePod({ name: 'guaranteed-low', requests: { memory: '1Gi' }, limits: { memory: '1Gi' } }),
    ];
    const usage = ['500Mi', '300Mi', '800Mi', '300Mi', '800Mi', '200Mi'];
    const stats = statsFuncOf(...pods.map((pod, i) => makePodStats(pod, { workingSetBytes: usage[i] })));
    expect(sortedNames(pods, memory(stats))).toEqual(['burstable-high', 'best-effort-high', 'best-effort-low', 'burstable-low', 'guaranteed-high', 'guaranteed-low']);
  });

  test('a pod without memory stats counts as using nothing', () => {
    const noWorkingSet = makePod({ name: 'best-effort-no-working-set' });
    const small = makePod({ name: 'best-effort-small' });
    const stats = statsFuncOf(makePodStats(noWorkingSet), makePodStats(small, { workingSetBytes: '1Mi' }));
    expect(sortedNames([noWorkingSet, small], memory(stats))).toEqual(['best-effort-small', 'best-effort-no-working-set']);
  });
});

describe('pods without stats sort first in every stats comparator', () => {
  const withStats = makePod({ name: 'best-effort-huge-usage' });
  const withoutStats = makePod({ name: 'guaranteed-no-stats', requests: { memory: '1Gi', 'ephemeral-storage': '1Gi' } });
  const stats = statsFuncOf(makePodStats(withStats, { workingSetBytes: '10Gi', rootfsBytes: '10Gi', rootfsInodes: 100000, processCount: 1000 }));
  const allFs: FsStatsType[] = ['images', 'root', 'logs', 'localVolumeSource'];
  const comparators: [string, CmpFunc][] = [
    ['exceedMemoryRequests', exceedMemoryRequests(stats)],
    ['memory', memory(stats)],
    ['process', process(stats)],
    ['exceedDiskRequests bytes', exceedDiskRequests(stats, allFs, 'ephemeral-storage')],
    ['exceedDiskRequests inodes', exceedDiskRequests(stats, allFs, 'inodes')],
    ['disk bytes', disk(stats, allFs, 'ephemeral-storage')],
    ['disk inodes', disk(stats, allFs, 'inodes')],
  ];
  for (const [name, cmp] of comparators) {
    test(name, () => {
      expect(cmp(withoutStats, withStats)).toBe(-1);
      expect(cmp(withStats, withoutStats)).toBe(1);
      expect(cmp(withoutStats, withoutStats)).toBe(0);
    });
  }
});

describe('rankMemoryPressure: over request, then priority, then usage above request', () => {
  test('a mixed node', () => {
    const specs: { name: string; priority: number; request?: string; workingSet?: string }[] = [
      { name: 'guaranteed-high-priority-within-request', priority: 1, request: '1Gi', workingSet: '500Mi' },
      { name: 'burstable-high-priority-over-request', priority: 1, request: '100Mi', workingSet: '400Mi' },
      { name: 'best-effort-low-priority-low-usage', priority: -1, workingSet: '50Mi' },
      { name: 'best-effort-default-priority-high-usage', priority: 0, workingSet: '900Mi' },
      { name: 'burstable-low-priority-within-request', priority: -1, request: '500Mi', workingSet: '100Mi' },
      { name: 'burstable-high-priority-no-stats', priority: 5, request: '1Gi' },
      { name: 'best-effort-default-priority-low-usage', priority: 0, workingSet: '100Mi' },
    ];
    const pods = specs.map((s) => makePod({ name: s.name, priority: s.priority, requests: s.request === undefined ? undefined : { memory: s.request } }));
    const stats = statsFuncOf(...specs.flatMap((s, i) => (s.workingSet === undefined ? [] : [makePodStats(pods[i] as Pod, { workingSetBytes: s.workingSet })])));
    rankMemoryPressure(pods, stats);
    expect(podNames(pods)).toEqual([
      'burstable-high-priority-no-stats',
      'best-effort-low-priority-low-usage',
      'best-effort-default-priority-high-usage',
      'best-effort-default-priority-low-usage',
      'burstable-high-priority-over-request',
      'burstable-low-priority-within-request',
      'guaranteed-high-priority-within-request',
    ]);
  });

  test('the request includes init containers, sidecars and overhead', () => {
    // 300Mi working set: over a 200Mi app request, but within the 400Mi an init container needs.
    const initHeavy = makePod({
      name: 'burstable-init-heavy',
      requests: { memory: '200Mi' },
      initContainers: [{ name: 'migrate', resources: { requests: { memory: '400Mi' } } }],
    });
    const plain = makePod({ name: 'burstable-plain', requests: { memory: '200Mi' } });
    const stats = statsFuncOf(makePodStats(initHeavy, { workingSetBytes: '300Mi' }), makePodStats(plain, { workingSetBytes: '250Mi' }));
    const pods = [initHeavy, plain];
    rankMemoryPressure(pods, stats);
    expect(podNames(pods)).toEqual(['burstable-plain', 'burstable-init-heavy']);
  });
});

describe('process and rankPIDPressure', () => {
  test('process puts the most processes first; a missing count is 0', () => {
    const few = makePod({ name: 'few-processes' });
    const many = makePod({ name: 'many-processes' });
    const none = makePod({ name: 'no-process-stats' });
    const stats = statsFuncOf(makePodStats(few, { processCount: 10 }), makePodStats(many, { processCount: 100 }), makePodStats(none));
    expect(sortedNames([none, few, many], process(stats))).toEqual(['many-processes', 'few-processes', 'no-process-stats']);
  });

  test('priority first, then process count; no stats first among equal priority', () => {
    const specs: { name: string; priority: number; processCount?: number; stats: boolean }[] = [
      { name: 'high-priority-many-processes', priority: 1, processCount: 1000, stats: true },
      { name: 'low-priority-few-processes', priority: -1, processCount: 10, stats: true },
      { name: 'default-priority-some-processes', priority: 0, processCount: 50, stats: true },
      { name: 'low-priority-many-processes', priority: -1, processCount: 100, stats: true },
      { name: 'default-priority-no-stats', priority: 0, stats: false },
      { name: 'high-priority-no-stats', priority: 1, stats: false },
    ];
    const pods = specs.map((s) => makePod({ name: s.name, priority: s.priority }));
    const stats = statsFuncOf(...specs.flatMap((s, i) => (s.stats ? [makePodStats(pods[i] as Pod, { processCount: s.processCount })] : [])));
    rankPIDPressure(pods, stats);
    expect(podNames(pods)).toEqual([
      'low-priority-many-processes',
      'low-priority-few-processes',
      'default-priority-no-stats',
      'default-priority-some-processes',
      'high-priority-no-stats',
      'high-priority-many-processes',
    ]);
  });
});

describe('local volumes', () => {
  const volumes = [
    hostPathVolume('host'),
    emptyDirVolume('scratch'),
    emptyDirVolume('scratch-explicit-default', { medium: '' }),
    emptyDirVolume('tmpfs', { medium: 'Memory' }),
    emptyDirVolume('huge', { medium: 'HugePages' }),
    configMapVolume('config'),
    gitRepoVolume('repo'),
    downwardAPIVolume('podinfo'),
    secretVolume('creds'),
  ];
  const pod = makePod({ name: 'many-volumes', volumes });

  test('hostPath, disk emptyDir, configMap and gitRepo are local; memory emptyDir, downwardAPI and secret are not', () => {
    expect(localVolumeNames(pod)).toEqual(['host', 'scratch', 'scratch-explicit-default', 'config', 'repo']);
  });

  test('localVolumeSource sums exactly the local volumes, first stat of each name', () => {
    const bytesByVolume: Record<string, number> = {};
    volumes.forEach((v, i) => (bytesByVolume[v.name] = 2 ** i));
    const podStats = makePodStats(pod, { volumes: bytesByVolume });
    podStats.volume?.push({ name: 'host', usedBytes: 1 << 20 });
    // host 1 + scratch 2 + scratch-explicit-default 4 + config 32 + repo 64
    expect(podDiskUsage(podStats, pod, ['localVolumeSource'])['ephemeral-storage']).toBe(103n);
  });
});

describe('podDiskUsage', () => {
  const pod = makePod({
    name: 'two-containers',
    containers: [{ name: 'app' }, { name: 'log' }],
    volumes: [emptyDirVolume('scratch')],
  });
  const podStats = makePodStats(pod, {
    containers: [
      makeContainerStats('app', { rootfsBytes: 1, rootfsInodes: 10, logsBytes: 2, logsInodes: 20 }),
      makeContainerStats('log', { rootfsBytes: 4, rootfsInodes: 40, logsBytes: 8, logsInodes: 80 }),
    ],
    volumes: { scratch: { usedBytes: 16, inodesUsed: 160 } },
  });
  const cases: { name: string; fs: FsStatsType[]; bytes: bigint; inodes: bigint }[] = [
    { name: 'root', fs: ['root'], bytes: 5n, inodes: 50n },
    { name: 'logs', fs: ['logs'], bytes: 10n, inodes: 100n },
    { name: 'localVolumeSource', fs: ['localVolumeSource'], bytes: 16n, inodes: 160n },
    { name: 'images adds nothing', fs: ['images'], bytes: 0n, inodes: 0n },
    { name: 'everything', fs: ['images', 'root', 'logs', 'localVolumeSource'], bytes: 31n, inodes: 310n },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(podDiskUsage(podStats, pod, tc.fs)).toEqual({ 'ephemeral-storage': tc.bytes, inodes: tc.inodes });
    });
  }
});

describe('disk comparators', () => {
  const allFs: FsStatsType[] = ['root', 'logs', 'localVolumeSource'];
  const specs: { name: string; request?: string; rootfs: string; logs: string; volume: string }[] = [
    { name: 'best-effort-low-usage', rootfs: '50Mi', logs: '100Mi', volume: '50Mi' }, // 200Mi
    { name: 'best-effort-high-usage', rootfs: '100Mi', logs: '150Mi', volume: '50Mi' }, // 300Mi
    { name: 'burstable-over-request', request: '100Mi', rootfs: '300Mi', logs: '100Mi', volume: '50Mi' }, // 450Mi, +350Mi
    { name: 'burstable-within-request', request: '1Gi', rootfs: '200Mi', logs: '150Mi', volume: '50Mi' }, // 400Mi, -624Mi
    { name: 'guaranteed-within-request-high-usage', request: '1Gi', rootfs: '500Mi', logs: '100Mi', volume: '50Mi' }, // 650Mi, -374Mi
  ];
  const pods = specs.map((s) =>
    makePod({ name: s.name, requests: s.request === undefined ? undefined : { 'ephemeral-storage': s.request }, volumes: [emptyDirVolume('local-volume')] }),
  );
  const stats = statsFuncOf(...specs.map((s, i) => makePodStats(pods[i] as Pod, { rootfsBytes: s.rootfs, logsBytes: s.logs, localVolumeBytes: s.volume })));

  test('disk orders by usage above the ephemeral-storage request', () => {
    expect(sortedNames(pods, disk(stats, allFs, 'ephemeral-storage'))).toEqual([
      'burstable-over-request',
      'best-effort-high-usage',
      'best-effort-low-usage',
      'guaranteed-within-request-high-usage',
      'burstable-within-request',
    ]);
  });

  test('exceedDiskRequests puts pods over their request first', () => {
    expect(sortedNames([...pods].reverse(), exceedDiskRequests(stats, allFs, 'ephemeral-storage'))).toEqual([
      'burstable-over-request',
      'best-effort-high-usage',
      'best-effort-low-usage',
      'guaranteed-within-request-high-usage',
      'burstable-within-request',
    ]);
  });

  test('usage equal to the request does not exceed it', () => {
    const exact = makePod({ name: 'exactly-at-request', requests: { 'ephemeral-storage': '100Mi' } });
    const over = makePod({ name: 'best-effort-tiny', requests: {} });
    const s = statsFuncOf(makePodStats(exact, { rootfsBytes: '100Mi' }), makePodStats(over, { rootfsBytes: 1 }));
    expect(exceedDiskRequests(s, ['root'], 'ephemeral-storage')(exact, over)).toBe(1);
  });

  test('inodes: every pod using an inode exceeds, since inodes cannot be requested', () => {
    const guaranteed = makePod({ name: 'guaranteed-few-inodes', requests: { 'ephemeral-storage': '1Gi' } });
    const idle = makePod({ name: 'best-effort-no-inodes' });
    const s = statsFuncOf(makePodStats(guaranteed, { rootfsInodes: 1 }), makePodStats(idle, { rootfsInodes: 0 }));
    expect(sortedNames([idle, guaranteed], exceedDiskRequests(s, ['root'], 'inodes'))).toEqual(['guaranteed-few-inodes', 'best-effort-no-inodes']);
  });

  test('inodes quirk: disk subtracts the ephemeral-storage byte request from the inode count', () => {
    const manyInodesBigRequest = makePod({ name: 'many-inodes-big-disk-request', requests: { 'ephemeral-storage': '1Mi' } });
    const fewInodesNoRequest = makePod({ name: 'few-inodes-no-request' });
    const s = statsFuncOf(makePodStats(manyInodesBigRequest, { rootfsInodes: 5000 }), makePodStats(fewInodesNoRequest, { rootfsInodes: 100 }));
    // 5000 - 1048576 < 100 - 0
    expect(sortedNames([manyInodesBigRequest, fewInodesNoRequest], disk(s, ['root'], 'inodes'))).toEqual(['few-inodes-no-request', 'many-inodes-big-disk-request']);
  });

  test('inodes quirk survives the full rank: the inode check ranks first, the byte request only orders within it', () => {
    const manyInodesBigRequest = makePod({ name: 'many-inodes-big-disk-request', requests: { 'ephemeral-storage': '1Mi' } });
    const noInodes = makePod({ name: 'no-inodes-no-request' });
    const s = statsFuncOf(makePodStats(manyInodesBigRequest, { rootfsInodes: 5000 }), makePodStats(noInodes, { rootfsInodes: 0 }));
    const ranked = [noInodes, manyInodesBigRequest];
    rankDiskPressureFunc(['root'], 'inodes')(ranked, s);
    expect(podNames(ranked)).toEqual(['many-inodes-big-disk-request', 'no-inodes-no-request']);
  });

  test('the same ordering by inodes (upstream TestOrderedbyInodes)', () => {
    const inodePods = ['best-effort-low', 'best-effort-high', 'burstable-high'].map((name) => makePod({ name, volumes: [emptyDirVolume('local-volume')] }));
    const counts = [200, 300, 450];
    const s = statsFuncOf(...inodePods.map((pod, i) => makePodStats(pod, { rootfsInodes: counts[i], logsInodes: 0, localVolumeInodes: 0 })));
    expect(sortedNames(inodePods, disk(s, allFs, 'inodes'))).toEqual(['burstable-high', 'best-effort-high', 'best-effort-low']);
  });

  test('a pod without stats goes first whatever its priority', () => {
    const heavy = makePod({ name: 'low-priority-heavy', priority: -100 });
    const noStats = makePod({ name: 'high-priority-no-stats', priority: 1000 });
    const s = statsFuncOf(makePodStats(heavy, { rootfsBytes: '10Gi' }));
    const ranked = [heavy, noStats];
    rankDiskPressureFunc(allFs, 'ephemeral-storage')(ranked, s);
    expect(podNames(ranked)).toEqual(['high-priority-no-stats', 'low-priority-heavy']);
  });
});

describe('rankFuncForSignal: the filesystem layout table', () => {
  // Three best-effort pods, each heavy on one kind of storage, given in the reverse of the
  // single-filesystem order so that every row that sorts visibly moves them.
  const volumeHeavy = makePod({ name: 'volume-heavy', volumes: [emptyDirVolume('scratch')] });
  const logsHeavy = makePod({ name: 'logs-heavy', volumes: [emptyDirVolume('scratch')] });
  const rootHeavy = makePod({ name: 'root-heavy', volumes: [emptyDirVolume('scratch')] });
  const input = [volumeHeavy, logsHeavy, rootHeavy];
  const stats = statsFuncOf(
    makePodStats(volumeHeavy, { rootfsBytes: 0, rootfsInodes: 0, logsBytes: 0, logsInodes: 0, localVolumeBytes: '100Mi', localVolumeInodes: 1000 }),
    makePodStats(logsHeavy, { rootfsBytes: 0, rootfsInodes: 0, logsBytes: '200Mi', logsInodes: 2000, localVolumeBytes: 0, localVolumeInodes: 0 }),
    makePodStats(rootHeavy, { rootfsBytes: '300Mi', rootfsInodes: 3000, logsBytes: 0, logsInodes: 0, localVolumeBytes: 0, localVolumeInodes: 0 }),
  );

  const single: readonly FsStatsType[] = ['images', 'root', 'logs', 'localVolumeSource'];
  const singleOrder = ['root-heavy', 'logs-heavy', 'volume-heavy'];
  const nodefsWithImagefs: readonly FsStatsType[] = ['logs', 'localVolumeSource'];
  const nodefsWithImagefsOrder = ['logs-heavy', 'volume-heavy', 'root-heavy'];
  const imagefsWithContainers: readonly FsStatsType[] = ['root', 'images'];
  const imagefsWithContainersOrder = ['root-heavy', 'volume-heavy', 'logs-heavy'];
  const nodefsSplit: readonly FsStatsType[] = ['logs', 'localVolumeSource', 'root'];
  const imagesOnly: readonly FsStatsType[] = ['images'];
  const inputOrder = ['volume-heavy', 'logs-heavy', 'root-heavy'];

  const layouts: { name: string; dedicatedImageFs: boolean; splitContainerFs: boolean; fs: Record<'nodefs' | 'imagefs' | 'containerfs', [readonly FsStatsType[], string[]]> }[] = [
    {
      name: 'single filesystem',
      dedicatedImageFs: false,
      splitContainerFs: false,
      fs: { nodefs: [single, singleOrder], imagefs: [single, singleOrder], containerfs: [single, singleOrder] },
    },
    {
      name: 'split containerfs without a dedicated imagefs ranks as a single filesystem',
      dedicatedImageFs: false,
      splitContainerFs: true,
      fs: { nodefs: [single, singleOrder], imagefs: [single, singleOrder], containerfs: [single, singleOrder] },
    },
    {
      name: 'dedicated imagefs',
      dedicatedImageFs: true,
      splitContainerFs: false,
      fs: {
        nodefs: [nodefsWithImagefs, nodefsWithImagefsOrder],
        imagefs: [imagefsWithContainers, imagefsWithContainersOrder],
        containerfs: [imagefsWithContainers, imagefsWithContainersOrder],
      },
    },
    {
      name: 'dedicated imagefs and split containerfs',
      dedicatedImageFs: true,
      splitContainerFs: true,
      fs: { nodefs: [nodefsSplit, singleOrder], imagefs: [imagesOnly, inputOrder], containerfs: [nodefsSplit, singleOrder] },
    },
  ];

  for (const layout of layouts) {
    for (const fs of ['nodefs', 'imagefs', 'containerfs'] as const) {
      for (const kind of ['available', 'inodesFree'] as const) {
        const signal = `${fs}.${kind}` as Signal;
        const [expectedFs, expectedOrder] = layout.fs[fs];
        test(`${layout.name}: ${signal} measures ${expectedFs.join(', ')}`, () => {
          expect(fsStatsForSignal(signal, layout.dedicatedImageFs, layout.splitContainerFs)).toEqual(expectedFs);
          const pods = [...input];
          rankFuncForSignal(signal, layout.dedicatedImageFs, layout.splitContainerFs)(pods, stats);
          expect(podNames(pods)).toEqual(expectedOrder);
        });
      }
    }
  }

  test('memory signals rank by memory pressure, on every layout', () => {
    for (const [dedicated, split] of [[false, false], [true, false], [true, true]] as const) {
      expect(rankFuncForSignal('memory.available', dedicated, split)).toBe(rankMemoryPressure);
      expect(rankFuncForSignal('allocatableMemory.available', dedicated, split)).toBe(rankMemoryPressure);
      expect(fsStatsForSignal('memory.available', dedicated, split)).toBeNull();
    }
  });

  test('pid.available ranks by PID pressure', () => {
    expect(rankFuncForSignal('pid.available', true, true)).toBe(rankPIDPressure);
    expect(fsStatsForSignal('pid.available', false, false)).toBeNull();
  });

  test('images only: usage is always 0, so priority, then the smallest ephemeral-storage request first', () => {
    const specs: { name: string; priority: number; request?: string }[] = [
      { name: 'default-priority-big-request', priority: 0, request: '5Gi' },
      { name: 'default-priority-small-request', priority: 0, request: '1Gi' },
      { name: 'low-priority-big-request', priority: -1, request: '2Gi' },
      { name: 'default-priority-no-request', priority: 0 },
    ];
    const pods = specs.map((s) => makePod({ name: s.name, priority: s.priority, requests: s.request === undefined ? undefined : { 'ephemeral-storage': s.request } }));
    const s = statsFuncOf(...pods.map((pod) => makePodStats(pod, { rootfsBytes: '1Gi', logsBytes: '1Gi' })));
    rankFuncForSignal('imagefs.available', true, true)(pods, s);
    expect(podNames(pods)).toEqual(['low-priority-big-request', 'default-priority-no-request', 'default-priority-small-request', 'default-priority-big-request']);
  });
});

describe('rankedPods', () => {
  test('memory: figures, rank order, input untouched', () => {
    const guaranteed = makePod({ name: 'guaranteed-low-usage', requests: { memory: '1Gi' } });
    const bestEffort = makePod({ name: 'best-effort-high-usage' });
    const critical = makePod({ name: 'system-node-critical', priority: 2_000_001_000 });
    const noStats = makePod({ name: 'burstable-no-stats', priority: 10, requests: { memory: '100Mi' } });
    const input = [guaranteed, bestEffort, critical, noStats];
    const stats = statsFuncOf(
      makePodStats(guaranteed, { workingSetBytes: '100Mi' }),
      makePodStats(bestEffort, { workingSetBytes: '300Mi' }),
      makePodStats(critical, { workingSetBytes: '2Gi' }),
    );
    const ranked = rankedPods('memory.available', false, false, input, stats);
    expect(podNames(input)).toEqual(['guaranteed-low-usage', 'best-effort-high-usage', 'system-node-critical', 'burstable-no-stats']);
    expect(ranked.map((r) => ({ ...r, pod: r.pod.metadata.name }))).toEqual([
      { pod: 'burstable-no-stats', critical: false, usage: null, request: 100n * Mi, priority: 10, exceedsRequest: false },
      { pod: 'best-effort-high-usage', critical: false, usage: 300n * Mi, request: 0n, priority: 0, exceedsRequest: true },
      { pod: 'system-node-critical', critical: true, usage: 2048n * Mi, request: 0n, priority: 2_000_001_000, exceedsRequest: true },
      { pod: 'guaranteed-low-usage', critical: false, usage: 100n * Mi, request: 1024n * Mi, priority: 0, exceedsRequest: false },
    ]);
  });

  test('nodefs with a dedicated imagefs: usage leaves the writable layer out', () => {
    const pod = makePod({ name: 'burstable-disk', requests: { 'ephemeral-storage': '100Mi' }, volumes: [emptyDirVolume('scratch')] });
    const stats = statsFuncOf(makePodStats(pod, { rootfsBytes: '1Gi', logsBytes: '50Mi', localVolumeBytes: '25Mi' }));
    const [single] = rankedPods('nodefs.available', false, false, [pod], stats);
    const [dedicated] = rankedPods('nodefs.available', true, false, [pod], stats);
    expect(single).toMatchObject({ usage: 1099n * Mi, request: 100n * Mi, exceedsRequest: true });
    expect(dedicated).toMatchObject({ usage: 75n * Mi, request: 100n * Mi, exceedsRequest: false });
  });

  test('inodes: request 0, so any inode use exceeds', () => {
    const pod = makePod({ name: 'guaranteed-disk', requests: { 'ephemeral-storage': '1Gi' } });
    const stats = statsFuncOf(makePodStats(pod, { rootfsInodes: 10, logsInodes: 5 }));
    expect(rankedPods('nodefs.inodesFree', false, false, [pod], stats)[0]).toMatchObject({ usage: 15n, request: 0n, exceedsRequest: true });
  });

  test('pid: usage is the process count, request 0, never exceeding', () => {
    const pod = makePod({ name: 'forker', priority: -3 });
    const stats = statsFuncOf(makePodStats(pod, { processCount: 42 }));
    expect(rankedPods('pid.available', false, false, [pod], stats)[0]).toMatchObject({ usage: 42n, request: 0n, priority: -3, exceedsRequest: false });
  });

  test('deterministic: pods every key ties keep the caller order', () => {
    const names = ['twin-a', 'twin-b', 'twin-c', 'twin-d'];
    const pods = names.map((name) => makePod({ name }));
    const stats: StatsFunc = statsFuncOf(...pods.map((pod) => makePodStats(pod, { workingSetBytes: '100Mi' })));
    expect(podNames(rankedPods('memory.available', false, false, pods, stats))).toEqual(names);
    expect(podNames(rankedPods('memory.available', false, false, [...pods].reverse(), stats))).toEqual([...names].reverse());
  });
});
