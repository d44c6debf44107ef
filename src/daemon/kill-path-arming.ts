// What the kill path (a thread of its own, src/act/kill-path.ts) is armed with, and when: the
// engine's decision for the reading that would cross a hard memory threshold, made ahead of the
// notification. The victim is the pod the memory shortcut would choose now (the kubelet's memory
// ranking, src/eviction/memory-shortcut.ts), and the eviction is the engine's for a working set one
// byte past the threshold, so the grace period, and whether the pod is ended locally at all, are
// exactly what the main thread would do. The plan also carries, for every other pod that could
// come first by growing, the working set at which it would: the thread reads those pods' usage at
// the crossing, so a pod that overtook the victim since the arming (memory moved between pods, the
// node's total unchanged) is never passed over for it.
//
// Nothing is armed where the main thread would not end a pod at once itself: in a dry run, without
// local termination, while the agent may not act (its Node is not this host, another agent holds
// the node lock), before the pod watch has synced, when pods cannot be measured, while a pod ended
// locally still has processes, while a threshold is already met (the pass in progress decides),
// and when the first-ranked pod cannot be ended here (no stats, no container found, or one the
// executor refuses: critical, static or mirror, another node's). Each time it is not armed the
// reason is logged once.

import type { Logger } from '../api/logger.js';
import { computeMemoryThresholds, isProblem, memoryThresholdTargets, type MemoryThresholdFigures } from '../api/memory-thresholds.js';
import { podKey, type Pod } from '../api/pod.js';
import { SYSTEM_CONTAINER_PODS, type PodStats, type Summary } from '../api/summary.js';
import { errorMessage } from '../errors.js';
import type { EvictionManager } from '../eviction/manager.js';
import { MemoryVictimSearch } from '../eviction/memory-shortcut.js';
import type { Eviction } from '../eviction/types.js';
import type { EvictionExecutor } from './eviction-executor.js';
import type { PodStatsGuard } from './pod-stats-guard.js';
import type { ClusterView, KillPath, KillPathPlan, KillPathThreshold, MemoryReader } from './ports.js';

/**
 * How far below a wake point the kernel also wakes the kill path, for the victim to be ranked again
 * on the way up (a pod that grows toward the threshold overtakes the one ranked before it grew):
 * at the 4 GiB/s the fast check assumes of a node's cores, 16 ms before the crossing.
 */
export const APPROACH_DISTANCE_BYTES = 64n * 1024n * 1024n;

const NANOS_PER_BYTE = 1_000_000_000n;

export interface KillPathArmingDeps {
  readonly killPath: KillPath;
  readonly manager: EvictionManager;
  readonly reader: MemoryReader;
  readonly executor: EvictionExecutor;
  readonly cluster: ClusterView;
  readonly podStats: PodStatsGuard;
  /** The node lock file the kill is checked against at the signal; null without a lock. */
  readonly lockFile: () => { readonly path: string; readonly fileId: string } | null;
  readonly logger: Logger;
}

/** What the loop knows that the decision depends on. */
export interface KillPathLoopState {
  /** A pod ended locally may still hold its memory: nothing else is ended meanwhile. */
  localKillInProgress(): boolean;
  /** The pods a memory eviction may choose from now (active, and not passed over as stuck). */
  candidates(): Pod[];
}

/** What the main thread keeps of an armed plan, to build the eviction once the kill is reported. */
interface PlanContext {
  readonly victimStats: PodStats | undefined;
  /** Per threshold description: the capacity its working set is measured against, and its inactive file pages when planned. */
  readonly figures: ReadonlyMap<string, MemoryThresholdFigures>;
}

export type ArmingOutcome = { readonly plan: KillPathPlan } | { readonly notArmed: string };

export class KillPathArming {
  private readonly log: Logger;
  private readonly contexts = new WeakMap<KillPathPlan, PlanContext>();
  private lastNotArmed: string | null = null;

  constructor(
    private readonly deps: KillPathArmingDeps,
    private readonly loop: KillPathLoopState,
  ) {
    this.log = deps.logger.child({ component: 'kill-path' });
  }

  /** Plans and arms now, or takes the plan back and says why not. */
  rearm(): ArmingOutcome {
    let outcome: ArmingOutcome;
    try {
      outcome = this.plan();
      if ('plan' in outcome) {
        const refused = this.deps.killPath.arm(outcome.plan);
        if (refused !== null) outcome = { notArmed: refused };
      }
    } catch (error) {
      outcome = { notArmed: `planning failed: ${errorMessage(error)}` };
    }
    if ('notArmed' in outcome) {
      this.deps.killPath.disarm();
      if (outcome.notArmed !== this.lastNotArmed) this.log.info('kill path not armed; the main thread answers memory notifications', { reason: outcome.notArmed });
    } else if (this.lastNotArmed !== null) this.log.info('kill path armed', { victim: podKey(outcome.plan.victim) });
    else this.log.debug('kill path armed again', { victim: podKey(outcome.plan.victim), rivals: outcome.plan.rivals.length });
    this.lastNotArmed = 'notArmed' in outcome ? outcome.notArmed : null;
    return outcome;
  }

  /** Takes the plan back (see KillPath.disarm); `why` is logged when it was armed. */
  disarm(why: string): boolean {
    const wasArmed = this.deps.killPath.armed;
    const disarmed = this.deps.killPath.disarm();
    if (wasArmed && disarmed) this.log.debug('kill path disarmed', { why });
    return disarmed;
  }

