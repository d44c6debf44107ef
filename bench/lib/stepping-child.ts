// A process that crosses a memory threshold on command and says exactly when: on "cross <bytes>"
// it touches fresh memory in 64 KiB steps, reading the node cgroup's memory.usage_in_bytes after
// each, and reports the CLOCK_MONOTONIC time at the start of the step that took usage to <bytes>
// or past it (written synchronously, so the report is out before anything else can happen); then
// it touches 1 MiB more so the kernel's rate-limited threshold check surely runs, and holds its
// memory. The parent notes the same clock (process.hrtime) where the event lands, so the
// difference is the latency from the kernel's point of view.
//
// A killer fast enough can end the child inside the crossing step, before it reports (the C
// reference does, several times in a run): so from 2 MiB below the target on, the child also
// writes each step's start to a marker file, synchronously, before touching it, and a child that
// died before its report crossed at the last step it marked. Without that, the fastest reactions
// would be dropped as failures, biased against the fastest killer.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BenchCgroup, CgroupProcess } from './bench-cgroup.js';

/** The child's program (argv[1]: the cgroup's memory.usage_in_bytes); shared with bench/notifier-latency.ts. */
export const STEPPING_PROGRAM = `
const fs = require('fs');
const usageFd = fs.openSync(process.argv[1], 'r');
const markFd = process.argv[2] === undefined ? null : fs.openSync(process.argv[2], 'r+');
const MARK_FROM_BYTES = 2n * 1024n * 1024n;
const usageBuffer = Buffer.alloc(64);
const usageBytes = () => BigInt(usageBuffer.toString('latin1', 0, fs.readSync(usageFd, usageBuffer, 0, 64, 0)).trim());
const say = (text) => { for (;;) { try { fs.writeSync(1, text); return; } catch (e) { if (e.code !== 'EAGAIN') return; } } };
const STEP = 64 * 1024;
const held = [];
let current = null;
let offset = 0;
const touchStep = (mark = false) => {
  if (current === null || offset >= current.length) {
    current = Buffer.allocUnsafeSlow(1 << 20);
    held.push(current);
    offset = 0;
  }
  const startedNs = process.hrtime.bigint();
  if (mark) fs.writeSync(markFd, String(startedNs).padStart(24, ' '), 0);
  current.fill(1, offset, offset + STEP);
  offset += STEP;
  return startedNs;
};
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, argument] = line.split(' ');
  if (command !== 'cross') return;
  const targetBytes = BigInt(argument);
  let crossedNs;
  let lastUsage = usageBytes();
  for (;;) {
    const startedNs = touchStep(markFd !== null && lastUsage + MARK_FROM_BYTES >= targetBytes);
    lastUsage = usageBytes();
    if (lastUsage >= targetBytes) { crossedNs = startedNs; break; }
  }
  say('crossed ' + crossedNs + '\\n');
  for (let i = 0; i < 16; i++) touchStep();
});
process.stdin.on('end', () => process.exit(0));
say('ready\\n');
`;

export class SteppingChild {
  private readonly waiters: ((line: string) => void)[] = [];
  private readonly early: string[] = [];

  private constructor(
    readonly process: CgroupProcess,
    private readonly markPath: string,
  ) {
    const stdout = process.child.stdout;
    if (stdout === null) throw new Error('the stepping child has no stdout');
    createInterface({ input: stdout }).on('line', (line) => {
      const waiter = this.waiters.shift();
      if (waiter === undefined) this.early.push(line);
      else waiter(line);
    });
  }

  /**
   * Starts the child in `relative` (below `cgroup`); it reads `usageCgroup`'s usage, and marks its
   * steps near a crossing in `markPath` (a scratch file it may overwrite). Resolves once it is ready.
   */
  static async start(cgroup: BenchCgroup, relative: string, usageCgroupPath: string, markPath: string): Promise<SteppingChild> {
    writeFileSync(markPath, '');
    const started = cgroup.spawn(relative, [globalThis.process.execPath, '-e', STEPPING_PROGRAM, join(usageCgroupPath, 'memory.usage_in_bytes'), markPath], {
      // Fixed mmap threshold: every 1 MiB buffer is its own fresh mapping, charged as it is touched.
      env: { PATH: globalThis.process.env['PATH'] ?? '/usr/bin:/bin', MALLOC_MMAP_THRESHOLD_: '65536' },
    });
    const child = new SteppingChild(started, markPath);
    const first = await Promise.race([child.next(), started.exited.then(() => 'exited')]);
    if (first !== 'ready') throw new Error(`the stepping child did not start (${first})`);
    return child;
  }

  private next(): Promise<string> {
    const line = this.early.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Touches memory until usage reaches `targetBytes`; resolves with the crossing step's time (ns):
   * as reported, or, when the child was killed before its report, the last step it marked; null
   * when it died before marking any.
   */
  async cross(targetBytes: bigint): Promise<bigint | null> {
    writeFileSync(this.markPath, '');
    const reply = this.next();
    this.process.child.stdin?.write(`cross ${targetBytes}\n`);
    const line = await Promise.race([reply, this.process.exited.then(() => 'exited')]);
    const match = /^crossed (\d+)$/.exec(line);
    if (match !== null) return BigInt(match[1] as string);
    const marked = readFileSync(this.markPath, 'utf8').trim();
    return /^\d+$/.test(marked) ? BigInt(marked) : null;
  }
}
