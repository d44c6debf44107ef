// A cgroup v2 guest's node against a control plane on this machine: the cluster file the guest's
// node reads (KEA_GUEST_CLUSTERS/<driver>.json), and the host side of such a suite (the control
// plane here, the node in one guest boot with one port forwarded to the API server).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cgroupV2Suite } from '../../kernel/cgroup-v2/guest-run.js';
import type { CgroupDriver, GuestCluster } from '../../kernel/cgroup-v2/guest/guest-kubelet-node.js';
import type { GuestSuite } from '../../kernel/cgroup-v2/guest/guest-suite.js';
import type { ControlPlane } from './control-plane.js';

// The guest's memory: kubepods gets 1 GiB of it, the rest is the kubelet's, containerd's and the agent's.
const GUEST_MEMORY_MIB = 2560;

/** Writes `<driver>.json` into the directory shared with the guest; only root reads the tokens. */
export function writeGuestCluster(sharedDir: string, plane: ControlPlane, node: { readonly nodeName: string; readonly driver: CgroupDriver; readonly agentToken: string; readonly imagesTar: string }): void {
  const cluster: GuestCluster = {
    port: Number(new URL(plane.url).port),
    caPem: plane.caPem,
    adminToken: plane.credentials.adminToken,
    nodeToken: plane.credentials.nodeTokens.get(node.nodeName) ?? '',
    ...node,
  };
  writeFileSync(join(sharedDir, `${node.driver}.json`), JSON.stringify(cluster), { mode: 0o600 });
}

export interface GuestClusterSuiteOptions {
  /** What the suite runs, for its skip and failure messages ("the real kubelet on cgroup v2"). */
  readonly what: string;
  /** Why it cannot run here (missing binaries, images, tools); empty when it can. */
  readonly missing: readonly string[];
  /** The whole guest boot: a bound on a hang (times KEA_TEST_TIMEOUT_SCALE). */
  readonly timeoutMs: number;
  /** Starts the control plane (stopped after the suite, whatever `prepare` does). */
  readonly startPlane: () => Promise<ControlPlane>;
  /** Writes what the guest reads into `sharedDir` (the cluster files, its values). */
  readonly prepare: (plane: ControlPlane, sharedDir: string) => Promise<void>;
  /** More `--env NAME=VALUE` for the guest. */
  readonly guestEnv?: readonly string[];
}

/**
 * Registers `suite` to run in a cgroup v2 guest against a control plane started here: skipped with
 * the reason when something is missing (failed instead under KEA_E2E_REQUIRED=1), and a set-up
 * error fails every case with its message.
 */
export function guestClusterSuite(suite: GuestSuite, options: GuestClusterSuiteOptions): void {
  const title = `cgroup v2: ${suite.title} (QEMU guest)`;
  if (options.missing.length > 0 && process.env.KEA_E2E_REQUIRED !== '1') {
    console.log(`skipping ${options.what}: ${options.missing.join('; ')}`);
    describe.skip(title, () => {
      for (const c of suite.cases) test(c.name, () => {});
    });
    return;
  }
  let plane: ControlPlane | null = null;
  let setUpError: Error | null = options.missing.length > 0 ? new Error(`KEA_E2E_REQUIRED=1 but ${options.what} cannot run: ${options.missing.join('; ')}`) : null;
  const shared = mkdtempSync(join(tmpdir(), 'kea-v2-cluster-'));

  beforeAll(async () => {
    if (setUpError !== null) return;
    try {
      plane = await options.startPlane();
      await options.prepare(plane, shared);
    } catch (error) {
      setUpError = error instanceof Error ? error : new Error(String(error));
    }
  }, 180_000);

  afterAll(async () => {
    await plane?.stop();
    rmSync(shared, { recursive: true, force: true });
  }, 60_000);

  cgroupV2Suite(suite, {
    timeoutMs: options.timeoutMs,
    runnerArgs: () => {
      if (setUpError !== null) throw setUpError;
      if (plane === null) throw new Error('the control plane did not start');
      const env = [`KEA_GUEST_CLUSTERS=${shared}`, ...(options.guestEnv ?? [])].flatMap((setting) => ['--env', setting]);
      return ['--forward-port', new URL(plane.url).port, '--memory', String(GUEST_MEMORY_MIB), '--share', shared, ...env];
    },
  });
}
