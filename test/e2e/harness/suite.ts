// The per-file setup of an end-to-end test: one control plane for the whole file (started in
// beforeAll, stopped in afterAll), the agent's identity from deploy/daemonset.yaml, an optional
// fixture started after them and stopped before them (the real node), and the reasons
// to skip, printed, when the binaries are not built or the machine lacks root and cgroup v1 (a
// failure instead when KEA_E2E_REQUIRED=1, as in CI). Each test gets a context to defer its own
// cleanup (run newest first, also when it fails) and to add diagnostics (agent logs, the fake
// kubelet's history) to a failure's message.

import { cgroupV1Unavailable } from '../../helpers/cgroup-sandbox.js';
import type { ApiClient } from './api-client.js';
import { installAgentIdentity, type AgentIdentity } from './agent-identity.js';
import { findControlPlaneBinaries } from './binaries.js';
import { ControlPlane } from './control-plane.js';
import type { TestContext } from './test-context.js';

export interface SuiteOptions<F = undefined> {
  /** Nodes that get a kubelet identity. */
  readonly nodeNames: readonly string[];
  /** The tests need root and the cgroup v1 memory hierarchy (real pods, real memory). */
  readonly needsCgroupV1?: boolean;
  /** More reasons the file's tests cannot run here (e.g. a real node's binaries are missing). */
  readonly skipReasons?: readonly string[];
  /**
   * Installs nothing of the agent's: the cluster is as an operator finds it, and the tests install
   * the agent themselves (helm, kubectl apply). The context's identity then throws when read.
   */
  readonly emptyCluster?: boolean;
  /** The ServiceAccount admission plugin on (control-plane.ts): a cluster with a controller manager. */
  readonly serviceAccountAdmission?: boolean;
  /** The API server reaches kubelets on loopback by their node names (control-plane.ts). */
  readonly kubeletsOnLoopback?: boolean;
  /** The API server writes an audit log (control-plane.ts): who made which request. */
  readonly auditLog?: boolean;
  /** Something started once after the control plane and stopped before it (a real node). */
  readonly fixture?: SuiteFixture<F>;
}

export interface SuiteFixture<F> {
  start(suite: { readonly plane: ControlPlane; readonly admin: ApiClient; readonly identity: AgentIdentity }): Promise<F>;
  stop(fixture: F): Promise<void>;
  /** Added to a failing test's message. */
  diagnostics?(fixture: F): string;
}

export type { TestContext } from './test-context.js';

/** A test's body receives its context. */
export type SuiteTest<F = undefined> = (context: TestContext<F>) => Promise<void>;

interface Suite<F> {
  readonly plane: ControlPlane;
  readonly admin: ApiClient;
  readonly identity: AgentIdentity;
  readonly fixture: F;
}

const SETUP_TIMEOUT_MS = 180_000;

// The identity of a suite that installs none: any use of it is a mistake in the test.
function noIdentity(): AgentIdentity {
  const refuse = (): never => {
    throw new Error('this suite installs no agent identity (emptyCluster): the test installs the agent itself');
  };
  return {
    get namespace() {
      return refuse();
    },
    get serviceAccount() {
      return refuse();
    },
    get clusterRole() {
      return refuse();
    },
    get username() {
      return refuse();
    },
    get token() {
      return refuse();
    },
  };
}

export interface SuiteHandle<F = undefined> {
  /** Why the tests of this file are skipped, or null. */
  readonly skipReason: string | null;
  /** Registers a test that skips (with the reason printed) or runs with the suite. */
  test(name: string, body: SuiteTest<F>, timeoutMs?: number): void;
}

