// The program the cgroup v2 guest runs: `node dist/test/kernel/cgroup-v2/guest/main.js <suite>
// <results.json>`. It refuses to run anywhere but in the guest (it creates cgroups in the unified
// hierarchy), runs the suite's cases one after another with their time limits, and rewrites the
// results file after each case, so a guest that dies mid-suite still reports what it finished.
// Progress goes to stdout. Exits 0 when every case passed.

import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { cgroupV2Unavailable } from '../../../helpers/cgroup-sandbox.js';
import { scaledTimeoutMs, TIMEOUT_SCALE } from '../../../helpers/timeout-scale.js';
import { GUEST_SUITES, type CaseResult, type GuestSuite, type GuestSuiteName, type SuiteResults } from './guest-suite.js';

// Bounds on a hang, times KEA_TEST_TIMEOUT_SCALE: a loaded host slows the emulated guest down.
const DEFAULT_CASE_TIMEOUT_MS = 120_000;
const DEFAULT_SET_UP_TIMEOUT_MS = 120_000;

function message(error: unknown): string {
  return error instanceof Error ? (error.stack ?? error.message) : String(error);
}

async function withTimeout<T>(what: string, unscaledMs: number, run: () => Promise<T>): Promise<T> {
  const timeoutMs = scaledTimeoutMs(unscaledMs);
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([run(), new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms (guest time)`)), timeoutMs)))]);
  } finally {
    clearTimeout(timer);
  }
}

async function main(): Promise<number> {
  const [name, resultsPath] = process.argv.slice(2);
  if (!GUEST_SUITES.includes(name as GuestSuiteName) || resultsPath === undefined) {
    process.stderr.write(`usage: main.js <${GUEST_SUITES.join('|')}> <results.json>\n`);
    return 2;
  }
  // These suites write to the unified hierarchy's root: only the throwaway guest may be changed so.
  if (process.env.KEA_CGROUP_V2_GUEST !== '1') {
    process.stderr.write('refusing to run: not inside the cgroup v2 guest (run it through scripts/cgroup-v2-guest.sh)\n');
    return 2;
  }
  const unavailable = cgroupV2Unavailable();
  if (unavailable !== null) {
    process.stderr.write(`cannot run: ${unavailable}\n`);
    return 2;
  }
  const { suite } = (await import(`./suites/${name}.js`)) as { suite: GuestSuite };
  const kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  // performance.now() counts from the process's start.
  const loadMs = Math.round(performance.now());
  const startedMs = performance.now();
  let setUpMs = 0;
  const cases: CaseResult[] = [];
  let setUpError: string | undefined;
  let tearDownError: string | undefined;
  const save = (finished: boolean): void => {
    const results: SuiteResults = {
      suite: suite.name,
      kernel,
      cases,
      finished,
      ...(setUpError === undefined ? {} : { setUpError }),
      ...(tearDownError === undefined ? {} : { tearDownError }),
      durationMs: Math.round(performance.now() - startedMs),
      loadMs,
      setUpMs,
    };
    writeFileSync(`${resultsPath}.tmp`, `${JSON.stringify(results, null, 2)}\n`);
    renameSync(`${resultsPath}.tmp`, resultsPath);
  };
  save(false);
  console.log(`cgroup v2 suite ${suite.name} on ${kernel}: ${suite.cases.length} cases, timeouts times ${TIMEOUT_SCALE}`);
  try {
    await withTimeout('the set-up', suite.setUpTimeoutMs ?? DEFAULT_SET_UP_TIMEOUT_MS, () => suite.setUp?.() ?? Promise.resolve());
  } catch (error) {
    setUpError = message(error);
    console.log(`set-up failed: ${setUpError}`);
  }
  setUpMs = Math.round(performance.now() - startedMs);
  for (const c of suite.cases) {
    const notes: Record<string, number | string> = {};
    const caseStartedMs = performance.now();
    let error: string | undefined = setUpError === undefined ? undefined : `the suite's set-up failed: ${setUpError}`;
    if (error === undefined) {
      try {
        await withTimeout(`case "${c.name}"`, c.timeoutMs ?? DEFAULT_CASE_TIMEOUT_MS, () => c.run({ note: (key, value) => (notes[key] = value) }));
      } catch (caught) {
        error = message(caught);
      }
    }
    const durationMs = Math.round(performance.now() - caseStartedMs);
    cases.push({ name: c.name, ok: error === undefined, ...(error === undefined ? {} : { error }), durationMs, notes });
    const noted = Object.entries(notes).map(([key, value]) => `${key}=${value}`).join(', ');
    console.log(`${error === undefined ? 'ok  ' : 'FAIL'} ${c.name} (${(durationMs / 1000).toFixed(1)} s)${noted === '' ? '' : `\n     ${noted}`}${error === undefined ? '' : `\n     ${error.split('\n')[0]}`}`);
    save(false);
  }
  try {
    await withTimeout('the tear-down', 120_000, () => suite.tearDown?.() ?? Promise.resolve());
  } catch (error) {
    tearDownError = message(error);
    console.log(`tear-down failed: ${tearDownError}`);
  }
  save(true);
  return cases.every((c) => c.ok) && setUpError === undefined && tearDownError === undefined ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${message(error)}\n`);
    process.exit(1);
  },
);
