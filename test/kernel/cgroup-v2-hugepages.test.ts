// cgroup v2, on a real kernel in a QEMU guest: hugepages reserved in the guest's own pools, and the
// observer's memory.available against the kubelet's formula over the kernel's figures, with
// HugepageAwareEviction on and off (guest/suites/hugepages.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/hugepages.js';

cgroupV2Suite(suite, { timeoutMs: 300_000 });