/** Declares the file's control plane; call once at the top level of a test file. */
export function e2eSuite<F = undefined>(options: SuiteOptions<F>): SuiteHandle<F> {
  const binaries = findControlPlaneBinaries();
  const reasons: string[] = [];
  if (!binaries.ok) reasons.push(binaries.reason);
  reasons.push(...(options.skipReasons ?? []));
  if (options.needsCgroupV1 === true) {
    const cgroups = cgroupV1Unavailable();
    if (cgroups !== null) reasons.push(cgroups);
  }
  const skipReason = reasons.length === 0 ? null : reasons.join('; ');
  // CI builds the binaries first and sets KEA_E2E_REQUIRED=1: there a skip would hide a broken setup.
  const required = process.env.KEA_E2E_REQUIRED === '1';
  let suite: Suite<F> | null = null;
  let plane: ControlPlane | null = null;
  let setupError: unknown = null;
  const pending = new Set<() => Promise<string[]>>();

  beforeAll(async () => {
    if (skipReason !== null || !binaries.ok) return;
    try {
      plane = await ControlPlane.start({ binaries: binaries.binaries, nodeNames: options.nodeNames, serviceAccountAdmission: options.serviceAccountAdmission, kubeletsOnLoopback: options.kubeletsOnLoopback, auditLog: options.auditLog });
      const admin = plane.admin();
      const identity = options.emptyCluster === true ? noIdentity() : await installAgentIdentity(admin);
      const fixture = options.fixture === undefined ? (undefined as F) : await options.fixture.start({ plane, admin, identity });
      suite = { plane, admin, identity, fixture };
    } catch (err) {
      setupError = err;
    }
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    for (const runCleanups of pending) await runCleanups();
    try {
      if (suite !== null && options.fixture !== undefined) await options.fixture.stop(suite.fixture);
    } finally {
      await plane?.stop();
    }
  }, 60_000);

  return {
    skipReason,
    test(name, body, timeoutMs = 120_000) {
      test(
        name,
        async () => {
          if (skipReason !== null) {
            if (required) throw new Error(`KEA_E2E_REQUIRED=1 but this end-to-end test cannot run: ${skipReason}`);
            console.log(`skipped: ${name}: ${skipReason}`);
            return;
          }
          if (suite === null) throw setupError instanceof Error ? setupError : new Error(`the control plane did not start: ${String(setupError)}`);
          const diagnostics: (() => string)[] = [];
          const cleanups: (() => Promise<void> | void)[] = [];
          // Kept by the suite too: if jest times the test out, afterAll still runs them.
          const runCleanups = async (): Promise<string[]> => {
            const errors: string[] = [];
            for (const cleanup of cleanups.splice(0).reverse()) {
              try {
                await cleanup();
              } catch (err) {
                errors.push(err instanceof Error ? err.message : String(err));
              }
            }
            return errors;
          };
          pending.add(runCleanups);
          const context: TestContext<F> = { ...suite, addDiagnostics: (source) => diagnostics.push(source), defer: (cleanup) => cleanups.push(cleanup) };
          let failure: unknown = null;
          try {
            await body(context);
          } catch (err) {
            failure = err;
          }
          const current = suite;
          const fixtureDiagnostics = failure === null || options.fixture?.diagnostics === undefined ? [] : [safely(() => options.fixture?.diagnostics?.(current.fixture) ?? '')];
          const extra = failure === null ? '' : [...diagnostics.map((source) => safely(source)), ...fixtureDiagnostics, `control plane:\n${suite.plane.diagnostics()}`].join('\n\n');
          const cleanupErrors = await runCleanups();
          pending.delete(runCleanups);
          if (failure !== null) {
            if (failure instanceof Error) {
              failure.message = `${failure.message}\n\n${extra}`;
              throw failure;
            }
            throw new Error(`${String(failure)}\n\n${extra}`);
          }
          if (cleanupErrors.length > 0) throw new Error(`cleanup failed: ${cleanupErrors.join('; ')}`);
        },
        timeoutMs,
      );
    },
  };
}

function safely(source: () => string): string {
  try {
    return source();
  } catch (err) {
    return `(diagnostics failed: ${err instanceof Error ? err.message : String(err)})`;
  }
}
