// The kernel's own numbers, read independently of the code under test: a cgroup's working set as
// cAdvisor defines it (memory.current − inactive_file), the root cgroup's (anon + file −
// inactive_file of its memory.stat, runc's emulation of the missing memory.current), MemTotal, and
// counters from memory.events.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { scaledTimeoutMs } from '../../../helpers/timeout-scale.js';

export const MiB = 1024 * 1024;

export function statField(dir: string, key: string): number {
  const value = new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(join(dir, 'memory.stat'), 'utf8'))?.[1];
  if (value === undefined) throw new Error(`${dir}/memory.stat has no ${key}`);
  return Number(value);
}

export function currentBytes(dir: string): number {
  return Number(readFileSync(join(dir, 'memory.current'), 'utf8'));
}

export function kernelWorkingSetBytes(dir: string): number {
  return Math.max(0, currentBytes(dir) - statField(dir, 'inactive_file'));
}

export function rootKernelWorkingSetBytes(root = '/sys/fs/cgroup'): number {
  return Math.max(0, statField(root, 'anon') + statField(root, 'file') - statField(root, 'inactive_file'));
}

export function memTotalBytes(): number {
  return Number(/^MemTotal:\s+(\d+) kB$/m.exec(readFileSync('/proc/meminfo', 'utf8'))?.[1]) * 1024;
}

/** A counter of memory.events (hierarchical: it counts the cgroup's descendants too). */
export function memoryEvent(dir: string, key: 'low' | 'high' | 'max' | 'oom' | 'oom_kill'): number {
  return Number(new RegExp(`^${key} (\\d+)$`, 'm').exec(readFileSync(join(dir, 'memory.events'), 'utf8'))?.[1] ?? NaN);
}

/** The PIDs in one cgroup (not its descendants). */
export function cgroupPids(dir: string): number[] {
  return readFileSync(join(dir, 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map(Number);
}

export function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `check` every `everyMs` until it returns true or `timeoutMs` passes; says what it waited for. */
export async function waitFor(what: string, check: () => boolean, timeoutMs: number, everyMs = 20): Promise<void> {
  timeoutMs = scaledTimeoutMs(timeoutMs);
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleepMs(everyMs);
  }
}

/** Whether a process runs (a zombie, killed but not reaped by its parent, does not). */
export function processAlive(pid: number): boolean {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return false;
  }
  // The state follows the command name, which is in parentheses and may itself hold any character.
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}
