// The replay section: the command end to end on a 10,000-step recording of a 110-pod node, by
// default (parsing on worker threads), on one thread and on one core, against the target (over
// 5,000 steps/s end to end) and the previous round's one-thread figures; where the CPU goes; the
// peak RSS of each way; small recordings by default and on one thread; and the in-process figures
// that bound it (the engine alone, reading and JSON.parse alone).

import type { PartResult } from '../lib/part.js';
import { fmt, MiB, type Distribution } from '../lib/stats.js';
import { REPLAY_WAYS, type ReplayData, type ReplayWay } from '../parts/replay.js';
import { measuredOn, table, type Headline, type Section } from './markdown.js';

/** `replay` end to end, steps per second, 10,000 steps of 110 pods (issue 30). */
const TARGET_STEPS_PER_SECOND = 5000;

/** The previous round's figures (one thread, before the parsing threads), steps per second. */
export const PREVIOUS_ROUND_STEPS_PER_SECOND = { cli: 2803, inProcess: 2878, engine: 24744, parseOnly: 5763 } as const;

const WAY_NAMES: Readonly<Record<ReplayWay, string>> = {
  default: 'by default (workers on the CPUs the load average shows free)',
  oneWorker: 'one parsing worker beside the deciding thread (`--threads 1`)',
  oneThread: 'on one thread (`--threads 0`)',
  oneCore: 'confined to one core (`taskset -c 0`; the default is then one thread)',
};

