// Whether the node's pods can be ranked on their own numbers. The kubelet ranks a pod without stats
// first: for the kubelet that is rare (a container started since cAdvisor's last housekeeping). For
// the agent, several long-running pods without stats, or no pod cgroup root at all, almost always
// mean it reads the wrong place (a wrong hostRoot, cgroup driver or pod cgroup root, a runtime
// whose layout it does not know), and ranking on that would evict healthy pods blindly. Then the
// signals whose ranking reads those stats (memory and PIDs, from the pods' cgroups) are not acted
// on. A pod whose containers started moments ago is not counted: its stats may lag, as the
// kubelet's do, and it is ranked as the kubelet ranks it.

import { nodePodUid } from '../api/node-pod-uid.js';
import type { Pod } from '../api/pod.js';
import type { Signal } from '../api/signals.js';
import type { Summary } from '../api/summary.js';

/**
 * How long after a pod's first container started its missing stats are taken as lag, not as
 * blindness: twice cAdvisor's 10 s housekeeping interval, the time the kubelet itself may go
 * without stats for a new container.
 */
export const STATS_WARMUP_MS = 20_000;
/** At least this many pods without stats before the node counts as unseen (one lagging pod is the kubelet's case). */
export const MIN_PODS_WITHOUT_STATS = 2;
/** ...and more than this share of the pods that should have stats. */
export const MAX_SHARE_WITHOUT_STATS = 0.1;

/** The signals whose pod ranking reads the pods' cgroups (working sets, process counts). */
export const CGROUP_RANKED_SIGNALS: readonly Signal[] = ['memory.available', 'allocatableMemory.available', 'pid.available'];

// The misconfigurations that leave the agent without pod stats, named in every refusal.
const LIKELY_CAUSES = 'likely a wrong observe.hostRoot (the host root as mounted into the agent), observe.cgroupDriver or observe.podCgroupRoot (the kubelet\'s --cgroup-driver and --cgroup-root), or a container runtime whose cgroup layout the agent does not know';

// The pods named in a reason, at most.
const NAMED_PODS = 3;

export type StatsCoverage =
  /** Enough is seen: pods without stats (`missing`) are ranked as the kubelet ranks them. */
  | { readonly blind: false; readonly expected: number; readonly missing: readonly Pod[] }
  /** Too little is seen: the signals in `signals` are not acted on, for `reason`. */
  | { readonly blind: true; readonly expected: number; readonly missing: readonly Pod[]; readonly cause: 'no-pod-cgroup-root' | 'pods-without-stats'; readonly reason: string; readonly signals: readonly Signal[] };

export interface StatsCoverageInput {
  readonly summary: Summary;
  /** The node's active pods. */
  readonly pods: readonly Pod[];
  readonly nowMs: number;
  /** Why the pods' parent cgroup (or the whole memory hierarchy) was not found, when it was not. */
  readonly podCgroupRootProblem?: string | undefined;
}

function timeMs(value: unknown): number | null {
  if (value instanceof Date) return value.getTime();
  if (typeof value !== 'string') return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * When the pod's first running container started; null when none is running (a pending pod, or
 * one whose containers all ended: no stats are expected). A running container without a readable
 * start time counts as started long ago: doubt counts towards refusing, never towards ranking blind.
 */
function runningSinceMs(pod: Pod): number | null {
  let since: number | null = null;
  for (const status of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const running = status.state?.running;
    if (running === undefined || running === null) continue;
    const startedMs = typeof running === 'object' ? timeMs((running as { startedAt?: unknown }).startedAt) : null;
    const ms = startedMs ?? Number.NEGATIVE_INFINITY;
    since = since === null ? ms : Math.min(since, ms);
  }
  return since;
}

// A pod that should have stats by now: running for longer than the warm-up, and not being torn
// down (a terminating pod's cgroup goes before the API server hears of it).
function shouldHaveStats(pod: Pod, nowMs: number): boolean {
  if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null) return false;
  const since = runningSinceMs(pod);
  return since !== null && nowMs - since >= STATS_WARMUP_MS;
}

function podNames(pods: readonly Pod[]): string {
  const names = pods.slice(0, NAMED_PODS).map((p) => `${p.metadata.namespace ?? ''}/${p.metadata.name ?? ''}`);
  return pods.length > NAMED_PODS ? `${names.join(', ')}, …` : names.join(', ');
}

/** Assesses one observation: can the pods be ranked on it for the cgroup-ranked signals? */
export function assessStatsCoverage(input: StatsCoverageInput): StatsCoverage {
  const withStats = new Set<string>();
  for (const stats of input.summary.pods ?? []) if (stats.memory !== undefined && typeof stats.podRef?.uid === 'string') withStats.add(stats.podRef.uid);
  const hasStats = (pod: Pod): boolean => {
    const id = nodePodUid(pod);
    return id.ok && withStats.has(id.uid);
  };
  const expectedPods = input.pods.filter((pod) => shouldHaveStats(pod, input.nowMs));
  const missing = input.pods.filter((pod) => !hasStats(pod));
  const missingExpected = expectedPods.filter((pod) => !hasStats(pod));
  const expected = expectedPods.length;
  const seen = { blind: false as const, expected, missing };
  // Nothing running long enough to be measured: nothing is ranked blind.
  if (expected === 0) return seen;
  const blind = (cause: 'no-pod-cgroup-root' | 'pods-without-stats', what: string): StatsCoverage => ({
    blind: true,
    expected,
    missing,
    cause,
    reason: `${what}: not evicting for ${CGROUP_RANKED_SIGNALS.join(', ')} rather than rank pods blindly; ${LIKELY_CAUSES}`,
    signals: CGROUP_RANKED_SIGNALS,
  });
  if (input.podCgroupRootProblem !== undefined) return blind('no-pod-cgroup-root', `${input.podCgroupRootProblem}, so none of the ${expected} running pods can be measured`);
  const count = missingExpected.length;
  if (count >= MIN_PODS_WITHOUT_STATS && count > MAX_SHARE_WITHOUT_STATS * expected) {
    return blind('pods-without-stats', `${count} of ${expected} running pods have no stats (${podNames(missingExpected)})`);
  }
  return seen;
}
