// docs/scale.md from the fleet benchmark's stored results (bench/results/fleet-<N>.json, each
// possibly partial: a phase not measured is said to be missing): how to run it and how long a run
// took, the tables per N at rest, beside a real kubelet, in each storm and across an API server
// restart, the storm timelines as SVG (docs/scale/storm-<N>-<i>.svg: evictions per second above,
// p99 latencies below), the issue's goals against the figures, the extrapolation to 5,000 nodes
// from the largest N measured, and what to set on a large cluster.

import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FleetResult, StormResult } from '../lib/fleet-result.js';
import { table } from './markdown.js';
import { changesSection, extrapolationSection, flowControlSection, goalsSection, operatorAdvice } from './scale-findings.js';
import { lineChart } from './svg.js';

const ms = (v: number | null | undefined): string => (v === null || v === undefined ? '–' : v >= 10_000 ? `${(v / 1000).toFixed(1)} s` : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);
const num = (v: number, digits = 2): string => (Number.isInteger(v) ? String(v) : v.toFixed(digits));
const minutes = (s: number): string => (s >= 90 ? `${Math.round(s / 60)} min` : `${Math.round(s)} s`);
const sum = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);
const reads = (counts: Record<string, number>): number => Object.entries(counts).filter(([k]) => /^(get|list|watch) /.test(k)).reduce((a, [, v]) => a + v, 0);

/** The setting a storm ran under, in a few words. */
export function flowControlLabel(storm: StormResult): string {
  const f = storm.flowControl;
  return f === null ? 'built-in schemas (chart default)' : `chart FlowSchema, ${f.nominalConcurrencyShares} shares, queues of ${f.queueLengthLimit}`;
}

// Two panels sharing the time axis: evictions per second, then the p99 latencies with the 1 s SLO.
function timelineSvg(result: FleetResult, storm: StormResult): string {
  const xMax = Math.max(5, storm.timeline.length);
  const step = [1, 2, 5, 10, 15, 30, 60, 120].find((s) => xMax / s <= 12) ?? Math.ceil(xMax / 12);
  const xTicks = Array.from({ length: Math.floor(xMax / step) + 1 }, (_, i) => i * step);
  const caption = `${result.nodes} nodes, measured ${result.measuredAt.slice(0, 16).replace('T', ' ')} UTC on ${result.machine}; one kube-apiserver and etcd`;
  const evictions = lineChart({
    title: `${storm.label}: evictions per second, Nodes under pressure`,
    caption,
    xLabel: 'seconds since the first crossing',
    yLabel: 'per second',
    xMax,
    yMax: Math.max(5, ...storm.timeline.map((t) => Math.max(t.evictions, t.status429 / 10, t.nodesUnderPressure / 10))) * 1.1,
    xTicks,
    height: 300,
    series: [
      { label: 'pods deleted by the agents', color: '#1f6feb', points: storm.timeline.map((t) => [t.second, t.evictions] as const) },
      { label: '429s answered to the agents (/10)', color: '#bf8700', points: storm.timeline.map((t) => [t.second, t.status429 / 10] as const), dashed: true },
      { label: 'Nodes showing pressure (/10)', color: '#8250df', points: storm.timeline.map((t) => [t.second, t.nodesUnderPressure / 10] as const), dashed: true },
    ],
  });
  const seconds = (v: number | null): number => (v === null ? 0 : v / 1000);
  const latencies = storm.timeline.flatMap((t) => [seconds(t.mutatingP99Ms), seconds(t.secondClientP99Ms)]);
  const latency = lineChart({
    title: `${storm.label}: p99 latency of the requests started each second`,
    caption: 'latency from the audit log (received to answered) for the agents; from the client for the second client',
    xLabel: 'seconds since the first crossing',
    yLabel: 'seconds',
    xMax,
    yMax: Math.max(1.5, ...latencies) * 1.1,
    xTicks,
    height: 300,
    reference: { points: [[0, 1], [xMax, 1]], label: '1 s (the SLO for mutating calls)' },
    series: [
      { label: 'agents\' mutating calls, p99', color: '#d1242f', points: storm.timeline.map((t) => [t.second, seconds(t.mutatingP99Ms)] as const) },
      { label: 'second client\'s GET, p99', color: '#2da44e', points: storm.timeline.map((t) => [t.second, seconds(t.secondClientP99Ms)] as const), dashed: true },
    ],
  });
  const inner = (svg: string, y: number): string => svg.replace('<svg ', `<svg y="${y}" `);
  return `<svg xmlns="http://www.w3.org/2000/svg" width="800" height="600" viewBox="0 0 800 600">\n${inner(evictions, 0)}${inner(latency, 300)}</svg>\n`;
}

