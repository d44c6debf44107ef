// Part 4, footprint: what the agent costs a node that is not under pressure. The real CLI
// (`NODE_OPTIONS=<the DaemonSet's> node <the image's node options> dist/src/main.js run --dry-run`)
// runs as a child process against an API stand-in in this
// process with 110 pods on its node; it observes this machine's real root memory cgroup (the
// threshold is set far below what is free, so nothing is ever evicted) and finds the 110 pods'
// cgroups under a sandbox cgroup. After a warm-up, its CPU time (utime + stime from /proc) and
// RSS are sampled every second for 60 s. Then, in a fresh process, the synchronize pass runs
// 10,000 times on the same 110 pods, and RSS is compared before and after.

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { errorMessage } from '../../src/errors.js';
import type { Pod } from '../../src/api/pod.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { BenchCgroup, cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { daemonSetNodeOptions, imageNodeOptions } from '../lib/image-node.js';
import { benchPod, containerCgroup } from '../lib/bench-pods.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { distribution, fmt, MiB, type Distribution } from '../lib/stats.js';
import { statusFieldBytes } from '../lib/proc-status.js';
import type { SyncLoopInput, SyncLoopOutput } from '../workers/sync-loop.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';

export const FOOTPRINT_PODS = 110;
export const FOOTPRINT_NODE_NAME = 'footprint-node';
const EMPTY_EVERY = 10;

export interface FootprintData {
  readonly pods: number;
  /** The options node was started with, the image's ENTRYPOINT's (absent from older results). */
  readonly nodeOptions?: readonly string[];
  /** NODE_OPTIONS as the DaemonSet sets it (absent from results measured without it). */
  readonly nodeOptionsEnv?: string;
  readonly warmupSeconds: number;
  readonly sampleSeconds: number;
  /** CPU over the whole sampling window, as a percentage of one core. */
  readonly cpuPercentOfOneCore: number;
  /** CPU per one-second sample (percent of one core). */
  readonly cpuPerSecond: Distribution | null;
  readonly rssBytes: Distribution | null;
  readonly rssFirstBytes: number;
  readonly rssLastBytes: number;
  /** VmHWM at the end of the window: the highest RSS since the process started. */
  readonly rssPeakSinceStartBytes: number;
  /**
   * RSS at the end of the window, split as the kernel counts it: anonymous memory (V8's heap, the C
   * heap, stacks) and file-backed pages (the node binary's code and data and the libraries', shared
   * with every other node process and dropped by the kernel under pressure). Absent from older results.
   */
  readonly rssAnonLastBytes?: number;
  readonly rssFileLastBytes?: number;
  /** Voluntary context switches of the main thread per second over the window (how often it wakes). */
  readonly mainThreadWakeupsPerSecond: number;
  /** The main thread's share of the CPU over the window, % of one core (the rest: libuv pool, V8's GC and compiler threads). */
  readonly mainThreadCpuPercentOfOneCore: number;
  /** How long the CLI took to exit after SIGTERM. */
  readonly stopMs: number | null;
  readonly stopExitCode: number | null;
  readonly watchesOpen: number;
  readonly clockTicksPerSecond: number;
  readonly syncLoop: SyncLoopOutput | null;
  readonly syncLoopError: string | null;
}

// dist/bench: the Dockerfile is the compiled code's repository's, two levels up.
const repositoryOf = (context: PartContext): string => resolve(context.benchDir, '..', '..');

