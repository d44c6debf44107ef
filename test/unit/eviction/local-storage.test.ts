import type { Pod } from '../../../src/api/pod.js';
import type { PodStats } from '../../../src/api/summary.js';
import {
  goQuote,
  localStorageEviction,
  localStorageViolations,
  type LocalStorageLimit,
} from '../../../src/eviction/local-storage.js';
import {
  emptyDirVolume,
  makeContainer,
  makeContainerStats,
  makePod,
  makePodStats,
  mirrorAnnotations,
  podNames,
  statsFuncOf,
  type PodOptions,
  type PodStatsOptions,
} from '../../fixtures/pods.js';

interface Case {
  name: string;
  pod: PodOptions;
  stats: PodStatsOptions;
  dedicatedImageFs?: boolean;
  /** The one eviction expected, or null for none. */
  expected: { limit: LocalStorageLimit; message: string } | null;
}

function evict(pod: Pod, podStats: PodStats, dedicatedImageFs = false) {
  return localStorageEviction([pod], statsFuncOf(podStats), dedicatedImageFs);
}

describe('localStorageEviction, one pod at a time', () => {
  const cases: Case[] = [
    {
      name: 'emptyDir over its sizeLimit',
      pod: { name: 'cache-overflow', volumes: [emptyDirVolume('cache', { sizeLimit: '1Gi' })] },
      stats: { volumes: { cache: String(1024 * 1024 * 1024 + 1) } },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Gi". ' },
    },
    {
      name: 'emptyDir exactly at its sizeLimit is not evicted (strict)',
      pod: { name: 'cache-full', volumes: [emptyDirVolume('cache', { sizeLimit: '1Gi' })] },
      stats: { volumes: { cache: '1Gi' } },
      expected: null,
    },
    {
      name: 'emptyDir without a sizeLimit is not checked',
      pod: { name: 'cache-unlimited', volumes: [emptyDirVolume('cache')] },
      stats: { volumes: { cache: '100Gi' } },
      expected: null,
    },
    {
      name: 'a zero sizeLimit is not a limit',
      pod: { name: 'cache-zero-limit', volumes: [emptyDirVolume('cache', { sizeLimit: '0' })] },
      stats: { volumes: { cache: '1Mi' } },
      expected: null,
    },
    {
      name: 'emptyDir without a volume stat is not checked',
      pod: { name: 'cache-no-stats', volumes: [emptyDirVolume('cache', { sizeLimit: '1Mi' })] },
      stats: { volumes: { other: '1Gi' } },
      expected: null,
    },
    {
      name: 'memory-medium emptyDir with a stat is checked',
      pod: { name: 'tmpfs-overflow', volumes: [emptyDirVolume('shm', { medium: 'Memory', sizeLimit: '64Mi' })] },
      stats: { volumes: { shm: '65Mi' } },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "shm" exceeds the limit "64Mi". ' },
    },
    {
      name: 'the sizeLimit prints in canonical form',
      pod: { name: 'cache-canonical', volumes: [emptyDirVolume('cache', { sizeLimit: '1024Mi' })] },
      stats: { volumes: { cache: '2Gi' } },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Gi". ' },
    },
    {
      name: 'a decimal sizeLimit',
      pod: { name: 'cache-decimal', volumes: [emptyDirVolume('cache', { sizeLimit: '500M' })] },
      stats: { volumes: { cache: '1G' } },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "cache" exceeds the limit "500M". ' },
    },
    {
      name: 'the first emptyDir over its limit in spec order is named',
      pod: {
        name: 'two-caches',
        volumes: [emptyDirVolume('first', { sizeLimit: '1Mi' }), emptyDirVolume('second', { sizeLimit: '1Mi' })],
      },
      stats: { volumes: { second: '2Mi', first: '3Mi' } },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "first" exceeds the limit "1Mi". ' },
    },
    {
      name: 'pod total over the sum of container limits',
      pod: {
        name: 'pod-total-overflow',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } }), makeContainer('log', { limits: { 'ephemeral-storage': '1Gi' } })],
      },
      stats: { ephemeralBytes: String(2 * 1024 * 1024 * 1024 + 1) },
      expected: { limit: 'ephemeralpodfs.limit', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 2Gi. ' },
    },
    {
      name: 'pod total exactly at the limit is not evicted (strict)',
      pod: { name: 'pod-total-full', limits: { 'ephemeral-storage': '2Gi' } },
      stats: { ephemeralBytes: '2Gi' },
      expected: null,
    },
    {
      name: 'quirk: one container with a limit holds the whole pod to it',
      pod: {
        name: 'one-limited-container',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } }), makeContainer('unlimited-sidecar')],
      },
      stats: { ephemeralBytes: '1536Mi', containers: [makeContainerStats('app', { rootfsBytes: '10Mi', logsBytes: '10Mi' })] },
      expected: { limit: 'ephemeralpodfs.limit', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. ' },
    },
    {
      name: 'no container limit: pod total is not checked',
      pod: { name: 'unlimited-pod' },
      stats: { ephemeralBytes: '100Gi' },
      expected: null,
    },
    {
      name: 'pod total uses init containers by max',
      pod: {
        name: 'init-limit',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })],
        initContainers: [makeContainer('unpack', { limits: { 'ephemeral-storage': '4Gi' } })],
      },
      stats: { ephemeralBytes: '3Gi' },
      expected: null,
    },
    {
      name: 'pod total without an ephemeral-storage stat counts as 0',
      pod: { name: 'no-ephemeral-stat', limits: { 'ephemeral-storage': '1Mi' } },
      stats: { workingSetBytes: '1Gi' },
      expected: null,
    },
    {
      name: 'container over its limit, writable layer and logs counted without a dedicated imagefs',
      pod: { name: 'container-overflow', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })] },
      stats: { containers: [makeContainerStats('app', { rootfsBytes: '600Mi', logsBytes: '600Mi' })] },
      expected: { limit: 'ephemeralcontainerfs.limit', message: 'Container app exceeded its local ephemeral storage limit "1Gi". ' },
    },
    {
      name: 'with a dedicated imagefs the writable layer is not counted',
      pod: { name: 'container-layer-on-imagefs', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })] },
      stats: { containers: [makeContainerStats('app', { rootfsBytes: '600Mi', logsBytes: '600Mi' })] },
      dedicatedImageFs: true,
      expected: null,
    },
    {
      name: 'with a dedicated imagefs logs alone can exceed',
      pod: { name: 'container-chatty', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })] },
      stats: { containers: [makeContainerStats('app', { logsBytes: '1025Mi' })] },
      dedicatedImageFs: true,
      expected: { limit: 'ephemeralcontainerfs.limit', message: 'Container app exceeded its local ephemeral storage limit "1Gi". ' },
    },
    {
      name: 'container exactly at its limit is not evicted (strict)',
      pod: { name: 'container-full', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })] },
      stats: { containers: [makeContainerStats('app', { rootfsBytes: '512Mi', logsBytes: '512Mi' })] },
      expected: null,
    },
    {
      name: 'the first container stat over its limit, in stats order, is named',
      pod: {
        name: 'two-containers-over',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Mi' } }), makeContainer('log', { limits: { 'ephemeral-storage': '1Mi' } })],
      },
      stats: { containers: [makeContainerStats('log', { logsBytes: '2Mi' }), makeContainerStats('app', { logsBytes: '2Mi' })] },
      expected: { limit: 'ephemeralcontainerfs.limit', message: 'Container log exceeded its local ephemeral storage limit "1Mi". ' },
    },
    {
      name: 'init container limits are not checked per container',
      pod: {
        name: 'init-container-over',
        containers: [makeContainer('app')],
        initContainers: [makeContainer('unpack', { limits: { 'ephemeral-storage': '1Mi' } })],
      },
      stats: { containers: [makeContainerStats('unpack', { logsBytes: '2Mi' })] },
      expected: null,
    },
    {
      name: 'a zero container limit is not checked',
      pod: { name: 'container-zero-limit', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '0' } })] },
      stats: { containers: [makeContainerStats('app', { logsBytes: '2Mi' })] },
      expected: null,
    },
    {
      name: 'checks run in order: emptyDir before pod total',
      pod: { name: 'everything-over', limits: { 'ephemeral-storage': '1Mi' }, volumes: [emptyDirVolume('cache', { sizeLimit: '1Mi' })] },
      stats: { volumes: { cache: '2Mi' }, ephemeralBytes: '10Mi', logsBytes: '10Mi' },
      expected: { limit: 'emptydirfs.limit', message: 'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ' },
    },
    {
      name: 'checks run in order: pod total before container',
      pod: { name: 'pod-and-container-over', limits: { 'ephemeral-storage': '1Mi' } },
      stats: { ephemeralBytes: '10Mi', logsBytes: '10Mi' },
      expected: { limit: 'ephemeralpodfs.limit', message: 'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ' },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod(tc.pod);
      const evictions = evict(pod, makePodStats(pod, tc.stats), tc.dedicatedImageFs);
      if (tc.expected === null) {
        expect(evictions).toEqual([]);
        return;
      }
      expect(evictions).toEqual([
        {
          pod,
          reason: { kind: 'local-storage', limit: tc.expected.limit },
          gracePeriodSeconds: 1,
          message: tc.expected.message,
          annotations: {},
          condition: null,
        },
      ]);
    });
  }
});