/** Writes the page from `results` (one per N) and `before` (runs of the agent before its request changes, by N). */
export function writeScalePage(repoRoot: string, results: readonly FleetResult[], before: readonly FleetResult[] = []): void {
  const docs = join(repoRoot, 'docs');
  const plots = join(docs, 'scale');
  mkdirSync(plots, { recursive: true });
  for (const old of readdirSync(plots).filter((f) => /^storm-\d+-\d+\.svg$/.test(f))) rmSync(join(plots, old));
  const lines: string[] = [];
  const add = (...text: string[]): void => {
    lines.push(...text);
  };
  add('# Fleet scale: what the agents cost one API server', '');
  add('<!-- Generated by `npm run bench:fleet` (bench/fleet.ts, bench/report/scale-page.ts) from bench/results/fleet-*.json; edit those, not this page. -->', '');
  add(
    'One agent runs on every node, so a cluster pays for it N times. The fleet benchmark runs N agents as shipped, built by the',
    'same composition root as `run` (informers, Events, deletes, node status and taint patches, retries and back-off all the',
    'agent\'s own), against one real kube-apiserver and etcd on this machine, with 30 pods per node. Only the host is simulated',
    '(each pod\'s memory, disk and PIDs move on a slow wave; a storm makes one pod per node grow past `memory.available<500Mi`',
    'and fires the memory notification), and so is the kubelet\'s last step of a deletion (a pod given a deletionTimestamp is',
    'removed with grace period 0). The agents run with the taint on (`reporting.taint.enabled`, the most writes pressure can',
    'cost) and a pressure transition period of 30 s, so each storm starts from Nodes at rest. Whose each request was comes from',
    'the API server\'s audit log; agents\' latencies are the audit log\'s (received to answered, APF queueing included). A second',
    'client, of another ServiceAccount (APF\'s `service-accounts` schema, as most controllers), reads one pod every 100 ms',
    'throughout over a kept-alive connection. One real kubelet with 10 pods runs beside the fleet on the same API server.',
    '',
    'Every figure on this page is of the agent of the commit its run names (the table of runs below). The first run at 1,000',
    'nodes, of the agent before its request changes (a TLS connection per API call, a GET before each write of the Node and',
    'after each local kill, Events retried only when unanswered), ended before it stored a result: its printed figures are',
    'kept, labelled so, in [scale-1000-before.md](scale-1000-before.md).',
    '',
    'The agents run 250 to a process (bench/workers/fleet-worker.ts): a process holds one copy of the Kubernetes client library',
    '(its import alone is about 75 MB), and 250 agents\' housekeeping passes leave its event loop mostly idle; one process per',
    'agent would measure N copies of Node.js rather than the agent. The agents, the API server, etcd and the kubelet share this',
    'machine\'s cores, so in a storm the agents\' own work competes with the API server\'s (the tables give each one\'s CPU).',
    '',
  );
  add('## Running it', '');
  add(
    'From a fresh clone, one command: `bash scripts/fleet-bench.sh --nodes 100` (it installs the npm dependencies, builds the',
    'control plane, kubelet and helm binaries into `~/.cache/kube-eviction-agent` the first time, which takes about half an hour',
    'on 2 cores, then runs `npm run bench:fleet -- --nodes 100`). Options: `--nodes N`, `--rest-s S` (the rest window, 600 s),',
    '`--phases rest,storm-10,storm-100,storm-100-chart,storm-100-tuned,restart` (a subset), `--tuned SHARES:QUEUE` (the second',
    'FlowSchema setting tried, 100:500), `--max-minutes M` (the bound on the run, 40 + 0.06 N by default, time waiting for the',
    'lock aside: a phase it cuts short keeps what it measured and says so; phases it leaves out are listed as skipped). Each',
    'phase\'s figures are written to bench/results/fleet-N.json as it ends, and this page is regenerated from every stored',
    'result (`npm run bench:fleet -- --report-only` regenerates it alone). With `KEA_FLEET_LOCK=/tmp/kea-heavy.lock` the set-up',
    'holds the machine\'s benchmark lock shared and the measured phases hold it exclusively.',
    '',
  );
  if (results.length === 0) {
    add('No result is stored yet.');
    writeFileSync(join(docs, 'scale.md'), `${lines.join('\n')}\n`);
    return;
  }
  add('How long the runs took:', '');
  add(
    table(
      ['nodes', 'measured', 'commit', 'objects created', 'agents started', 'waiting for the lock', 'measured phases', 'in all', 'phases'],
      results.map((r) => [
        String(r.nodes),
        r.measuredAt.slice(0, 16).replace('T', ' '),
        r.commit,
        minutes(r.durations.objectsS),
        minutes(r.durations.startupS),
        minutes(r.durations.lockWaitS),
        minutes(r.durations.measuredS),
        minutes(r.durations.totalS),
        r.phases.map((p) => `${p.name} ${p.status === 'measured' ? `(${minutes(p.durationS)})` : `**${p.status}**${p.note === undefined ? '' : `: ${p.note}`}`}`).join(', ') || 'none yet',
      ]),
    ),
    '',
  );

  const rested = results.filter((r) => r.rest !== null);
  add('## At rest', '');
  if (rested.length === 0) add('Not measured yet.', '');
  else {
    const verbs = [...new Set(rested.flatMap((r) => Object.keys(r.rest?.requestsPerNodePerMinute ?? {})))].sort();
    add(
      table(
        ['nodes', 'window', 'LISTs', 'writes', ...verbs.map((v) => `${v} /node/min`), 'watches open /node', 'watch bytes /node/min', 'CPU /agent', 'RSS /agent', 'API server CPU'],
        rested.map((r) => {
          const rest = r.rest as NonNullable<FleetResult['rest']>;
          return [
            String(r.nodes),
            `${num(rest.minutes, 1)} min`,
            String(rest.lists),
            String(rest.writes),
            ...verbs.map((v) => num(rest.requestsPerNodePerMinute[v] ?? 0, 3)),
            num(rest.watchesOpenPerNode, 2),
            `${Math.round(rest.bytesFromApiServerPerNodePerMinute)} B`,
            `${num(rest.cpuPercentPerAgent, 3)} % of a core`,
            `${(rest.rssBytesPerAgent / 1048576).toFixed(1)} MiB`,
            `${num((rest.cpu.apiServerS / (rest.minutes * 60)) * 100, 1)} % of a core`,
          ];
        }),
      ),
      '',
    );
    add(
      'At rest an agent only watches: its pods (`spec.nodeName=<node>`) and its Node, each re-opened when the server ends it',
      '(every 5 to 10 minutes; a watch, never a LIST). Its node conditions are written when they change and again only when',
      'the watched Node no longer shows them; the taint only when pressure starts or ends. "watches open" counts the agents\'',
      'watches the audit log shows started and not ended, divided by N; "watch bytes" is `apiserver_watch_events_sizes` of pods',
      'and Nodes (every watcher\'s, the kubelet\'s included) per node; "API server CPU" is the whole API server\'s, every client',
      'and the second client included.',
      '',
    );
    const compared = rested.filter((r) => r.rest?.kubeletRequestsPerMinute !== null);
    if (compared.length > 0) {
      add('### Beside one real kubelet', '');
      add(
        'In the same window a real kubelet and containerd (test/e2e/harness/real-node.ts) ran 10 pods on the same API server; its',
        'requests are those of its user (`system:node:fleet-kubelet`) in the audit log, per minute, beside one agent\'s.',
        '',
      );
      add(
        table(
          ['nodes', 'kubelet requests/min', 'agent requests/min', 'kubelet reads/min', 'agent reads/min', 'the agent adds', 'kubelet\'s most frequent (per min)'],
          compared.map((r) => {
            const rest = r.rest as NonNullable<FleetResult['rest']>;
            const kubelet = rest.kubeletRequestsPerMinute as Record<string, number>;
            const breakdown = Object.entries(kubelet).sort(([, a], [, b]) => b - a).slice(0, 5).map(([k, v]) => `${k} ${num(v, 2)}`).join(', ');
            return [String(r.nodes), num(sum(kubelet), 2), num(sum(rest.requestsPerNodePerMinute), 3), num(reads(kubelet), 2), num(reads(rest.requestsPerNodePerMinute), 3), sum(kubelet) === 0 ? '–' : `${num((sum(rest.requestsPerNodePerMinute) / sum(kubelet)) * 100, 1)} %`, breakdown];
          }),
        ),
        '',
      );
      const ratios = compared.map((r) => (sum((r.rest as NonNullable<FleetResult['rest']>).requestsPerNodePerMinute) / sum((r.rest as NonNullable<FleetResult['rest']>).kubeletRequestsPerMinute as Record<string, number>)) * 100);
      const [low, high] = [num(Math.min(...ratios), 1), num(Math.max(...ratios), 1)];
      add(`**At rest the agent adds ${low === high ? low : `${low} to ${high}`} % to the requests each kubelet already makes**, all of them watch re-opens (the kubelet's are mostly its lease renewals, every 10 s).`, '');
    }
  }

  const stormed = results.filter((r) => r.storms.length > 0);
  add('## Storms', '');
  if (stormed.length === 0) add('Not measured yet.', '');
  else {
    add(
      table(
        ['nodes', 'storm', 'APF', 'evicted', 'all gone after', 'at rest after', 'peak evictions/s', 'requests /node', 'mutating p50 / p99', 'first 30 s p99', '429s', 'repeated DELETE / kill', 'Events lost / doubled', 'second client p50 / p99 / max', 'CPU s: API server / etcd / agents', 'machine busy'],
        stormed.flatMap((r) =>
          r.storms.map((s) => [
            String(r.nodes),
            `${Math.round((s.nodes / r.nodes) * 100)} %`,
            flowControlLabel(s),
            `${s.podsEvicted}/${s.podsTargeted}`,
            ms(s.allGoneMs),
            ms(s.recoveredMs),
            String(s.evictionsPerSecondPeak),
            num(s.requestsPerNode, 1),
            `${ms(s.mutating.p50Ms)} / ${ms(s.mutating.p99Ms)}`,
            ms(s.mutatingBurst.p99Ms),
            String(s.status429),
            `${s.repeatedDeletes} / ${s.repeatedLocalKills}`,
            `${s.lostEvents} / ${s.doubledEvents}`,
            `${ms(s.secondClient.p50Ms)} / ${ms(s.secondClient.p99Ms)} / ${ms(s.secondClient.maxMs)}${s.secondClient.failures > 0 ? ` (${s.secondClient.failures} failed)` : ''}`,
            `${num(s.cpu.apiServerS, 0)} / ${num(s.cpu.etcdS, 0)} / ${num(s.cpu.agentsS, 0)}`,
            `${Math.round(s.cpu.machineBusy * 100)} %`,
          ]),
        ),
      ),
      '',
    );
    add(
      'Each node evicts one pod: the local kill first, then the DisruptionTarget condition, the DELETE, the Evicted Event, the',
      'node\'s EvictionThresholdMet Event and the pressure condition and taint on the Node, and, 30 s after the pressure ended,',
      'the condition and taint again. "mutating" is every create, patch and delete of the agents\' over the storm until the Nodes',
      'were at rest; "first 30 s" those of the burst alone. "repeated DELETE" counts pods whose DELETE an agent saw answered 2xx',
      'more than once (a retry after a client timeout: the pod went once), "repeated kill" pods ended locally more than once;',
      '"Events lost" evicted pods without an Evicted Event, "doubled" with more than one. 429s were all retried: every pod went.',
      '"machine busy" is the share of both cores in use over the storm.',
      '',
    );
    for (const r of stormed) {
      for (const [i, s] of r.storms.entries()) {
        const file = `storm-${r.nodes}-${i + 1}.svg`;
        writeFileSync(join(plots, file), timelineSvg(r, s));
        add(`![${s.label}, ${r.nodes} nodes](scale/${file})`, '');
      }
    }
  }

  const replayed = results.filter((r) => (r.replays ?? []).length > 0);
  if (replayed.length > 0) {
    add('### The storm\'s burst at a real fleet\'s pace', '');
    add(
      'In the storms above the agents\' requests reach the API server spread over tens of seconds: the N agents share this',
      'machine\'s 2 cores (at the lowest priority), so the work each node\'s agent does in a few milliseconds on its own node',
      'takes seconds here (the timelines\' first seconds). On a cluster each node\'s agent sends its burst within the second its',
      'node crosses. Here that burst (per node: the Evicted Event, the DisruptionTarget condition, then the DELETE, the',
      'EvictionThresholdMet Event, the taint, then the conditions; the agent\'s bodies, as its ServiceAccount) is sent by one light',
      'client for every node within one second, each node over a connection of its own opened then, as an agent\'s is',
      '(bench/lib/fleet-replay.ts). Latencies are the audit log\'s; a 429 is counted, not retried.',
      '',
    );
    add(
      table(
        ['nodes', 'APF', 'requests', 'all answered within', 'mutating p50 / p99 / max', 'answers', 'APF rejected', 'second client p50 / p99 / max', 'CPU s: API server / etcd'],
        replayed.flatMap((r) =>
          (r.replays ?? []).map((x) => [
            String(r.nodes),
            x.flowControl === null ? 'built-in schemas (chart default)' : `chart FlowSchema, ${x.flowControl.nominalConcurrencyShares} shares, queues of ${x.flowControl.queueLengthLimit}`,
            String(sum(x.requests)),
            ms(x.answeredWithinMs),
            `${ms(x.mutating.p50Ms)} / ${ms(x.mutating.p99Ms)} / ${ms(x.mutating.maxMs)}`,
            Object.entries(x.statuses).map(([code, n]) => `${code === '0' ? 'none' : code} ×${n}`).join(', '),
            String(x.apfRejected),
            `${ms(x.secondClient.p50Ms)} / ${ms(x.secondClient.p99Ms)} / ${ms(x.secondClient.maxMs)}`,
            `${num(x.cpu.apiServerS, 0)} / ${num(x.cpu.etcdS, 0)}`,
          ]),
        ),
      ),
      '',
    );
  }

  add('## API server restart under the fleet', '');
  const restarted = results.filter((r) => r.restart !== null);
  if (restarted.length === 0) add('Not measured yet.', '');
  else {
    add(
      'The API server is killed; a second later 10 % of the nodes cross their hard threshold (the agents end the leakers locally',
      'and their requests fail); it is started again two seconds after that, and every agent must watch again and every eviction',
      'decided during the outage land, once.',
      '',
    );
    add(
      table(
        ['nodes', 'down (kill to /readyz)', 'every agent watching again after /readyz', 'LISTs (relists)', 'per agent', 'evicted', 'all gone after the kill', 'repeated DELETE / kill', 'Events lost / doubled', '429s', 'requests'],
        restarted.map((r) => {
          const x = r.restart as NonNullable<FleetResult['restart']>;
          return [String(r.nodes), ms(x.downMs), x.watchesReopenedMs === null ? `${x.agentsReopened}/${r.nodes} agents` : ms(x.watchesReopenedMs), String(x.relists), num(x.relists / r.nodes, 2), `${x.podsEvicted}/${x.podsTargeted}`, ms(x.allGoneMs), `${x.repeatedDeletes} / ${x.repeatedLocalKills}`, `${x.lostEvents} / ${x.doubledEvents}`, String(x.status429), Object.entries(x.requests).map(([k, v]) => `${k} ${v}`).join(', ')];
        }),
      ),
      '',
    );
  }
  add(...goalsSection(results), ...flowControlSection(results), ...changesSection(results, before), ...extrapolationSection(results), ...operatorAdvice(results));
  writeFileSync(join(docs, 'scale.md'), `${lines.join('\n')}\n`);
}
