// cgroup v2, on a real kernel in a QEMU guest with hugepages reserved: the agent's memory.available
// against what a real kubelet of the pinned version reports in /stats/summary on the same node,
// HugepageAwareEviction on and off (guest/suites/kubelet-hugepages.ts). Needs the kubelet and
// containerd binaries (scripts/build-tools.sh).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/kubelet-hugepages.js';

cgroupV2Suite(suite, { timeoutMs: 600_000 });
