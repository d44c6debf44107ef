// cgroup v2, on a real kernel in a QEMU guest: PSI triggers under real memory pressure (memory.high
// throttling, page-cache churn), their re-arming and clean stop, the fast check's crossings, and the
// CPU cost of polling cgroup files every 10 to 50 ms, and the PSI node conditions set and cleared
// with hysteresis from the kubepods cgroup's real memory.pressure (guest/suites/notifier.ts). The
// PSI conditions' case adds about a minute (guest time) to the suite's 75 to 80 s.

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/notifier.js';

cgroupV2Suite(suite, { timeoutMs: 540_000 });
