// cgroup v2, on a real kernel in a QEMU guest: the OOM race with the agent's real run loop, the PSI
// notifier against the 10 s housekeeping pass only, side by side (guest/suites/oom-race.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/oom-race.js';

cgroupV2Suite(suite, { timeoutMs: 900_000 });
