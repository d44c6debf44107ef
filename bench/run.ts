// `npm run bench`: runs the benchmark parts (the OOM race, reaction latency, cost as the node
// grows, footprint, Node 20 against the image's Node, the reaction on a real node, an ops port flood,
// replay throughput), prints progress with an ETA, stores each part's result under
// bench/results/, and regenerates docs/benchmarks.md and its charts from the latest result of
// every part. A part that cannot run here (not root, no cgroup v1) says so, with the reason, and
// is recorded as skipped unless earlier results of it exist, which are kept. Everything it
// creates (cgroups `kea-bench-<pid>-…`, child processes, scratch files) is removed afterwards,
// also on failure or Ctrl-C.
//
//   npm run bench                       everything (about half an hour)
//   npm run bench -- --quick            a smoke check: few runs of each part (a few minutes);
//                                       writes to a scratch directory, not docs/, unless --out is given
//   npm run bench -- --part oom-race    one part (oom-race, reaction-latency, node-cost, footprint, runtime, real-node, ops-flood, node-lock, replay)
//   npm run bench -- --out DIR          write DIR/benchmarks.md (and results next to it)
//   npm run bench -- --root DIR         the repository to write docs/ and bench/results/ into
//                                       (default: the one the compiled runner sits in)
//   npm run bench -- --report-only      regenerate the page from the stored results, run nothing
//   KEA_BENCH_RACE_VARIANTS=notifier-local KEA_BENCH_RACE_RUNS=40 npm run bench -- --part oom-race
//                                       race only variant (a), 40 runs per rate and process count;
//                                       the other variants' stored runs are kept
//   KEA_BENCH_LATENCY_ITERATIONS=100 npm run bench -- --part reaction-latency
//                                       100 reactions per scenario instead of 200
//   KEA_BENCH_BUSY_NICE=10 npm run bench -- --part reaction-latency --out DIR
//                                       the busy node's processes at nice 10, below the agent's 0

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { errorMessage } from '../src/errors.js';
import { footprintPart } from './parts/footprint.js';
import { nodeCostPart } from './parts/node-cost.js';
import { oomRacePart } from './parts/oom-race.js';
import { nodeLockPart } from './parts/node-lock.js';
import { opsFloodPart } from './parts/ops-flood.js';
import { reactionLatencyPart } from './parts/reaction-latency.js';
import { realNodePart } from './parts/real-node.js';
import { replayPart } from './parts/replay.js';
import { runtimePart } from './parts/runtime.js';
import { installInterruptHandlers, InterruptedError, interruptSignal } from './lib/cleanup.js';
import { describeMachine } from './lib/machine.js';
import type { BenchPart, PartResult } from './lib/part.js';
import { Progress } from './lib/progress.js';
import { fmtDuration } from './lib/stats.js';
import { writeBenchmarkPage } from './report/page.js';
import { allRatios, ratioLine } from './report/ratios.js';

const PARTS: readonly BenchPart<unknown>[] = [oomRacePart, reactionLatencyPart, nodeCostPart, footprintPart, runtimePart, realNodePart, opsFloodPart, nodeLockPart, replayPart] as readonly BenchPart<unknown>[];

interface Options {
  readonly repoRoot: string;
  readonly quick: boolean;
  readonly reportOnly: boolean;
  readonly parts: readonly BenchPart<unknown>[];
  /** Where benchmarks.md, its charts and the results go. */
  readonly docsDir: string;
  readonly resultsDir: string;
}

const benchDir = dirname(fileURLToPath(import.meta.url));
// dist/bench/run.js: the repository is two levels up; the CLI is dist/src/main.js.
const defaultRepoRoot = resolve(benchDir, '..', '..');
const mainJs = resolve(benchDir, '..', 'src', 'main.js');

function usage(message: string): never {
  process.stderr.write(`${message}\nusage: npm run bench -- [--quick] [--part ${PARTS.map((p) => p.name).join('|')}] [--out DIR | --root DIR] [--report-only]\n`);
  process.exit(2);
}

function parseOptions(argv: readonly string[]): Options {
  let quick = false;
  let reportOnly = false;
  const names: string[] = [];
  let out: string | null = null;
  let repoRoot = defaultRepoRoot;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--quick') quick = true;
    else if (arg === '--report-only') reportOnly = true;
    else if (arg === '--part') names.push(argv[++i] ?? usage('--part needs a name'));
    else if (arg.startsWith('--part=')) names.push(arg.slice('--part='.length));
    else if (arg === '--out') out = argv[++i] ?? usage('--out needs a directory');
    else if (arg === '--root') repoRoot = resolve(argv[++i] ?? usage('--root needs a directory'));
    else if (arg === '--help' || arg === '-h') usage('');
    else usage(`unknown argument ${arg}`);
  }
  for (const name of names) if (!PARTS.some((p) => p.name === name)) usage(`unknown part ${name}`);
  const parts = names.length === 0 ? PARTS : PARTS.filter((p) => names.includes(p.name));
  // A smoke check must not overwrite the published results.
  const docsDir = resolve(out ?? (quick ? join(tmpdir(), 'kea-bench-quick') : join(repoRoot, 'docs')));
  const resultsDir = out === null && !quick ? join(repoRoot, 'bench', 'results') : join(docsDir, 'results');
  return { repoRoot, quick, reportOnly, parts: reportOnly ? [] : parts, docsDir, resultsDir };
}

