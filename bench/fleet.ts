// `npm run bench:fleet -- --nodes N` (or, from a fresh clone, `bash scripts/fleet-bench.sh --nodes
// N`): N agents as shipped against one real kube-apiserver and etcd (test/e2e/harness), 30 pods per
// node, the hosts simulated (test/e2e/harness/fleet-host.ts), the agents in a few worker processes
// (bench/workers/fleet-worker.ts, at most 250 agents each), one real kubelet beside them and a
// second client reading a pod every 100 ms throughout. Phases: at rest (--rest-s, default 600 s), a
// storm on 10 % of the nodes and one on 100 % under the API server's built-in schemas (the chart's
// default), one on 100 % under the chart's FlowSchema at its values and one per --tuned setting,
// the storm's burst replayed at a real fleet's pace (bench/lib/fleet-replay.ts) under each of those
// settings, and an API server restart with a storm on 10 % while it is down. Each phase's figures go to
// bench/results/fleet-<N>.json as soon as it ends, and docs/scale.md and its plots are regenerated
// from every stored result (`--report-only`: only that). `--max-minutes` bounds the run (time spent
// waiting for the lock aside); a phase the limit cuts short keeps what it measured and says so.
// Everything started is stopped at the end, also on failure or Ctrl-C.
// KEA_FLEET_LOCK=/tmp/kea-heavy.lock: the set-up runs under that lock shared, the measured phases
// under it exclusively.

import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { installAgentIdentity } from '../test/e2e/harness/agent-identity.js';
import type { ApiClient } from '../test/e2e/harness/api-client.js';
import { findControlPlaneBinaries, findRealNodeBinaries } from '../test/e2e/harness/binaries.js';
import { ControlPlane } from '../test/e2e/harness/control-plane.js';
import { createFleetObjects, fleetNodeName, fleetPodName, FleetKubelets, FleetNodes, FLEET_NAMESPACE } from '../test/e2e/harness/fleet.js';
import { nodeImages, RealNode } from '../test/e2e/harness/real-node.js';
import { realPod } from '../test/e2e/harness/real-node-scenario.js';
import { cgroupV1Unavailable } from '../test/helpers/cgroup-sandbox.js';
import { installInterruptHandlers, interruptSignal } from './lib/cleanup.js';
import { AuditRecord, sleep, type FleetContext } from './lib/fleet-context.js';
import { measureRest } from './lib/fleet-rest.js';
import { measureReplay } from './lib/fleet-replay.js';
import { measureRestart } from './lib/fleet-restart.js';
import { FleetResultFile, type FleetResult, type FlowControlSetting } from './lib/fleet-result.js';
import { measureStorm, type StormPhase } from './lib/fleet-storm.js';
import { allStats, FleetWorker, setProcessPriority } from './lib/fleet-workers.js';
import { holdLock } from './lib/heavy-lock.js';
import { SecondClient } from './lib/second-client.js';
import { writeScalePage } from './report/scale-page.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(benchDir, '..', '..');
const resultsDir = join(repoRoot, 'bench', 'results');
const PODS_PER_NODE = 30;
const AGENTS_PER_PROCESS = 250;
// The one real kubelet whose requests the agents' are compared with, and the pods it runs.
const KUBELET_NODE = 'fleet-kubelet';
const KUBELET_NAMESPACE = 'fleet-kubelet';
const KUBELET_PODS = 10;
// The bench's tokens outlive its longest run (the TokenRequest default of an hour does not).
const TOKEN_SECONDS = 24 * 3600;
const MiB = 1024 * 1024;
const say = (line: string): void => {
  process.stdout.write(`${new Date().toISOString().slice(11, 19)} fleet: ${line}\n`);
};

/** The run's bound unless --max-minutes says otherwise: set-up and start-up grow with N, so do the storms. */
function defaultMaxMinutes(nodes: number): number {
  return 40 + Math.ceil(nodes * 0.06);
}

interface Options {
  readonly nodes: number;
  readonly restMs: number;
  readonly maxMinutes: number;
  readonly phases: ReadonlySet<string>;
  /** The FlowSchema settings tried beside the chart's own (shares, queue length, hand size). */
  readonly tuned: readonly { shares: number; queueLengthLimit: number; handSize: number | null }[];
  /** Writes bench/results/fleet-<N>-<tag>.json instead, which the page leaves out (trials). */
  readonly tag: string | null;
}

const PHASES = ['rest', 'storm-10', 'storm-100', 'storm-100-chart', 'storm-100-tuned', 'replay', 'restart'] as const;

