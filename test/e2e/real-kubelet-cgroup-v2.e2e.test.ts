// The real-kubelet scenarios on a real cgroup v2 node (root, a QEMU guest, real kube-apiserver, real
// kubelet and containerd): the API server and etcd run here, on the machine's loopback, as for every
// end-to-end suite; the node runs in the cgroup v2 guest (test/kernel/cgroup-v2/guest/suites/
// real-kubelet.ts), one boot with one forwarded port to the API server (scripts/cgroup-v2-guest.sh
// --forward-port) in which the systemd driver's node runs its cases and ends, then the cgroupfs
// driver's. The guest is emulated and slow: the control plane stays out of it, so the guest's two
// CPUs are the node's alone, and the Events and pods the guest asserts on are in the same API
// server any other suite reads. Times: docs/real-kubelet-cgroup-v2.md.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installAgentIdentity } from './harness/agent-identity.js';
import { findControlPlaneBinaries, findRealNodeBinaries } from './harness/binaries.js';
import { ControlPlane } from './harness/control-plane.js';
import { writeGuestCluster } from './harness/guest-cluster.js';
import { nodeImages } from './harness/real-node.js';
import { cgroupV2Suite } from '../kernel/cgroup-v2/guest-run.js';
import { cgroupDrivers, type CgroupDriver } from '../kernel/cgroup-v2/guest/guest-kubelet-node.js';
import { suite } from '../kernel/cgroup-v2/guest/suites/real-kubelet.js';

// Both by default; KEA_CGROUP_V2_DRIVERS=systemd (or cgroupfs) runs one, for a quicker local run.
const DRIVERS = cgroupDrivers();
const nodeName = (driver: CgroupDriver): string => `v2-${driver}`;
// The guest's memory: kubepods gets 1 GiB of it, the rest is the kubelet's, containerd's and the agent's.
const GUEST_MEMORY_MIB = 2560;
// The whole boot, both drivers: a bound on a hang (times KEA_TEST_TIMEOUT_SCALE), well over the
// run's measured time (docs/real-kubelet-cgroup-v2.md); each case in the guest has its own.
const GUEST_TIMEOUT_MS = 1_200_000;

const controlPlane = findControlPlaneBinaries();
const node = findRealNodeBinaries();
const images = nodeImages();
// The systemd driver's node has systemd for its init, and systemd needs D-Bus.
const systemd = !DRIVERS.includes('systemd') || ['/lib/systemd/systemd', '/usr/bin/dbus-daemon'].every((path) => existsSync(path)) ? { ok: true as const } : { ok: false as const, reason: 'no systemd and D-Bus for the systemd driver (apt-get install -y systemd dbus)' };
const missing = [controlPlane, node, images, systemd].flatMap((lookup) => (lookup.ok ? [] : [lookup.reason]));

if (missing.length > 0 && process.env.KEA_E2E_REQUIRED !== '1') {
  console.log(`skipping the real kubelet on cgroup v2: ${missing.join('; ')}`);
  describe.skip(`cgroup v2: ${suite.title} (QEMU guest)`, () => {
    for (const c of suite.cases) test(c.name, () => {});
  });
} else {
  let plane: ControlPlane | null = null;
  let setUpError: Error | null = missing.length > 0 ? new Error(`KEA_E2E_REQUIRED=1 but the real kubelet on cgroup v2 cannot run: ${missing.join('; ')}`) : null;
  const shared = mkdtempSync(join(tmpdir(), 'kea-v2-cluster-'));

  beforeAll(async () => {
    if (setUpError !== null || !controlPlane.ok || !images.ok) return;
    try {
      plane = await ControlPlane.start({ binaries: controlPlane.binaries, nodeNames: DRIVERS.map(nodeName) });
      const identity = await installAgentIdentity(plane.admin());
      for (const driver of DRIVERS) writeGuestCluster(shared, plane, { nodeName: nodeName(driver), driver, agentToken: identity.token, imagesTar: images.binaries });
    } catch (error) {
      setUpError = error instanceof Error ? error : new Error(String(error));
    }
  }, 180_000);

  afterAll(async () => {
    await plane?.stop();
    rmSync(shared, { recursive: true, force: true });
  }, 60_000);

  cgroupV2Suite(suite, {
    timeoutMs: GUEST_TIMEOUT_MS,
    runnerArgs: () => {
      if (setUpError !== null) throw setUpError;
      if (plane === null) throw new Error('the control plane did not start');
      return ['--forward-port', new URL(plane.url).port, '--memory', String(GUEST_MEMORY_MIB), '--share', shared, '--env', `KEA_GUEST_CLUSTERS=${shared}`, '--env', `KEA_CGROUP_V2_DRIVERS=${DRIVERS.join(',')}`];
    },
  });
}