describe('localStorageEviction over the node', () => {
  const cacheOverflow = makePod({ name: 'cache-overflow', volumes: [emptyDirVolume('cache', { sizeLimit: '1Mi' })] });
  const withinLimits = makePod({ name: 'within-limits', limits: { 'ephemeral-storage': '1Gi' } });
  const podTotalOverflow = makePod({ name: 'pod-total-overflow', limits: { 'ephemeral-storage': '1Mi' } });
  const noStats = makePod({ name: 'no-stats', limits: { 'ephemeral-storage': '1Mi' } });
  const criticalOverflow = makePod({
    name: 'system-node-critical-overflow',
    priority: 2_000_001_000,
    limits: { 'ephemeral-storage': '1Mi' },
    volumes: [emptyDirVolume('cache', { sizeLimit: '1Mi' })],
  });
  const mirrorOverflow = makePod({
    name: 'mirror-overflow',
    annotations: mirrorAnnotations(),
    containers: [makeContainer('etcd', { limits: { 'ephemeral-storage': '1Mi' } })],
  });
  const containerOverflow = makePod({ name: 'container-overflow', containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Mi' } })] });
  const pods = [cacheOverflow, withinLimits, criticalOverflow, podTotalOverflow, noStats, mirrorOverflow, containerOverflow];
  const stats = statsFuncOf(
    makePodStats(cacheOverflow, { volumes: { cache: '2Mi' } }),
    makePodStats(withinLimits, { ephemeralBytes: '100Mi', logsBytes: '100Mi' }),
    makePodStats(criticalOverflow, { volumes: { cache: '2Mi' }, ephemeralBytes: '2Mi', logsBytes: '2Mi' }),
    makePodStats(podTotalOverflow, { ephemeralBytes: '2Mi' }),
    makePodStats(mirrorOverflow, { ephemeralBytes: '2Mi', logsBytes: '2Mi' }),
    makePodStats(containerOverflow, { logsBytes: '2Mi' }),
  );

  test('every non-critical violator is evicted, in pod order', () => {
    const evictions = localStorageEviction(pods, stats, false);
    expect(podNames(evictions)).toEqual(['cache-overflow', 'pod-total-overflow', 'container-overflow']);
    expect(evictions.map((e) => e.reason)).toEqual([
      { kind: 'local-storage', limit: 'emptydirfs.limit' },
      { kind: 'local-storage', limit: 'ephemeralpodfs.limit' },
      { kind: 'local-storage', limit: 'ephemeralcontainerfs.limit' },
    ]);
    expect(evictions.every((e) => e.gracePeriodSeconds === 1 && e.condition === null && Object.keys(e.annotations).length === 0)).toBe(true);
  });

  test('a critical violator is reported by every check but evicted by none', () => {
    const violations = localStorageViolations(pods, stats, false).filter((v) => v.critical);
    expect(violations.map((v) => [v.pod.metadata.name, v.limit])).toEqual([
      ['system-node-critical-overflow', 'emptydirfs.limit'],
      ['system-node-critical-overflow', 'ephemeralpodfs.limit'],
      ['system-node-critical-overflow', 'ephemeralcontainerfs.limit'],
      ['mirror-overflow', 'ephemeralpodfs.limit'],
      ['mirror-overflow', 'ephemeralcontainerfs.limit'],
    ]);
  });

  test('a non-critical violator is reported once, for its first check', () => {
    const violations = localStorageViolations(pods, stats, false).filter((v) => !v.critical);
    expect(violations.map((v) => v.message)).toEqual([
      'Usage of EmptyDir volume "cache" exceeds the limit "1Mi". ',
      'Pod ephemeral local storage usage exceeds the total limit of containers 1Mi. ',
      'Container app exceeded its local ephemeral storage limit "1Mi". ',
    ]);
  });

  test('no pods, no evictions', () => {
    expect(localStorageEviction([], stats, false)).toEqual([]);
  });
});

describe("goQuote is Go's %q", () => {
  const cases: [string, string][] = [
    ['cache', '"cache"'],
    ['1Gi', '"1Gi"'],
    ['', '""'],
    ['say "hi"', '"say \\"hi\\""'],
    ['back\\slash', '"back\\\\slash"'],
    ['line\nbreak\ttab', '"line\\nbreak\\ttab"'],
    ['\x01', '"\\x01"'],
    ['héllo', '"héllo"'],
  ];
  for (const [raw, quoted] of cases) {
    test(JSON.stringify(raw), () => {
      expect(goQuote(raw)).toBe(quoted);
    });
  }
});
