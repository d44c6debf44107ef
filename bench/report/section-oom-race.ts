// The OOM race section of the benchmark page: outcomes per rate and agent variant, the rate the
// machine actually produced, the overshoot past the threshold when the kill was issued and at
// the peak, and the time from the threshold crossing to the kill; two charts; and the headline
// figures for variant (a) against the targets (no race lost in at least 320 runs, ≤ 8 MiB overshoot in every run).

import type { PartResult } from '../lib/part.js';
import { fmtRatio, raceRatios, ratioMet, TARGET_OVERSHOOT_RATIO } from './ratios.js';
import { distribution, fmt, median, MiB, percentile } from '../lib/stats.js';
import { HEADLINE_RACE_VARIANT, REFERENCE_VARIANT, type OomRaceData, type RaceRun } from '../parts/oom-race.js';
import { chartCaption, measuredOn, table, type Headline, type Section } from './markdown.js';
import { groupedBarChart, rangeChart, type Series } from './svg.js';

export const VARIANT_COLORS: Readonly<Record<string, string>> = {
  'notifier-local': '#009E73',
  'notifier-api': '#0072B2',
  'poll10-local': '#D55E00',
  'poll10-api': '#E69F00',
  'poll1-local': '#CC79A7',
  'poll1-api': '#56B4E9',
  'reference-c': '#000000',
};

const TARGET_OVERSHOOT_BYTES = 8 * MiB;
/** Runs of variant (a) the race target asks for, none of them lost. */
const TARGET_RACE_RUNS = 320;
const HEADLINE_VARIANT = HEADLINE_RACE_VARIANT;

/** Round 2's largest overshoot of (a) at the kill, MiB, kept for comparison. */
const PREVIOUS_ROUND_MAX_OVERSHOOT_MIB = 14.7;

/** (a)'s largest overshoot at the kill against the reference killer's over the same runs (issue 30). */
function referenceOvershootHeadline(data: OomRaceData): Headline[] {
  const [r] = raceRatios(data);
  if (r === undefined) return [];
  const refRuns = data.runs.filter((x) => x.variant === REFERENCE_VARIANT.key);
  const refLost = refRuns.filter((x) => x.outcome !== 'evicted').length;
  const met = ratioMet(r);
  // Where the reference itself stays within 8 MiB, the agent must too.
  const absoluteMet = r.reference === null || r.reference > TARGET_OVERSHOOT_BYTES / MiB || (r.agent ?? Infinity) <= TARGET_OVERSHOOT_BYTES / MiB;
  return [
    {
      what: 'OOM race, (a) against the C reference killer: overshoot at the kill, maximum over the same runs',
      target: `≤ ${TARGET_OVERSHOOT_RATIO}× the reference's maximum (and ≤ 8 MiB where the reference's is)`,
      result: r.value === null ? 'no sample' : `(a) max ${fmt(r.agent)} MiB against the reference's ${fmt(r.reference)} MiB (×${fmtRatio(r.value)}); the reference lost ${refLost} of ${refRuns.length} races; previous round (a) max ${fmt(PREVIOUS_ROUND_MAX_OVERSHOOT_MIB)} MiB`,
      met: met === null ? null : met && absoluteMet,
      ...(met === false || !absoluteMet ? { note: "the kill's delay after the crossing, at the rate the pod allocates, is the overshoot: see the crossing → kill table, (a) beside the reference" } : {}),
    },
  ];
}

interface CellKey {
  readonly rate: string;
  readonly processes: number;
  readonly label: string;
}

function cellsOf(data: OomRaceData): CellKey[] {
  const cells: CellKey[] = [];
  for (const processes of data.processCounts) {
    for (const rate of data.rates) {
      if (data.runs.some((r) => r.rate === rate.key && r.processes === processes)) {
        cells.push({ rate: rate.key, processes, label: `${rate.label} ×${processes}` });
      }
    }
  }
  return cells;
}

const runsOf = (data: OomRaceData, cell: CellKey, variant?: string): RaceRun[] =>
  data.runs.filter((r) => r.rate === cell.rate && r.processes === cell.processes && (variant === undefined || r.variant === variant));