function loadResults(resultsDir: string): Map<string, PartResult> {
  const results = new Map<string, PartResult>();
  for (const part of PARTS) {
    const file = join(resultsDir, `${part.name}.json`);
    if (!existsSync(file)) continue;
    try {
      results.set(part.name, JSON.parse(readFileSync(file, 'utf8')) as PartResult);
    } catch (err) {
      process.stderr.write(`ignoring unreadable ${file}: ${errorMessage(err)}\n`);
    }
  }
  return results;
}

/** The code being measured: the commit, marked when the tree has changes on top of it. */
function revisionOf(repoRoot: string): string | null {
  try {
    return execFileSync('git', ['-C', repoRoot, 'describe', '--always', '--dirty'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() || null;
  } catch {
    return null;
  }
}

async function runPart(part: BenchPart<unknown>, options: Options, progress: Progress, scratchRoot: string): Promise<PartResult> {
  const machine = describeMachine();
  const revision = revisionOf(options.repoRoot);
  const startedMs = Date.now();
  const skipped = part.unavailable();
  if (skipped !== null) {
    progress.note(`${part.name}: skipped (${skipped})`);
    return { part: part.name, machine, revision, quick: options.quick, durationMs: 0, skipped, error: null, data: null };
  }
  const scratchDir = mkdtempSync(join(scratchRoot, `${part.name}-`));
  try {
    const data = await part.run({ quick: options.quick, progress, mainJs, benchDir, scratchDir });
    return { part: part.name, machine, revision, quick: options.quick, durationMs: Date.now() - startedMs, skipped: null, error: null, data };
  } catch (err) {
    if (err instanceof InterruptedError || interruptSignal.aborted) throw err;
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    progress.note(`${part.name}: FAILED: ${message}`);
    return { part: part.name, machine, revision, quick: options.quick, durationMs: Date.now() - startedMs, skipped: null, error: message.split('\n')[0] ?? message, data: null };
  } finally {
    rmSync(scratchDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  installInterruptHandlers();
  const options = parseOptions(process.argv.slice(2));
  const progress = new Progress(options.parts.map((p) => ({ name: p.name, estimatedMs: p.estimateMs(options.quick) })));
  const estimateMs = options.parts.reduce((sum, p) => sum + p.estimateMs(options.quick), 0);
  if (options.reportOnly) process.stdout.write(`regenerating the page from ${options.resultsDir}\n`);
  else process.stdout.write(`kube-eviction-agent benchmarks${options.quick ? ' (quick smoke check)' : ''}: ${options.parts.map((p) => p.name).join(', ')}; estimated ${fmtDuration(estimateMs)} (pid ${process.pid}; cgroups kea-bench-${process.pid}-…)\n`);
  mkdirSync(options.resultsDir, { recursive: true });
  const scratchRoot = mkdtempSync(join(tmpdir(), `kea-bench-${process.pid}-`));
  let failed = false;
  try {
    for (const part of options.parts) {
      progress.startPart(part.name);
      const measured = await runPart(part, options, progress, scratchRoot);
      if (measured.error !== null) failed = true;
      // A part skipped here (not root, no cgroup v1) keeps the results measured where it could run.
      const previous = loadResults(options.resultsDir).get(part.name);
      const result = measured.data !== null && previous !== undefined && previous.data !== null && part.merge !== undefined ? { ...measured, data: part.merge(previous, measured.data) } : measured;
      if (result.skipped !== null && previous !== undefined && previous.data !== null) {
        progress.note(`${part.name}: keeping the results measured on ${previous.machine.date}`);
        continue;
      }
      writeFileSync(join(options.resultsDir, `${part.name}.json`), `${JSON.stringify(result)}\n`);
      progress.note(`${part.name}: ${result.skipped !== null ? 'skipped' : result.error !== null ? 'failed' : 'done'} in ${fmtDuration(result.durationMs)}`);
    }
  } catch (err) {
    if (err instanceof InterruptedError || interruptSignal.aborted) {
      process.stderr.write('interrupted: everything the benchmark created has been removed; docs/benchmarks.md left as it was\n');
      process.exitCode = 130;
      return;
    }
    throw err;
  } finally {
    rmSync(scratchRoot, { recursive: true, force: true });
  }
  const page = writeBenchmarkPage(options.docsDir, loadResults(options.resultsDir), PARTS.map((p) => ({ name: p.name, title: p.title })));
  process.stdout.write(`\nwrote ${page.files.join(', ')}\n${page.headlines.map((h) => `  ${h}`).join('\n')}\n`);
  // The agent against the C references of the same run, one line each, for a reader or a script.
  const ratios = allRatios(loadResults(options.resultsDir)).flatMap((r) => {
    const line = ratioLine(r);
    return line === null ? [] : [line];
  });
  if (ratios.length > 0) process.stdout.write(`\n${ratios.join('\n')}\n`);
  if (failed) process.exitCode = 1;
}

main().then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
