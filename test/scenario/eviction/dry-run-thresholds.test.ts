// Dry-run thresholds on a fake clock: evaluated, ranked and reported beside the live ones, never in
// the live decision. The live decision of every pass is compared with that of an engine that has
// the live thresholds alone, so a dry-run threshold provably changes nothing that is acted on
// (conditions, min-reclaim, ranking, grace periods), and hot reloads move thresholds both ways.

import type { EvictionConfig } from '../../../src/api/eviction-config.js';
import type { SynchronizeResult } from '../../../src/eviction/types.js';
import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { MINUTE_MS, SECOND_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, signalsOf, softThreshold, type NodeState } from './support.js';

// Everything the live decision consists of (the engine's own copies of the threshold objects aside).
function liveDecision(result: SynchronizeResult): unknown {
  return {
    nodeConditions: result.nodeConditions,
    thresholdsMet: signalsOf(result.thresholdsMet),
    thresholdsMetIgnoringGrace: signalsOf(result.thresholdsMetIgnoringGrace),
    reclaim: result.reclaim?.threshold.signal ?? null,
    ranking: result.ranking.map((r) => r.pod.metadata.name),
    evictions: result.evictions.map((e) => ({ pod: e.pod.metadata.name, message: e.message, gracePeriodSeconds: e.gracePeriodSeconds })),
    fallbacks: evictedNames({ ...result, evictions: result.fallbacks }),
  };
}

/** Two engines on the same node: one with the dry-run thresholds added, one with the live thresholds alone. */
class Pair {
  readonly withDryRun: Scenario;
  readonly liveOnly: Scenario;

  constructor(config: EvictionConfig) {
    this.withDryRun = new Scenario(config);
    this.liveOnly = new Scenario({ ...config, dryRunThresholds: [] });
    const { pods, podStats } = memoryPressurePods();
    for (const s of [this.withDryRun, this.liveOnly]) {
      s.pods = pods;
      s.podStats = podStats;
    }
  }

  set node(node: NodeState) {
    this.withDryRun.node = node;
    this.liveOnly.node = node;
  }

  step(ms: number): void {
    this.withDryRun.step(ms);
    this.liveOnly.step(ms);
  }

  reload(config: EvictionConfig): void {
    this.withDryRun.manager.updateConfig(config);
    this.liveOnly.manager.updateConfig({ ...config, dryRunThresholds: [] });
  }

  /** One pass of both; the live decisions must match exactly. */
  sync(): SynchronizeResult {
    const result = this.withDryRun.sync();
    expect(liveDecision(result)).toEqual(liveDecision(this.liveOnly.sync()));
    return result;
  }
}

const memory = (available: string): NodeState => ({ memory: { available, capacity: '16Gi' } });

test('a dry-run soft threshold is ranked and would evict when its grace period ends; the node reports no pressure', () => {
  const pair = new Pair(
    makeConfig({ thresholds: [hardThreshold('memory.available', quantity('500Mi'))], dryRunThresholds: [softThreshold('memory.available', quantity('2Gi'), MINUTE_MS)] }),
  );
  pair.node = memory('1500Mi');
  let result = pair.sync();
  expect(result.nodeConditions).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(result.dryRun?.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.dryRun?.thresholdsMetIgnoringGrace ?? [])).toEqual(['memory.available(soft)']);
  expect(result.dryRun?.thresholdsMet).toEqual([]);
  expect(result.dryRun?.evictions).toEqual([]);
  // The loop wakes when the dry-run grace period ends, as it would for a live one.
  expect(result.nextGracePeriodEndMs).toBe(pair.withDryRun.clock.nowMs() + MINUTE_MS);

  pair.step(MINUTE_MS);
  result = pair.sync();
  expect(result.evictions).toEqual([]);
  expect(result.nodeConditions).toEqual([]);
  expect(result.dryRun?.ranking.map((r) => r.pod.metadata.name)).toEqual(MEMORY_RANK);
  expect(result.dryRun?.evictions.map((e) => e.pod.metadata.name)).toEqual(['best-effort-low-priority']);
  expect(result.dryRun?.evictions[0]?.reason).toEqual({ kind: 'threshold', signal: 'memory.available', hard: false });
  expect(result.dryRun?.evictions[0]?.message).toContain('Threshold quantity: 2Gi, available: 1500Mi. ');

  // A live crossing acts as without the dry run, whatever the dry run is doing.
  pair.step(10 * SECOND_MS);
  pair.node = memory('400Mi');
  result = pair.sync();
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  expect(result.evictions[0]?.reason).toEqual({ kind: 'threshold', signal: 'memory.available', hard: true });
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
});

