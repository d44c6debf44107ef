// cgroup v2, on a real kernel in a QEMU guest: `npm run demo` takes the v2 path (a cgroup v2
// sandbox node, the psi notifier) and evicts the leak before the OOM killer (guest/suites/demo.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/demo.js';

cgroupV2Suite(suite, { timeoutMs: 900_000 });
