// The containerfs.* thresholds (kubelet `UpdateContainerFsThresholds`) in each filesystem layout:
// copied from nodefs or imagefs, user-given entries replaced in place with a note, and never-met
// thresholds synthesized from a missing source.

import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import { percentageRatio, type Threshold, type ThresholdValue } from '../../../src/api/threshold.js';
import { updateContainerFsThresholds } from '../../../src/eviction/containerfs-thresholds.js';

const q = (s: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(s) });
const pct = (percent: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(percent) });
const t = (signal: Signal, value: ThresholdValue, gracePeriodMs = 0, minReclaim: ThresholdValue | null = null): Threshold => ({ signal, value, gracePeriodMs, minReclaim });

const NEVER_MET = (signal: Signal): Threshold => ({ signal, value: { kind: 'percentage', ratio: 0 }, gracePeriodMs: 0, minReclaim: null, operatorSet: false });

const nodefsHard = t('nodefs.available', pct(10), 0, q('1Gi'));
const nodefsSoft = t('nodefs.available', pct(15), 90_000, pct(2));
const nodefsInodesHard = t('nodefs.inodesFree', pct(5));
const nodefsInodesSoft = t('nodefs.inodesFree', pct(8), 120_000);
const imagefsHard = t('imagefs.available', pct(15), 0, q('2Gi'));
const imagefsSoft = t('imagefs.available', pct(20), 60_000);
const imagefsInodesHard = t('imagefs.inodesFree', pct(5));
const imagefsInodesSoft = t('imagefs.inodesFree', pct(7), 30_000);
const memoryHard = t('memory.available', q('100Mi'));
const all = [memoryHard, nodefsHard, nodefsSoft, nodefsInodesHard, nodefsInodesSoft, imagefsHard, imagefsSoft, imagefsInodesHard, imagefsInodesSoft];

const fromNodefs: Threshold[] = [
  t('containerfs.available', pct(10), 0, q('1Gi')),
  t('containerfs.available', pct(15), 90_000, pct(2)),
  t('containerfs.inodesFree', pct(5)),
  t('containerfs.inodesFree', pct(8), 120_000),
];
const fromImagefs: Threshold[] = [
  t('containerfs.available', pct(15), 0, q('2Gi')),
  t('containerfs.available', pct(20), 60_000),
  t('containerfs.inodesFree', pct(5)),
  t('containerfs.inodesFree', pct(7), 30_000),
];

interface Case {
  readonly name: string;
  readonly input: readonly Threshold[];
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
  readonly expected: readonly Threshold[];
  readonly notes: readonly string[];
}

const cases: Case[] = [
  { name: 'single-filesystem-copies-nodefs', input: all, dedicatedImageFs: false, splitContainerFs: false, expected: [...all, ...fromNodefs], notes: [] },
  { name: 'dedicated-imagefs-copies-imagefs', input: all, dedicatedImageFs: true, splitContainerFs: false, expected: [...all, ...fromImagefs], notes: [] },
  { name: 'split-containerfs-copies-nodefs', input: all, dedicatedImageFs: true, splitContainerFs: true, expected: [...all, ...fromNodefs], notes: [] },
  { name: 'impossible-layout-adds-nothing', input: all, dedicatedImageFs: false, splitContainerFs: true, expected: all, notes: [] },
  {
    name: 'missing-sources-give-never-met-thresholds',
    input: [memoryHard, nodefsHard],
    dedicatedImageFs: false,
    splitContainerFs: false,
    expected: [memoryHard, nodefsHard, fromNodefs[0]!, NEVER_MET('containerfs.available'), NEVER_MET('containerfs.inodesFree'), NEVER_MET('containerfs.inodesFree')],
    notes: [],
  },
  {
    name: 'dedicated-imagefs-without-imagefs-thresholds',
    input: [nodefsHard],
    dedicatedImageFs: true,
    splitContainerFs: false,
    expected: [nodefsHard, NEVER_MET('containerfs.available'), NEVER_MET('containerfs.available'), NEVER_MET('containerfs.inodesFree'), NEVER_MET('containerfs.inodesFree')],
    notes: [],
  },
  {
    name: 'user-given-replaced-in-place',
    input: [t('containerfs.available', q('5Gi')), memoryHard, t('containerfs.inodesFree', pct(50), 10_000), nodefsHard, nodefsInodesSoft],
    dedicatedImageFs: false,
    splitContainerFs: false,
    expected: [
      fromNodefs[0]!,
      memoryHard,
      fromNodefs[3]!,
      nodefsHard,
      nodefsInodesSoft,
      // The two kinds the user did not give are appended in the kubelet's order.
      NEVER_MET('containerfs.available'),
      NEVER_MET('containerfs.inodesFree'),
    ],
    notes: ['found containerfs.available for hard eviction. ignoring', 'found containerfs.inodesFree for soft eviction. ignoring'],
  },
  {
    name: 'user-given-soft-without-soft-source-becomes-never-met-in-place',
    input: [t('containerfs.available', pct(30), 60_000), imagefsHard],
    dedicatedImageFs: true,
    splitContainerFs: false,
    expected: [NEVER_MET('containerfs.available'), imagefsHard, fromImagefs[0]!, NEVER_MET('containerfs.inodesFree'), NEVER_MET('containerfs.inodesFree')],
    notes: ['found containerfs.available for soft eviction. ignoring'],
  },
  {
    name: 'impossible-layout-keeps-user-given-but-still-notes',
    input: [t('containerfs.available', q('5Gi'))],
    dedicatedImageFs: false,
    splitContainerFs: true,
    expected: [t('containerfs.available', q('5Gi'))],
    notes: ['found containerfs.available for hard eviction. ignoring'],
  },
  {
    name: 'empty-config',
    input: [],
    dedicatedImageFs: false,
    splitContainerFs: false,
    expected: [NEVER_MET('containerfs.available'), NEVER_MET('containerfs.available'), NEVER_MET('containerfs.inodesFree'), NEVER_MET('containerfs.inodesFree')],
    notes: [],
  },
];

describe('updateContainerFsThresholds', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const input = [...tc.input];
      const got = updateContainerFsThresholds(input, tc.dedicatedImageFs, tc.splitContainerFs);
      expect(got.thresholds).toEqual(tc.expected);
      expect(got.notes.map((note) => note.message)).toEqual(tc.notes);
      expect(input).toEqual(tc.input);
    });
  }

  test('a synthesized threshold shares the source value object (no re-parsing)', () => {
    const got = updateContainerFsThresholds([nodefsHard], false, false);
    expect(got.thresholds[1]!.value).toBe(nodefsHard.value);
    expect(got.thresholds[1]!.operatorSet).toBeUndefined();
  });
});
