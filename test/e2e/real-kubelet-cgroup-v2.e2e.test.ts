// The real-kubelet scenarios on a real cgroup v2 node (root, a QEMU guest, real kube-apiserver, real
// kubelet and containerd): the API server and etcd run here, on the machine's loopback, as for every
// end-to-end suite; the node runs in the cgroup v2 guest (test/kernel/cgroup-v2/guest/suites/
// real-kubelet.ts), one boot with one forwarded port to the API server (scripts/cgroup-v2-guest.sh
// --forward-port) in which the systemd driver's node runs its cases and ends, then the cgroupfs
// driver's. The guest is emulated and slow: the control plane stays out of it, so the guest's two
// CPUs are the node's alone, and the Events and pods the guest asserts on are in the same API
// server any other suite reads. Times: docs/real-kubelet-cgroup-v2.md.

import { existsSync } from 'node:fs';
import { installAgentIdentity } from './harness/agent-identity.js';
import { findControlPlaneBinaries, findRealNodeBinaries, foundBinaries } from './harness/binaries.js';
import { ControlPlane } from './harness/control-plane.js';
import { guestClusterSuite, writeGuestCluster } from './harness/guest-cluster.js';
import { nodeImages } from './harness/real-node.js';
import { cgroupDrivers, type CgroupDriver } from '../kernel/cgroup-v2/guest/guest-kubelet-node.js';
import { suite } from '../kernel/cgroup-v2/guest/suites/real-kubelet.js';

// Both by default; KEA_CGROUP_V2_DRIVERS=systemd (or cgroupfs) runs one, for a quicker local run.
const DRIVERS = cgroupDrivers();
const nodeName = (driver: CgroupDriver): string => `v2-${driver}`;

const controlPlane = findControlPlaneBinaries();
const node = findRealNodeBinaries();
const images = nodeImages();
// The systemd driver's node has systemd for its init, and systemd needs D-Bus.
const systemd = !DRIVERS.includes('systemd') || ['/lib/systemd/systemd', '/usr/bin/dbus-daemon'].every((path) => existsSync(path)) ? { ok: true as const } : { ok: false as const, reason: 'no systemd and D-Bus for the systemd driver (apt-get install -y systemd dbus)' };

guestClusterSuite(suite, {
  what: 'the real kubelet on cgroup v2',
  missing: [controlPlane, node, images, systemd].flatMap((lookup) => (lookup.ok ? [] : [lookup.reason])),
  // The whole boot, both drivers: well over the run's measured time (docs/real-kubelet-cgroup-v2.md).
  timeoutMs: 1_200_000,
  startPlane: () => ControlPlane.start({ binaries: foundBinaries(controlPlane), nodeNames: DRIVERS.map(nodeName) }),
  prepare: async (plane, shared) => {
    const identity = await installAgentIdentity(plane.admin());
    for (const driver of DRIVERS) writeGuestCluster(shared, plane, { nodeName: nodeName(driver), driver, agentToken: identity.token, imagesTar: foundBinaries(images) });
  },
  guestEnv: [`KEA_CGROUP_V2_DRIVERS=${DRIVERS.join(',')}`],
});
