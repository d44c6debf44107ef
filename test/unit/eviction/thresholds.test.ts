// Threshold evaluation (kubelet helpers): strict `>` with min-reclaim, float32 percentages, the
// never-met synthesized thresholds, merging, first-observed times, grace periods, stale stats,
// eviction priority order and the report figures.

import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import { percentageRatio, type Threshold, type ThresholdValue } from '../../../src/api/threshold.js';
import {
  byEvictionPriority,
  describeThresholdsMet,
  getReclaimableThreshold,
  hasThreshold,
  mergeThresholds,
  signalsWithoutObservation,
  sortByEvictionPriority,
  thresholdsFirstObservedAt,
  thresholdsMet,
  thresholdsMetGracePeriod,
  thresholdsUpdatedStats,
} from '../../../src/eviction/thresholds.js';
import type { SignalObservation, SignalObservations } from '../../../src/eviction/types.js';

const Mi = 1024n * 1024n;
const Gi = 1024n * Mi;

const q = (s: string): ThresholdValue => ({ kind: 'quantity', quantity: parseQuantity(s) });
const pct = (percent: number): ThresholdValue => ({ kind: 'percentage', ratio: percentageRatio(percent) });
const hard = (signal: Signal, value: ThresholdValue, minReclaim: ThresholdValue | null = null): Threshold => ({ signal, value, gracePeriodMs: 0, minReclaim });
const soft = (signal: Signal, value: ThresholdValue, gracePeriodMs: number, minReclaim: ThresholdValue | null = null): Threshold => ({
  signal,
  value,
  gracePeriodMs,
  minReclaim,
});
const obs = (available: bigint, capacity: bigint, timeMs = 0): SignalObservation => ({ available, capacity, timeMs });
const observations = (entries: [Signal, SignalObservation][]): SignalObservations => new Map(entries);

describe('thresholdsMet', () => {
  interface Case {
    readonly name: string;
    readonly threshold: Threshold;
    readonly observed: SignalObservation | null;
    readonly enforceMinReclaim: boolean;
    readonly met: boolean;
  }
  const memory1Gi = hard('memory.available', q('1Gi'), q('500Mi'));
  const cases: Case[] = [
    { name: 'available-below-quantity', threshold: memory1Gi, observed: obs(500n * Mi, 8n * Gi), enforceMinReclaim: false, met: true },
    { name: 'equality-never-triggers', threshold: memory1Gi, observed: obs(Gi, 8n * Gi), enforceMinReclaim: false, met: false },
    { name: 'one-byte-below-triggers', threshold: memory1Gi, observed: obs(Gi - 1n, 8n * Gi), enforceMinReclaim: false, met: true },
    { name: 'above-quantity', threshold: memory1Gi, observed: obs(2n * Gi, 8n * Gi), enforceMinReclaim: false, met: false },
    { name: 'min-reclaim-ignored-unless-enforced', threshold: memory1Gi, observed: obs((12n * Gi) / 10n, 8n * Gi), enforceMinReclaim: false, met: false },
    { name: 'min-reclaim-enforced-1.2Gi-under-1.5Gi', threshold: memory1Gi, observed: obs((12n * Gi) / 10n, 8n * Gi), enforceMinReclaim: true, met: true },
    { name: 'min-reclaim-enforced-equality-not-met', threshold: memory1Gi, observed: obs(Gi + 500n * Mi, 8n * Gi), enforceMinReclaim: true, met: false },
    { name: 'min-reclaim-enforced-without-min-reclaim', threshold: hard('memory.available', q('1Gi')), observed: obs((12n * Gi) / 10n, 8n * Gi), enforceMinReclaim: true, met: false },
    // float32: 10% is 0.100000001490116..., so 10% of 100Gi is 10737418400 bytes, not 10737418240.
    { name: 'float32-percentage-above-exact-decimal', threshold: hard('nodefs.available', pct(10)), observed: obs(10_737_418_240n, 100n * Gi), enforceMinReclaim: false, met: true },
    { name: 'float32-percentage-equality', threshold: hard('nodefs.available', pct(10)), observed: obs(10_737_418_400n, 100n * Gi), enforceMinReclaim: false, met: false },
    { name: 'float32-percentage-one-below', threshold: hard('nodefs.available', pct(10)), observed: obs(10_737_418_399n, 100n * Gi), enforceMinReclaim: false, met: true },
    { name: 'percentage-min-reclaim', threshold: hard('nodefs.available', pct(10), pct(5)), observed: obs(15n * Gi, 100n * Gi), enforceMinReclaim: true, met: true },
    { name: 'zero-point-zero-percent-never-met', threshold: hard('nodefs.available', pct(0)), observed: obs(0n, 100n * Gi), enforceMinReclaim: false, met: false },
    { name: 'inodes', threshold: hard('nodefs.inodesFree', pct(5)), observed: obs(4999n, 100000n), enforceMinReclaim: false, met: true },
    { name: 'pids-quantity', threshold: hard('pid.available', q('1k')), observed: obs(999n, 4194304n), enforceMinReclaim: false, met: true },
    { name: 'pids-negative-available', threshold: hard('pid.available', q('1')), observed: obs(-5n, 100n), enforceMinReclaim: false, met: true },
    { name: 'no-observation-never-met', threshold: hard('imagefs.available', q('1Gi')), observed: null, enforceMinReclaim: false, met: false },
    {
      name: 'no-operator-never-met',
      threshold: { ...hard('containerfs.available', q('100Ti')), operatorSet: false },
      observed: obs(0n, 100n * Gi),
      enforceMinReclaim: true,
      met: false,
    },
    { name: 'soft-threshold-met-regardless-of-grace', threshold: soft('memory.available', q('2Gi'), 60_000), observed: obs(Gi, 8n * Gi), enforceMinReclaim: false, met: true },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const observed = observations(tc.observed === null ? [] : [[tc.threshold.signal, tc.observed]]);
      expect(thresholdsMet([tc.threshold], observed, tc.enforceMinReclaim)).toEqual(tc.met ? [tc.threshold] : []);
    });
  }

  test('keeps the input order and the very objects', () => {
    const a = hard('pid.available', q('10'));
    const b = hard('memory.available', q('1Gi'));
    const c = hard('nodefs.available', q('1Gi'));
    const met = thresholdsMet([a, b, c], observations([['pid.available', obs(1n, 100n)], ['memory.available', obs(1n, Gi)], ['nodefs.available', obs(2n * Gi, 4n * Gi)]]), false);
    expect(met).toEqual([a, b]);
    expect(met[0]).toBe(a);
  });
});