  /** The plan the engine would carry out if the next reading crossed a hard memory threshold, or why there is none. */
  plan(): ArmingOutcome {
    const { executor, cluster, podStats, manager, reader } = this.deps;
    if (executor.dryRun) return { notArmed: 'dry run' };
    const refused = executor.refusal();
    if (refused !== null) return { notArmed: refused };
    if (!cluster.synced) return { notArmed: 'the pod watch has not synced' };
    if (!podStats.memoryRankable) return { notArmed: 'the pods cannot be ranked for memory (their stats are missing)' };
    if (this.loop.localKillInProgress()) return { notArmed: 'a pod ended locally still has processes' };
    const node = reader.nodeMemory();
    if (manager.hardMemoryPressure(node) !== null) return { notArmed: 'a hard memory threshold is met now: the pass decides' };
    const hard = memoryThresholdTargets(manager.thresholds).filter((t) => t.target.hard).map((t) => t.threshold);
    const figures = computeMemoryThresholds(node, hard).filter((c) => !isProblem(c)) as MemoryThresholdFigures[];
    if (figures.length === 0) return { notArmed: 'no hard memory threshold can be armed on the node\'s figures' };

    const pods = this.loop.candidates();
    const search = new MemoryVictimSearch(pods, reader.podBounds(pods), manager.featureGates.PodLevelResources);
    for (let pod = search.next(); pod !== null; pod = search.next()) search.settle(reader.podWorkingSet(pod));
    const victim = search.victim;
    if (victim === null) return { notArmed: 'no pod may be evicted for memory' };
    const lead = search.lead;
    if (lead === null) return { notArmed: `${podKey(victim)} ranks first without memory stats` };
    const refusedPod = executor.refusesLocalKill(victim);
    if (refusedPod !== null) return { notArmed: `${podKey(victim)}: ${refusedPod}` };

    const thresholds: KillPathThreshold[] = [];
    let eviction: Eviction | null = null;
    const victimStats = reader.podStats(victim);
    for (const f of figures) {
      const workingSetLimitBytes = (f.capacityBytes * NANOS_PER_BYTE - f.threshold.nanos) / NANOS_PER_BYTE;
      // The engine's own decision one byte past the limit: the eviction the kill stands for.
      const pressure = manager.hardMemoryPressure(crossingSummary(f, workingSetLimitBytes + 1n));
      if (pressure === null || manager.hardMemoryPressure(crossingSummary(f, workingSetLimitBytes)) !== null) return { notArmed: `${f.target.description}: the working set limit ${workingSetLimitBytes} does not match the engine's threshold` };
      eviction ??= manager.memoryEviction(pressure, victim, victimStats);
      thresholds.push({
        description: f.target.description,
        signal: f.target.signal,
        wakeUsageBytes: f.memcgThresholdBytes,
        workingSetLimitBytes,
        approachUsageBytes: f.memcgThresholdBytes > APPROACH_DISTANCE_BYTES ? f.memcgThresholdBytes - APPROACH_DISTANCE_BYTES : null,
      });
    }
    if (eviction === null || !executor.endsLocally(eviction)) return { notArmed: 'hard memory evictions do not end pods locally (actions.localTermination)' };
    const plan: KillPathPlan = {
      victim,
      gracePeriodMs: executor.localGracePeriodMs(eviction),
      thresholds,
      rivals: lead.rivals,
      victimWorkingSetBytes: lead.workingSetBytes,
      victimShrinkAllowanceBytes: lead.shrinkAllowanceBytes,
      lock: this.deps.lockFile(),
    };
    this.contexts.set(plan, { victimStats, figures: new Map(figures.map((f) => [f.target.description, f])) });
    return { plan };
  }

  /**
   * The engine's eviction for a kill the kill path reported: the pressure its confirming reading
   * shows (the figures the plan was armed with, the working set read), and the victim's stats as
   * ranked. Null when the plan is not one this arming made.
   */
  evictionFor(plan: KillPathPlan, threshold: KillPathThreshold, workingSetBytes: bigint): { eviction: Eviction; pressure: NonNullable<ReturnType<EvictionManager['hardMemoryPressure']>> } | null {
    const context = this.contexts.get(plan);
    const figures = context?.figures.get(threshold.description);
    if (context === undefined || figures === undefined) return null;
    const pressure = this.deps.manager.hardMemoryPressure(crossingSummary(figures, workingSetBytes));
    if (pressure === null) return null;
    return { pressure, eviction: this.deps.manager.memoryEviction(pressure, plan.victim, context.victimStats) };
  }
}

// The cgroup's memory as a Summary would report it with this working set (the planned inactive
// file pages, the capacity the figures were computed on).
function crossingSummary(figures: MemoryThresholdFigures, workingSetBytes: bigint): Summary {
  const available = figures.capacityBytes - workingSetBytes;
  const memory = { time: '', availableBytes: Number(available < 0n ? 0n : available), workingSetBytes: Number(workingSetBytes), usageBytes: Number(workingSetBytes + figures.inactiveFileBytes) };
  if (figures.target.signal === 'memory.available') return { node: { memory } };
  return { node: { systemContainers: [{ name: SYSTEM_CONTAINER_PODS, memory }] } };
}
