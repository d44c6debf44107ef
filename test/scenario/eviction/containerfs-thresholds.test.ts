// The containerfs.* thresholds the manager fits to the filesystem layout on its first pass:
// copied from nodefs (single filesystem, or split containerfs) or from imagefs (one runtime
// filesystem), user-given ones replaced with a note, and fitted again if the layout changes.

import type { Pod } from '../../../src/api/pod.js';
import { percentageRatio, type Threshold } from '../../../src/api/threshold.js';
import { makePod, makePodStats } from '../../fixtures/pods.js';
import { MINUTE_MS, Scenario, hardThreshold, makeConfig, percent, quantity, rankedNames, softThreshold, messages } from './support.js';

const nodefsHard = hardThreshold('nodefs.available', percent(10), quantity('1Gi'));
const nodefsSoft = softThreshold('nodefs.available', percent(15), MINUTE_MS);
const nodefsInodes = hardThreshold('nodefs.inodesFree', percent(5));
const imagefsHard = hardThreshold('imagefs.available', percent(20), quantity('2Gi'));
const imagefsInodes = hardThreshold('imagefs.inodesFree', percent(7));
const config = makeConfig({ thresholds: [nodefsHard, nodefsSoft, nodefsInodes, imagefsHard, imagefsInodes] });

// The containerfs thresholds in force, as [signal, grace, value ratio, min-reclaim, operatorSet].
function containerFs(thresholds: readonly Threshold[]): unknown[] {
  return thresholds
    .filter((t) => t.signal.startsWith('containerfs.'))
    .map((t) => [t.signal, t.gracePeriodMs, t.value.kind === 'percentage' ? t.value.ratio : t.value.quantity.nanos, t.minReclaim, t.operatorSet ?? true]);
}

const cases: { name: string; dedicatedImageFs: boolean; splitContainerFs: boolean; expected: unknown[] }[] = [
  {
    name: 'single-filesystem-from-nodefs',
    dedicatedImageFs: false,
    splitContainerFs: false,
    expected: [
      ['containerfs.available', 0, percentageRatio(10), nodefsHard.minReclaim, true],
      ['containerfs.available', MINUTE_MS, percentageRatio(15), null, true],
      ['containerfs.inodesFree', 0, percentageRatio(5), null, true],
      ['containerfs.inodesFree', 0, 0, null, false],
    ],
  },
  {
    name: 'dedicated-imagefs-from-imagefs',
    dedicatedImageFs: true,
    splitContainerFs: false,
    expected: [
      ['containerfs.available', 0, percentageRatio(20), imagefsHard.minReclaim, true],
      ['containerfs.available', 0, 0, null, false],
      ['containerfs.inodesFree', 0, percentageRatio(7), null, true],
      ['containerfs.inodesFree', 0, 0, null, false],
    ],
  },
  {
    name: 'split-containerfs-from-nodefs',
    dedicatedImageFs: true,
    splitContainerFs: true,
    expected: [
      ['containerfs.available', 0, percentageRatio(10), nodefsHard.minReclaim, true],
      ['containerfs.available', MINUTE_MS, percentageRatio(15), null, true],
      ['containerfs.inodesFree', 0, percentageRatio(5), null, true],
      ['containerfs.inodesFree', 0, 0, null, false],
    ],
  },
];

describe('containerfs thresholds per layout', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const s = new Scenario(config);
      expect(s.manager.thresholds).toBe(config.thresholds);
      s.dedicatedImageFs = tc.dedicatedImageFs;
      s.splitContainerFs = tc.splitContainerFs;
      s.node = { nodefs: { available: '50Gi', capacity: '100Gi' } };
      s.sync();
      expect(containerFs(s.manager.thresholds)).toEqual(tc.expected);
      // The configured thresholds come first, unchanged.
      expect(s.manager.thresholds.slice(0, 5)).toEqual(config.thresholds);
    });
  }
});

test('user-given containerfs thresholds are replaced, with a note on the pass that fits them', () => {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('containerfs.available', quantity('50Gi')), nodefsHard] }));
  s.node = { nodefs: { available: '50Gi', capacity: '100Gi' } };
  let result = s.sync();
  expect(messages(result)).toEqual(['found containerfs.available for hard eviction. ignoring']);
  expect(s.manager.thresholds[0]).toEqual({ signal: 'containerfs.available', value: nodefsHard.value, gracePeriodMs: 0, minReclaim: nodefsHard.minReclaim });
  // The user's 50Gi would be met with 40Gi available; the nodefs copy (10%) is not.
  s.step(10_000);
  s.node = { nodefs: { available: '40Gi', capacity: '100Gi' } };
  result = s.sync();
  expect(messages(result)).toEqual([]);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
});

test('containerfs pressure alone ranks by the filesystem that holds the writable layers', () => {
  const make = (name: string, rootfs: string, logs: string): [Pod, ReturnType<typeof makePodStats>] => {
    const pod = makePod({ name });
    return [pod, makePodStats(pod, { rootfsBytes: rootfs, logsBytes: logs })];
  };
  const pairs = [make('logs-large', '10Mi', '3Gi'), make('rootfs-large', '2Gi', '10Mi')];
  // The runtime reports its container filesystem on its own, low while imagefs itself is fine.
  const node = {
    nodefs: { available: '50Gi', capacity: '100Gi' },
    imagefs: { available: '50Gi', capacity: '100Gi' },
    containerfs: { available: '1Gi', capacity: '100Gi' },
  };
  for (const [dedicatedImageFs, splitContainerFs, rank] of [
    [true, false, ['rootfs-large', 'logs-large']], // writable layers on imagefs: rootfs only
    [true, true, ['logs-large', 'rootfs-large']], // writable layers on nodefs: logs + rootfs
    [false, false, ['logs-large', 'rootfs-large']], // one filesystem: everything
  ] as const) {
    const s = new Scenario(config);
    s.pods = pairs.map(([pod]) => pod);
    s.podStats = pairs.map(([, stats]) => stats);
    s.dedicatedImageFs = dedicatedImageFs;
    s.splitContainerFs = splitContainerFs;
    s.node = node;
    const result = s.sync();
    expect(result.reclaim?.threshold.signal).toBe('containerfs.available');
    expect(rankedNames(result)).toEqual(rank);
  }
});

test('a changed layout is fitted again (the kubelet discovers it only once)', () => {
  const s = new Scenario(config);
  s.node = { nodefs: { available: '50Gi', capacity: '100Gi' } };
  s.sync();
  expect(containerFs(s.manager.thresholds)[0]).toEqual(['containerfs.available', 0, percentageRatio(10), nodefsHard.minReclaim, true]);

  s.step(10_000);
  s.dedicatedImageFs = true;
  const result = s.sync();
  // Fitting again does not mistake its own copies for user-given thresholds.
  expect(result.notes.filter((note) => note.code === 'containerfs-threshold-ignored')).toEqual([]);
  expect(containerFs(s.manager.thresholds)[0]).toEqual(['containerfs.available', 0, percentageRatio(20), imagefsHard.minReclaim, true]);
  // Still exactly four containerfs thresholds: fitted from the configuration, not from the last fit.
  expect(containerFs(s.manager.thresholds)).toHaveLength(4);
});
