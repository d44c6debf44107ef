// Which threshold is acted on when several are met: memory-class signals first, then hard before
// soft, then the fixed signal order; the same whatever the configuration order, pass after pass.

import type { Threshold } from '../../../src/api/threshold.js';
import type { SynchronizeResult } from '../../../src/eviction/types.js';
import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, SECOND_MS, Scenario, hardThreshold, makeConfig, percent, quantity, softThreshold, type NodeState } from './support.js';

const LOW_DISK = { available: '1Gi', capacity: '100Gi', inodesFree: 10, inodes: 1_000_000 };

// Runs `passes` passes `stepMs` apart under `node`; returns the scenario and the last result.
function run(thresholds: Threshold[], node: NodeState, passes = 1, stepMs = 0): { s: Scenario; last: SynchronizeResult } {
  const s = new Scenario(makeConfig({ thresholds }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  s.node = node;
  let last = s.sync();
  for (let i = 1; i < passes; i++) {
    s.step(stepMs);
    last = s.sync();
  }
  return { s, last };
}

interface Case {
  readonly name: string;
  readonly thresholds: Threshold[];
  readonly node: NodeState;
  readonly passes?: number;
  readonly stepMs?: number;
  readonly signal: string;
  readonly hard: boolean;
  readonly gracePeriodSeconds: number;
}

const memoryHard = hardThreshold('memory.available', quantity('1Gi'));
const memorySoft = softThreshold('memory.available', quantity('2Gi'), MINUTE_MS);
const allocatableHard = hardThreshold('allocatableMemory.available', quantity('1Gi'));
const nodefsHard = hardThreshold('nodefs.available', percent(10));
const nodefsInodesHard = hardThreshold('nodefs.inodesFree', percent(5));
const imagefsHard = hardThreshold('imagefs.available', percent(15));
const pidHard = hardThreshold('pid.available', quantity('1000'));
const pressureEverywhere: NodeState = {
  memory: { available: '500Mi' },
  allocatable: { available: '500Mi' },
  nodefs: LOW_DISK,
  imagefs: LOW_DISK,
  pid: { maxpid: 5000, curproc: 4500 },
};

const cases: Case[] = [
  { name: 'memory-before-disk', thresholds: [nodefsHard, memoryHard], node: pressureEverywhere, signal: 'memory.available', hard: true, gracePeriodSeconds: 1 },
  { name: 'memory-before-pid', thresholds: [pidHard, memoryHard], node: pressureEverywhere, signal: 'memory.available', hard: true, gracePeriodSeconds: 1 },
  {
    name: 'soft-memory-before-hard-disk',
    thresholds: [nodefsHard, memorySoft],
    node: pressureEverywhere,
    passes: 2,
    stepMs: MINUTE_MS,
    signal: 'memory.available',
    hard: false,
    gracePeriodSeconds: 0,
  },
  {
    name: 'hard-before-soft-memory-when-both-elapsed',
    thresholds: [memorySoft, memoryHard],
    node: pressureEverywhere,
    passes: 2,
    stepMs: MINUTE_MS,
    signal: 'memory.available',
    hard: true,
    gracePeriodSeconds: 1,
  },
  { name: 'memory-before-allocatable', thresholds: [allocatableHard, memoryHard], node: pressureEverywhere, signal: 'memory.available', hard: true, gracePeriodSeconds: 1 },
  { name: 'nodefs-before-imagefs', thresholds: [imagefsHard, nodefsHard], node: pressureEverywhere, signal: 'nodefs.available', hard: true, gracePeriodSeconds: 1 },
  { name: 'nodefs-bytes-before-inodes', thresholds: [nodefsInodesHard, nodefsHard], node: pressureEverywhere, signal: 'nodefs.available', hard: true, gracePeriodSeconds: 1 },
  { name: 'disk-before-pid', thresholds: [pidHard, imagefsHard], node: pressureEverywhere, signal: 'imagefs.available', hard: true, gracePeriodSeconds: 1 },
  {
    name: 'hard-pid-before-soft-disk',
    thresholds: [softThreshold('nodefs.available', percent(10), MINUTE_MS), pidHard],
    node: pressureEverywhere,
    passes: 2,
    stepMs: MINUTE_MS,
    signal: 'pid.available',
    hard: true,
    gracePeriodSeconds: 1,
  },
];

describe('threshold ordering', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      for (const thresholds of [tc.thresholds, [...tc.thresholds].reverse()]) {
        const { last } = run(thresholds, tc.node, tc.passes, tc.stepMs);
        expect(last.reclaim?.threshold.signal).toBe(tc.signal);
        expect(last.evictions).toHaveLength(1);
        expect(last.evictions[0]!.reason).toEqual({ kind: 'threshold', signal: tc.signal, hard: tc.hard });
        expect(last.evictions[0]!.gracePeriodSeconds).toBe(tc.gracePeriodSeconds);
      }
    });
  }
});

test('threshold ordering: the same choice pass after pass', () => {
  const { s } = run([pidHard, imagefsHard, nodefsInodesHard, nodefsHard, memorySoft, memoryHard, allocatableHard], pressureEverywhere);
  const choices: string[] = [];
  for (let i = 0; i < 10; i++) {
    s.step(10 * SECOND_MS);
    const result = s.sync();
    choices.push(`${result.reclaim?.threshold.signal}/${result.reclaim?.threshold.gracePeriodMs}/${result.evictions[0]?.pod.metadata.name}`);
  }
  expect(new Set(choices)).toEqual(new Set([`memory.available/0/${MEMORY_RANK[0]}`]));
});

test('threshold ordering: the message quotes the first met threshold for the resource', () => {
  // Hard 1Gi and soft 2Gi both elapsed: the hard one is first, so it is the one quoted.
  const { last } = run([memorySoft, memoryHard], pressureEverywhere, 2, MINUTE_MS);
  expect(last.evictions[0]!.message.startsWith('The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ')).toBe(true);
});