describe('signalsWithoutObservation', () => {
  test('each signal once, in SIGNALS order', () => {
    const thresholds = [hard('pid.available', q('1')), hard('imagefs.available', pct(15)), soft('imagefs.available', pct(20), 1000), hard('memory.available', q('1'))];
    expect(signalsWithoutObservation(thresholds, observations([['memory.available', obs(1n, 2n)]]))).toEqual(['imagefs.available', 'pid.available']);
  });
  test('never-met thresholds are not reported', () => {
    const neverMet: Threshold = { ...hard('containerfs.available', pct(0)), operatorSet: false };
    expect(signalsWithoutObservation([neverMet], observations([]))).toEqual([]);
  });
});

describe('mergeThresholds', () => {
  const memory = hard('memory.available', q('1Gi'), q('500Mi'));
  const memoryOtherMinReclaim = hard('memory.available', q('1Gi'), q('1Gi'));
  const memorySoft = soft('memory.available', q('1Gi'), 30_000);
  const nodefs = hard('nodefs.available', pct(10));
  const nodefsSameValueAsQuantity = hard('nodefs.available', q('10'));
  const cases: { name: string; a: Threshold[]; b: Threshold[]; expected: Threshold[] }[] = [
    { name: 'both-empty', a: [], b: [], expected: [] },
    { name: 'appends-missing', a: [memory], b: [nodefs], expected: [memory, nodefs] },
    { name: 'equal-not-duplicated', a: [memory, nodefs], b: [nodefs], expected: [memory, nodefs] },
    { name: 'min-reclaim-ignored-in-identity', a: [memory], b: [memoryOtherMinReclaim], expected: [memory] },
    { name: 'grace-period-is-identity', a: [memory], b: [memorySoft], expected: [memory, memorySoft] },
    { name: 'value-kind-is-identity', a: [nodefs], b: [nodefsSameValueAsQuantity], expected: [nodefs, nodefsSameValueAsQuantity] },
    { name: 'into-empty', a: [], b: [nodefs, memory], expected: [nodefs, memory] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const a = [...tc.a];
      expect(mergeThresholds(a, tc.b)).toEqual(tc.expected);
      expect(a).toEqual(tc.a);
    });
  }

  test('hasThreshold ignores min-reclaim and honours the operator', () => {
    expect(hasThreshold([memory], memoryOtherMinReclaim)).toBe(true);
    expect(hasThreshold([memory], { ...memory, operatorSet: false })).toBe(false);
  });
});

