// Disk pressure on nodefs, imagefs and containerfs, bytes and inodes, in each of the three
// filesystem layouts: which thresholds are met, which is acted on, and which filesystem stats rank
// the pods (single filesystem: everything; dedicated imagefs: logs and volumes on nodefs, writable
// layers on imagefs; split containerfs: writable layers back on nodefs, imagefs holds images only).

import type { Pod } from '../../../src/api/pod.js';
import type { PodStats } from '../../../src/api/summary.js';
import { emptyDirVolume, makePod, makePodStats } from '../../fixtures/pods.js';
import {
  LOW_PRIORITY,
  MINUTE_MS,
  Scenario,
  evictedNames,
  hardThreshold,
  makeConfig,
  percent,
  rankedNames,
  signalsOf,
  type FsState,
  type NodeState,
} from './support.js';

type Layout = 'single' | 'dedicated-imagefs' | 'split-containerfs';

const HEALTHY: FsState = { available: '50Gi', capacity: '100Gi', inodesFree: 900_000, inodes: 1_000_000 };
const LOW_BYTES: FsState = { available: '5Gi', capacity: '100Gi', inodesFree: 900_000, inodes: 1_000_000 };
const LOW_INODES: FsState = { available: '50Gi', capacity: '100Gi', inodesFree: 40_000, inodes: 1_000_000 };

/**
 * The node stats the kubelet reports for two physical filesystems: `nodefs` (the kubelet's root)
 * and `runtimefs` (the runtime's image disk, when dedicated). Without a dedicated imagefs the
 * kubelet reports nodefs as imagefs; containerfs is imagefs unless split, then nodefs.
 */
function nodeFor(layout: Layout, nodefs: FsState, runtimefs: FsState): NodeState {
  if (layout === 'single') return { nodefs, imagefs: nodefs, containerfs: nodefs };
  if (layout === 'dedicated-imagefs') return { nodefs, imagefs: runtimefs, containerfs: runtimefs };
  return { nodefs, imagefs: runtimefs, containerfs: nodefs };
}

