// `replay` with a KubeletConfiguration's featureGates: for each gate that changes a decision, the
// same recording replayed with the gate at the kubelet's default and flipped, and the decisions
// that differ, as the kubelet's differ. HugepageAwareEviction has nothing to change in a replay:
// a recorded summary already carries the kubelet's own adjustment, and is never adjusted again.

import { emptyDirVolume, makeContainer, makePod, makePodStats } from '../fixtures/pods.js';
import { replay } from './run-cli.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const T0 = Date.UTC(2026, 10, 1, 12, 0, 0);
const at = (seconds: number): string => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

interface OutLine {
  nodeConditions: string[];
  thresholdsMet: { signal: string; available: string }[];
  evictions: { pod: string; message: string; annotations: Record<string, string> }[];
}

const KUBELET = 'apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n';
const POD_LEVEL_OFF = 'featureGates:\n  PodLevelResources: false\n  InPlacePodLevelResourcesVerticalScaling: false\n  PodLevelResourcesFixDefaulting: false\n  PodLevelResourcesFixKubeletQOSClass: false\n';

async function run(config: string, steps: unknown[]): Promise<OutLine[]> {
  const result = await replay(config, steps);
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.lines as unknown as OutLine[];
}

function memoryNode(availableBytes: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  const capacityBytes = 8 * Gi;
  return { nodeName: 'node-a', memory: { time: at(0), availableBytes, workingSetBytes: capacityBytes - availableBytes }, ...extra };
}

const cases: { gate: string; config: string; flipped: string; steps: () => unknown[]; atDefault: (lines: OutLine[]) => void; whenFlipped: (lines: OutLine[]) => void }[] = [
  {
    gate: 'PodLevelResources',
    config: `${KUBELET}evictionHard:\n  memory.available: 1Gi\n`,
    flipped: POD_LEVEL_OFF,
    steps: () => {
      const within = makePod({ name: 'within', requests: { memory: '500Mi' } });
      const podLimitsOnly = makePod({ name: 'pod-limits-only', containers: [makeContainer('app', { requests: { memory: '400Mi' } })], podResources: { limits: { memory: '1Gi' } } });
      const stats = [makePodStats(within, { workingSetBytes: 450 * Mi, containerWorkingSetBytes: 450 * Mi }), makePodStats(podLimitsOnly, { workingSetBytes: 300 * Mi, containerWorkingSetBytes: 300 * Mi })];
      return [{ time: at(0), summary: { node: memoryNode(500 * Mi), pods: stats }, pods: [within, podLimitsOnly] }];
    },
    atDefault: (lines) => expect(lines[0]?.evictions.map((e) => e.pod)).toEqual(['default/pod-limits-only']),
    whenFlipped: (lines) => expect(lines[0]?.evictions.map((e) => e.pod)).toEqual(['default/within']),
  },
  {
    gate: 'KubeletSeparateDiskGC',
    config: `${KUBELET}evictionHard:\n  memory.available: 1Gi\n`,
    flipped: 'featureGates:\n  KubeletSeparateDiskGC: false\n',
    steps: () => {
      const hog = makePod({ name: 'hog' });
      const fs = (availableBytes: number): Record<string, unknown> => ({ time: at(0), availableBytes, capacityBytes: 100 * Gi, inodesFree: 1_000_000, inodes: 2_000_000 });
      const node = memoryNode(500 * Mi, { fs: fs(50 * Gi), runtime: { imageFs: fs(20 * Gi), containerFs: fs(50 * Gi) } });
      return [{ time: at(0), summary: { node, pods: [makePodStats(hog, { workingSetBytes: 2 * Gi, containerWorkingSetBytes: 2 * Gi })] }, pods: [hog], dedicatedImageFs: true, splitContainerFs: true }];
    },
    atDefault: (lines) => expect(lines[0]?.evictions.map((e) => e.pod)).toEqual(['default/hog']),
    whenFlipped: (lines) => {
      // The kubelet reports the pressure and evicts nobody: it has no rank function on this layout.
      expect(lines[0]?.nodeConditions).toEqual(['MemoryPressure']);
      expect(lines[0]?.evictions).toEqual([]);
    },
  },
  {
    gate: 'InPlacePodVerticalScalingMemoryBackedVolumes',
    config: `${KUBELET}evictionHard:\n  memory.available: 100Mi\n`,
    flipped: 'featureGates:\n  InPlacePodVerticalScalingMemoryBackedVolumes: true\n',
    steps: () => {
      const tmpfs = makePod({ name: 'tmpfs', volumes: [emptyDirVolume('scratch', { medium: 'Memory', sizeLimit: '64Mi' })] });
      return [{ time: at(0), summary: { node: memoryNode(4 * Gi), pods: [makePodStats(tmpfs, { volumes: { scratch: 128 * Mi } })] }, pods: [tmpfs] }];
    },
    atDefault: (lines) => expect(lines[0]?.evictions.map((e) => e.message)).toEqual(['Usage of EmptyDir volume "scratch" exceeds the limit "64Mi". ']),
    whenFlipped: (lines) => expect(lines[0]?.evictions).toEqual([]),
  },
  {
    gate: 'HugepageAwareEviction',
    config: `${KUBELET}evictionHard:\n  memory.available: 1Gi\n`,
    flipped: 'featureGates:\n  HugepageAwareEviction: false\n',
    steps: () => [{ time: at(0), summary: { node: memoryNode(900 * Mi), pods: [] }, pods: [] }],
    // The recorded availableBytes is the signal, gate on or off: 900Mi, met.
    atDefault: (lines) => expect(lines[0]?.thresholdsMet).toEqual([expect.objectContaining({ signal: 'memory.available', available: '900Mi' })]),
    whenFlipped: (lines) => expect(lines[0]?.thresholdsMet).toEqual([expect.objectContaining({ signal: 'memory.available', available: '900Mi' })]),
  },
];

describe.each(cases)('replay with $gate', ({ config, flipped, steps, atDefault, whenFlipped }) => {
  test("at the kubelet's default", async () => {
    atDefault(await run(config, steps()));
  });
  test('flipped in featureGates', async () => {
    whenFlipped(await run(`${config}${flipped}`, steps()));
  });
});
