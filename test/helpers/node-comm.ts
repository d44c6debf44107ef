// The process name the kernel gives a Node.js process (its comm, as the OOM killer's log line and
// so the agent's Events name the victim): Node.js sets it differently by release, "node" on 20 and
// "MainThread" on 24. The workloads the tests run are this same Node.js (process.execPath), so
// this process's own comm is theirs.

import { readFileSync } from 'node:fs';

export const NODE_COMM = readFileSync('/proc/self/comm', 'utf8').trim();
