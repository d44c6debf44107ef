// Writes docs/benchmarks.md and its charts from the latest stored result of every part: a summary
// of each headline figure against its target (met or missed, and why), then a section per part
// with its tables, charts, machine and date, and how to reproduce. The page is regenerated in
// full on every run; nothing in it is edited by hand. The cgroup v2 OOM race is measured by its
// guest suite, not by the bench (which needs cgroup v1), so its section is the recorded result in
// bench/report/cgroup-v2-oom-race.md, copied in as it is.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PartResult } from '../lib/part.js';
import type { FootprintData } from '../parts/footprint.js';
import type { NodeCostData } from '../parts/node-cost.js';
import type { OomRaceData } from '../parts/oom-race.js';
import type { NodeLockData } from '../parts/node-lock.js';
import type { OpsFloodData } from '../parts/ops-flood.js';
import type { ReactionLatencyData } from '../parts/reaction-latency.js';
import type { RealNodeData } from '../parts/real-node.js';
import type { ReplayData } from '../parts/replay.js';
import type { RuntimeData } from '../parts/runtime.js';
import { errorMessage } from '../../src/errors.js';
import { missingSection, table, type Headline, type Section } from './markdown.js';
import { costSection } from './section-cost.js';
import { footprintSection } from './section-footprint.js';
import { latencySection } from './section-latency.js';
import { oomRaceSection } from './section-oom-race.js';
import { nodeLockSection } from './section-node-lock.js';
import { opsFloodSection } from './section-ops-flood.js';
import { realNodeSection } from './section-real-node.js';
import { replaySection } from './section-replay.js';
import { runtimeSection } from './section-runtime.js';

type Render = (result: PartResult, title: string, results: ReadonlyMap<string, PartResult>) => Section;

// Beside the source in bench/report/ (the compiled page runs from dist/bench/report/).
const CGROUP_V2_RACE = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bench', 'report', 'cgroup-v2-oom-race.md');

/** The recorded cgroup v2 OOM race, as a section; empty when the file is missing. */
function cgroupV2RaceSection(): string {
  return existsSync(CGROUP_V2_RACE) ? `\n${readFileSync(CGROUP_V2_RACE, 'utf8').trim()}\n` : '';
}

// What each part contributes to the summary when it has no data.
const PLACEHOLDERS: Readonly<Record<string, readonly Omit<Headline, 'result' | 'met'>[]>> = {
  'oom-race': [
    { what: 'OOM race, (a) notifier + local termination: races lost to the OOM killer', target: '0 of ≥ 320' },
    { what: 'OOM race, (a): overshoot past the threshold when the kill was issued', target: '≤ 8 MiB in every run' },
  ],
  'reaction-latency': [
    { what: 'kernel event → local termination issued, 110 pods, idle machine', target: 'p99 < 5 ms' },
    { what: 'the same, the CPUs saturated by two busy processes (a busy node)', target: 'p99 < 10 ms' },
    { what: 'the same, 1,000 pods', target: 'p99 < 10 ms' },
  ],
  'real-node': [{ what: 'Real node (kubelet, containerd, kube-apiserver): leaks evicted before the kernel OOM killer', target: 'every run' }],
  'node-cost': [
    { what: 'a 10 s housekeeping pass (observe + decide), 110 pods, median', target: '< 5 ms' },
    { what: 'a 10 s housekeeping pass (observe + decide), 1000 pods, median', target: '< 40 ms' },
    { what: 'a pass woken by a memory notification that finds no threshold met (observe + decide), 1000 pods, median', target: '< 20 ms' },
    { what: 'a pass woken by a memory notification that finds a memory threshold met (observe + decide), 1000 pods, median', target: '< 20 ms' },
    { what: 'Growth with the number of pods', target: 'close to linear' },
  ],
  replay: [{ what: 'replay, 10,000 steps × 110 pods', target: '> 5,000 steps/s end to end' }],
  runtime: [
    { what: 'RSS of `run` on the image\'s Node, maximum over the run including start, 110 pods', target: '< 64 MiB' },
    { what: 'idle CPU of `run` on the image\'s Node, 110 pods', target: '< 0.2 % of one core' },
  ],
  'ops-flood': [
    { what: 'RSS growth of `run` under a flood of the metrics port (775 or 3,100 connections at once), worst run', target: '< 48 MiB' },
    { what: 'probes on the probe port answered 200 during the floods', target: 'all' },
  ],
  'node-lock': [{ what: 'node lock takeover: SIGKILL of the acting agent → the standby holds the lock (may act)', target: '< 200 ms' }],
  footprint: [
    { what: 'idle CPU of `run` at 110 pods', target: '< 0.2 % of one core' },
    { what: 'main-thread wake-ups per second, idle, 110 pods', target: '–' },
    { what: 'RSS of `run`, maximum over the run including start', target: '< 64 MiB' },
    { what: 'Memory over 10,000 synchronize passes', target: 'no growth' },
  ],
};

const RENDERERS: Readonly<Record<string, Render>> = {
  'oom-race': (r) => oomRaceSection(r as PartResult<OomRaceData>),
  'reaction-latency': (r) => latencySection(r as PartResult<ReactionLatencyData>),
  'node-cost': (r) => costSection(r as PartResult<NodeCostData>),
  footprint: (r) => footprintSection(r as PartResult<FootprintData>),
  runtime: (r, title) => runtimeSection(r as PartResult<RuntimeData>, title),
  'ops-flood': (r, title) => opsFloodSection(r as PartResult<OpsFloodData>, title),
  'node-lock': (r, title) => nodeLockSection(r as PartResult<NodeLockData>, title),
  replay: (r, title) => replaySection(r as PartResult<ReplayData>, title),
  'real-node': (r, title, results) => realNodeSection(r as PartResult<RealNodeData>, title, results.get('reaction-latency') as PartResult<ReactionLatencyData> | undefined),
};

