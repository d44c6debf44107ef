// thresholdsMetOnlyBy: what a new set of thresholds would start evicting for on the node as last
// observed, judged by the engine's own evaluation (strict `>`, float32 percentages, containerfs
// fitted to the layout), against the thresholds in force on the same signal.

import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import type { Summary } from '../../../src/api/summary.js';
import { percentageRatio, type Threshold, type ThresholdValue } from '../../../src/api/threshold.js';
import { thresholdsMetOnlyBy, type ObservedNode } from '../../../src/eviction/threshold-change.js';

const Gi = 1024 ** 3;
const q = (s: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(s) });
const pct = (percent: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(percent) });
const hard = (signal: Signal, value: ThresholdValue): Threshold => ({ signal, value, gracePeriodMs: 0, minReclaim: null });
const soft = (signal: Signal, value: ThresholdValue, gracePeriodMs: number): Threshold => ({ signal, value, gracePeriodMs, minReclaim: null });

// 8 GiB of memory, 4 GiB available; nodefs 100 GiB with 40 GiB free, one filesystem for everything.
const summary: Summary = {
  node: {
    nodeName: 'node-a',
    memory: { availableBytes: 4 * Gi, workingSetBytes: 4 * Gi, usageBytes: 4 * Gi },
    fs: { capacityBytes: 100 * Gi, availableBytes: 40 * Gi, inodes: 1_000_000, inodesFree: 900_000 },
  },
  pods: [],
};
const node: ObservedNode = { summary, dedicatedImageFs: false, splitContainerFs: false };
const HARD_100MI = hard('memory.available', q('100Mi'));

const cases: { name: string; running: Threshold[]; next: Threshold[]; met: string[] }[] = [
  { name: 'unchanged', running: [HARD_100MI], next: [HARD_100MI], met: [] },
  { name: '100.0%-met-at-once', running: [HARD_100MI], next: [hard('memory.available', pct(100))], met: ['memory.available < 8Gi (hard)'] },
  { name: '99.95%-met', running: [HARD_100MI], next: [hard('memory.available', pct(99.95))], met: ['memory.available < 8585639424 (hard)'] },
  { name: 'above-what-is-free', running: [HARD_100MI], next: [hard('memory.available', q('5Gi'))], met: ['memory.available < 5Gi (hard)'] },
  // Strict `>`: exactly what is available is not met.
  { name: 'exactly-what-is-free', running: [HARD_100MI], next: [hard('memory.available', q('4Gi'))], met: [] },
  { name: 'raised-but-not-met', running: [HARD_100MI], next: [hard('memory.available', q('1Gi'))], met: [] },
  // Already met in force: the new one evicts no sooner on that signal.
  { name: 'already-met-in-force', running: [hard('memory.available', q('5Gi'))], next: [hard('memory.available', q('6Gi'))], met: [] },
  // A hard threshold where only a soft one (with its grace period still to run) was met: sooner.
  { name: 'hard-where-only-soft-was-met', running: [soft('memory.available', q('5Gi'), 60_000)], next: [hard('memory.available', q('5Gi'))], met: ['memory.available < 5Gi (hard)'] },
  { name: 'soft-where-hard-was-met', running: [hard('memory.available', q('5Gi'))], next: [soft('memory.available', q('6Gi'), 60_000)], met: [] },
  { name: 'another-signal', running: [HARD_100MI], next: [HARD_100MI, hard('nodefs.available', pct(50))], met: ['nodefs.available < 50Gi (hard)', 'containerfs.available < 50Gi (hard)'] },
  // Fitted to the layout as the manager fits it: on one filesystem, containerfs copies nodefs.
  { name: 'containerfs-copied-from-nodefs', running: [], next: [hard('nodefs.available', pct(50))], met: ['nodefs.available < 50Gi (hard)', 'containerfs.available < 50Gi (hard)'] },
  // No observation for the signal: never met.
  { name: 'no-observation', running: [], next: [hard('pid.available', pct(99.99))], met: [] },
];

describe('thresholdsMetOnlyBy', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const met = thresholdsMetOnlyBy(tc.running, tc.next, node);
      expect(met.map((m) => `${m.threshold.signal} < ${m.quantity} (${m.threshold.gracePeriodMs === 0 ? 'hard' : 'soft'})`)).toEqual(tc.met);
      for (const m of met) expect(m.available).toBe(m.threshold.signal === 'memory.available' ? '4Gi' : '40Gi');
    });
  }
});