const warmupFor = (quick: boolean): number => (quick ? 3 : 15);
const sampleFor = (quick: boolean): number => (quick ? 10 : 60);
const syncsFor = (quick: boolean): number => (quick ? 1000 : 10_000);

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** utime + stime in clock ticks from a /proc stat file. */
function cpuTicks(statPath: string): number {
  const stat = readFileSync(statPath, 'utf8');
  // Fields after the command name (which may hold spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU ticks of all its threads and of the main thread, VmRSS (and its anonymous and file-backed parts) and VmHWM in bytes, and the main thread's voluntary context switches. */
function sampleProcess(pid: number): { ticks: number; mainTicks: number; rssBytes: number; rssAnonBytes: number; rssFileBytes: number; peakRssBytes: number; wakeups: number } {
  const ticks = cpuTicks(`/proc/${pid}/stat`);
  const mainTicks = cpuTicks(`/proc/${pid}/task/${pid}/stat`);
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const wakeups = Number(/^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8'))?.[1] ?? 0);
  return { ticks, mainTicks, rssBytes: statusFieldBytes(status, 'VmRSS'), rssAnonBytes: statusFieldBytes(status, 'RssAnon'), rssFileBytes: statusFieldBytes(status, 'RssFile'), peakRssBytes: statusFieldBytes(status, 'VmHWM'), wakeups };
}

/** The 110 pods of the footprint node in the stand-in, most with an idle process in its cgroup. */
export async function populate(sandbox: BenchCgroup, standIn: ApiStandIn): Promise<Pod[]> {
  const pods: Pod[] = [];
  const idle: Promise<unknown>[] = [];
  for (let i = 0; i < FOOTPRINT_PODS; i++) {
    const pod = standIn.createPod(benchPod({ name: `app-${String(i).padStart(3, '0')}`, nodeName: FOOTPRINT_NODE_NAME, memoryRequest: '64Mi' }));
    pods.push(pod);
    const relative = containerCgroup(pod);
    if (i % EMPTY_EVERY === EMPTY_EVERY - 1) sandbox.mkdir(relative);
    else idle.push(sandbox.spawnIdle(relative));
  }
  await Promise.all(idle);
  return pods;
}

function agentConfig(sandbox: BenchCgroup, scratchDir: string): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    '# Far below what this machine has free: observe and decide, never evict.',
    'evictionHard:',
    '  memory.available: 1Mi',
    'enforceNodeAllocatable: []',
    'observe:',
    '  cgroupDriver: cgroupfs',
    `  podCgroupRoot: ${sandbox.name}/kubepods`,
    `  kubeletRootDir: ${scratchDir}`,
    `  imageFsPath: ${scratchDir}`,
    `  podLogsDir: ${scratchDir}`,
    'notifier:',
    '  mode: memcg-v1',
    'logLevel: warn',
    '',
  ].join('\n');
}

export type CliFootprint = Omit<FootprintData, 'syncLoop' | 'syncLoopError' | 'pods'>;

