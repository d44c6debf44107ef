// Node conditions from met thresholds, when each was last seen, and the transition period (strict `<`).

import { parseQuantity } from '../../../src/api/quantity.js';
import type { NodeConditionType, Signal } from '../../../src/api/signals.js';
import type { Threshold } from '../../../src/api/threshold.js';
import {
  hasNodeCondition,
  nodeConditions,
  nodeConditionsLastObservedAt,
  nodeConditionsObservedSince,
} from '../../../src/eviction/conditions.js';

const threshold = (signal: Signal, gracePeriodMs = 0): Threshold => ({
  signal,
  value: { kind: 'quantity', quantity: parseQuantity('1Gi') },
  gracePeriodMs,
  minReclaim: null,
});

describe('nodeConditions', () => {
  const cases: { name: string; signals: Signal[]; expected: NodeConditionType[] }[] = [
    { name: 'none', signals: [], expected: [] },
    { name: 'memory', signals: ['memory.available'], expected: ['MemoryPressure'] },
    { name: 'allocatable-is-memory-pressure', signals: ['allocatableMemory.available'], expected: ['MemoryPressure'] },
    { name: 'every-disk-signal-is-disk-pressure', signals: ['nodefs.available', 'nodefs.inodesFree', 'imagefs.available', 'imagefs.inodesFree', 'containerfs.available', 'containerfs.inodesFree'], expected: ['DiskPressure'] },
    { name: 'pid', signals: ['pid.available'], expected: ['PIDPressure'] },
    { name: 'de-duplicated', signals: ['memory.available', 'allocatableMemory.available', 'memory.available'], expected: ['MemoryPressure'] },
    { name: 'fixed-order-whatever-the-input', signals: ['pid.available', 'nodefs.available', 'memory.available'], expected: ['MemoryPressure', 'DiskPressure', 'PIDPressure'] },
  ];
  for (const tc of cases) test(tc.name, () => expect(nodeConditions(tc.signals.map((s) => threshold(s)))).toEqual(tc.expected));

  test('a soft threshold raises its condition at once (grace ignored)', () => {
    expect(nodeConditions([threshold('memory.available', 600_000)])).toEqual(['MemoryPressure']);
  });
});

describe('nodeConditionsLastObservedAt', () => {
  test('stamps seen conditions with now, keeps the rest, never deletes', () => {
    const last = new Map<NodeConditionType, number>([['MemoryPressure', 1000], ['DiskPressure', 2000]]);
    const got = nodeConditionsLastObservedAt(['DiskPressure', 'PIDPressure'], last, 9000);
    expect([...got.entries()]).toEqual([['MemoryPressure', 1000], ['DiskPressure', 9000], ['PIDPressure', 9000]]);
    // The input map is left alone.
    expect([...last.entries()]).toEqual([['MemoryPressure', 1000], ['DiskPressure', 2000]]);
  });
  test('nothing seen keeps every time', () => {
    const last = new Map<NodeConditionType, number>([['PIDPressure', 5]]);
    expect([...nodeConditionsLastObservedAt([], last, 9000).entries()]).toEqual([['PIDPressure', 5]]);
  });
});

describe('nodeConditionsObservedSince', () => {
  const periodMs = 300_000;
  const cases: { name: string; lastObservedMs: number; nowMs: number; periodMs?: number; kept: boolean }[] = [
    { name: 'seen-now', lastObservedMs: 1000, nowMs: 1000, kept: true },
    { name: 'one-ms-before-the-end', lastObservedMs: 1000, nowMs: 1000 + periodMs - 1, kept: true },
    { name: 'exactly-the-period-clears', lastObservedMs: 1000, nowMs: 1000 + periodMs, kept: false },
    { name: 'long-after', lastObservedMs: 1000, nowMs: 10 * periodMs, kept: false },
    { name: 'zero-period-never-reports', lastObservedMs: 1000, nowMs: 1000, periodMs: 0, kept: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const observedAt = new Map<NodeConditionType, number>([['MemoryPressure', tc.lastObservedMs]]);
      expect(nodeConditionsObservedSince(observedAt, tc.periodMs ?? periodMs, tc.nowMs)).toEqual(tc.kept ? ['MemoryPressure'] : []);
    });
  }
  test('fixed order, each judged on its own time', () => {
    const observedAt = new Map<NodeConditionType, number>([['PIDPressure', 9000], ['MemoryPressure', 100], ['DiskPressure', 8000]]);
    expect(nodeConditionsObservedSince(observedAt, 1000, 9000)).toEqual(['PIDPressure']);
    expect(nodeConditionsObservedSince(observedAt, 1001, 9000)).toEqual(['DiskPressure', 'PIDPressure']);
    expect(nodeConditionsObservedSince(observedAt, 9000, 9000)).toEqual(['MemoryPressure', 'DiskPressure', 'PIDPressure']);
  });
});

describe('hasNodeCondition', () => {
  const cases: { name: string; conditions: NodeConditionType[]; condition: NodeConditionType; expected: boolean }[] = [
    { name: 'empty', conditions: [], condition: 'MemoryPressure', expected: false },
    { name: 'present', conditions: ['DiskPressure', 'MemoryPressure'], condition: 'MemoryPressure', expected: true },
    { name: 'absent', conditions: ['DiskPressure'], condition: 'PIDPressure', expected: false },
  ];
  for (const tc of cases) test(tc.name, () => expect(hasNodeCondition(tc.conditions, tc.condition)).toBe(tc.expected));
});
