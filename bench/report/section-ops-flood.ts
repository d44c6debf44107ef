// The ops port flood section: per run, the flood's size, the connections it opened and the agent
// held, the agent's RSS before, at its peak and after, and the probes answered on the probe port;
// the headlines: the worst run's RSS growth against the bound CI used to assert (48 MiB),
// and every probe answered.

import type { PartResult } from '../lib/part.js';
import { fmt, MiB } from '../lib/stats.js';
import type { OpsFloodData } from '../parts/ops-flood.js';
import { measuredOn, table, type Headline, type Section } from './markdown.js';

/** The bound the CI test held the flood's RSS growth to before it asserted relations instead. */
const TARGET_GROWTH_BYTES = 48 * MiB;

const mib = (bytes: number): string => fmt(bytes / MiB);

export function opsFloodSection(result: PartResult<OpsFloodData>, title: string): Section {
  const data = result.data as OpsFloodData;
  const all = data.variants.flatMap((v) => v.runs.map((r) => ({ variant: v, run: r })));
  const sizes = [...new Set(all.map(({ run }) => run.connections))].sort((x, y) => x - y).map((n) => n.toLocaleString('en-US'));
  const worst = all.reduce((a, b) => (b.run.rssPeakBytes - b.run.rssBeforeBytes > a.run.rssPeakBytes - a.run.rssBeforeBytes ? b : a));
  const worstGrowth = worst.run.rssPeakBytes - worst.run.rssBeforeBytes;
  const sent = all.reduce((n, { run }) => n + run.probesSent, 0);
  const answered = all.reduce((n, { run }) => n + run.probesAnswered, 0);
  const heldMax = Math.max(...all.map(({ run }) => run.heldMax));
  const headlines: Headline[] = [
    {
      what: `RSS growth of \`run\` under a flood of the metrics port (${sizes.join(' or ')} connections at once), worst run`,
      target: `< ${mib(TARGET_GROWTH_BYTES)} MiB`,
      result: `+${mib(worstGrowth)} MiB (${worst.run.connections.toLocaleString('en-US')} at once, ${worst.variant.label})`,
      met: worstGrowth < TARGET_GROWTH_BYTES,
      // One over the limit is the connection being refused, between its accept and its close.
      ...(heldMax > data.maxConnections + 1 ? { note: `the agent held ${heldMax} connections, over its limit of ${data.maxConnections} and the one being refused` } : {}),
    },
    {
      what: 'probes on the probe port answered 200 during the floods',
      target: 'all',
      result: `${answered} of ${sent}`,
      met: answered === sent,
    },
  ];
  const rows = all.map(({ variant, run: r }) => [
    variant.label,
    r.connections.toLocaleString('en-US'),
    r.opened.toLocaleString('en-US'),
    String(r.heldMax),
    mib(r.rssBeforeBytes),
    mib(r.rssPeakBytes),
    `+${mib(r.rssPeakBytes - r.rssBeforeBytes)}`,
    mib(r.rssAfterBytes),
    `${r.probesAnswered} / ${r.probesSent}`,
    r.probeMs === null ? '–' : `${fmt(r.probeMs.median)} / ${fmt(r.probeMs.max)}`,
  ]);
  const floodS = Math.round((all[0]?.run.floodMs ?? 0) / 1000);
  const starts = data.variants.map((v) => `${v.label} (\`node ${v.nodeOptions.join(' ')}\`), ${mib(v.rssStartBytes)} MiB once ready`.replace('`node `', '`node`')).join('; ');
  const markdown = `## ${title}

The real \`run --dry-run\`, idle against the API stand-in, its metrics port flooded for ${floodS} s a run: that
many connections opened at once (a thirtieth of them sending half a request and a header line every
half second), each one the agent closes (over its limit of ${data.maxConnections}, or past the 5 s headers deadline)
opened again at once, runs of each size in turn. RSS sampled every 100 ms; the flood connections the
agent holds counted from its socket descriptors on the port (one over the limit is the connection
being refused, caught between its accept and its close); a probe as the kubelet sends it (a
connection of its own, a 3 s timeout) to the probe port every half second, whose limit
(${data.probeMaxConnections}) is its own. "After": once the flood was closed and the agent had let go of every connection, a
second later. The agent was started ${starts}. RSS after a flood stays up: V8 and malloc keep the
pages they freed for the next allocation (the CI test checks instead that the live heap after a full
collection returns). The two starts differ in the image's node options, which make V8's young
generation smaller (\`--max-semi-space-size\`), so it is collected more often.

${table(['started', 'connections at once', 'opened over the run', 'held at most', 'RSS before, MiB', 'peak', 'growth', 'after', 'probes answered', 'probe ms: median / max'], rows, ['l'])}

${measuredOn(result)}
`;
  return { markdown, charts: [], headlines };
}
