// The kernel prints an OOM kill's summary (the `oom-kill:constraint=...,oom_memcg=...,task_memcg=...`
// line) only within a rate limit (mm/oom_kill.c: `oom_rs`, 10 reports per 5 s window), while the
// `Killed process <pid> (<comm>)` line is always printed. A test that reads the summary of a kill it
// causes, after other tests caused many (the PSI tests OOM-kill a dozen writers in a second), waits
// until a fresh window has begun: 5 s after the last kill in the kernel log.

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const WINDOW_MS = 5000;
const MARGIN_MS = 500;
const KILLED = /^\[\s*(\d+\.\d+)\] .*Killed process \d+ /;

/** Milliseconds since boot of the last OOM kill in the kernel log, or null when there is none (or no readable log). */
function lastKillSinceBootMs(): number | null {
  let log: string;
  try {
    log = execFileSync('dmesg', ['--nopager'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  } catch {
    return null;
  }
  const lines = log.split('\n');
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const match = KILLED.exec(lines[i] ?? '');
    if (match?.[1] !== undefined) return Number(match[1]) * 1000;
  }
  return null;
}

/** Resolves once the kernel will print the next OOM kill's summary in full. */
export async function awaitOomReportWindow(): Promise<void> {
  const lastMs = lastKillSinceBootMs();
  if (lastMs === null) return;
  const nowMs = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]) * 1000;
  const waitMs = Math.min(WINDOW_MS + MARGIN_MS, Math.max(0, lastMs + WINDOW_MS + MARGIN_MS - nowMs));
  await new Promise((resolve) => setTimeout(resolve, waitMs));
}