describe('thresholdsFirstObservedAt', () => {
  const a = hard('memory.available', q('1Gi'));
  const b = soft('nodefs.available', pct(10), 60_000);
  const c = hard('pid.available', q('100'));
  test('keeps earlier times, stamps new thresholds with now, drops those no longer met', () => {
    const last = [{ threshold: a, observedAtMs: 1000 }, { threshold: c, observedAtMs: 2000 }];
    expect(thresholdsFirstObservedAt([a, b], last, 5000)).toEqual([
      { threshold: a, observedAtMs: 1000 },
      { threshold: b, observedAtMs: 5000 },
    ]);
  });
  test('matches by identity, not by object', () => {
    const aCopy = hard('memory.available', q('1Gi'), q('1Mi'));
    expect(thresholdsFirstObservedAt([aCopy], [{ threshold: a, observedAtMs: 1000 }], 5000)).toEqual([{ threshold: aCopy, observedAtMs: 1000 }]);
  });
  test('empty list forgets everything', () => {
    expect(thresholdsFirstObservedAt([], [{ threshold: a, observedAtMs: 1000 }], 5000)).toEqual([]);
  });
});

describe('thresholdsMetGracePeriod', () => {
  const hardMemory = hard('memory.available', q('1Gi'));
  const soft30s = soft('memory.available', q('2Gi'), 30_000);
  const cases: { name: string; threshold: Threshold; observedAtMs: number; nowMs: number; kept: boolean }[] = [
    { name: 'hard-same-pass', threshold: hardMemory, observedAtMs: 1000, nowMs: 1000, kept: true },
    { name: 'soft-same-pass', threshold: soft30s, observedAtMs: 1000, nowMs: 1000, kept: false },
    { name: 'soft-one-ms-short', threshold: soft30s, observedAtMs: 1000, nowMs: 30_999, kept: false },
    { name: 'soft-exactly-elapsed', threshold: soft30s, observedAtMs: 1000, nowMs: 31_000, kept: true },
    { name: 'soft-long-elapsed', threshold: soft30s, observedAtMs: 1000, nowMs: 600_000, kept: true },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(thresholdsMetGracePeriod([{ threshold: tc.threshold, observedAtMs: tc.observedAtMs }], tc.nowMs)).toEqual(tc.kept ? [tc.threshold] : []);
    });
  }
  test('keeps observed order', () => {
    const entries = [{ threshold: soft30s, observedAtMs: 0 }, { threshold: hardMemory, observedAtMs: 0 }];
    expect(thresholdsMetGracePeriod(entries, 30_000)).toEqual([soft30s, hardMemory]);
  });
});

describe('thresholdsUpdatedStats', () => {
  const memory = hard('memory.available', q('1Gi'));
  const cases: { name: string; nowTimeMs: number | null; lastTimeMs: number | null; noLastAtAll?: boolean; kept: boolean }[] = [
    { name: 'no-last-observations', nowTimeMs: 5000, lastTimeMs: null, noLastAtAll: true, kept: true },
    { name: 'signal-not-in-last', nowTimeMs: 5000, lastTimeMs: null, kept: true },
    { name: 'later-stat', nowTimeMs: 5001, lastTimeMs: 5000, kept: true },
    { name: 'equal-timestamps-stale', nowTimeMs: 5000, lastTimeMs: 5000, kept: false },
    { name: 'earlier-stat-stale', nowTimeMs: 4000, lastTimeMs: 5000, kept: false },
    { name: 'zero-time-always-fresh', nowTimeMs: 0, lastTimeMs: 0, kept: true },
    { name: 'zero-time-after-real-time', nowTimeMs: 0, lastTimeMs: 5000, kept: true },
    { name: 'no-observation-now', nowTimeMs: null, lastTimeMs: 5000, kept: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const now = observations(tc.nowTimeMs === null ? [] : [['memory.available', obs(1n, Gi, tc.nowTimeMs)]]);
      const last = tc.noLastAtAll === true ? null : observations(tc.lastTimeMs === null ? [] : [['memory.available', obs(1n, Gi, tc.lastTimeMs)]]);
      expect(thresholdsUpdatedStats([memory], now, last)).toEqual(tc.kept ? [memory] : []);
    });
  }
});

