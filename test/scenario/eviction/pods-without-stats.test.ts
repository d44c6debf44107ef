// Pods without stats rank first (the kubelet cannot tell how much they use, so it assumes the
// worst): before priority under memory and disk pressure, whose first key needs stats; after
// priority under PID pressure, whose first key is priority. Their message has the node sentences
// only and no annotations.

import type { Signal } from '../../../src/api/signals.js';
import type { ThresholdValue } from '../../../src/api/threshold.js';
import { makePod, makePodStats } from '../../fixtures/pods.js';
import { HIGH_PRIORITY, LOW_PRIORITY, Scenario, evictedNames, hardThreshold, makeConfig, percent, quantity, rankedNames, type NodeState } from './support.js';

const cases: { name: string; signal: Signal; value: ThresholdValue; node: NodeState; message: string; unknownPriority: number }[] = [
  {
    name: 'memory',
    signal: 'memory.available',
    value: quantity('1Gi'),
    node: { memory: { available: '500Mi' } },
    message: 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ',
    unknownPriority: HIGH_PRIORITY,
  },
  {
    name: 'disk',
    signal: 'nodefs.available',
    value: quantity('10Gi'),
    node: { nodefs: { available: '5Gi', capacity: '100Gi' } },
    message: 'The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi, available: 5Gi. ',
    unknownPriority: HIGH_PRIORITY,
  },
  {
    name: 'inodes',
    signal: 'nodefs.inodesFree',
    value: percent(5),
    node: { nodefs: { inodesFree: 1000, inodes: 1_000_000 } },
    message: 'The node was low on resource: inodes. Threshold quantity: 50000, available: 1k. ',
    unknownPriority: HIGH_PRIORITY,
  },
  {
    name: 'pids',
    signal: 'pid.available',
    value: quantity('1000'),
    node: { pid: { maxpid: 5000, curproc: 4800 } },
    message: 'The node was low on resource: pids. Threshold quantity: 1k, available: 200. ',
    // Priority decides first under PID pressure; among equals, the pod without stats goes first.
    unknownPriority: LOW_PRIORITY,
  },
];

describe('pods without stats rank first', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const s = new Scenario(makeConfig({ thresholds: [hardThreshold(tc.signal, tc.value)] }));
      // The pod without stats uses nothing we know of and would otherwise go last.
      const hungry = makePod({ name: 'low-priority-heavy-user', priority: LOW_PRIORITY });
      const unknown = makePod({ name: 'no-stats', priority: tc.unknownPriority });
      s.pods = [hungry, unknown];
      s.podStats = [makePodStats(hungry, { workingSetBytes: '2Gi', containerWorkingSetBytes: '2Gi', rootfsBytes: '5Gi', rootfsInodes: 9000, logsBytes: 0, processCount: 900 })];
      s.node = tc.node;
      const result = s.sync();
      expect(rankedNames(result)).toEqual(['no-stats', 'low-priority-heavy-user']);
      expect(result.ranking[0]!.usage).toBeNull();
      const eviction = result.evictions[0]!;
      expect(eviction.pod.metadata.name).toBe('no-stats');
      expect(eviction.message).toBe(tc.message);
      expect(eviction.annotations).toEqual({});
      expect(eviction.condition).toEqual({ type: 'DisruptionTarget', reason: 'TerminationByKubelet', message: tc.message });
    });
  }

  test('pids: a higher priority still goes after a lower one, stats or not', () => {
    const s = new Scenario(makeConfig({ thresholds: [hardThreshold('pid.available', quantity('1000'))] }));
    const hungry = makePod({ name: 'low-priority-heavy-user', priority: LOW_PRIORITY });
    const unknown = makePod({ name: 'high-priority-no-stats', priority: HIGH_PRIORITY });
    s.pods = [unknown, hungry];
    s.podStats = [makePodStats(hungry, { processCount: 900 })];
    s.node = { pid: { maxpid: 5000, curproc: 4800 } };
    expect(rankedNames(s.sync())).toEqual(['low-priority-heavy-user', 'high-priority-no-stats']);
  });
});

// Beyond the kubelet: when the caller finds too many pods without stats to rank them (a wrong host
// root, cgroup driver or layout; src/eviction/stats-coverage.ts), the signals whose ranking needs
// those stats are not acted on; their pressure is still reported, and other signals still act.
describe('unrankable signals', () => {
  const hungry = makePod({ name: 'heavy-user' });
  const unknown = makePod({ name: 'no-stats' });
  const scenario = (): Scenario => {
    const s = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi')), hardThreshold('nodefs.available', quantity('10Gi'))] }));
    s.pods = [hungry, unknown];
    s.podStats = [makePodStats(hungry, { workingSetBytes: '2Gi', containerWorkingSetBytes: '2Gi', rootfsBytes: '5Gi', rootfsInodes: 10, logsBytes: 0 })];
    s.node = { memory: { available: '500Mi' } };
    s.unrankableSignals = new Set<Signal>(['memory.available', 'allocatableMemory.available', 'pid.available']);
    return s;
  };

  test('memory pressure: nothing is evicted, MemoryPressure is still reported', () => {
    const result = scenario().sync();
    expect(result.evictions).toEqual([]);
    expect(result.reclaim).toBeNull();
    expect(result.nodeConditions).toEqual(['MemoryPressure']);
    expect(result.thresholdsMet.map((t) => t.threshold.signal)).toEqual(['memory.available']);
  });

  test('memory and disk pressure: the disk threshold is acted on', () => {
    const s = scenario();
    s.node = { memory: { available: '500Mi' }, nodefs: { available: '5Gi', capacity: '100Gi' } };
    const result = s.sync();
    expect(result.reclaim?.threshold.signal).toBe('nodefs.available');
    expect(evictedNames(result)).toEqual(['no-stats']);
  });

  test('the signal rankable again: evicted at once', () => {
    const s = scenario();
    expect(s.sync().evictions).toEqual([]);
    s.unrankableSignals = new Set();
    s.clock.step(10_000);
    expect(evictedNames(s.sync())).toEqual(['no-stats']);
  });
});