const mib = (bytes: number | null | undefined): string => (bytes === null || bytes === undefined ? '–' : fmt(bytes / MiB));
const evicted = (runs: readonly RaceRun[]): RaceRun[] => runs.filter((r) => r.outcome === 'evicted');
const numbers = (values: readonly (number | null)[]): number[] => values.filter((v): v is number => v !== null);

function cellAchieved(data: OomRaceData, cell: CellKey): { median: number | null; p10: number | null; p90: number | null } {
  const rates = numbers(runsOf(data, cell).map((r) => r.achievedBytesPerSecond));
  return { median: median(rates), p10: percentile(rates, 10), p90: percentile(rates, 90) };
}

function outcomeCell(runs: readonly RaceRun[]): string {
  if (runs.length === 0) return '–';
  const inTime = evicted(runs).length;
  const oom = runs.filter((r) => r.outcome === 'oom').length;
  const other = runs.length - inTime - oom;
  return `${inTime}/${runs.length}${oom > 0 ? ` (OOM ${oom})` : ''}${other > 0 ? ` (other ${other})` : ''}`;
}

function reactionMs(run: RaceRun): number | null {
  return run.killIssuedMs === null || run.crossingMs === null ? null : run.killIssuedMs - run.crossingMs;
}

/**
 * What happened in the runs of one variant that were not evicted in time, from the passes the
 * agent ran during each: when it was notified, what each pass saw, and when the OOM killer fired.
 */
function missExplanation(data: OomRaceData, runs: readonly RaceRun[]): string {
  const missed = runs.filter((r) => r.outcome !== 'evicted' && r.crossingMs !== null);
  if (missed.length === 0) return '';
  const KiB = 1024;
  const stories = missed.map((r) => {
    const crossing = r.crossingMs as number;
    const rate = data.rates.find((x) => x.key === r.rate)?.label ?? r.rate;
    const at = (ms: number): string => `${ms >= crossing ? '+' : '−'}${fmt(Math.abs(ms - crossing))} ms`;
    const passes = r.passes.filter((p) => p.atMs <= (r.firstExitMs ?? Infinity));
    const seen = passes.map((p) => `a ${p.trigger} pass at ${at(p.atMs)} saw memory.available ${p.marginBytes === null ? '?' : `${fmt(Math.abs(p.marginBytes) / KiB)} KiB ${p.marginBytes > 0 ? 'above' : p.marginBytes === 0 ? 'exactly at' : 'below'}`} the threshold${p.evicting ? ' and evicted' : ''}`);
    const crossingBytes = data.limitBytes - data.thresholdBytes + r.inactiveFileBytes;
    const armed = r.armedBytes === null ? '' : `, armed ${fmt((crossingBytes - r.armedBytes) / KiB)} KiB below the crossing point`;
    return `${rate} ×${r.processes} run ${r.run + 1}: notified at ${r.notifiedMs === null ? 'never' : at(r.notifiedMs)}${armed}; ${seen.length === 0 ? 'no pass ran' : seen.join(', ')}; OOM kill at ${r.firstExitMs === null ? '?' : at(r.firstExitMs)}`;
  });
  // The pattern: the one notification woke a pass that saw the threshold not yet met, and no other pass came in time.
  const early = missed.filter((r) => r.passes.length > 0 && r.passes.every((p) => !p.evicting && (p.marginBytes ?? -1) >= 0) && r.passes.some((p) => p.trigger === 'notifier'));
  const mechanism =
    early.length === 0
      ? ''
      : ` In ${early.length === missed.length ? 'each' : `${early.length}`}, the pass the notification woke found memory.available not yet below the threshold (the armed usage sits below the working-set crossing when the inactive page cache has grown since arming), and a cgroup v1 threshold fires once per crossing (one registered below the current usage does not fire at all), so nothing woke the agent again before the next 10 s housekeeping pass.`;
  return `. ${stories.join('. ')}.${mechanism}`;
}

