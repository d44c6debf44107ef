// The threshold formula the notifiers arm (kubelet UpdateThreshold): capacity - threshold +
// inactive_file per memory threshold, hard and soft, the kubelet's descriptions and problem wording,
// and the exact working-set comparison the psi fast check uses.

import { summary, threshold } from '../../fixtures/memory-thresholds.js';
import { formatQuantity } from '../../../src/api/quantity.js';
import type { Summary } from '../../../src/api/summary.js';
import type { Threshold } from '../../../src/api/threshold.js';
import { computeMemoryThresholds, isProblem, memoryThresholdDescription, workingSetMeetsThreshold, type MemoryThresholdFigures } from '../../../src/api/memory-thresholds.js';

const GI = 1024 ** 3;
const MI = 1024 ** 2;

describe('computeMemoryThresholds (kubelet UpdateThreshold)', () => {
  interface Case {
    name: string;
    summary: Summary;
    thresholds: Threshold[];
    expected: ({ description: string; memcgThresholdBytes: bigint; capacityBytes: bigint; threshold: string; inactiveFileBytes: bigint } | { description: string; problem: string })[];
  }
  const cases: Case[] = [
    {
      name: 'hard-memory-available-quantity-adds-inactive-file-back',
      summary: summary({ availableBytes: 3 * GI, usageBytes: 5 * GI, workingSetBytes: 4 * GI }),
      thresholds: [threshold('memory.available', '100Mi')],
      // capacity 7Gi - 100Mi + inactive 1Gi
      expected: [{ description: 'hard memory eviction threshold', memcgThresholdBytes: BigInt(8 * GI - 100 * MI), capacityBytes: BigInt(7 * GI), threshold: '100Mi', inactiveFileBytes: BigInt(GI) }],
    },
    {
      name: 'soft-allocatable-percentage-is-float32-of-the-pods-capacity',
      summary: summary({ availableBytes: 1, usageBytes: 1, workingSetBytes: 1 }, { availableBytes: 2_000_000_000, usageBytes: 7_000_000_000, workingSetBytes: 6_000_000_000 }),
      thresholds: [threshold('allocatableMemory.available', '10%', 60_000)],
      // trunc(8e9 * float32(0.1)) = 800000011, not 800000000
      expected: [{ description: 'soft allocatable memory eviction threshold', memcgThresholdBytes: 8_000_000_000n - 800_000_011n + 1_000_000_000n, capacityBytes: 8_000_000_000n, threshold: '800000011', inactiveFileBytes: 1_000_000_000n }],
    },
    {
      name: 'hard-and-soft-of-both-signals-in-the-given-order',
      summary: summary({ availableBytes: 4 * GI, usageBytes: 4 * GI, workingSetBytes: 4 * GI }, { availableBytes: 2 * GI, usageBytes: 3 * GI, workingSetBytes: 2 * GI }),
      thresholds: [threshold('memory.available', '1Gi'), threshold('memory.available', '2Gi', 30_000), threshold('allocatableMemory.available', '512Mi'), threshold('allocatableMemory.available', '1Gi', 30_000)],
      expected: [
        { description: 'hard memory eviction threshold', memcgThresholdBytes: BigInt(7 * GI), capacityBytes: BigInt(8 * GI), threshold: '1Gi', inactiveFileBytes: 0n },
        { description: 'soft memory eviction threshold', memcgThresholdBytes: BigInt(6 * GI), capacityBytes: BigInt(8 * GI), threshold: '2Gi', inactiveFileBytes: 0n },
        { description: 'hard allocatable memory eviction threshold', memcgThresholdBytes: BigInt(4 * GI + 512 * MI), capacityBytes: BigInt(4 * GI), threshold: '512Mi', inactiveFileBytes: BigInt(GI) },
        { description: 'soft allocatable memory eviction threshold', memcgThresholdBytes: BigInt(4 * GI), capacityBytes: BigInt(4 * GI), threshold: '1Gi', inactiveFileBytes: BigInt(GI) },
      ],
    },
    {
      name: 'non-memory-signals-are-ignored',
      summary: summary({ availableBytes: GI, usageBytes: GI, workingSetBytes: GI }),
      thresholds: [threshold('nodefs.available', '10%'), threshold('pid.available', '100')],
      expected: [],
    },
    {
      name: 'a-threshold-without-operator-is-ignored',
      summary: summary({ availableBytes: GI, usageBytes: GI, workingSetBytes: GI }),
      thresholds: [{ ...threshold('memory.available', '100Mi'), operatorSet: false }],
      expected: [],
    },
    {
      name: 'duplicates-keep-the-first',
      summary: summary({ availableBytes: GI, usageBytes: GI, workingSetBytes: GI }),
      thresholds: [threshold('memory.available', '100Mi'), threshold('memory.available', '200Mi')],
      expected: [{ description: 'hard memory eviction threshold', memcgThresholdBytes: BigInt(2 * GI - 100 * MI), capacityBytes: BigInt(2 * GI), threshold: '100Mi', inactiveFileBytes: 0n }],
    },
    {
      name: 'missing-working-set-is-an-incomplete-summary',
      summary: summary({ availableBytes: GI, usageBytes: GI }),
      thresholds: [threshold('memory.available', '100Mi')],
      expected: [{ description: 'hard memory eviction threshold', problem: 'summary was incomplete: expected usageBytes, workingSetBytes and availableBytes in node.memory' }],
    },
    {
      name: 'missing-node-memory-is-an-incomplete-summary',
      summary: summary(null),
      thresholds: [threshold('memory.available', '100Mi', 1000)],
      expected: [{ description: 'soft memory eviction threshold', problem: 'summary was incomplete: expected usageBytes, workingSetBytes and availableBytes in node.memory' }],
    },
    {
      name: 'missing-pods-container-is-reported-in-kubelet-words',
      summary: summary({ availableBytes: GI, usageBytes: GI, workingSetBytes: GI }),
      thresholds: [threshold('memory.available', '100Mi'), threshold('allocatableMemory.available', '100Mi')],
      expected: [
        { description: 'hard memory eviction threshold', memcgThresholdBytes: BigInt(2 * GI - 100 * MI), capacityBytes: BigInt(2 * GI), threshold: '100Mi', inactiveFileBytes: 0n },
        { description: 'hard allocatable memory eviction threshold', problem: 'system container "pods" not found in metrics' },
      ],
    },
    {
      name: 'pods-container-without-available-is-incomplete',
      summary: summary(null, { usageBytes: GI, workingSetBytes: GI }),
      thresholds: [threshold('allocatableMemory.available', '100Mi')],
      expected: [{ description: 'hard allocatable memory eviction threshold', problem: 'summary was incomplete: expected usageBytes, workingSetBytes and availableBytes in the "pods" system container\'s memory' }],
    },
    {
      name: 'a-threshold-at-least-the-capacity-leaves-nothing-to-arm',
      summary: summary({ availableBytes: 10 * MI, usageBytes: 10 * MI, workingSetBytes: 10 * MI }),
      thresholds: [threshold('memory.available', '1Gi')],
      expected: [{ description: 'hard memory eviction threshold', problem: 'the threshold 1Gi leaves nothing to watch on a capacity of 20971520 bytes' }],
    },
  ];

  for (const tc of cases) {
    test(tc.name, () => {
      const got = computeMemoryThresholds(tc.summary, tc.thresholds).map((c) =>
        isProblem(c)
          ? { description: c.target.description, problem: c.problem }
          : { description: c.target.description, memcgThresholdBytes: c.memcgThresholdBytes, capacityBytes: c.capacityBytes, threshold: formatQuantity(c.threshold), inactiveFileBytes: c.inactiveFileBytes },
      );
      expect(got).toEqual(tc.expected);
    });
  }
});

