// The host side of a cgroup v2 suite: one jest test file boots one guest (scripts/cgroup-v2-guest.sh)
// that runs every case of the suite in one node process and writes the results into a shared
// directory; each case is then one jest test that asserts on its result by name. Where QEMU or the
// kernel is missing the tests skip, printing why; with KEA_CGROUP_V2_REQUIRED=1 (as in CI) they
// fail instead. The guest runs the compiled suite from dist/, so a build older than its sources
// fails the tests rather than testing old code (`npm test` builds first).

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scaledTimeoutMs, TIMEOUT_SCALE } from '../../helpers/timeout-scale.js';
import type { CaseResult, GuestSuite, SuiteResults } from './guest/guest-suite.js';

const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const RUNNER = join(REPO_ROOT, 'scripts', 'cgroup-v2-guest.sh');
/** The sources the guest runs compiled: every one has its file in dist/, at least as new. */
const COMPILED_SOURCES = ['src', 'native', 'test/kernel/cgroup-v2/guest'];
/** Shared test helpers: those the guest code imports are compiled too, and must be as new. */
const HELPER_SOURCES = 'test/helpers';
const OUTPUT_TAIL_CHARS = 6000;

/** What one guest run brought back. */
export interface GuestRun {
  readonly exitCode: number | null;
  readonly output: string;
  readonly results: SuiteResults | null;
  readonly timing: { readonly bootMs: number; readonly commandMs: number; readonly totalMs: number } | null;
}

/** Why the guest cannot run here, or null. */
export function guestUnavailable(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  const check = spawnSync('bash', [RUNNER, '--check'], { encoding: 'utf8' });
  if (check.status !== 0) return `no cgroup v2 guest: ${(check.stdout + check.stderr).trim() || `scripts/cgroup-v2-guest.sh --check exited ${check.status}`}`;
  return null;
}

/** The first source file newer than its compiled file in dist/ (or not compiled), or null when the build is current. */
export function staleBuild(): string | null {
  const visit = (path: string, mustBeCompiled: boolean): string | null => {
    if (statSync(join(REPO_ROOT, path)).isDirectory()) {
      for (const entry of readdirSync(join(REPO_ROOT, path))) {
        const found = visit(join(path, entry), mustBeCompiled);
        if (found !== null) return found;
      }
      return null;
    }
    if (!path.endsWith('.ts') || path.endsWith('.d.ts')) return null;
    const compiled = join(REPO_ROOT, 'dist', path.replace(/\.ts$/, '.js'));
    if (!existsSync(compiled)) return mustBeCompiled ? path : null;
    return statSync(compiled).mtimeMs < statSync(join(REPO_ROOT, path)).mtimeMs ? path : null;
  };
  for (const dir of COMPILED_SOURCES) {
    const found = visit(dir, true);
    if (found !== null) return found;
  }
  return visit(HELPER_SOURCES, false);
}

// A runner still going when jest's worker exits (a timed-out beforeAll) is ended with it; the
// runner's own traps then stop QEMU and remove its files.
const liveRunners = new Set<ChildProcess>();
process.on('exit', () => {
  for (const runner of liveRunners) runner.kill('SIGTERM');
});

/** Boots a guest that runs the suite, waits for it, and reads its results; `runnerArgs` go to the runner before the command (--forward-port, --memory, --share, --env). */
export async function runGuestSuite(suite: GuestSuite, timeoutMs: number, runnerArgs: readonly string[] = []): Promise<GuestRun> {
  const shared = mkdtempSync(join(tmpdir(), `kea-cgroup-v2-${suite.name}-`));
  const resultsPath = join(shared, 'results.json');
  const timingPath = join(shared, 'timing.json');
  try {
    const runner = spawn(
      'bash',
      // The guest's own timeouts scale with the host's.
      [RUNNER, ...runnerArgs, '--share', shared, '--env', `KEA_TEST_TIMEOUT_SCALE=${TIMEOUT_SCALE}`, '--timeout', String(Math.ceil(timeoutMs / 1000)), '--timing-file', timingPath, '--', process.execPath, join('dist', 'test', 'kernel', 'cgroup-v2', 'guest', 'main.js'), suite.name, resultsPath],
      { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    liveRunners.add(runner);
    let output = '';
    // KEA_GUEST_LOG=FILE: the guest's output also goes there as it comes, to follow a long run.
    const follow = process.env.KEA_GUEST_LOG;
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-4 * OUTPUT_TAIL_CHARS);
      if (follow !== undefined && follow !== '') appendFileSync(follow, chunk);
    };
    runner.stdout?.on('data', keep);
    runner.stderr?.on('data', keep);
    const exitCode = await new Promise<number | null>((resolve) => runner.once('close', (code) => resolve(code)));
    liveRunners.delete(runner);
    const read = <T>(path: string): T | null => (existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as T) : null);
    return { exitCode, output, results: read<SuiteResults>(resultsPath), timing: read<GuestRun['timing']>(timingPath) };
  } finally {
    rmSync(shared, { recursive: true, force: true });
  }
}

