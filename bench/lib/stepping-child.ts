// A process that crosses a memory threshold on command and says exactly when: on "cross <bytes>"
// it touches fresh memory in 64 KiB steps, reading the node cgroup's memory.usage_in_bytes after
// each, and reports the CLOCK_MONOTONIC time at the start of the step that took usage to <bytes>
// or past it (written synchronously, so the report is out before anything else can happen); then
// it touches 1 MiB more so the kernel's rate-limited threshold check surely runs, and holds its
// memory. The parent notes the same clock (process.hrtime) where the event lands, so the
// difference is the latency from the kernel's point of view.

import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BenchCgroup, CgroupProcess } from './bench-cgroup.js';

/** The child's program (argv[1]: the cgroup's memory.usage_in_bytes); shared with bench/notifier-latency.ts. */
export const STEPPING_PROGRAM = `
const fs = require('fs');
const usageFd = fs.openSync(process.argv[1], 'r');
const usageBuffer = Buffer.alloc(64);
const usageBytes = () => BigInt(usageBuffer.toString('latin1', 0, fs.readSync(usageFd, usageBuffer, 0, 64, 0)).trim());
const say = (text) => { for (;;) { try { fs.writeSync(1, text); return; } catch (e) { if (e.code !== 'EAGAIN') return; } } };
const STEP = 64 * 1024;
const held = [];
let current = null;
let offset = 0;
const touchStep = () => {
  if (current === null || offset >= current.length) {
    current = Buffer.allocUnsafeSlow(1 << 20);
    held.push(current);
    offset = 0;
  }
  const startedNs = process.hrtime.bigint();
  current.fill(1, offset, offset + STEP);
  offset += STEP;
  return startedNs;
};
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, argument] = line.split(' ');
  if (command !== 'cross') return;
  const targetBytes = BigInt(argument);
  let crossedNs;
  for (;;) {
    const startedNs = touchStep();
    if (usageBytes() >= targetBytes) { crossedNs = startedNs; break; }
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

  private constructor(readonly process: CgroupProcess) {
    const stdout = process.child.stdout;
    if (stdout === null) throw new Error('the stepping child has no stdout');
    createInterface({ input: stdout }).on('line', (line) => {
      const waiter = this.waiters.shift();
      if (waiter === undefined) this.early.push(line);
      else waiter(line);
    });
  }

  /** Starts the child in `relative` (below `cgroup`); it reads `usageCgroup`'s usage. Resolves once it is ready. */
  static async start(cgroup: BenchCgroup, relative: string, usageCgroupPath: string): Promise<SteppingChild> {
    const started = cgroup.spawn(relative, [globalThis.process.execPath, '-e', STEPPING_PROGRAM, join(usageCgroupPath, 'memory.usage_in_bytes')], {
      // Fixed mmap threshold: every 1 MiB buffer is its own fresh mapping, charged as it is touched.
      env: { PATH: globalThis.process.env['PATH'] ?? '/usr/bin:/bin', MALLOC_MMAP_THRESHOLD_: '65536' },
    });
    const child = new SteppingChild(started);
    const first = await Promise.race([child.next(), started.exited.then(() => 'exited')]);
    if (first !== 'ready') throw new Error(`the stepping child did not start (${first})`);
    return child;
  }

  private next(): Promise<string> {
    const line = this.early.shift();
    if (line !== undefined) return Promise.resolve(line);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Touches memory until usage reaches `targetBytes`; resolves with the crossing step's time (ns), or null if it died first. */
  async cross(targetBytes: bigint): Promise<bigint | null> {
    const reply = this.next();
    this.process.child.stdin?.write(`cross ${targetBytes}\n`);
    const line = await Promise.race([reply, this.process.exited.then(() => 'exited')]);
    const match = /^crossed (\d+)$/.exec(line);
    return match === null ? null : BigInt(match[1] as string);
  }
}
