// Runs the agent's synchronize pass (EvictionLoop.syncOnce: observe, re-arm the notifier, decide,
// record metrics) many times in a fresh process, and reports its RSS and heap before and after,
// each after a full garbage collection, to show whether memory grows with the number of passes.
// Started by the footprint part with --expose-gc and a JSON file naming the sandbox node cgroup
// and its pods; prints one JSON line.
//
//   node --expose-gc dist/bench/workers/sync-loop.js INPUT.json

import { readFileSync } from 'node:fs';
import { sandboxNodeConfig } from '../lib/bench-node.js';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { hostNotifier } from '../../src/compose/node-side.js';
import { EvictionExecutor } from '../../src/daemon/eviction-executor.js';
import { EvictionLoop } from '../../src/daemon/eviction-loop.js';
import { createAgentMetrics } from '../../src/daemon/metrics.js';
import { PodStatsGuard } from '../../src/daemon/pod-stats-guard.js';
import type { ClusterView, EventRecorder, LocalTerminator, NodeObserver, PodActions } from '../../src/daemon/ports.js';
import { EvictionManager } from '../../src/eviction/manager.js';
import { createCgroupObserver } from '../../src/observe/cgroup-observer.js';

export interface SyncLoopInput {
  readonly nodeCgroup: string;
  readonly pods: readonly Pod[];
  readonly syncs: number;
  readonly warmupSyncs: number;
  readonly scratchDir: string;
}

export interface SyncLoopOutput {
  readonly syncs: number;
  readonly warmupSyncs: number;
  readonly rssStartBytes: number;
  readonly rssAfterWarmupBytes: number;
  readonly rssAfterBytes: number;
  readonly heapAfterWarmupBytes: number;
  readonly heapAfterBytes: number;
  /** RSS (after a GC) every tenth of the run. */
  readonly rssSeriesBytes: readonly number[];
  readonly syncsPerSecond: number;
  readonly podsObserved: number;
}

const CONFIG = 'evictionHard:\n  memory.available: 256Mi\nenforceNodeAllocatable: []\n';

const gc = (): void => (globalThis as { gc?: () => void }).gc?.();

async function main(): Promise<void> {
  const input = JSON.parse(readFileSync(process.argv[2] as string, 'utf8')) as SyncLoopInput;
  const clock = systemClock;
  const logger = silentLogger;
  gc();
  const rssStartBytes = process.memoryUsage().rss;
  const pods = input.pods;
  const config = sandboxNodeConfig(input.scratchDir, 'memcg-v1', CONFIG);
  const context = { nodeName: 'footprint-node', nodeCgroup: input.nodeCgroup, clock, logger };
  // Every pass counts every pod's processes, as a housekeeping pass does: the fullest path.
  const observer = createCgroupObserver(config.agent.observe, { ...context, processCountIntervalMs: 0 });
  const notifier = hostNotifier(config, context);
  const manager = new EvictionManager(config.eviction);
  const metrics = createAgentMetrics();
  const cluster: ClusterView = { synced: true, pods: () => pods, node: () => null, onPodChange: () => () => undefined, onNodeChange: () => () => undefined };
  const refused = { result: 'failed' as const, status: 0, message: 'not in this benchmark' };
  const actions: PodActions = { getPod: async () => null, evictPod: async () => refused, deletePod: async () => refused, addDisruptionTarget: async () => refused };
  const events: EventRecorder = { podEvent: async () => undefined, nodeEvent: async () => undefined, objectEvent: async () => undefined };
  const terminator: LocalTerminator = { terminate: async () => ({ signalled: 0 }) };
  const executor = new EvictionExecutor(
    { nodeName: 'footprint-node', dryRun: false, hardEviction: 'delete', softEviction: 'eviction-api', localTermination: true, localTerminationGracePeriodMs: null, setDisruptionTargetCondition: true },
    { cluster, actions, events, terminator, metrics, logger, clock },
  );
  let podsObserved = 0;
  // Counts the pods each pass found stats for: a pass that silently observed nothing would be cheap.
  const countingObserver: NodeObserver = {
    observe: async (list) => {
      const observation = await observer.observe(list);
      podsObserved = observation.summary.pods?.filter((p) => p.memory !== undefined).length ?? 0;
      return observation;
    },
  };
  const loop = new EvictionLoop({ housekeepingIntervalMs: 10_000, podCleanupTimeoutMs: 30_000 }, { manager, observer: countingObserver, notifier, cluster, executor, podStats: new PodStatsGuard({ events, logger }), metrics, clock, logger, thresholds: () => manager.thresholds });
  notifier.start(() => undefined);

  const pass = async (): Promise<void> => {
    await loop.syncOnce('housekeeping', null);
  };
  for (let i = 0; i < input.warmupSyncs; i++) await pass();
  gc();
  const rssAfterWarmupBytes = process.memoryUsage().rss;
  const heapAfterWarmupBytes = process.memoryUsage().heapUsed;
  const series: number[] = [];
  const startedMs = performance.now();
  for (let i = 1; i <= input.syncs; i++) {
    await pass();
    if (i % Math.max(1, Math.floor(input.syncs / 10)) === 0) {
      gc();
      series.push(process.memoryUsage().rss);
    }
  }
  const elapsedMs = performance.now() - startedMs;
  gc();
  const output: SyncLoopOutput = {
    syncs: input.syncs,
    warmupSyncs: input.warmupSyncs,
    rssStartBytes,
    rssAfterWarmupBytes,
    rssAfterBytes: process.memoryUsage().rss,
    heapAfterWarmupBytes,
    heapAfterBytes: process.memoryUsage().heapUsed,
    rssSeriesBytes: series,
    syncsPerSecond: input.syncs / (elapsedMs / 1000),
    podsObserved,
  };
  await notifier.stop();
  observer.close();
  process.stdout.write(`${JSON.stringify(output)}\n`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
