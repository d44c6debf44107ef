// Part 7, ops port flood: what a flood of the metrics port costs the real `run` command in RSS,
// and whether the kubelet's probes get through it. The CLI (`node dist/src/main.js run --dry-run`,
// started with the image's node options as the DaemonSet's pods are, then without them as the CI
// test starts it) runs against an API stand-in in this process, observing this machine with a
// threshold far below what is free; once ready, the metrics port is flooded with N
// and then 4N connections at once (775 and 3,100; a thirtieth of them drip a header line every half
// second), each one the agent closes opened again, several runs of each size in turn. Each run
// samples the agent's RSS every 100 ms and the flood connections it holds (its socket descriptors
// on the port), and sends a probe as the kubelet does to the probe port every half second; after
// the flood is closed, the RSS it settles at. The tests assert the relations (the limit holds,
// growth does not follow the flood's size, the heap comes back); this part records the figures.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { defaultAgentSettings } from '../../src/config/defaults.js';
import { kubeconfigFor, startApiStandIn } from '../../src/demo/api-stand-in.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import { imageNodeOptions } from '../lib/image-node.js';
import { acceptedConnections, OpsFlood, probe, rssBytes } from '../lib/ops-flood.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { distribution, fmt, MiB, type Distribution } from '../lib/stats.js';

const NODE_NAME = 'ops-flood-node';
/** N and 4N: the sizes the CI test compares, the larger one the flood the old CI bound was for. */
export const FLOOD_SIZES: readonly { readonly idle: number; readonly slow: number }[] = [
  { idle: 750, slow: 25 },
  { idle: 3000, slow: 100 },
];
const PROBE_EVERY_MS = 500;
// The chart's probe timeout is 3 s; a probe here counts as answered within it.
const PROBE_TIMEOUT_MS = 3_000;

export interface OpsFloodRun {
  /** Connections opened at once (idle + slow). */
  readonly connections: number;
  readonly slow: number;
  readonly floodMs: number;
  /** Connections opened over the run, the replacements of those the agent closed included. */
  readonly opened: number;
  /** The most flood connections the agent held at one sample. */
  readonly heldMax: number;
  readonly rssBeforeBytes: number;
  readonly rssPeakBytes: number;
  /** Once the flood was closed and the agent had let go of every connection, a second later. */
  readonly rssAfterBytes: number;
  readonly probesAnswered: number;
  readonly probesSent: number;
  /** Latency of the probes answered 200, ms. */
  readonly probeMs: Distribution | null;
}

/** One way of starting the agent, with its runs. */
export interface OpsFloodVariant {
  readonly label: string;
  readonly nodeOptions: readonly string[];
  /** The agent's RSS once ready, before the first flood. */
  readonly rssStartBytes: number;
  readonly runs: readonly OpsFloodRun[];
}

export interface OpsFloodData {
  readonly maxConnections: number;
  readonly probeMaxConnections: number;
  readonly variants: readonly OpsFloodVariant[];
}

const floodMsFor = (quick: boolean): number => (quick ? 5_000 : 20_000);
const runsFor = (quick: boolean): number => (quick ? 1 : 3);

// dist/bench: the Dockerfile is the compiled code's repository's, two levels up.
const repositoryOf = (context: PartContext): string => resolve(context.benchDir, '..', '..');