describe('memoryThresholdDescription (kubelet Description())', () => {
  const cases = [
    { signal: 'memory.available', hard: true, expected: 'hard memory eviction threshold' },
    { signal: 'memory.available', hard: false, expected: 'soft memory eviction threshold' },
    { signal: 'allocatableMemory.available', hard: true, expected: 'hard allocatable memory eviction threshold' },
    { signal: 'allocatableMemory.available', hard: false, expected: 'soft allocatable memory eviction threshold' },
  ] as const;
  for (const tc of cases) test(tc.expected, () => expect(memoryThresholdDescription(tc.signal, tc.hard)).toBe(tc.expected));
});

describe('workingSetMeetsThreshold (threshold > capacity - workingSet, strict)', () => {
  const [figures] = computeMemoryThresholds(summary({ availableBytes: 600, usageBytes: 400, workingSetBytes: 400 }), [threshold('memory.available', '100')]) as [MemoryThresholdFigures];
  const cases = [
    { name: 'well-below', workingSetBytes: 0n, met: false },
    { name: 'available-equal-to-threshold-is-not-met', workingSetBytes: 900n, met: false },
    { name: 'one-byte-past-is-met', workingSetBytes: 901n, met: true },
    { name: 'past-capacity-is-met', workingSetBytes: 2000n, met: true },
  ];
  for (const tc of cases) test(tc.name, () => expect(workingSetMeetsThreshold(figures, tc.workingSetBytes)).toBe(tc.met));
});
