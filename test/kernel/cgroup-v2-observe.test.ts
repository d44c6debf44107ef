// cgroup v2, on a real kernel in a QEMU guest: the observer's readers and the fast check against the
// kernel's own numbers, for both cgroup drivers' names and the root cgroup (guest/suites/observe.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/observe.js';

cgroupV2Suite(suite, { timeoutMs: 300_000 });
