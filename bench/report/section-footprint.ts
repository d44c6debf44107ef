// The footprint section: CPU and RSS of the real `run` command idling with 110 pods, how fast it
// stops on SIGTERM, and RSS before and after 10,000 synchronize passes; the headlines against the
// targets (under 0.3 % of one core, main-thread wake-ups reported, RSS including start under
// 100 MB, no growth).

import type { PartResult } from '../lib/part.js';
import { fmt, MiB } from '../lib/stats.js';
import type { FootprintData } from '../parts/footprint.js';
import { measuredOn, table, type Headline, type Section } from './markdown.js';

const TARGET_CPU_PERCENT = 0.3;
const TARGET_RSS_BYTES = 100e6;
/** Heap growth over the passes that still counts as "no growth" (noise of a GC'd heap). */
const FLAT_HEAP_BYTES = 1 * MiB;
const FLAT_RSS_BYTES = 8 * MiB;

const mib = (bytes: number | undefined | null): string => (bytes === undefined || bytes === null ? '–' : fmt(bytes / MiB));

export function footprintSection(result: PartResult<FootprintData>): Section {
  const data = result.data as FootprintData;
  const loop = data.syncLoop;
  // The maximum over the whole run, start included: the kernel's high-water mark since exec, or
  // the largest sample when that is higher (it never should be).
  const sampledMax = data.rssBytes?.max ?? null;
  const rssMax = Math.max(sampledMax ?? 0, data.rssPeakSinceStartBytes);
  const steady = data.rssBytes === null ? null : data.rssLastBytes;
  const headlines: Headline[] = [
    {
      what: `idle CPU of \`run\` at ${data.pods} pods, over ${data.sampleSeconds} s`,
      target: `< ${TARGET_CPU_PERCENT} % of one core`,
      result: `${data.cpuPercentOfOneCore.toFixed(3)} % of one core`,
      met: data.cpuPercentOfOneCore < TARGET_CPU_PERCENT,
      ...(data.cpuPercentOfOneCore >= TARGET_CPU_PERCENT
        ? {
            note: `${data.mainThreadCpuPercentOfOneCore === undefined ? '' : `main thread ${data.mainThreadCpuPercentOfOneCore.toFixed(3)} %, other threads (libuv pool, V8's GC and compiler) ${(data.cpuPercentOfOneCore - data.mainThreadCpuPercentOfOneCore).toFixed(3)} %; `}the main thread wakes ${fmt(data.mainThreadWakeupsPerSecond)} times a second while idle; the housekeeping pass every 10 s costs what part 3 measures`,
          }
        : {}),
    },
    {
      what: `main-thread wake-ups per second, idle, ${data.pods} pods`,
      target: '–',
      result: `${fmt(data.mainThreadWakeupsPerSecond)} a second (voluntary context switches)`,
      met: null,
    },
    {
      what: 'RSS of `run`, maximum over the run including start',
      target: `< ${TARGET_RSS_BYTES / 1e6} MB (${fmt(TARGET_RSS_BYTES / MiB)} MiB)`,
      result: `max ${fmt(rssMax / 1e6)} MB (${mib(rssMax)} MiB); in the window median ${fmt((data.rssBytes?.median ?? 0) / 1e6)} MB, at the end ${fmt((steady ?? 0) / 1e6)} MB`,
      met: rssMax < TARGET_RSS_BYTES,
      ...(rssMax >= TARGET_RSS_BYTES
        ? {
            note: `${
              data.rssPeakSinceStartBytes > (sampledMax ?? 0) * 1.02
                ? `the peak is during start-up, before the first sample ${data.warmupSeconds} s in (the largest sample is ${fmt((sampledMax ?? 0) / 1e6)} MB)`
                : sampledMax === data.rssFirstBytes && data.rssLastBytes < 0.9 * data.rssFirstBytes
                  ? `the maximum is the first sample, ${data.warmupSeconds} s after start; by the end of the window RSS is ${fmt(data.rssLastBytes / 1e6)} MB`
                  : `RSS stays at ${fmt((data.rssBytes?.median ?? 0) / 1e6)} MB (median)`
            }`,
          }
        : {}),
    },
  ];
  if (loop !== null) {
    const rssGrowth = loop.rssAfterBytes - loop.rssAfterWarmupBytes;
    const heapGrowth = loop.heapAfterBytes - loop.heapAfterWarmupBytes;
    headlines.push({
      what: `Memory over ${loop.syncs.toLocaleString('en-US')} synchronize passes (${data.pods} pods)`,
      target: 'no growth',
      result: `RSS ${mib(loop.rssAfterWarmupBytes)} → ${mib(loop.rssAfterBytes)} MiB (${rssGrowth >= 0 ? '+' : ''}${mib(rssGrowth)}), heap ${mib(loop.heapAfterWarmupBytes)} → ${mib(loop.heapAfterBytes)} MiB (${heapGrowth >= 0 ? '+' : ''}${mib(heapGrowth)})`,
      met: heapGrowth < FLAT_HEAP_BYTES && rssGrowth < FLAT_RSS_BYTES,
    });
  } else {
    headlines.push({ what: 'Memory over 10,000 synchronize passes', target: 'no growth', result: `not measured: ${data.syncLoopError ?? 'unknown'}`, met: null });
  }

  const cliRows = [
    ['CPU over the window, % of one core', data.cpuPercentOfOneCore.toFixed(3)],
    ['of which the main thread, % of one core', data.mainThreadCpuPercentOfOneCore === undefined ? '–' : data.mainThreadCpuPercentOfOneCore.toFixed(3)],
    ['CPU per 1 s sample, % of one core: median / max', `${fmt(data.cpuPerSecond?.median)} / ${fmt(data.cpuPerSecond?.max)}`],
    ['RSS, MiB: median / max', `${mib(data.rssBytes?.median)} / ${mib(data.rssBytes?.max)}`],
    ['RSS at the start and the end of the window, MiB', `${mib(data.rssFirstBytes)} → ${mib(data.rssLastBytes)}`],
    ['highest RSS since the process started (VmHWM), MiB', mib(data.rssPeakSinceStartBytes)],
    ['main-thread wake-ups per second (voluntary context switches)', fmt(data.mainThreadWakeupsPerSecond)],
    ['exit after SIGTERM, ms (exit code)', data.stopMs === null ? 'did not exit within 10 s' : `${fmt(data.stopMs)} (${data.stopExitCode ?? '–'})`],
  ];
  const loopRows =
    loop === null
      ? []
      : [
          ['RSS at start (before any pass), MiB', mib(loop.rssStartBytes)],
          [`RSS after ${loop.warmupSyncs ?? 200} warm-up passes, MiB`, mib(loop.rssAfterWarmupBytes)],
          [`RSS after ${loop.syncs.toLocaleString('en-US')} more passes, MiB`, mib(loop.rssAfterBytes)],
          ['difference, MiB', mib(loop.rssAfterBytes - loop.rssAfterWarmupBytes)],
          ['heap used after warm-up → after, MiB', `${mib(loop.heapAfterWarmupBytes)} → ${mib(loop.heapAfterBytes)}`],
          ['RSS every tenth of the run, MiB', loop.rssSeriesBytes.map((b) => mib(b)).join(', ')],
          ['passes per second (with a GC every tenth)', fmt(loop.syncsPerSecond)],
          ['pods observed per pass', String(loop.podsObserved)],
        ];

  const markdown = `## 4. Footprint

What the agent costs a node that is not under pressure. The real command,
\`node dist/src/main.js run --config … --kubeconfig … --node-name ${'footprint-node'} --dry-run --port 0\`, runs as a
child process against an API stand-in in the benchmark's process with ${data.pods} pods on its node
(${data.watchesOpen} watches open). It observes this machine's real root memory cgroup read-only, with the
memcg notifier armed on it and \`memory.available: 1Mi\` so nothing is ever evicted, and finds its ${data.pods}
pods' cgroups under a sandbox cgroup (\`observe.podCgroupRoot\`), most with a tiny idle process.
Housekeeping every 10 s (the default); the metrics endpoint is off. After ${data.warmupSeconds} s of warm-up, CPU time
(utime + stime from \`/proc/<pid>/stat\`, ${data.clockTicksPerSecond} ticks/s) and VmRSS are sampled every second for ${data.sampleSeconds} s.

${table(['run --dry-run, idle', 'value'], cliRows)}

Then, in a fresh process started with \`--expose-gc\`, the loop's own pass (\`EvictionLoop.syncOnce\`:
observe the sandbox node with the same ${data.pods} pods, re-arm the memcg notifier, decide, record the
metrics) runs back to back; RSS and heap are read after a full garbage collection:

${loop === null ? `Not measured: ${data.syncLoopError ?? 'unknown'}.` : table(['synchronize passes', 'value'], loopRows)}

${measuredOn(result)}
`;
  return { markdown, charts: [], headlines };
}