describe('byEvictionPriority', () => {
  const memoryHard = hard('memory.available', q('1Gi'));
  const memorySoft = soft('memory.available', q('2Gi'), 30_000);
  const allocatableHard = hard('allocatableMemory.available', q('1Gi'));
  const nodefsHard = hard('nodefs.available', pct(10));
  const nodefsSoft = soft('nodefs.available', pct(15), 60_000);
  const imagefsHard = hard('imagefs.available', pct(15));
  const inodesHard = hard('nodefs.inodesFree', pct(5));
  const pidHard = hard('pid.available', q('100'));
  const containerfsHard = hard('containerfs.available', pct(10));
  const cases: { name: string; input: Threshold[]; expected: Threshold[] }[] = [
    { name: 'memory-before-disk', input: [nodefsHard, memoryHard], expected: [memoryHard, nodefsHard] },
    { name: 'memory-soft-before-disk-hard', input: [nodefsHard, memorySoft], expected: [memorySoft, nodefsHard] },
    { name: 'hard-before-soft-memory', input: [memorySoft, memoryHard], expected: [memoryHard, memorySoft] },
    { name: 'hard-before-soft-disk', input: [nodefsSoft, nodefsHard], expected: [nodefsHard, nodefsSoft] },
    { name: 'memory-before-allocatable', input: [allocatableHard, memoryHard], expected: [memoryHard, allocatableHard] },
    {
      name: 'fixed-signal-order-among-the-rest',
      input: [pidHard, containerfsHard, imagefsHard, inodesHard, nodefsHard],
      expected: [nodefsHard, inodesHard, imagefsHard, containerfsHard, pidHard],
    },
    { name: 'hard-pid-before-soft-nodefs', input: [nodefsSoft, pidHard], expected: [pidHard, nodefsSoft] },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const input = [...tc.input];
      expect(sortByEvictionPriority(input)).toEqual(tc.expected);
      expect([...tc.input].reverse().sort(byEvictionPriority)).toEqual(tc.expected);
      expect(input).toEqual(tc.input);
    });
  }

  test('config order breaks remaining ties, whatever the input order', () => {
    const first = soft('memory.available', q('2Gi'), 30_000);
    const second = soft('memory.available', q('3Gi'), 60_000);
    expect(sortByEvictionPriority([second, first], [first, second])).toEqual([first, second]);
    expect(sortByEvictionPriority([first, second], [second, first])).toEqual([second, first]);
  });
});

describe('getReclaimableThreshold', () => {
  const cases: { name: string; input: Threshold[]; expected: { signal: Signal; resource: string } | null }[] = [
    { name: 'empty', input: [], expected: null },
    { name: 'memory', input: [hard('memory.available', q('1Gi'))], expected: { signal: 'memory.available', resource: 'memory' } },
    { name: 'allocatable', input: [hard('allocatableMemory.available', q('1Gi'))], expected: { signal: 'allocatableMemory.available', resource: 'memory' } },
    { name: 'nodefs-bytes', input: [hard('nodefs.available', pct(10))], expected: { signal: 'nodefs.available', resource: 'ephemeral-storage' } },
    { name: 'imagefs-inodes', input: [hard('imagefs.inodesFree', pct(5))], expected: { signal: 'imagefs.inodesFree', resource: 'inodes' } },
    { name: 'pid', input: [hard('pid.available', q('100'))], expected: { signal: 'pid.available', resource: 'pids' } },
    { name: 'first-wins', input: [hard('pid.available', q('100')), hard('memory.available', q('1Gi'))], expected: { signal: 'pid.available', resource: 'pids' } },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const got = getReclaimableThreshold(tc.input);
      expect(got === null ? null : { signal: got.threshold.signal, resource: got.resource }).toEqual(tc.expected);
      if (got !== null) expect(got.threshold).toBe(tc.input[0]);
    });
  }
});

describe('describeThresholdsMet', () => {
  const cases: { name: string; threshold: Threshold; observed: SignalObservation; quantity: string; available: string }[] = [
    { name: 'memory-quantity', threshold: hard('memory.available', q('1Gi')), observed: obs(500n * Mi, 8n * Gi), quantity: '1Gi', available: '500Mi' },
    { name: 'memory-fraction', threshold: hard('memory.available', q('1.5Gi')), observed: obs((12n * Gi) / 10n, 8n * Gi), quantity: '1536Mi', available: '1288490188' },
    { name: 'nodefs-float32-percentage', threshold: hard('nodefs.available', pct(10)), observed: obs(10n * Gi, 100n * Gi), quantity: '10737418400', available: '10Gi' },
    { name: 'inodes-percentage-is-binary-available-decimal', threshold: hard('nodefs.inodesFree', pct(5)), observed: obs(4000n, 100000n), quantity: '5000', available: '4k' },
    { name: 'inodes-odd-figures', threshold: hard('imagefs.inodesFree', pct(5)), observed: obs(40_001n, 1_048_576n), quantity: '52428', available: '40001' },
    { name: 'pids', threshold: hard('pid.available', q('2000')), observed: obs(1200n, 4194304n), quantity: '2k', available: '1200' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(describeThresholdsMet([tc.threshold], observations([[tc.threshold.signal, tc.observed]]))).toEqual([
        { threshold: tc.threshold, quantity: tc.quantity, available: tc.available },
      ]);
    });
  }
  test('a threshold without an observation is left out', () => {
    expect(describeThresholdsMet([hard('pid.available', q('1'))], observations([]))).toEqual([]);
  });
});
