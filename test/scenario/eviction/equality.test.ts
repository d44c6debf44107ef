// Equality never triggers: a threshold is met only when its quantity is strictly greater than
// what is available, for quantities, float32 percentages, inodes and PIDs alike.

import type { Signal } from '../../../src/api/signals.js';
import type { ThresholdValue } from '../../../src/api/threshold.js';
import { Scenario, hardThreshold, makeConfig, percent, quantity, type NodeState } from './support.js';

interface Case {
  readonly name: string;
  readonly signal: Signal;
  readonly value: ThresholdValue;
  readonly node: (available: number) => NodeState;
  /** The available amount exactly at the threshold. */
  readonly atThreshold: number;
  /** Thresholds met along with it (the containerfs copy observes the same filesystem). */
  readonly alsoMet?: Signal[];
}

const GiB = 1024 ** 3;
const cases: Case[] = [
  { name: 'memory-quantity', signal: 'memory.available', value: quantity('1Gi'), node: (a) => ({ memory: { available: a } }), atThreshold: GiB },
  { name: 'allocatable-quantity', signal: 'allocatableMemory.available', value: quantity('1Gi'), node: (a) => ({ allocatable: { available: a } }), atThreshold: GiB },
  // float32 10% of 100Gi.
  { name: 'nodefs-percentage', signal: 'nodefs.available', value: percent(10), node: (a) => ({ nodefs: { available: a, capacity: 100 * GiB } }), atThreshold: 10_737_418_400, alsoMet: ['containerfs.available'] },
  { name: 'imagefs-inodes-percentage', signal: 'imagefs.inodesFree', value: percent(5), node: (a) => ({ imagefs: { inodesFree: a, inodes: 1_000_000 } }), atThreshold: 50_000 },
  { name: 'pid-quantity', signal: 'pid.available', value: quantity('1200'), node: (a) => ({ pid: { maxpid: 10_000, curproc: 10_000 - a } }), atThreshold: 1200 },
];

describe('equality never triggers', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const s = new Scenario(makeConfig({ thresholds: [hardThreshold(tc.signal, tc.value)] }));
      s.node = tc.node(tc.atThreshold);
      const atThreshold = s.sync();
      expect(atThreshold.observations.get(tc.signal)?.available).toBe(BigInt(tc.atThreshold));
      expect(atThreshold.thresholdsMetIgnoringGrace).toEqual([]);
      expect(atThreshold.nodeConditions).toEqual([]);

      s.step(10_000);
      s.node = tc.node(tc.atThreshold - 1);
      const oneBelow = s.sync();
      expect(oneBelow.thresholdsMetIgnoringGrace.map((t) => t.threshold.signal)).toEqual([tc.signal, ...(tc.alsoMet ?? [])]);
      expect(oneBelow.nodeConditions).toHaveLength(1);
    });
  }
});
