// Measures what locking the agent's memory (mlockall) would cost and whether V8 survives it: a
// child process loads the agent's modules as `run` does at start, reads its VmRSS, calls
// mlockall(MCL_CURRENT) or mlockall(MCL_CURRENT | MCL_ONFAULT), reads VmRSS and VmLck again, then
// makes garbage the way a long run does and exits. The parent prints each mode's figures and how
// the child ended. docs/deployment.md, "Scheduling priority and memory locking", quotes the result:
// the agent does not lock its memory. Needs CAP_IPC_LOCK (root) or a large RLIMIT_MEMLOCK.
//
// Run: npm run build && node dist/bench/memory-lock.js
// (The FFI is declared here rather than in native/libc.ts: the agent itself never calls mlockall.)

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import * as koffi from 'koffi';
import { statusFieldBytes } from './lib/proc-status.js';
import { MiB } from './lib/stats.js';

const MCL_CURRENT = 1;
const MCL_ONFAULT = 4;
const MODES: Readonly<Record<string, number>> = { current: MCL_CURRENT, onfault: MCL_CURRENT | MCL_ONFAULT };
const GARBAGE_ROUNDS = 50;
const GARBAGE_ROUND_BYTES = 4 * 1024 * 1024;

/** Size fields of this process's /proc/self/status, in MiB, read at one instant. */
function ownStatusMiB(...fields: string[]): number[] {
  const status = readFileSync('/proc/self/status', 'utf8');
  return fields.map((field) => statusFieldBytes(status, field) / MiB);
}

async function child(mode: string): Promise<void> {
  const flags = MODES[mode];
  if (flags === undefined) throw new Error(`unknown mode ${mode}`);
  await import('../src/cli/run.js');
  const [rssBeforeMiB] = ownStatusMiB('VmRSS');
  const mlockall = koffi.load('libc.so.6').func('int mlockall(int flags)') as (flags: number) => number;
  const result = mlockall(flags);
  const [rssAfterMiB, lockedMiB] = ownStatusMiB('VmRSS', 'VmLck');
  process.stdout.write(`${JSON.stringify({ mode, result, rssBeforeMiB, rssAfterMiB, lockedMiB })}\n`);
  // Garbage as a long run makes it: V8 grows its heap and gives pages back.
  let kept: Buffer[] = [];
  for (let round = 0; round < GARBAGE_ROUNDS; round++) {
    kept.push(Buffer.alloc(GARBAGE_ROUND_BYTES, round));
    if (kept.length > 4) kept = [];
    JSON.parse(JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ i, text: `row ${i}` }))));
  }
  process.stdout.write(`${JSON.stringify({ mode, garbage: 'survived', rssMiB: ownStatusMiB('VmRSS')[0] })}\n`);
}

function parent(): void {
  const self = fileURLToPath(import.meta.url);
  for (const mode of Object.keys(MODES)) {
    const run = spawnSync(process.execPath, [self, mode], { encoding: 'utf8', timeout: 60_000 });
    const check = /Check failed[^\n]*|SetPermissions|FreePages|DiscardSystemPages/g;
    const v8Abort = [...new Set(run.stderr.match(check) ?? [])].join(', ');
    process.stdout.write(run.stdout);
    process.stdout.write(`${JSON.stringify({ mode, exitCode: run.status, signal: run.signal, v8Abort: v8Abort === '' ? null : v8Abort })}\n`);
  }
  process.stdout.write(`node ${process.version}, ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}\n`);
}

const mode = process.argv[2];
if (mode === undefined) parent();
else await child(mode);
