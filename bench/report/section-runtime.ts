// The runtime section: start-up time and peak RSS of short commands, and the idle `run`'s CPU and
// RSS, on the machine's Node 20 and on the image's Node, side by side; the idle `run` on the
// image's Node against issue 30's targets (RSS including start under 64 MiB, CPU under 0.2 % of
// one core), with the previous round's figures.

import type { PartResult } from '../lib/part.js';
import { fmt, MiB, type Distribution } from '../lib/stats.js';
import type { RuntimeData } from '../parts/runtime.js';
import { measuredOn, table, type Headline, type Section } from './markdown.js';
import { rssSplit } from './section-footprint.js';

const TARGET_RSS_MIB = 64;
const TARGET_CPU_PERCENT = 0.2;
/** The previous round's idle `run`, by runtime: RSS since start (VmHWM) and CPU over the window. */
const PREVIOUS_ROUND: Readonly<Record<string, { readonly peakMiB: number; readonly cpuPercent: number }>> = { 'v20.20.2': { peakMiB: 79.0, cpuPercent: 0.333 }, 'v24.22.3': { peakMiB: 102, cpuPercent: 0.233 } };

const ms = (d: Distribution | null | undefined): string => (d === null || d === undefined ? '–' : `${fmt(d.median)} / ${fmt(d.p90)}`);
const mib = (d: Distribution | null | undefined): string => (d === null || d === undefined ? '–' : `${fmt(d.median / MiB)} / ${fmt(d.max / MiB)}`);

export function runtimeSection(result: PartResult<RuntimeData>, title: string): Section {
  const data = result.data as RuntimeData;
  const [a, b] = data.runtimes as [string, string];
  const startRows = data.commands.map((c) => [c.name, ms(c.byRuntime[a]?.wallMs), ms(c.byRuntime[b]?.wallMs), mib(c.byRuntime[a]?.maxRssBytes), mib(c.byRuntime[b]?.maxRssBytes)]);
  const failures = data.commands.flatMap((c) => data.runtimes.filter((v) => (c.byRuntime[v]?.failures ?? 0) > 0).map((v) => `${c.name} failed ${c.byRuntime[v]?.failures} time(s) on ${v}`));
  const idleA = data.idle[a];
  const idleB = data.idle[b];
  const idleRow = (what: string, value: (f: NonNullable<typeof idleA>) => string): string[] => [what, idleA === undefined ? '–' : value(idleA), idleB === undefined ? '–' : value(idleB)];
  const idleRows = [
    idleRow('CPU over the window, % of one core', (f) => f.cpuPercentOfOneCore.toFixed(3)),
    idleRow('RSS, MiB: median / max', (f) => `${fmt((f.rssBytes?.median ?? 0) / MiB)} / ${fmt((f.rssBytes?.max ?? 0) / MiB)}`),
    idleRow('RSS at the end of the window, MiB', (f) => fmt(f.rssLastBytes / MiB)),
    idleRow('highest RSS since the process started (VmHWM), MiB', (f) => fmt(f.rssPeakSinceStartBytes / MiB)),
    idleRow('RSS at the end: anonymous / file-backed, MiB', (f) => (f.rssAnonLastBytes === undefined ? '–' : `${fmt(f.rssAnonLastBytes / MiB)} / ${fmt((f.rssFileLastBytes ?? 0) / MiB)}`)),
    [`previous round: VmHWM, MiB / CPU, %`, ...[a, b].map((v) => (PREVIOUS_ROUND[v] === undefined ? '–' : `${PREVIOUS_ROUND[v].peakMiB} / ${PREVIOUS_ROUND[v].cpuPercent}`))],
    idleRow('exit after SIGTERM, ms', (f) => (f.stopMs === null ? '–' : fmt(f.stopMs))),
  ];
  const headlines: Headline[] = [];
  if (idleB !== undefined) {
    const peakMiB = Math.max(idleB.rssPeakSinceStartBytes, idleB.rssBytes?.max ?? 0) / MiB;
    const previous = PREVIOUS_ROUND[b];
    const split = rssSplit(idleB);
    headlines.push(
      {
        what: `RSS of \`run\` on the image's Node (${b}), maximum over the run including start, ${data.idlePods} pods`,
        target: `< ${TARGET_RSS_MIB} MiB`,
        result: `max ${fmt(peakMiB)} MiB, at the end ${fmt(idleB.rssLastBytes / MiB)} MiB${previous === undefined ? '' : `; previous round max ${previous.peakMiB} MiB`}`,
        met: peakMiB < TARGET_RSS_MIB,
        ...(peakMiB >= TARGET_RSS_MIB && split !== null ? { note: `at the end ${split}; a bare \`node\` of this version holds about 30 MiB of its binary's pages` } : {}),
      },
      {
        what: `idle CPU of \`run\` on the image's Node (${b}), ${data.idlePods} pods, over ${idleB.sampleSeconds} s`,
        target: `< ${TARGET_CPU_PERCENT} % of one core`,
        result: `${idleB.cpuPercentOfOneCore.toFixed(3)} % of one core${previous === undefined ? '' : `; previous round ${previous.cpuPercent} %`}`,
        met: idleB.cpuPercentOfOneCore < TARGET_CPU_PERCENT,
      },
    );
  }
  const markdown = `## ${title}

The image runs the Node.js release its Dockerfile names; CI runs every test on it and on the
machine's Node 20. Each short command was started ${data.runsPerCommand} times on each, alternating:
wall time from spawn to exit, and the process's peak RSS (\`getrusage\` maxrss at exit). Then the idle
\`run --dry-run\` of part 4, with its ${data.idlePods} pods, on each for a shorter window (10 s warm-up,
then one sample a second). The machine is shared and loaded: compare the columns, not the absolute
figures with other sections.

${table(['command', `wall ms on ${a}: median / p90`, `on ${b}`, `peak RSS MiB on ${a}: median / max`, `on ${b}`], startRows)}

${table(['run --dry-run, idle', a, b], idleRows)}
${failures.length === 0 ? '' : `\n${failures.join('; ')}.\n`}
${measuredOn(result)}
`;
  return { markdown, charts: [], headlines };
}