function parseOptions(argv: readonly string[]): Options {
  const value = (flag: string): string | undefined => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const nodes = Number(value('--nodes') ?? '100');
  if (!Number.isInteger(nodes) || nodes < 1) throw new Error(`--nodes needs a positive integer, got ${value('--nodes')}`);
  const restS = Number(value('--rest-s') ?? process.env.KEA_FLEET_REST_S ?? '600');
  const maxMinutes = Number(value('--max-minutes') ?? defaultMaxMinutes(nodes));
  const phases = new Set((value('--phases') ?? PHASES.join(',')).split(','));
  for (const phase of phases) if (!(PHASES as readonly string[]).includes(phase)) throw new Error(`--phases: unknown phase ${phase} (known: ${PHASES.join(', ')})`);
  const tuned = (value('--tuned') ?? '100:500').split(',').map((setting) => {
    const [shares, queueLengthLimit, handSize] = setting.split(':').map(Number);
    if (!Number.isInteger(shares) || !Number.isInteger(queueLengthLimit) || (handSize !== undefined && !Number.isInteger(handSize))) throw new Error(`--tuned needs shares:queueLength[:handSize], comma-separated, e.g. 100:500; got ${setting}`);
    return { shares: shares as number, queueLengthLimit: queueLengthLimit as number, handSize: handSize ?? null };
  });
  return { nodes, restMs: restS * 1000, maxMinutes, phases, tuned, tag: value('--tag') ?? null };
}

// The chart's own priority level values (deploy/chart/values.yaml).
function chartDefaults(): FlowControlSetting {
  const values = parse(readFileSync(join(repoRoot, 'deploy', 'chart', 'values.yaml'), 'utf8')) as { flowControl: { priorityLevel: FlowControlSetting } };
  const { nominalConcurrencyShares, queueLengthLimit, queues, handSize } = values.flowControl.priorityLevel;
  return { nominalConcurrencyShares, queueLengthLimit, queues, handSize };
}

function commitOf(): string {
  try {
    const head = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    const changed = execFileSync('git', ['-C', repoRoot, 'status', '--porcelain', '--', 'src'], { encoding: 'utf8' }).trim() !== '';
    return changed ? `${head}+changes` : head;
  } catch {
    return 'unknown';
  }
}

// The stored results of one kind: `fleet-<N>.json` (suffix ''), or `fleet-<N>-before.json`.
function loadResults(suffix = ''): FleetResult[] {
  if (!existsSync(resultsDir)) return [];
  return readdirSync(resultsDir)
    .filter((f) => new RegExp(`^fleet-\\d+${suffix}\\.json$`).test(f))
    .map((f) => JSON.parse(readFileSync(join(resultsDir, f), 'utf8')) as FleetResult)
    .sort((a, b) => a.nodes - b.nodes);
}

