// cgroup v2, on a real kernel in a QEMU guest: local termination ends every process of the pod's
// cgroup and nothing outside it, for both cgroup drivers' names (guest/suites/termination.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/termination.js';

cgroupV2Suite(suite, { timeoutMs: 300_000 });