test('the live min-reclaim and ranking are not touched by a dry-run threshold of the same signal', () => {
  const pair = new Pair(
    makeConfig({
      thresholds: [hardThreshold('memory.available', quantity('1Gi'), quantity('1Gi'))],
      dryRunThresholds: [hardThreshold('memory.available', quantity('3Gi'), quantity('2Gi'))],
    }),
  );
  const script: { available: string; live: string[]; wouldEvict: string[] }[] = [
    { available: '900Mi', live: ['best-effort-low-priority'], wouldEvict: ['best-effort-low-priority'] },
    // Above the live threshold, below its min-reclaim (2Gi): the live one keeps evicting.
    { available: '1500Mi', live: ['best-effort-low-priority'], wouldEvict: ['best-effort-low-priority'] },
    // The live min-reclaim is met; the dry-run one (3Gi + 2Gi) is not.
    { available: '2500Mi', live: [], wouldEvict: ['best-effort-low-priority'] },
    { available: '4Gi', live: [], wouldEvict: ['best-effort-low-priority'] },
    { available: '6Gi', live: [], wouldEvict: [] },
  ];
  for (const step of script) {
    pair.step(10 * SECOND_MS);
    pair.node = memory(step.available);
    const result = pair.sync();
    expect({ available: step.available, live: evictedNames(result), wouldEvict: result.dryRun?.evictions.map((e) => e.pod.metadata.name) }).toEqual({
      available: step.available,
      live: step.live,
      wouldEvict: step.wouldEvict,
    });
  }
});

test('a disk dry-run threshold never raises DiskPressure nor takes the reclaim from a live memory threshold', () => {
  const pair = new Pair(
    makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))], dryRunThresholds: [hardThreshold('nodefs.available', quantity('50Gi'))] }),
  );
  pair.node = { memory: { available: '900Mi', capacity: '16Gi' }, nodefs: { available: '10Gi', capacity: '100Gi' } };
  const result = pair.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.reclaim?.threshold.signal).toBe('memory.available');
  expect(result.dryRun?.nodeConditions).toEqual(['DiskPressure']);
  expect(result.dryRun?.reclaim?.threshold.signal).toBe('nodefs.available');
});

test('hot reload: a threshold moved from dry-run to live starts its grace period over; one kept in dry-run keeps its own', () => {
  const soft = softThreshold('memory.available', quantity('2Gi'), MINUTE_MS);
  const otherSoft = softThreshold('allocatableMemory.available', quantity('1Gi'), MINUTE_MS);
  const pair = new Pair(makeConfig({ thresholds: [], dryRunThresholds: [soft, otherSoft] }));
  pair.node = { memory: { available: '1500Mi', capacity: '16Gi' }, allocatable: { available: '900Mi', capacity: '12Gi' } };
  pair.sync();
  pair.step(50 * SECOND_MS);
  expect(pair.sync().dryRun?.thresholdsMet).toEqual([]);

  // memory.available goes live 50 s into its dry-run grace period; the allocatable one stays dry-run.
  pair.reload(makeConfig({ thresholds: [soft], dryRunThresholds: [otherSoft] }));
  pair.step(10 * SECOND_MS);
  let result = pair.sync();
  // Live: the grace period began at this pass, not 60 s ago. Dry run: its grace period ran on.
  expect(result.thresholdsMet).toEqual([]);
  expect(signalsOf(result.thresholdsMetIgnoringGrace)).toEqual(['memory.available(soft)']);
  expect(signalsOf(result.dryRun?.thresholdsMet ?? [])).toEqual(['allocatableMemory.available(soft)']);
  expect(result.nodeConditions).toEqual(['MemoryPressure']);

  pair.step(MINUTE_MS);
  result = pair.sync();
  expect(evictedNames(result)).toEqual(['best-effort-low-priority']);

  // Back to dry-run: the live engine forgets it, and the dry run's grace period starts over.
  pair.reload(makeConfig({ thresholds: [], dryRunThresholds: [soft, otherSoft] }));
  pair.step(10 * SECOND_MS);
  result = pair.sync();
  expect(result.evictions).toEqual([]);
  expect(result.thresholdsMetIgnoringGrace).toEqual([]);
  expect(signalsOf(result.dryRun?.thresholdsMet ?? [])).toEqual(['allocatableMemory.available(soft)']);
  expect(signalsOf(result.dryRun?.thresholdsMetIgnoringGrace ?? [])).toEqual(['memory.available(soft)', 'allocatableMemory.available(soft)']);
});

test('without dry-run thresholds the result carries no dry-run part', () => {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))] }));
  s.node = memory('900Mi');
  expect(s.sync().dryRun).toBeUndefined();
});