async function until(what: string, condition: () => boolean | Promise<boolean>, failIfExited: () => void, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    throwIfInterrupted();
    failIfExited();
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function floodOnce(pid: number, ports: { metrics: number; probes: number }, size: { idle: number; slow: number }, floodMs: number, failIfExited: () => void): Promise<OpsFloodRun> {
  const rssBeforeBytes = rssBytes(pid);
  let rssPeakBytes = rssBeforeBytes;
  let heldMax = 0;
  const probeMs: number[] = [];
  let probesSent = 0;
  const flood = new OpsFlood({ port: ports.metrics, idle: size.idle, slow: size.slow });
  const sampler = setInterval(() => {
    rssPeakBytes = Math.max(rssPeakBytes, rssBytes(pid));
    heldMax = Math.max(heldMax, acceptedConnections(pid, ports.metrics));
  }, 100);
  const endMs = Date.now() + floodMs;
  try {
    while (Date.now() < endMs) {
      throwIfInterrupted();
      failIfExited();
      probesSent++;
      const outcome = await probe(ports.probes, probesSent % 2 === 0 ? '/readyz' : '/healthz', PROBE_TIMEOUT_MS);
      if (outcome.status === 200) probeMs.push(outcome.ms);
      await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
    }
  } finally {
    clearInterval(sampler);
    flood.stop();
  }
  await until('the agent to let go of the flood', () => acceptedConnections(pid, ports.metrics) === 0, failIfExited);
  await new Promise((r) => setTimeout(r, 1000));
  return {
    connections: size.idle + size.slow,
    slow: size.slow,
    floodMs,
    opened: flood.opened,
    heldMax,
    rssBeforeBytes,
    rssPeakBytes,
    rssAfterBytes: rssBytes(pid),
    probesAnswered: probeMs.length,
    probesSent,
    probeMs: distribution(probeMs),
  };
}

/** Starts the agent with these node options, floods it run after run, stops it. */
async function measureVariant(context: PartContext, label: string, nodeOptions: readonly string[]): Promise<OpsFloodVariant> {
  const standIn = await startApiStandIn();
  const configPath = join(context.scratchDir, 'agent.yaml');
  const kubeconfigPath = join(context.scratchDir, 'kubeconfig');
  // Far below what this machine has free: nothing is ever evicted. The server's limits are the defaults.
  writeFileSync(configPath, 'apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nevictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\nlogLevel: info\n');
  writeFileSync(kubeconfigPath, kubeconfigFor(standIn));
  standIn.setNode(nodeOfThisHost(NODE_NAME));
  const child: ChildProcess = trackChild(
    spawn(process.execPath, [...nodeOptions, context.mainJs, 'run', '--config', configPath, '--kubeconfig', kubeconfigPath, '--node-name', NODE_NAME, '--dry-run', '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  const lines: string[] = [];
  if (child.stderr !== null) createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const failIfExited = (): void => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the agent exited early (${child.exitCode ?? child.signalCode}): ${lines.slice(-5).join(' | ')}`);
  };
  const portFrom = (msg: string): number => {
    for (const line of lines) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; port?: number };
      if (entry.msg === msg) return entry.port ?? 0;
    }
    return 0;
  };
  try {
    const pid = child.pid ?? 0;
    await until('the endpoints', () => portFrom('serving /metrics, /healthz and /readyz') > 0 && portFrom('serving /healthz and /readyz for the probes') > 0, failIfExited);
    const ports = { metrics: portFrom('serving /metrics, /healthz and /readyz'), probes: portFrom('serving /healthz and /readyz for the probes') };
    await until('readiness', async () => (await probe(ports.probes, '/readyz', PROBE_TIMEOUT_MS)).status === 200, failIfExited);
    const rssStartBytes = rssBytes(pid);
    const runs: OpsFloodRun[] = [];
    for (let i = 0; i < runsFor(context.quick); i++) {
      for (const size of FLOOD_SIZES) {
        context.progress.step(runs.length, runsFor(context.quick) * FLOOD_SIZES.length, `${label}: flooding with ${size.idle + size.slow} connections`, true);
        const run = await floodOnce(pid, ports, size, floodMsFor(context.quick), failIfExited);
        runs.push(run);
        context.progress.note(`${label}, ${run.connections} at once: ${run.opened} opened, held at most ${run.heldMax}; RSS +${fmt((run.rssPeakBytes - run.rssBeforeBytes) / MiB)} MiB; probes ${run.probesAnswered}/${run.probesSent}`);
      }
    }
    return { label, nodeOptions, rssStartBytes, runs };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5_000))]);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await standIn.stop();
  }
}

export const opsFloodPart: BenchPart<OpsFloodData> = {
  name: 'ops-flood',
  title: 'Ops port flood',
  estimateMs: (quick) => 2 * FLOOD_SIZES.length * runsFor(quick) * (floodMsFor(quick) + 3_000) + 10_000,
  unavailable: () => (existsSync('/proc/self/net/tcp') ? null : "no /proc/<pid>/net/tcp to count the agent's connections with"),
  async run(context: PartContext): Promise<OpsFloodData> {
    // As deployed first; then as the CI test runs it, where the bound it used to assert came from.
    const variants = [await measureVariant(context, 'as the image starts it', imageNodeOptions(repositoryOf(context))), await measureVariant(context, 'plain node (as the CI test)', [])];
    const server = defaultAgentSettings().server;
    return { maxConnections: server.maxConnections, probeMaxConnections: server.probeMaxConnections, variants };
  },
};