function writePage(): void {
  writeScalePage(repoRoot, loadResults(), loadResults('-before'));
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--report-only')) {
    writePage();
    return;
  }
  installInterruptHandlers();
  const options = parseOptions(argv);
  const nodeCount = options.nodes;
  const runStartMs = Date.now();
  const lockFile = process.env.KEA_FLEET_LOCK;
  let release: (() => Promise<void>) | null = lockFile === undefined ? null : await holdLock(lockFile, 'shared');
  const binaries = findControlPlaneBinaries();
  if (!binaries.ok) throw new Error(`the fleet bench needs the control plane's binaries: ${binaries.reason}`);
  const processes = Math.ceil(nodeCount / AGENTS_PER_PROCESS);
  const result: FleetResult = {
    nodes: nodeCount,
    podsPerNode: PODS_PER_NODE,
    processes,
    agentsPerProcess: Math.ceil(nodeCount / processes),
    measuredAt: new Date(runStartMs).toISOString(),
    machine: `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
    commit: commitOf(),
    complete: false,
    durations: { objectsS: 0, startupS: 0, lockWaitS: 0, measuredS: 0, totalS: 0 },
    phases: [],
    rest: null,
    storms: [],
    replays: [],
    restart: null,
  };
  const file = new FleetResultFile(join(resultsDir, options.tag === null ? `fleet-${nodeCount}.json` : `fleet-${nodeCount}-${options.tag}.json`), result);
  const save = (): void => {
    result.durations.totalS = Math.round((Date.now() - runStartMs) / 1000);
    file.save();
    if (options.tag === null) writePage();
  };
  const plane = await ControlPlane.start({ binaries: binaries.binaries, nodeNames: [KUBELET_NODE], auditLog: true, startTimeoutMs: 300_000 });
  const workers: FleetWorker[] = [];
  const stoppers: (() => Promise<void>)[] = [];
  try {
    const admin = plane.admin({ keepAlive: true });
    const identity = await installAgentIdentity(admin, undefined, TOKEN_SECONDS);
    const kubelets = new FleetKubelets(admin);
    stoppers.push(() => kubelets.stop());
    const fleetNodes = new FleetNodes(admin);
    stoppers.push(() => fleetNodes.stop());
    await Promise.all([kubelets.synced, fleetNodes.synced]);
    const nodes = Array.from({ length: nodeCount }, (_, i) => fleetNodeName(i));
    let t = Date.now();
    await createFleetObjects(admin, nodes, PODS_PER_NODE, 48);
    result.durations.objectsS = Math.round((Date.now() - t) / 1000);
    say(`${nodeCount} Nodes and ${nodeCount * PODS_PER_NODE} pods created in ${result.durations.objectsS} s`);
    const second = await SecondClient.start(admin, plane, FLEET_NAMESPACE, fleetPodName(fleetNodeName(0), 1));
    stoppers.push(() => second.stop());
    const realNode = await startKubelet(plane, admin).catch((err: unknown) => {
      say(`no real kubelet to compare with: ${err instanceof Error ? err.message : String(err)}`);
      return null;
    });
    if (realNode !== null) stoppers.push(() => realNode.stop());

    const assignment = new Map(nodes.map((n, i) => [n, i % processes]));
    for (let i = 0; i < processes; i++) workers.push(FleetWorker.start(join(benchDir, 'workers', 'fleet-worker.js'), say));
    const baseline = await allStats(workers);
    t = Date.now();
    await Promise.all(workers.map((w, i) => w.ask({ type: 'start', nodes: nodes.filter((n) => assignment.get(n) === i), server: plane.url, caPem: plane.caPem, token: identity.token }, 'started')));
    result.durations.startupS = Math.round((Date.now() - t) / 1000);
    say(`${nodeCount} agents started in ${processes} processes in ${result.durations.startupS} s`);
    save();
    // Start-up's own requests (the conditions, the taint check) are over.
    await sleep(20_000);
    if (lockFile !== undefined) {
      await release?.();
      // While others measure, the fleet idles as quietly as it can: no second client, and the API
      // server and etcd at the lowest CPU priority (the agents always are) until the lock is held.
      second.paused = true;
      const quiet = (nice: number): void => {
        for (const pid of [plane.apiServerPid, plane.etcdPid]) if (pid !== null) setProcessPriority(pid, nice);
      };
      quiet(19);
      say(`waiting for ${lockFile} (exclusive)`);
      t = Date.now();
      release = await holdLock(lockFile, 'exclusive');
      quiet(0);
      second.paused = false;
      result.durations.lockWaitS = Math.round((Date.now() - t) / 1000);
      say(`${lockFile} held exclusively after ${result.durations.lockWaitS} s`);
      await sleep(5_000);
    }
    const measuredFromMs = Date.now();
    const context: FleetContext = {
      nodeCount,
      admin,
      plane,
      workers,
      assignment,
      kubelets,
      fleetNodes,
      second,
      audit: new AuditRecord(plane.auditLogFile as string, new Set([identity.username, `system:node:${KUBELET_NODE}`])),
      agentUser: identity.username,
      serviceAccount: identity.serviceAccount,
      agentNamespace: identity.namespace,
      deadlineMs: runStartMs + result.durations.lockWaitS * 1000 + options.maxMinutes * 60_000,
      say,
    };
    say(`measuring until ${new Date(context.deadlineMs).toISOString().slice(11, 19)} at the latest (--max-minutes ${options.maxMinutes})`);

    const tenth = nodes.slice(0, Math.max(1, Math.round(nodeCount / 10)));
    const chart = chartDefaults();
    const label = (f: FlowControlSetting): string => `storm on 100 %, chart FlowSchema (${f.nominalConcurrencyShares} shares, ${f.handSize} of ${f.queues} queues of ${f.queueLengthLimit})`;
    const tuned = options.tuned.map((t): FlowControlSetting => ({ ...chart, nominalConcurrencyShares: t.shares, queueLengthLimit: t.queueLengthLimit, handSize: t.handSize ?? chart.handSize }));
    const storms: Record<string, StormPhase[]> = {
      'storm-10': [{ label: 'storm on 10 % of the nodes', nodes: tenth, flowControl: null }],
      'storm-100': [{ label: 'storm on 100 % of the nodes', nodes, flowControl: null }],
      'storm-100-chart': [{ label: label(chart), nodes, flowControl: chart }],
      'storm-100-tuned': tuned.map((f) => ({ label: label(f), nodes, flowControl: f })),
    };
    for (const name of PHASES.filter((p) => options.phases.has(p))) {
      const phaseStartMs = Date.now();
      const record = (status: 'measured' | 'skipped' | 'failed', note?: string): void => {
        result.phases.push({ name, status, durationS: Math.round((Date.now() - phaseStartMs) / 1000), ...(note === undefined ? {} : { note }) });
        result.durations.measuredS = Math.round((Date.now() - measuredFromMs) / 1000);
        save();
      };
      if (interruptSignal.aborted || Date.now() >= context.deadlineMs) {
        record('skipped', interruptSignal.aborted ? 'the run was interrupted' : 'the run\'s time limit had passed');
        continue;
      }
      const inTime = (): boolean => !interruptSignal.aborted && Date.now() < context.deadlineMs;
      try {
        if (name === 'rest') {
          result.rest = await measureRest(context, options.restMs, realNode === null ? null : { user: `system:node:${KUBELET_NODE}`, pods: KUBELET_PODS }, baseline);
        } else if (name === 'restart') {
          result.restart = await measureRestart(context, tenth);
        } else if (name === 'replay') {
          for (const f of [null, chart, ...tuned]) if (inTime()) result.replays.push(await measureReplay(context, repoRoot, f, identity.token));
        } else {
          for (const phase of storms[name] ?? []) if (inTime()) result.storms.push(await measureStorm(context, phase, repoRoot));
        }
        record('measured');
      } catch (err) {
        say(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
        record('failed', err instanceof Error ? err.message : String(err));
      }
    }
    result.complete = result.phases.every((p) => p.status === 'measured');
    save();
    say(`wrote ${file.file}${options.tag === null ? ' and docs/scale.md' : ''} (${result.complete ? 'every phase measured' : 'some phases missing'}; ${Math.round(result.durations.totalS / 60)} min in all)`);
  } finally {
    await release?.();
    await Promise.all(workers.map((w) => w.stop()));
    for (const stop of stoppers.reverse()) await stop().catch(() => undefined);
    await plane.stop();
  }
}

// One real kubelet and containerd (test/e2e/harness/real-node.ts) on the same API server, with a
// few pods, for its own requests at rest; none where the machine cannot run it (then said so).
async function startKubelet(plane: ControlPlane, admin: ApiClient): Promise<RealNode | null> {
  const nodeBinaries = findRealNodeBinaries();
  const images = nodeImages();
  const cgroups = cgroupV1Unavailable();
  const why = !nodeBinaries.ok ? nodeBinaries.reason : !images.ok ? images.reason : cgroups;
  if (!nodeBinaries.ok || !images.ok || why !== null) {
    say(`no real kubelet to compare with: ${why ?? ''}`);
    return null;
  }
  const node = await RealNode.start({
    plane,
    binaries: nodeBinaries.binaries,
    nodeName: KUBELET_NODE,
    imagesTar: images.binaries,
    kubepodsLimitBytes: 1536n * BigInt(MiB),
    rootDirSizeBytes: 256n * BigInt(MiB),
    evictionHard: { 'memory.available': '100Mi' },
    podPidsLimit: 1024,
  });
  try {
    await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: KUBELET_NAMESPACE } });
    for (let i = 0; i < KUBELET_PODS; i++) await admin.create(`/api/v1/namespaces/${KUBELET_NAMESPACE}/pods`, realPod(`held-${i}`, KUBELET_NODE, { args: ['hold', '8'], namespace: KUBELET_NAMESPACE }));
    const deadlineMs = Date.now() + 180_000;
    for (;;) {
      const pods = await admin.get<{ items: { status?: { phase?: string } }[] }>(`/api/v1/namespaces/${KUBELET_NAMESPACE}/pods`);
      if (pods.items.filter((p) => p.status?.phase === 'Running').length === KUBELET_PODS) break;
      if (Date.now() > deadlineMs) throw new Error('the real kubelet did not run its pods within 3 minutes');
      await sleep(1000);
    }
  } catch (err) {
    await node.stop();
    throw err;
  }
  say(`a real kubelet runs ${KUBELET_PODS} pods on ${KUBELET_NODE}`);
  return node;
}

main().catch((err: unknown) => {
  process.stderr.write(`fleet bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