/** The idle `run --dry-run` command's CPU and RSS; on another Node binary and window when asked. */
export async function measureCli(context: PartContext, sandbox: BenchCgroup, standIn: ApiStandIn, options: { readonly nodeBin?: string; readonly warmupSeconds?: number; readonly sampleSeconds?: number } = {}): Promise<CliFootprint> {
  const configPath = join(context.scratchDir, 'agent.yaml');
  const kubeconfigPath = join(context.scratchDir, 'kubeconfig');
  writeFileSync(configPath, agentConfig(sandbox, context.scratchDir));
  writeFileSync(kubeconfigPath, kubeconfigFor(standIn));
  const warmupSeconds = options.warmupSeconds ?? warmupFor(context.quick);
  const sampleSeconds = options.sampleSeconds ?? sampleFor(context.quick);
  const ticksPerSecond = clockTicksPerSecond();
  const nodeOptions = imageNodeOptions(repositoryOf(context));
  const nodeOptionsEnv = daemonSetNodeOptions(repositoryOf(context));
  const child: ChildProcess = trackChild(
    spawn(options.nodeBin ?? process.execPath, [...nodeOptions, context.mainJs, 'run', '--config', configPath, '--kubeconfig', kubeconfigPath, '--node-name', FOOTPRINT_NODE_NAME, '--dry-run', '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: nodeOptionsEnv },
    }),
  );
  const output: string[] = [];
  for (const stream of [child.stdout, child.stderr]) if (stream !== null) createInterface({ input: stream }).on('line', (line) => output.push(line));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const pid = child.pid;
  if (pid === undefined) throw new Error('the agent did not start');
  const failIfExited = (): void => {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the agent exited early (${child.exitCode ?? child.signalCode}): ${output.slice(-5).join(' | ')}`);
  };
  try {
    // Up when both watches (pods, node) are open; then the warm-up.
    for (let i = 0; i < 300 && standIn.openWatches() < 2; i++) {
      failIfExited();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const watchesOpen = standIn.openWatches();
    for (let s = 0; s < warmupSeconds; s++) {
      throwIfInterrupted();
      failIfExited();
      context.progress.step(s + 1, warmupSeconds + sampleSeconds, 'run --dry-run: warming up');
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const first = sampleProcess(pid);
    const startedMs = performance.now();
    let previous = first;
    const cpuPerSecond: number[] = [];
    const rss: number[] = [first.rssBytes];
    for (let s = 0; s < sampleSeconds; s++) {
      throwIfInterrupted();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      failIfExited();
      const now = sampleProcess(pid);
      cpuPerSecond.push(((now.ticks - previous.ticks) / ticksPerSecond) * 100);
      rss.push(now.rssBytes);
      previous = now;
      context.progress.step(warmupSeconds + s + 1, warmupSeconds + sampleSeconds, `run --dry-run: RSS ${fmt(now.rssBytes / MiB)} MiB`);
    }
    const elapsedS = (performance.now() - startedMs) / 1000;
    const cpuPercentOfOneCore = ((previous.ticks - first.ticks) / ticksPerSecond / elapsedS) * 100;
    const stopStartedMs = performance.now();
    child.kill('SIGTERM');
    const stopExitCode = await Promise.race([exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))]);
    const stopMs = stopExitCode === null ? null : performance.now() - stopStartedMs;
    const problems = output.filter((line) => /"level":(50|60)|error/i.test(line));
    if (problems.length > 0) context.progress.note(`the agent logged ${problems.length} error line(s), e.g. ${problems[0]}`);
    return {
      nodeOptions,
      nodeOptionsEnv,
      warmupSeconds,
      sampleSeconds,
      cpuPercentOfOneCore,
      cpuPerSecond: distribution(cpuPerSecond),
      rssBytes: distribution(rss),
      rssFirstBytes: first.rssBytes,
      rssLastBytes: previous.rssBytes,
      rssPeakSinceStartBytes: previous.peakRssBytes,
      rssAnonLastBytes: previous.rssAnonBytes,
      rssFileLastBytes: previous.rssFileBytes,
      mainThreadWakeupsPerSecond: (previous.wakeups - first.wakeups) / elapsedS,
      mainThreadCpuPercentOfOneCore: ((previous.mainTicks - first.mainTicks) / ticksPerSecond / elapsedS) * 100,
      stopMs,
      stopExitCode,
      watchesOpen,
      clockTicksPerSecond: ticksPerSecond,
    };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  }
}

async function measureSyncLoop(context: PartContext, sandbox: BenchCgroup, pods: readonly Pod[]): Promise<SyncLoopOutput> {
  const inputPath = join(context.scratchDir, 'sync-loop.json');
  const input: SyncLoopInput = { nodeCgroup: sandbox.name, pods, syncs: syncsFor(context.quick), warmupSyncs: context.quick ? 200 : 1000, scratchDir: context.scratchDir };
  writeFileSync(inputPath, JSON.stringify(input));
  context.progress.note(`${input.syncs} synchronize passes in a fresh process (RSS before and after)...`);
  const child = trackChild(spawn(process.execPath, [...imageNodeOptions(repositoryOf(context)), '--expose-gc', join(context.benchDir, 'workers', 'sync-loop.js'), inputPath], { stdio: ['ignore', 'pipe', 'pipe'] }));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  if (code !== 0) throw new Error(`the sync loop exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as SyncLoopOutput;
}

export const footprintPart: BenchPart<FootprintData> = {
  name: 'footprint',
  title: 'Footprint',
  estimateMs: (quick) => (warmupFor(quick) + sampleFor(quick)) * 1000 + (syncsFor(quick) + 1000) * 17 + 5_000,
  unavailable: () => cgroupV1Unavailable(),
  async run(context: PartContext): Promise<FootprintData> {
    const standIn = await startApiStandIn();
    const sandbox = BenchCgroup.create('footprint');
    try {
      standIn.setNode(nodeOfThisHost(FOOTPRINT_NODE_NAME));
      const pods = await populate(sandbox, standIn);
      const cli = await measureCli(context, sandbox, standIn);
      let syncLoop: SyncLoopOutput | null = null;
      let syncLoopError: string | null = null;
      try {
        syncLoop = await measureSyncLoop(context, sandbox, pods);
      } catch (err) {
        syncLoopError = errorMessage(err);
      }
      return { pods: FOOTPRINT_PODS, ...cli, syncLoop, syncLoopError };
    } finally {
      await standIn.stop();
      await sandbox.destroy();
    }
  },
};