export function replaySection(result: PartResult<ReplayData>, title: string): Section {
  const data = result.data as ReplayData;
  const perSecond = (seconds: number | null | undefined, steps = data.steps): number | null => (seconds === null || seconds === undefined || seconds <= 0 ? null : steps / seconds);
  const rate = (seconds: number | null | undefined, steps = data.steps): string => fmt(perSecond(seconds, steps));
  const byDefault = perSecond(data.ways.default?.seconds?.median);
  const startup = data.startupSeconds?.median ?? 0;
  const hashes = new Set(REPLAY_WAYS.flatMap((way) => (data.ways[way]?.outputSha256 ? [data.ways[way]?.outputSha256] : [])));
  const cpu = data.threadCpu;
  const headlines: Headline[] = [
    {
      what: `replay, ${data.steps.toLocaleString('en-US')} steps × ${data.pods} pods`,
      target: `> ${TARGET_STEPS_PER_SECOND.toLocaleString('en-US')} steps/s end to end`,
      result: `${fmt(byDefault)} steps/s end to end on ${data.cpus} CPUs (${rate(data.ways.oneWorker?.seconds?.median)} with a parsing worker, ${rate(data.ways.oneThread?.seconds?.median)} on one thread, ${rate(data.ways.oneCore?.seconds?.median)} on one core); previous round ${PREVIOUS_ROUND_STEPS_PER_SECOND.cli} on one thread`,
      met: byDefault === null || data.steps < 10_000 ? null : byDefault > TARGET_STEPS_PER_SECOND,
      ...(byDefault !== null && byDefault <= TARGET_STEPS_PER_SECOND
        ? {
            note: `${
              data.defaultLoadAverages === undefined ? '' : `load average ${data.defaultLoadAverages.map((l) => fmt(l)).join(', ')} when the default runs started on ${data.cpus} CPUs; `
            }of ${fmt(data.ways.default?.seconds?.median)} s end to end, ${fmt(startup)} s is start-up; on one thread reading the lines and JSON.parse alone take ${fmt(data.parseOnlySeconds?.median)} s (${rate(data.parseOnlySeconds?.median)} steps/s) and the engine ${fmt(data.engineSeconds?.median)} s${
              cpu === null ? '' : `; with a parsing worker the deciding thread used ${fmt(cpu.mainMs / 1000)} s of CPU and the other threads (the worker, V8's compiler and collector) ${fmt(cpu.otherMs / 1000)} s, ${fmt((cpu.mainMs + cpu.otherMs) / 1000)} s in all against ${fmt(data.ways.oneThread?.seconds?.median)} s of one thread's wall time (×${fmt((cpu.mainMs + cpu.otherMs) / 1000 / (data.ways.oneThread?.seconds?.median ?? Number.NaN))}: the cost of handing steps over), which two free cores would return as ${fmt(data.steps / ((cpu.mainMs + cpu.otherMs) / 2000 + startup))} steps/s at best`
            }`,
          }
        : {}),
    },
  ];
  if (hashes.size > 1) headlines.push({ what: 'replay: the same output whichever way it runs', target: 'identical', result: `${hashes.size} different outputs`, met: false });

  const ms = (d: Distribution | null | undefined): string => (d === null || d === undefined ? '–' : `${fmt(d.median * 1000)} / ${fmt(d.max * 1000)}`);
  const wayRows = REPLAY_WAYS.map((way) => {
    const w = data.ways[way];
    return [WAY_NAMES[way], fmt(w?.seconds?.median), rate(w?.seconds?.median), rate((w?.seconds?.median ?? 0) - startup), w?.maxRssBytes === null || w === null ? '–' : fmt(w.maxRssBytes.max / MiB)];
  });
  const inProcessRows = [
    ['`replayStream` (one thread: read, validate, decide, write)', fmt(data.inProcessSeconds?.median), rate(data.inProcessSeconds?.median), String(PREVIOUS_ROUND_STEPS_PER_SECOND.inProcess)],
    ['`ReplayRunner.step` alone (the engine)', fmt(data.engineSeconds?.median), rate(data.engineSeconds?.median), String(PREVIOUS_ROUND_STEPS_PER_SECOND.engine)],
    ['reading the lines and `JSON.parse` alone (no validation, no engine)', fmt(data.parseOnlySeconds?.median), rate(data.parseOnlySeconds?.median), String(PREVIOUS_ROUND_STEPS_PER_SECOND.parseOnly)],
  ];
  const smallRows = data.small.map((s) => [s.name, `${fmt(s.bytes / 1024)} KiB, ${s.steps} steps`, ms(s.defaultSeconds), ms(s.oneThreadSeconds)]);

  const markdown = `## ${title}

The real command, \`node dist/src/main.js replay --config … RECORDING\`, timed from spawn to exit with
its output read through a pipe, on a generated recording of ${data.steps.toLocaleString('en-US')} steps (10 s apart) of a
${data.pods}-pod node: every step a full Summary with every pod's memory (${fmt(data.recordingBytes / MiB)} MiB of JSON Lines),
the pods in the first step, memory under the soft and hard thresholds two minutes in every hour
(${data.evictionLines} steps evict), replayed with the configuration of \`examples/memory-pressure.config.yaml\`. By default
a recording past 8 MiB is parsed on worker threads while the main thread decides, in order, on what
they parsed, as many workers as the load average shows CPUs free, less the main thread's (${data.cpus} CPUs
here); \`--threads 1\` asks for one worker whatever the load, \`--threads 0\` is the replay of one thread, as
it ran before (docs/replay.md). The ways are alternated run by run, median of ${data.runs}; their outputs were
${hashes.size <= 1 ? 'identical, byte for byte' : '**not identical**'}. Peak RSS is the process's (\`getrusage\` maxrss at exit).

${table(['way', 'seconds', 'steps per second', 'without start-up', 'peak RSS, MiB'], wayRows)}

Start-up alone (the same command on an empty recording): ${fmt(startup)} s. Previous round, one thread on
two CPUs: ${PREVIOUS_ROUND_STEPS_PER_SECOND.cli} steps/s end to end.${
    cpu === null
      ? ''
      : ` In the last run with a worker the main (deciding) thread used ${fmt(cpu.mainMs / 1000)} s of CPU and all the
other threads (the worker, V8's compiler and collector, libuv's pool) ${fmt(cpu.otherMs / 1000)} s, over
${fmt(cpu.wallMs / 1000)} s: ${fmt((cpu.mainMs + cpu.otherMs) / cpu.wallMs)} cores busy on average.`
  }

Small recordings, below the size at which the workers start, by default and on one thread (ms,
median / max of ${data.small[0]?.defaultSeconds?.count ?? 0} runs each, alternated):

${table(['recording', 'size', 'by default', 'on one thread'], smallRows)}

In process, one thread (median of ${data.runs}):

${table(['what', 'seconds', 'steps per second', 'previous round'], inProcessRows)}

${measuredOn(result)}
`;
  return { markdown, charts: [], headlines };
}
