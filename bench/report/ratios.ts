// The agent's figures as ratios to the C references measured in the same run (the reference killer
// beside the reaction and the OOM race, the reference reader beside one pass), against issue 30's
// targets. The page's headlines and the lines `npm run bench` prints, one per ratio, in the form
// `ratio <what>: <value>× (target ≤ <target>×)` so that a reader or a script can check them, both
// come from here.

import type { PartResult } from '../lib/part.js';
import { MiB } from '../lib/stats.js';
import type { NodeCostData } from '../parts/node-cost.js';
import { HEADLINE_RACE_VARIANT, REFERENCE_VARIANT, type OomRaceData, type RaceRun } from '../parts/oom-race.js';
import type { LatencyScenario, ReactionLatencyData } from '../parts/reaction-latency.js';

/** kernel event → local termination issued, against the reference killer's. */
export const TARGET_REACTION_P99_RATIO = 1.5;
export const TARGET_REACTION_MEDIAN_RATIO = 1.2;
/** The OOM race's overshoot at the kill: the agent's maximum against the reference's, over the same runs. */
export const TARGET_OVERSHOOT_RATIO = 1.5;
/** One pass in CPU time against the C reader of the same files. */
export const TARGET_PASS_CPU_RATIO = 1.2;

export interface Ratio {
  readonly what: string;
  /** The agent's figure divided by the reference's; null when either is missing or the reference's is 0. */
  readonly value: number | null;
  readonly target: number;
  readonly agent: number | null;
  readonly reference: number | null;
  readonly unit: string;
}

function ratio(what: string, agent: number | null | undefined, reference: number | null | undefined, target: number, unit: string): Ratio {
  const a = agent ?? null;
  const r = reference ?? null;
  return { what, value: a === null || r === null || r <= 0 ? null : a / r, target, agent: a, reference: r, unit };
}

/** Two significant decimals, whatever the size: ratios are read against 1.2 and 1.5. */
export function fmtRatio(value: number): string {
  return value >= 100 ? value.toFixed(0) : value.toFixed(2);
}

/** The line `npm run bench` prints for one ratio, or null when it was not measured. */
export function ratioLine(r: Ratio): string | null {
  if (r.value === null) return null;
  return `ratio ${r.what}: ${fmtRatio(r.value)}× (target ≤ ${r.target}×)`;
}

export const ratioMet = (r: Ratio): boolean | null => (r.value === null ? null : r.value <= r.target);

const SCENARIO_WHAT: Readonly<Record<LatencyScenario['key'], string>> = {
  'idle-110': '110 pods idle',
  'busy-110': '110 pods busy',
  'idle-1000': '1000 pods idle',
  'busy-1000': '1000 pods busy',
};

/** p99 and median of kernel event → local termination issued, per scenario, against the reference killer's. */
export function reactionRatios(data: ReactionLatencyData): Ratio[] {
  return data.scenarios.flatMap((s) => {
    const agent = s.stages.toTermination;
    const reference = s.reference?.stages.toTermination;
    if (reference === undefined) return [];
    const what = SCENARIO_WHAT[s.key];
    return [
      ratio(`reaction p99 ${what}`, agent?.p99, reference?.p99, TARGET_REACTION_P99_RATIO, 'ms'),
      ratio(`reaction median ${what}`, agent?.median, reference?.median, TARGET_REACTION_MEDIAN_RATIO, 'ms'),
    ];
  });
}

const maxOvershoot = (runs: readonly RaceRun[]): number | null => {
  const values = runs.flatMap((r) => (r.outcome === 'evicted' && r.overshootAtKillBytes !== null ? [r.overshootAtKillBytes] : []));
  return values.length === 0 ? null : Math.max(...values);
};

/** The OOM race's overshoot at the kill, (a)'s maximum against the reference's, in MiB. */
export function raceRatios(data: OomRaceData): Ratio[] {
  const reference = data.runs.filter((r) => r.variant === REFERENCE_VARIANT.key);
  if (reference.length === 0) return [];
  const agent = maxOvershoot(data.runs.filter((r) => r.variant === HEADLINE_RACE_VARIANT));
  const ref = maxOvershoot(reference);
  return [ratio('OOM race overshoot max', agent === null ? null : agent / MiB, ref === null ? null : ref / MiB, TARGET_OVERSHOOT_RATIO, 'MiB')];
}

/** One pass at 110 and 1,000 pods, observe CPU + decide (medians), against the C reader's CPU per pass. */
export function passRatios(data: NodeCostData): Ratio[] {
  return [110, 1000].flatMap((pods) => {
    const p = data.points.find((x) => x.pods === pods);
    if (p === undefined || p.reference?.kind !== 'measured' || p.observeCpu === null) return [];
    return [ratio(`pass CPU ${pods} pods`, p.observeCpu.median + (p.decide?.median ?? 0), p.reference.cpuPerPassMs, TARGET_PASS_CPU_RATIO, 'ms')];
  });
}

/** Every ratio the stored results allow, in the page's order. */
export function allRatios(results: ReadonlyMap<string, PartResult>): Ratio[] {
  const data = <T>(name: string): T | null => (results.get(name)?.data ?? null) as T | null;
  const race = data<OomRaceData>('oom-race');
  const latency = data<ReactionLatencyData>('reaction-latency');
  const cost = data<NodeCostData>('node-cost');
  return [...(race === null ? [] : raceRatios(race)), ...(latency === null ? [] : reactionRatios(latency)), ...(cost === null ? [] : passRatios(cost))];
}
