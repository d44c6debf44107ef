// Part 5, the Node.js runtime: the machine's Node (20) against the image's (the exact release the
// Dockerfile names, fetched by scripts/install-node.sh). Short commands are started alternately on
// each, many times: wall time from spawn to exit, and the process's peak RSS (getrusage's maxrss,
// written at exit by a preloaded file). Then the idle `run --dry-run` of part 4, with its 110 pods,
// once on each, for a shorter window.

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApiStandIn } from '../../src/demo/api-stand-in.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { BenchCgroup, cgroupV1Unavailable } from '../lib/bench-cgroup.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import { findImageNode } from '../lib/image-node.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { distribution, type Distribution } from '../lib/stats.js';
import { FOOTPRINT_NODE_NAME, FOOTPRINT_PODS, measureCli, populate, type CliFootprint } from './footprint.js';

export interface RuntimeCommand {
  readonly name: string;
  /** Per runtime (its `node --version`): wall time in ms and peak RSS in bytes over the runs. */
  readonly byRuntime: Readonly<Record<string, { readonly wallMs: Distribution | null; readonly maxRssBytes: Distribution | null; readonly failures: number }>>;
}

export interface RuntimeData {
  readonly runtimes: readonly string[];
  readonly runsPerCommand: number;
  readonly commands: readonly RuntimeCommand[];
  /** The idle `run --dry-run` with FOOTPRINT_PODS pods, per runtime. */
  readonly idle: Readonly<Record<string, CliFootprint>>;
  readonly idlePods: number;
}

const runsFor = (quick: boolean): number => (quick ? 3 : 15);
const IDLE_WARMUP_S = 10;
const idleSampleFor = (quick: boolean): number => (quick ? 5 : 30);

// Preloaded into every measured process: its peak RSS (kB) into the file the runner names.
const RSS_PRELOAD = `const { writeFileSync } = require('node:fs');
process.on('exit', () => writeFileSync(process.env.KEA_BENCH_RSS_FILE, String(process.resourceUsage().maxRSS)));
`;

// dist/bench/parts/runtime.js: the repository is three levels up.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

async function timeOnce(nodeBin: string, args: readonly string[], cwd: string, preload: string, rssFile: string): Promise<{ wallMs: number; maxRssBytes: number } | null> {
  const env: NodeJS.ProcessEnv = { ...process.env, KEA_BENCH_RSS_FILE: rssFile };
  delete env.NODE_OPTIONS;
  writeFileSync(rssFile, '');
  const startedMs = performance.now();
  const child = trackChild(spawn(nodeBin, ['--require', preload, ...args], { cwd, env, stdio: 'ignore' }));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  const wallMs = performance.now() - startedMs;
  const kib = Number(readFileSync(rssFile, 'utf8'));
  return code === 0 && kib > 0 ? { wallMs, maxRssBytes: kib * 1024 } : null;
}

export const runtimePart: BenchPart<RuntimeData> = {
  name: 'runtime',
  title: 'Node.js 20 and the image\'s Node.js',
  estimateMs: (quick) => runsFor(quick) * 4 * 2 * 900 + 2 * (IDLE_WARMUP_S + idleSampleFor(quick)) * 1000 + 10_000,
  unavailable: () => {
    const image = findImageNode(repoRoot);
    return image.ok ? cgroupV1Unavailable() : image.reason;
  },
  async run(context: PartContext): Promise<RuntimeData> {
    const image = findImageNode(repoRoot);
    if (!image.ok) throw new Error(image.reason);
    const binaries = [process.execPath, image.path];
    const versions = binaries.map((bin) => (bin === process.execPath ? process.version : `v${image.version}`));
    const preload = join(context.scratchDir, 'rss-at-exit.cjs');
    writeFileSync(preload, RSS_PRELOAD);
    const rssFile = join(context.scratchDir, 'rss');
    const config = join(repoRoot, 'examples', 'memory-pressure.config.yaml');
    const commands: { name: string; args: string[] }[] = [
      { name: 'bare `node -e 0`', args: ['-e', '0'] },
      { name: '`kube-eviction-agent --version`', args: [context.mainJs, '--version'] },
      { name: '`kube-eviction-agent check-config` (the example configuration)', args: [context.mainJs, 'check-config', config] },
      { name: 'loading the Kubernetes client (`import("@kubernetes/client-node")`)', args: ['--input-type=module', '-e', 'await import("@kubernetes/client-node")'] },
    ];
    const runs = runsFor(context.quick);
    const measured = commands.map(() => versions.map(() => ({ wallMs: [] as number[], rss: [] as number[], failures: 0 })));
    const total = runs * commands.length * binaries.length;
    let done = 0;
    // Alternating, so that the machine's load falls on both alike.
    for (let run = 0; run < runs; run++) {
      for (const [c, command] of commands.entries()) {
        for (const [b, bin] of binaries.entries()) {
          throwIfInterrupted();
          const sample = await timeOnce(bin, command.args, repoRoot, preload, rssFile);
          const slot = measured[c]?.[b];
          if (slot === undefined) continue;
          if (sample === null) slot.failures++;
          else {
            slot.wallMs.push(sample.wallMs);
            slot.rss.push(sample.maxRssBytes);
          }
          context.progress.step(++done, total, `${command.name} on ${versions[b]}`);
        }
      }
    }
    const idle: Record<string, CliFootprint> = {};
    const standIn = await startApiStandIn();
    const sandbox = BenchCgroup.create('runtime');
    try {
      standIn.setNode(nodeOfThisHost(FOOTPRINT_NODE_NAME));
      await populate(sandbox, standIn);
      for (const [b, bin] of binaries.entries()) {
        context.progress.note(`run --dry-run on ${versions[b]}, ${IDLE_WARMUP_S} s warm-up and ${idleSampleFor(context.quick)} s of samples`);
        idle[versions[b] as string] = await measureCli(context, sandbox, standIn, { nodeBin: bin, warmupSeconds: IDLE_WARMUP_S, sampleSeconds: idleSampleFor(context.quick) });
      }
    } finally {
      await standIn.stop();
      await sandbox.destroy();
    }
    return {
      runtimes: versions,
      runsPerCommand: runs,
      commands: commands.map((command, c) => ({
        name: command.name,
        byRuntime: Object.fromEntries(versions.map((v, b) => {
          const slot = measured[c]?.[b];
          return [v, { wallMs: distribution(slot?.wallMs ?? []), maxRssBytes: distribution(slot?.rss ?? []), failures: slot?.failures ?? 0 }];
        })),
      })),
      idle,
      idlePods: FOOTPRINT_PODS,
    };
  },
};