export function oomRaceSection(result: PartResult<OomRaceData>): Section {
  const data = result.data as OomRaceData;
  const cells = cellsOf(data);
  const variants = data.variants.filter((v) => data.runs.some((r) => r.variant === v.key));
  const series: Series[] = variants.map((v) => ({ label: v.label, color: VARIANT_COLORS[v.key] ?? '#888' }));
  const caption = chartCaption(result);
  const achieved = new Map(cells.map((c) => [c, cellAchieved(data, c)]));
  const groups = cells.map((c) => ({
    label: data.rates.find((r) => r.key === c.rate)?.label ?? c.rate,
    sublabel: `×${c.processes} · got ~${Math.round((achieved.get(c)?.median ?? 0) / MiB)} MiB/s`,
  }));

  const outcomesSvg = groupedBarChart({
    title: `OOM race: runs evicted before the kernel OOM killer fired (of ${data.runsPerCell} per rate and variant)`,
    caption,
    yLabel: 'runs evicted in time',
    groups,
    series,
    values: cells.map((c) => variants.map((v) => evicted(runsOf(data, c, v.key)).length)),
    yMax: data.runsPerCell,
    width: 1160,
  });
  const overshootSvg = rangeChart({
    title: 'Overshoot past the threshold when the kill was issued (runs evicted in time): median, min–max',
    caption,
    yLabel: 'MiB over the threshold (log)',
    groups,
    series,
    values: cells.map((c) =>
      variants.map((v) => {
        const values = numbers(evicted(runsOf(data, c, v.key)).map((r) => r.overshootAtKillBytes)).map((b) => b / MiB);
        const d = distribution(values);
        return d === null ? null : { median: d.median, low: d.min, high: d.max };
      }),
    ),
    yMin: 0.1,
    yMax: 500,
    log: true,
    reference: { value: TARGET_OVERSHOOT_BYTES / MiB, label: 'target for (a): 8 MiB' },
    width: 1160,
  });

  const header = ['rate × processes', ...variants.map((v) => v.label)];
  const outcomeRows = cells.map((c) => [c.label, ...variants.map((v) => outcomeCell(runsOf(data, c, v.key)))]);
  const rateRows = cells.map((c) => {
    const a = achieved.get(c);
    const means = numbers(runsOf(data, c).map((r) => r.meanBytesPerSecond));
    const baseline = numbers(runsOf(data, c).map((r) => r.baselineUsageBytes));
    return [c.label, `${fmt((a?.median ?? 0) / MiB)}`, `${fmt((a?.p10 ?? 0) / MiB)} – ${fmt((a?.p90 ?? 0) / MiB)}`, fmt((median(means) ?? 0) / MiB), mib(median(baseline))];
  });
  const overshootRows = cells.map((c) => [
    c.label,
    ...variants.map((v) => {
      const values = numbers(evicted(runsOf(data, c, v.key)).map((r) => r.overshootAtKillBytes));
      return values.length === 0 ? '–' : `${mib(median(values))} / ${mib(percentile(values, 99))} / ${mib(Math.max(...values))}`;
    }),
  ]);
  const peakRows = cells.map((c) => [
    c.label,
    ...variants.map((v) => {
      const values = runsOf(data, c, v.key).map((r) => r.peakOvershootBytes);
      return values.length === 0 ? '–' : `${mib(median(values))} / ${mib(Math.max(...values))}`;
    }),
  ]);
  const reactionRows = cells.map((c) => [
    c.label,
    ...variants.map((v) => {
      const values = numbers(evicted(runsOf(data, c, v.key)).map(reactionMs));
      return values.length === 0 ? '–' : `${fmt(median(values))} / ${fmt(percentile(values, 99))}`;
    }),
  ]);

  const notifierVariants = variants.filter((v) => v.notifier === 'memcg-v1');
  const notifiedRows = cells.map((c) => [
    c.label,
    ...notifierVariants.map((v) => {
      const values = numbers(runsOf(data, c, v.key).map((r) => (r.notifiedMs === null || r.crossingMs === null ? null : r.notifiedMs - r.crossingMs)));
      return values.length === 0 ? '–' : `${fmt(median(values))} / ${fmt(percentile(values, 99))}`;
    }),
  ]);

  // Headlines: variant (a) against its targets.
  const headlineRuns = data.runs.filter((r) => r.variant === HEADLINE_VARIANT);
  const inTime = evicted(headlineRuns);
  const missedCells = cells.filter((c) => evicted(runsOf(data, c, HEADLINE_VARIANT)).length < runsOf(data, c, HEADLINE_VARIANT).length);
  const overshoots = numbers(inTime.map((r) => r.overshootAtKillBytes));
  const worstOvershoot = overshoots.length === 0 ? null : Math.max(...overshoots);
  const overshootCells = cells.filter((c) => numbers(evicted(runsOf(data, c, HEADLINE_VARIANT)).map((r) => r.overshootAtKillBytes)).some((b) => b > TARGET_OVERSHOOT_BYTES));
  const whyOvershoot = overshootCells
    .map((c) => {
      const runs = evicted(runsOf(data, c, HEADLINE_VARIANT));
      const rate = median(numbers(runs.map((r) => r.achievedBytesPerSecond))) ?? 0;
      const over = runs.filter((r) => (r.overshootAtKillBytes ?? 0) > TARGET_OVERSHOOT_BYTES).length;
      const reaction = median(numbers(runs.map(reactionMs)));
      return `${c.label}: ${over} of ${runs.length} runs over 8 MiB; at ~${fmt(rate / MiB)} MiB/s, 8 MiB lasts ${fmt(rate > 0 ? (TARGET_OVERSHOOT_BYTES / rate) * 1000 : null)} ms, and the kill came a median ${fmt(reaction)} ms after the crossing`;
    })
    .join('; ');
  // The largest overshoots, and where their time went: late notification, or a slow pass.
  const worstRuns = [...inTime]
    .filter((r) => (r.overshootAtKillBytes ?? 0) > TARGET_OVERSHOOT_BYTES && r.crossingMs !== null && r.notifiedMs !== null && r.killIssuedMs !== null)
    .sort((a, b) => (b.overshootAtKillBytes ?? 0) - (a.overshootAtKillBytes ?? 0))
    .slice(0, 3);
  const notifyDelays = numbers(inTime.map((r) => (r.notifiedMs === null || r.crossingMs === null ? null : r.notifiedMs - r.crossingMs)));
  const worstStory =
    worstRuns.length === 0
      ? ''
      : `. The largest: ${worstRuns
          .map((r) => `${mib(r.overshootAtKillBytes)} MiB (${data.rates.find((x) => x.key === r.rate)?.label ?? r.rate} ×${r.processes}: notified ${fmt((r.notifiedMs as number) - (r.crossingMs as number))} ms after the crossing, kill ${fmt((r.killIssuedMs as number) - (r.notifiedMs as number))} ms after the notification)`)
          .join(', ')}; the notification reached JavaScript a median ${fmt(median(notifyDelays))} ms (p99 ${fmt(percentile(notifyDelays, 99))} ms) after the crossing over all runs of (a)`;
  const headlines: Headline[] = [
    {
      what: 'OOM race, (a) notifier + local termination: races lost to the OOM killer',
      target: `0 of ≥ ${TARGET_RACE_RUNS}`,
      result: `${headlineRuns.length - inTime.length} of ${headlineRuns.length} runs over ${cells.length} rates × process counts`,
      met: headlineRuns.length >= TARGET_RACE_RUNS && missedCells.length === 0,
      ...(missedCells.length === 0
        ? headlineRuns.length >= TARGET_RACE_RUNS
          ? {}
          : { note: `none lost, but ${headlineRuns.length} runs are fewer than the ${TARGET_RACE_RUNS} the target asks for (${data.runsPerCell} per rate and process count)` }
        : { note: `lost at ${missedCells.map((c) => `${c.label} (${outcomeCell(runsOf(data, c, HEADLINE_VARIANT))})`).join(', ')}${missExplanation(data, headlineRuns)}` }),
    },
    ...referenceOvershootHeadline(data),
    {
      what: 'OOM race, (a): overshoot past the threshold when the kill was issued',
      target: '≤ 8 MiB in every run',
      result: worstOvershoot === null ? 'no run evicted' : `max ${mib(worstOvershoot)} MiB, median ${mib(median(overshoots))} MiB`,
      met: worstOvershoot === null ? null : worstOvershoot <= TARGET_OVERSHOOT_BYTES,
      ...(whyOvershoot === '' ? {} : { note: `${whyOvershoot}${worstStory}` }),
    },
  ];
  for (const v of variants.filter((x) => x.key !== HEADLINE_VARIANT)) {
    if (v.key === REFERENCE_VARIANT.key) continue;
    const runs = data.runs.filter((r) => r.variant === v.key);
    headlines.push({ what: `OOM race, ${v.label}: evicted before the OOM killer (for comparison)`, target: '–', result: `${evicted(runs).length} of ${runs.length}`, met: null });
  }

  const variantList = variants
    .map((v) => v.key === REFERENCE_VARIANT.key ? `- **${v.label}** (\`bench/reference-killer.c\`): no agent; a C program registers the same threshold (an eventfd on the node's \`memory.usage_in_bytes\` at the usage where \`memory.available\` drops below ${data.thresholdBytes / MiB}Mi), waits in epoll, confirms with one reading of the usage and SIGKILLs the allocating pod's processes from its \`cgroup.procs\`: the physical limit on this machine, raced in the same rotation as (a) on a node of the same shape; the usage at its kill is its own confirming read.` : `- **${v.label}**: ${v.notifier === 'memcg-v1' ? 'memcg v1 threshold notifier' : `no notifier, housekeeping every ${v.housekeepingIntervalMs / 1000} s`}; ${v.localTermination ? 'local termination (SIGTERM to the pod\'s processes from its cgroup, SIGKILL after the 1 s hard-eviction grace), then the API DELETE' : `API only (\`actions.localTermination: false\`): DELETE through the API, then the simulated kubelet kills the processes ${data.killDelayMs / 1000} s after it sees the deletion`}.`)
    .join('\n');
  const errors = data.runs.filter((r) => r.outcome === 'error');

  const markdown = `## 1. The OOM race

Does the agent stop a runaway pod before the kernel OOM killer does? Each variant runs on its own
sandbox node: a cgroup v1 memory cgroup with a hard limit of ${data.limitBytes / MiB} MiB (the kernel OOM
killer fires there), a hard \`memory.available\` threshold of ${data.thresholdBytes / MiB}Mi (so the agent acts once the
pods use more than ${(data.limitBytes - data.thresholdBytes) / MiB} MiB), and ${data.quietPods} quiet pods, each a process holding
${data.quietBytes / MiB} MiB within its 256Mi request. Every process gets the \`oom_score_adj\` the kubelet gives a Burstable
container (1000 − 1000 × request / capacity), so when the OOM killer fires it takes the pod furthest over its request. Each run creates a fresh pod in the API stand-in and its cgroup; the
pod's processes (Node, touching every page they allocate, no signal handlers) allocate at the
requested rate in total — chunks of rate/100 every 10 ms, or a tight loop of 4 MiB chunks for
"as fast as possible" — until they are killed. A run ends when the pod's processes are gone, the OOM
killer fires (\`oom_kill\` in \`memory.oom_control\`), or after ${data.timeoutMs / 1000} s. The agents are the real run loop
(\`startAgent\`) with the real adapters and the real Kubernetes client, one per variant for the whole
part; the variants are alternated run by run (the order rotates each round), so load from other
work on the machine falls on all of them alike. ${data.runsPerCell} run(s) per rate, process count and variant.

${variantList}

The polling variants are run both ways: with local termination they differ from (a) only in what
triggers the pass; API only is what the kubelet itself does (it polls every 10 s when it has no
memcg notification, as on cgroup v2). The kill delay of the simulated kubelet (${data.killDelayMs / 1000} s) stands for a
real kubelet seeing the deletion, syncing the pod and having the runtime stop its containers.

**Outcomes: runs evicted in time, of ${data.runsPerCell}** (OOM: the kernel OOM killer fired first):

${table(header, outcomeRows)}

![OOM race outcomes](benchmarks-oom-race.svg)

**The rate the machine actually produced** (MiB/s, from the pod's own reports of what it touched:
within 200 ms either side of the threshold crossing, cut at the kill or the OOM kill, all variants
together; the mean from the start to the crossing; the node's usage before the run):

${table(['rate × processes', 'achieved, median', 'p10 – p90', 'mean, start to crossing', 'node usage before, MiB'], rateRows)}

**Overshoot when the kill was issued**: the node's \`memory.usage_in_bytes\` read the instant the
kill went out (in the terminator hook for local termination, in the simulated kubelet otherwise),
minus the usage at which the threshold is crossed (limit − threshold, plus the node's inactive page
cache, which was at most ${mib(Math.max(0, ...data.runs.map((r) => r.inactiveFileBytes)))} MiB); MiB, median / p99 / max, over the runs evicted in time:

${table(header, overshootRows)}

![Overshoot at the kill](benchmarks-overshoot.svg)

**Peak overshoot** (\`memory.max_usage_in_bytes\` minus the same crossing point, every run; it includes
what was allocated between the kill and the processes' exit; ${data.thresholdBytes / MiB} MiB means the limit was hit), MiB, median / max:

${table(header, peakRows)}

**From the threshold crossing to the kill being issued**, ms, median / p99 (runs evicted in time; the
allocating process itself reads the node's usage after every 256 KiB it touches and notes, on the
same clock as the hooks, the moment it took usage past the crossing point):

${table(header, reactionRows)}

**From the crossing to the notification reaching JavaScript** (notifier variants, every run), ms,
median / p99; negative when the armed point sat below the crossing point as the allocating process
measured it:

${table(['rate × processes', ...notifierVariants.map((v) => v.label)], notifiedRows)}

${data.quietRestarts > 0 ? `The OOM killer took a quiet pod instead of the allocating one ${data.quietRestarts} time(s); it was restarted before the next run.\n\n` : ''}${errors.length > 0 ? `${errors.length} run(s) ended otherwise: ${[...new Set(errors.map((e) => e.error ?? 'unknown'))].slice(0, 3).join('; ')}.\n\n` : ''}${keptNote(data)}${loadNote(data)}${measuredOn(result)}
`;
  return {
    markdown,
    charts: [
      { file: 'benchmarks-oom-race.svg', svg: outcomesSvg },
      { file: 'benchmarks-overshoot.svg', svg: overshootSvg },
    ],
    headlines,
  };
}

/** Where the runs of the variants not raced in this run come from, when the run raced some only. */
function keptNote(data: OomRaceData): string {
  const kept = data.keptFrom;
  if (kept === undefined) return '';
  const labels = data.variants.filter((v) => kept.variants.includes(v.key)).map((v) => v.label.split(' ')[0]);
  const raced = data.variants.filter((v) => !kept.variants.includes(v.key)).map((v) => `${v.label.split(' ')[0]} (${data.runsPerCellByVariant?.[v.key] ?? data.runsPerCell} runs per rate and process count)`);
  const machine = `${kept.date.slice(0, 10)} ${kept.date.slice(11, 16)} UTC, code ${kept.revision ?? 'unknown'}, load average ${kept.loadAverage.toFixed(1)} at start`;
  return `This run raced ${raced.join(', ')} only; the runs of ${labels.join(', ')} are kept from the run of ${machine}.\n\n`;
}

/** The machine's load over the runs that recorded it: a loaded machine makes every reaction later. */
function loadNote(data: OomRaceData): string {
  const loads = numbers(data.runs.map((r) => r.loadAverage ?? null));
  if (loads.length === 0) return '';
  return `The 1-minute load average as each of the ${loads.length} runs that recorded it ended: median ${fmt(median(loads))}, max ${fmt(Math.max(...loads))} (2 cores).\n\n`;
}