function describeRun(run: GuestRun): string {
  const tail = run.output.length > OUTPUT_TAIL_CHARS ? `...${run.output.slice(-OUTPUT_TAIL_CHARS)}` : run.output;
  return `the guest exited ${run.exitCode}; its output:\n${tail}`;
}

function formatNotes(result: CaseResult): string {
  return Object.entries(result.notes)
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
}

export interface CgroupV2SuiteOptions {
  readonly timeoutMs: number;
  /** More runner arguments, asked for when the guest boots (after the file's other beforeAll hooks). */
  readonly runnerArgs?: () => readonly string[];
}

/**
 * Declares the suite's jest tests: one per guest case, named as the case is, under
 * `cgroup v2: <title> (QEMU guest)`. Call once at the top level of a test file.
 */
export function cgroupV2Suite(suite: GuestSuite, options: CgroupV2SuiteOptions): void {
  // The whole guest run, times KEA_TEST_TIMEOUT_SCALE like every timeout inside it.
  const timeoutMs = scaledTimeoutMs(options.timeoutMs);
  const unavailable = guestUnavailable();
  const required = process.env.KEA_CGROUP_V2_REQUIRED === '1';
  const title = `cgroup v2: ${suite.title} (QEMU guest)`;
  if (unavailable !== null && !required) {
    console.log(`skipping the cgroup v2 suite "${suite.name}": ${unavailable}`);
    describe.skip(title, () => {
      for (const c of suite.cases) test(c.name, () => {});
    });
    return;
  }
  let run: GuestRun | null = null;
  let setUpError: unknown = unavailable === null ? null : new Error(`KEA_CGROUP_V2_REQUIRED=1 but the cgroup v2 suites cannot run: ${unavailable}`);

  beforeAll(async () => {
    if (setUpError !== null) return;
    const stale = staleBuild();
    if (stale !== null) {
      setUpError = new Error(`dist/ is older than ${stale}: run \`npm run build\` first (npm test does)`);
      return;
    }
    try {
      run = await runGuestSuite(suite, timeoutMs, options.runnerArgs?.() ?? []);
      const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
      const timing = run.timing === null ? 'no timing' : `boot ${seconds(run.timing.bootMs)}, suite ${seconds(run.timing.commandMs)}, total ${seconds(run.timing.totalMs)} (host wall clock)`;
      const inGuest = run.results === null ? '' : `; in the guest: loading ${seconds(run.results.loadMs)}, set-up ${seconds(run.results.setUpMs)}, cases and tear-down ${seconds(run.results.durationMs - run.results.setUpMs)}`;
      console.log(`cgroup v2 guest, suite ${suite.name} on ${run.results?.kernel ?? 'an unknown kernel'}: ${timing}${inGuest}`);
    } catch (error) {
      setUpError = error;
    }
  }, timeoutMs + 60_000);

  // A guest still running here (jest gave up on beforeAll) is stopped: the runner's trap ends QEMU.
  afterAll(() => {
    for (const runner of liveRunners) runner.kill('SIGTERM');
  });

  describe(title, () => {
    for (const c of suite.cases) {
      test(c.name, () => {
        if (setUpError !== null) throw setUpError instanceof Error ? setUpError : new Error(String(setUpError));
        const done = run as GuestRun | null;
        if (done === null) throw new Error('the guest did not run');
        const result = done.results?.cases.find((r) => r.name === c.name);
        if (result === undefined) {
          const why = done.results?.setUpError ?? (done.results === null ? 'no results came back' : 'the suite stopped before this case');
          throw new Error(`the guest did not run this case (${why.split('\n')[0]}); ${describeRun(done)}`);
        }
        const notes = formatNotes(result);
        if (notes !== '') console.log(`${c.name}: ${notes} (${(result.durationMs / 1000).toFixed(1)} s in the guest)`);
        if (!result.ok) {
          // The error's first line again at the end: a report that keeps only the tail (CI's) still says what failed.
          const error = result.error ?? 'failed';
          throw new Error(`in the guest: ${error}${notes === '' ? '' : `\nnotes: ${notes}`}\nfailed: ${error.split('\n')[0]}`);
        }
      });
    }
    test('the suite tears down cleanly in the guest', () => {
      if (setUpError !== null) throw setUpError instanceof Error ? setUpError : new Error(String(setUpError));
      const results = (run as GuestRun | null)?.results;
      if (results?.finished !== true) throw new Error(`the suite did not finish; ${run === null ? 'the guest did not run' : describeRun(run)}`);
      if (results.tearDownError !== undefined) throw new Error(`tear-down failed: ${results.tearDownError}`);
    });
  });
}