function diskScenario(layout: Layout, pods: Pod[], podStats: PodStats[]): Scenario {
  const s = new Scenario(
    makeConfig({
      thresholds: [
        hardThreshold('nodefs.available', percent(10)),
        hardThreshold('nodefs.inodesFree', percent(5)),
        hardThreshold('imagefs.available', percent(15)),
        hardThreshold('imagefs.inodesFree', percent(5)),
      ],
    }),
  );
  s.dedicatedImageFs = layout !== 'single';
  s.splitContainerFs = layout === 'split-containerfs';
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

// Three best-effort pods, given in this order: one with a large emptyDir, one with large logs,
// one with a large writable layer.
function bytesPods(): { pods: Pod[]; podStats: PodStats[] } {
  const volumePod = makePod({ name: 'local-volume-large', volumes: [emptyDirVolume('cache')] });
  const logsPod = makePod({ name: 'logs-large' });
  const rootfsPod = makePod({ name: 'rootfs-large' });
  return {
    pods: [volumePod, logsPod, rootfsPod],
    podStats: [
      makePodStats(volumePod, { rootfsBytes: 0, logsBytes: 0, localVolumeBytes: '1.5Gi' }),
      makePodStats(logsPod, { rootfsBytes: '10Mi', logsBytes: '2Gi' }),
      makePodStats(rootfsPod, { rootfsBytes: '3Gi', logsBytes: '10Mi' }),
    ],
  };
}

interface BytesCase {
  readonly name: string;
  readonly layout: Layout;
  readonly nodefs: FsState;
  readonly runtimefs: FsState;
  readonly met: string[];
  readonly reclaimSignal: string;
  readonly rank: string[];
  readonly message: string;
}

const TEN_PERCENT_OF_100GI = '10737418400'; // float32 10%, not 10Gi
const FIFTEEN_PERCENT_OF_100GI = '16106128000'; // float32 15%, not 16106127360

const bytesCases: BytesCase[] = [
  {
    name: 'single-filesystem-nodefs-low-ranks-every-usage',
    layout: 'single',
    nodefs: LOW_BYTES,
    runtimefs: HEALTHY,
    // One filesystem: the nodefs, imagefs and synthesized containerfs thresholds are all met.
    met: ['nodefs.available', 'imagefs.available', 'containerfs.available'],
    reclaimSignal: 'nodefs.available',
    rank: ['rootfs-large', 'logs-large', 'local-volume-large'],
    message:
      `The node was low on resource: ephemeral-storage. Threshold quantity: ${TEN_PERCENT_OF_100GI}, available: 5Gi. ` +
      'Container rootfs-large was using 3082Mi, request is 0, has larger consumption of ephemeral-storage. ',
  },
  {
    name: 'dedicated-imagefs-nodefs-low-ranks-logs-and-volumes',
    layout: 'dedicated-imagefs',
    nodefs: LOW_BYTES,
    runtimefs: HEALTHY,
    met: ['nodefs.available'],
    reclaimSignal: 'nodefs.available',
    rank: ['logs-large', 'local-volume-large', 'rootfs-large'],
    message:
      `The node was low on resource: ephemeral-storage. Threshold quantity: ${TEN_PERCENT_OF_100GI}, available: 5Gi. ` +
      'Container logs-large was using 2058Mi, request is 0, has larger consumption of ephemeral-storage. ',
  },
  {
    name: 'dedicated-imagefs-imagefs-low-ranks-writable-layers',
    layout: 'dedicated-imagefs',
    nodefs: HEALTHY,
    runtimefs: LOW_BYTES,
    // containerfs is synthesized from imagefs and observes the same filesystem.
    met: ['imagefs.available', 'containerfs.available'],
    reclaimSignal: 'imagefs.available',
    rank: ['rootfs-large', 'logs-large', 'local-volume-large'],
    message:
      `The node was low on resource: ephemeral-storage. Threshold quantity: ${FIFTEEN_PERCENT_OF_100GI}, available: 5Gi. ` +
      'Container rootfs-large was using 3082Mi, request is 0, has larger consumption of ephemeral-storage. ',
  },
  {
    name: 'split-containerfs-nodefs-low-ranks-writable-layers-too',
    layout: 'split-containerfs',
    nodefs: LOW_BYTES,
    runtimefs: HEALTHY,
    met: ['nodefs.available', 'containerfs.available'],
    reclaimSignal: 'nodefs.available',
    rank: ['rootfs-large', 'logs-large', 'local-volume-large'],
    message:
      `The node was low on resource: ephemeral-storage. Threshold quantity: ${TEN_PERCENT_OF_100GI}, available: 5Gi. ` +
      'Container rootfs-large was using 3082Mi, request is 0, has larger consumption of ephemeral-storage. ',
  },
  {
    name: 'split-containerfs-imagefs-low-has-no-pod-usage',
    layout: 'split-containerfs',
    nodefs: HEALTHY,
    runtimefs: LOW_BYTES,
    met: ['imagefs.available'],
    reclaimSignal: 'imagefs.available',
    // Images are not attributed to pods: nobody exceeds, equal priority and request keep input order.
    rank: ['local-volume-large', 'logs-large', 'rootfs-large'],
    // Its container uses nothing above its request, so no container sentence.
    message: `The node was low on resource: ephemeral-storage. Threshold quantity: ${FIFTEEN_PERCENT_OF_100GI}, available: 5Gi. `,
  },
];

describe('disk pressure, bytes', () => {
  for (const tc of bytesCases) {
    test(tc.name, () => {
      const { pods, podStats } = bytesPods();
      const s = diskScenario(tc.layout, pods, podStats);
      s.node = nodeFor(tc.layout, HEALTHY, HEALTHY);
      expect(s.sync().nodeConditions).toEqual([]);

      s.step(MINUTE_MS);
      s.node = nodeFor(tc.layout, tc.nodefs, tc.runtimefs);
      const result = s.sync();
      expect(result.nodeConditions).toEqual(['DiskPressure']);
      expect(signalsOf(result.thresholdsMet)).toEqual(tc.met);
      expect(result.reclaim).toMatchObject({ resource: 'ephemeral-storage', threshold: { signal: tc.reclaimSignal } });
      expect(rankedNames(result)).toEqual(tc.rank);
      expect(evictedNames(result)).toEqual([tc.rank[0]]);
      expect(result.evictions[0]!.gracePeriodSeconds).toBe(1);
      expect(result.evictions[0]!.message).toBe(tc.message);
      expect(result.evictions[0]!.annotations.starved_resource).toBe('ephemeral-storage');
    });
  }
});

test('disk pressure: split containerfs, imagefs low ranks by priority then smallest ephemeral-storage request', () => {
  const make = (name: string, request: string | undefined, priority?: number): Pod =>
    makePod({ name, priority, requests: request === undefined ? undefined : { 'ephemeral-storage': request } });
  const pods = [make('request-large', '2Gi'), make('request-none', undefined), make('low-priority-request-large', '2Gi', LOW_PRIORITY), make('request-small', '100Mi')];
  const podStats = pods.map((pod) => makePodStats(pod, { rootfsBytes: '1Gi', logsBytes: '1Mi' }));
  const s = diskScenario('split-containerfs', pods, podStats);
  s.node = nodeFor('split-containerfs', HEALTHY, LOW_BYTES);
  const result = s.sync();
  expect(result.reclaim?.threshold.signal).toBe('imagefs.available');
  expect(rankedNames(result)).toEqual(['low-priority-request-large', 'request-none', 'request-small', 'request-large']);
  expect(result.ranking.every((r) => r.usage === 0n)).toBe(true);
});

describe('disk pressure, inodes', () => {
  // The inode quirk: the `disk` comparator subtracts the ephemeral-storage *byte* request from the
  // inode usage, so a pod with a byte request ranks after one using far fewer inodes.
  function inodePods(): { pods: Pod[]; podStats: PodStats[] } {
    const many = makePod({ name: 'many-inodes-with-byte-request', requests: { 'ephemeral-storage': '1Mi' } });
    const few = makePod({ name: 'few-inodes-no-request' });
    const none = makePod({ name: 'no-inodes' });
    return {
      pods: [many, few, none],
      podStats: [
        makePodStats(many, { rootfsBytes: '1Mi', rootfsInodes: 5000, logsBytes: 0, logsInodes: 0 }),
        makePodStats(few, { rootfsBytes: '1Mi', rootfsInodes: 1000, logsBytes: 0, logsInodes: 0 }),
        makePodStats(none, { rootfsBytes: 0, rootfsInodes: 0, logsBytes: 0, logsInodes: 0 }),
      ],
    };
  }

  const cases: { name: string; layout: Layout; nodefs: FsState; runtimefs: FsState; met: string[]; rank: string[] }[] = [
    {
      name: 'single-filesystem',
      layout: 'single',
      nodefs: LOW_INODES,
      runtimefs: HEALTHY,
      met: ['nodefs.inodesFree', 'imagefs.inodesFree', 'containerfs.inodesFree'],
      rank: ['few-inodes-no-request', 'many-inodes-with-byte-request', 'no-inodes'],
    },
    {
      name: 'dedicated-imagefs-imagefs',
      layout: 'dedicated-imagefs',
      nodefs: HEALTHY,
      runtimefs: LOW_INODES,
      met: ['imagefs.inodesFree', 'containerfs.inodesFree'],
      rank: ['few-inodes-no-request', 'many-inodes-with-byte-request', 'no-inodes'],
    },
    {
      name: 'dedicated-imagefs-nodefs-sees-no-writable-layer-inodes',
      layout: 'dedicated-imagefs',
      nodefs: LOW_INODES,
      runtimefs: HEALTHY,
      met: ['nodefs.inodesFree'],
      // No pod uses inodes on nodefs here; 0 - request still orders them: no request first.
      rank: ['few-inodes-no-request', 'no-inodes', 'many-inodes-with-byte-request'],
    },
    {
      name: 'split-containerfs-nodefs',
      layout: 'split-containerfs',
      nodefs: LOW_INODES,
      runtimefs: HEALTHY,
      met: ['nodefs.inodesFree', 'containerfs.inodesFree'],
      rank: ['few-inodes-no-request', 'many-inodes-with-byte-request', 'no-inodes'],
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const { pods, podStats } = inodePods();
      const s = diskScenario(tc.layout, pods, podStats);
      s.node = nodeFor(tc.layout, tc.nodefs, tc.runtimefs);
      const result = s.sync();
      expect(result.nodeConditions).toEqual(['DiskPressure']);
      expect(signalsOf(result.thresholdsMet)).toEqual(tc.met);
      expect(result.reclaim?.resource).toBe('inodes');
      expect(rankedNames(result)).toEqual(tc.rank);
      const eviction = result.evictions[0]!;
      expect(eviction.pod.metadata.name).toBe(tc.rank[0]);
      // 5% of 1,000,000 inodes in float32 is 50000, printed BinarySI; the free count prints DecimalSI.
      expect(eviction.message).toBe('The node was low on resource: inodes. Threshold quantity: 50000, available: 40k. ');
      expect(eviction.annotations).toEqual({ offending_containers: '', offending_containers_usage: '', starved_resource: 'inodes' });
    });
  }
});

test('disk pressure: bytes and inodes both low act on bytes first (signal order)', () => {
  const { pods, podStats } = bytesPods();
  const s = diskScenario('dedicated-imagefs', pods, podStats);
  s.node = nodeFor('dedicated-imagefs', { available: '5Gi', capacity: '100Gi', inodesFree: 40_000, inodes: 1_000_000 }, HEALTHY);
  const result = s.sync();
  expect(signalsOf(result.thresholdsMet)).toEqual(['nodefs.available', 'nodefs.inodesFree']);
  expect(result.reclaim?.threshold.signal).toBe('nodefs.available');
});
