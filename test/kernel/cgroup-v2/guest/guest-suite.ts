// What a cgroup v2 suite is: named cases that run one after another inside the guest (one boot for
// all of them), with an optional set-up and tear-down shared by the cases, and the results they
// send back to the host through the shared directory. The host imports the same definitions to
// declare one jest test per case, so a case's name is written once.

export interface CaseContext {
  /** Records a measured figure or a fact for the report (printed by the host test). */
  note(key: string, value: number | string): void;
}

export interface GuestCase {
  readonly name: string;
  /** How long the case may take in the guest (emulated, so generous); 120 s by default, times KEA_TEST_TIMEOUT_SCALE. */
  readonly timeoutMs?: number;
  run(context: CaseContext): Promise<void>;
}

export interface GuestSuite {
  /** The file name under suites/ (without .js), and the key the host asks for. */
  readonly name: string;
  /** What the suite proves, for the describe() line. */
  readonly title: string;
  readonly cases: readonly GuestCase[];
  /** Runs before the first case; when it fails, every case fails with its error. */
  setUp?(): Promise<void>;
  /** How long the set-up may take in the guest; 120 s by default, times KEA_TEST_TIMEOUT_SCALE. */
  readonly setUpTimeoutMs?: number;
  /** Runs after the last case, passed or failed (and after a failed set-up). */
  tearDown?(): Promise<void>;
}

export interface CaseResult {
  readonly name: string;
  readonly ok: boolean;
  readonly error?: string;
  /** Guest time (emulated). */
  readonly durationMs: number;
  readonly notes: Readonly<Record<string, number | string>>;
}

export interface SuiteResults {
  readonly suite: string;
  readonly kernel: string;
  readonly cases: readonly CaseResult[];
  /** False while cases are still running (a guest killed mid-suite leaves it false). */
  readonly finished: boolean;
  readonly setUpError?: string;
  readonly tearDownError?: string;
  /** Guest time from the first set-up step to the end of the tear-down. */
  readonly durationMs: number;
  /** Guest time from Node's start to the suite's code loaded (the Kubernetes client is slow to load here). */
  readonly loadMs: number;
  /** Guest time of the set-up. */
  readonly setUpMs: number;
}

/** The suites the guest can run; main.ts loads only the one asked for. */
export const GUEST_SUITES = ['observe', 'notifier', 'termination', 'oom-race', 'demo', 'oom-kills', 'hugepages', 'kubelet-hugepages', 'real-kubelet', 'deployed-chart'] as const;
export type GuestSuiteName = (typeof GUEST_SUITES)[number];

export function defineSuite(suite: GuestSuite): GuestSuite {
  const names = new Set<string>();
  for (const c of suite.cases) {
    if (names.has(c.name)) throw new Error(`suite ${suite.name}: two cases are named "${c.name}"`);
    names.add(c.name);
  }
  return suite;
}