function verdict(h: Headline): string {
  if (h.met === null) return h.target === '–' ? '' : 'not judged';
  return h.met ? '**met**' : '**missed**';
}

function headlineLine(h: Headline): string {
  return `${h.met === null ? '   ' : h.met ? 'met' : 'MISSED'} ${h.what}: ${h.result}${h.target === '–' ? '' : ` (target ${h.target})`}${h.note === undefined ? '' : ` — ${h.note}`}`;
}

export function writeBenchmarkPage(docsDir: string, results: ReadonlyMap<string, PartResult>, parts: readonly { name: string; title: string }[]): { files: string[]; headlines: string[] } {
  const sections: Section[] = parts.map((part, i) => {
    const result = results.get(part.name);
    const title = `${i + 1}. ${part.title}`;
    if (result === undefined || result.data === null) return missingSection(title, result, PLACEHOLDERS[part.name] ?? []);
    try {
      return (RENDERERS[part.name] as Render)(result, title, results);
    } catch (err) {
      return missingSection(title, { ...result, error: `cannot render the stored result: ${errorMessage(err)}`, data: null }, PLACEHOLDERS[part.name] ?? []);
    }
  });
  const headlines = sections.flatMap((s) => s.headlines);
  const judged = headlines.filter((h) => h.met !== null);
  const summaryRows = headlines.map((h) => [h.what, h.target, h.result, verdict(h), h.note ?? '']);
  const anyQuick = [...results.values()].some((r) => r.quick);

  const page = `# Benchmarks

Does the agent beat the kernel OOM killer, how fast does it react, and how light is it? Every
number on this page was measured by \`npm run bench\` (\`bench/run.ts\`), which regenerates the page and its
charts; each section says what machine it ran on and when. The machines are small shared virtual
machines, so configurations that are compared are run side by side in the same run, alternating,
and figures are medians and percentiles over many runs. Each section names the code it measured
(sections are re-run one at a time, so they may come from different commits) and the machine's
load average when it started: other work shares the machine, and a load average above its number
of cores stretches every latency, the p99s most.

The reaction targets are ratios to the physical limit measured beside the agent in the same run: a
C reference killer (\`bench/reference-killer.c\`) that registers the same threshold, waits in epoll
and kills the same pod's processes, and, for one pass, a C reader of exactly the same files
(\`bench/reference-reader.c\`). Each measured part runs while it holds the machine's benchmark lock
(\`flock /tmp/kea-heavy.lock\`) exclusively, so no other heavy run (a guest suite, an end-to-end
suite, another benchmark) loads the machine meanwhile; builds and unit tests of other work may
still run. Parts that together take more than 20 minutes are run one per hold, so the sections of
one round may be minutes apart; \`npm run bench -- --quick\` prints each ratio on its own line as
\`ratio <what>: <value>× (target ≤ <target>×)\`.${anyQuick ? '\n\n**Some sections below come from a quick smoke run (`--quick`): too few samples to quote.**' : ''}

## Summary

${judged.filter((h) => h.met === true).length} of ${judged.length} targets met.

${table(['what', 'target', 'result', 'verdict', 'why / notes'], summaryRows, ['l', 'l', 'l', 'l', 'l'])}

${sections.map((s) => s.markdown.trim()).join('\n\n')}
${cgroupV2RaceSection()}
## Reproducing

\`\`\`
npm run bench                       # everything, about half an hour; rewrites this page
npm run bench -- --quick            # a smoke check, a few minutes (writes to a scratch directory)
npm run bench -- --part oom-race    # one part: oom-race, reaction-latency, node-cost, footprint, runtime, real-node, ops-flood, node-lock, replay
\`\`\`

It needs root and a cgroup v1 memory hierarchy with \`cgroup.event_control\` at \`/sys/fs/cgroup/memory\`
(where memory thresholds fire); the runtime part also needs the image's Node (\`bash scripts/install-node.sh\`), and part 3's C reference reader a C compiler (\`cc\`; without one it is skipped, with the reason),
and the real node part the end-to-end suite's binaries (\`bash scripts/e2e-env.sh\` builds or finds them, cached).
A part that cannot run says so here and in the output. Everything
it creates — cgroups named \`kea-bench-<pid>-…\`, the processes in them, the API stand-in, scratch
files — is removed when it ends, also on failure or Ctrl-C. Results are kept per part in
\`bench/results/*.json\`, so \`--part\` re-runs one part and the page keeps the others' latest results.
The runner builds on \`bench/observe-bench.ts\` (observe cost) and \`bench/notifier-latency.ts\` (notifier
latency), which can still be run on their own.
`;
  const files: string[] = [];
  const pagePath = join(docsDir, 'benchmarks.md');
  writeFileSync(pagePath, page);
  files.push(pagePath);
  for (const chart of sections.flatMap((s) => s.charts)) {
    const path = join(docsDir, chart.file);
    writeFileSync(path, chart.svg);
    files.push(path);
  }
  return { files, headlines: headlines.map(headlineLine) };
}
