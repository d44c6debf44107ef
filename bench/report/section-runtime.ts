// The runtime section: start-up time and peak RSS of short commands, and the idle `run`'s CPU and
// RSS, on the machine's Node 20 and on the image's Node, side by side. No target: it records what
// moving the image to another Node costs or saves.

import type { PartResult } from '../lib/part.js';
import { fmt, MiB, type Distribution } from '../lib/stats.js';
import type { RuntimeData } from '../parts/runtime.js';
import { measuredOn, table, type Section } from './markdown.js';

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
    idleRow('exit after SIGTERM, ms', (f) => (f.stopMs === null ? '–' : fmt(f.stopMs))),
  ];
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
  return { markdown, charts: [], headlines: [] };
}
