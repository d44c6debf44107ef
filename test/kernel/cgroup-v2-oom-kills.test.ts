// cgroup v2, on a real kernel in a QEMU guest: kernel OOM kills found through memory.events and
// attributed to their pod and container, at a container's limit and at the node's
// (guest/suites/oom-kills.ts).

import { cgroupV2Suite } from './cgroup-v2/guest-run.js';
import { suite } from './cgroup-v2/guest/suites/oom-kills.js';

cgroupV2Suite(suite, { timeoutMs: 300_000 });
