// Everything the benchmark creates outside its own process, and its removal: the child processes
// it starts and the cgroups it makes (all named `kea-bench-<pid>-…`). Parts clean up after
// themselves in `finally`; this registry is the last resort when a part fails, the run is
// interrupted (Ctrl-C, SIGTERM) or the process exits early. It ends only the processes it was
// given, and removes cgroups deepest first once their processes are gone.

import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';

const children = new Set<ChildProcess>();
const cgroups = new Set<string>();
const interruptController = new AbortController();

/** Aborted on the first Ctrl-C or SIGTERM: parts stop at the next run and clean up. */
export const interruptSignal: AbortSignal = interruptController.signal;

/** Thrown by {@link throwIfInterrupted}. */
export class InterruptedError extends Error {
  constructor() {
    super('interrupted');
  }
}

export function throwIfInterrupted(): void {
  if (interruptSignal.aborted) throw new InterruptedError();
}

/** Tracks a child process until it exits; returns it. */
export function trackChild<T extends ChildProcess>(child: T): T {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Tracks a top cgroup (an absolute path) for removal, with everything below it. */
export function trackCgroup(path: string): void {
  cgroups.add(path);
}

export function untrackCgroup(path: string): void {
  cgroups.delete(path);
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Removes a cgroup and every cgroup below it, deepest first, retrying while a killed task leaves. */
export function removeCgroupTreeSync(dir: string): string[] {
  const failures: string[] = [];
  if (!existsSync(dir)) return failures;
  let entries: string[] = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    entries = [];
  }
  for (const entry of entries) failures.push(...removeCgroupTreeSync(join(dir, entry)));
  for (let attempt = 0; ; attempt++) {
    try {
      rmdirSync(dir);
      return failures;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return failures;
      // A task that was just killed takes a moment to leave its cgroup.
      if (code === 'EBUSY' && attempt < 100) {
        sleepSync(20);
        continue;
      }
      failures.push(`${dir}: ${code ?? String(err)}`);
      return failures;
    }
  }
}

/** Kills every tracked child and removes every tracked cgroup; safe to call more than once. */
export function cleanupEverythingSync(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
  for (const path of cgroups) {
    const failures = removeCgroupTreeSync(path);
    if (failures.length === 0) cgroups.delete(path);
    else process.stderr.write(`could not remove ${failures.join(', ')}\n`);
  }
}

let installed = false;

/**
 * First Ctrl-C (or SIGTERM): abort, so the running part stops and cleans up in its `finally`
 * (agents must be stopped for the process to exit: a blocked epoll wait holds a pool thread).
 * If that takes more than 15 s, or on a second Ctrl-C: clean up synchronously and exit at once.
 */
export function installInterruptHandlers(): void {
  if (installed) return;
  installed = true;
  const hardExit = (): never => {
    cleanupEverythingSync();
    process.stderr.write('benchmark interrupted; everything it started has been removed\n');
    process.kill(process.pid, 'SIGKILL');
    process.exit(130);
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    if (interruptSignal.aborted) hardExit();
    process.stderr.write(`\n${signal}: stopping after cleanup (press Ctrl-C again to stop at once)\n`);
    interruptController.abort();
    setTimeout(hardExit, 15_000).unref();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => cleanupEverythingSync());
}
