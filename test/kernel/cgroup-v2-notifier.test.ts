// cgroup v2, on a real kernel in a QEMU guest: PSI triggers under real memory pressure (memory.high
// throttling, page-cache churn), their re-arming and clean stop, the fast check's crossings, and the
// CPU cost of polling cgroup files every 10 to 50 ms (guest/suites/notifier.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/notifier.js';

cgroupV2Suite(suite, { timeoutMs: 420_000 });
