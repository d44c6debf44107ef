// Last-resort cleanup for everything the end-to-end harness starts on the machine. Two layers:
// synchronous steps run on the test process's 'exit' event (a test file that crashed or never
// reached afterAll), and a small watchdog shell per resource that does the same if the test
// process dies without an 'exit' event (SIGKILL, a killed jest worker). Steps run newest first,
// like deferred calls, so pod processes die before the cgroups holding them are removed.

import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const steps = new Set<() => void>();
let installed = false;

function runAll(): void {
  for (const step of [...steps].reverse()) {
    try {
      step();
    } catch {
      // Best effort: the other steps still run.
    }
  }
  steps.clear();
}

/**
 * Registers a synchronous cleanup step for process exit; returns a function that unregisters it
 * (call it once the orderly cleanup has run). Prepended to the 'exit' listeners so it runs before
 * the cgroup sandbox's own exit handler, which can only remove cgroups that are already empty.
 */
export function onProcessExit(step: () => void): () => void {
  if (!installed) {
    installed = true;
    process.prependListener('exit', runAll);
  }
  steps.add(step);
  return () => {
    steps.delete(step);
  };
}

let watchdogCounter = 0;

/** A watchdog process that runs a shell script once the test process is gone. */
export interface Watchdog {
  /** Replaces the script it will run (e.g. after a process was restarted under a new PID). */
  update(script: string): void;
  /** Stops the watchdog without running the script (the orderly cleanup has run). */
  disarm(): void;
}

/**
 * Starts a detached shell that polls the test process every second and, once it has gone, runs
 * `script` (kill PIDs, remove directories). It is the safety net for a test process killed outright.
 */
export function startWatchdog(script: string): Watchdog {
  const scriptPath = join(tmpdir(), `kea-e2e-watchdog-${process.pid}-${watchdogCounter++}.sh`);
  writeFileSync(scriptPath, script, { mode: 0o700 });
  const loop = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; [ -f "$0" ] && sh "$0"; rm -f "$0"`;
  const child = spawn('/bin/sh', ['-c', loop, scriptPath], { detached: true, stdio: 'ignore' });
  child.unref();
  const pid = child.pid;
  let disarmed = false;
  return {
    update(next: string): void {
      if (!disarmed) writeFileSync(scriptPath, next, { mode: 0o700 });
    },
    disarm(): void {
      if (disarmed) return;
      disarmed = true;
      rmSync(scriptPath, { force: true });
      try {
        // The whole group: the shell and the `sleep` it may be waiting on.
        if (pid !== undefined) process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

/** Quotes a string for a POSIX shell script. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}
