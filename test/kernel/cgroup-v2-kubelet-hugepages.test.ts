// cgroup v2, on a real kernel in a QEMU guest with hugepages reserved: the agent's memory.available
// against what a real kubelet of the pinned version reports in /stats/summary on the same node,
// HugepageAwareEviction on and off (guest/suites/kubelet-hugepages.ts). Needs the kubelet and
// containerd binaries (scripts/build-kubernetes.sh, scripts/build-tools.sh): without them the
// suite skips, saying why, unless KEA_E2E_REQUIRED=1 (CI), where it fails.

import { findRealNodeBinaries } from '../e2e/harness/binaries.js';
import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/kubelet-hugepages.js';

const binaries = findRealNodeBinaries();
if (binaries.ok || process.env.KEA_E2E_REQUIRED === '1') {
  cgroupV2Suite(suite, { timeoutMs: 600_000 });
} else {
  console.log(`skipping the cgroup v2 suite "${suite.name}": ${binaries.reason}`);
  describe.skip(`cgroup v2: ${suite.title} (QEMU guest)`, () => {
    for (const c of suite.cases) test(c.name, () => {});
  });
}
