// The memory-hungry pod of the benchmarks: a small Node program, started inside a container
// cgroup, that waits for "go" and then allocates and touches memory at a requested rate (chunks of
// rate/100 every 10 ms, catching up when a timer fires late) or as fast as it can (a tight loop of
// 4 MiB chunks). Every byte is written, so every page is really charged to the cgroup. It reports
// its own progress (CLOCK_MONOTONIC time, bytes so far) so the rate it actually achieved can be
// measured, not just the one asked for, and, given a target for the node's
// memory.usage_in_bytes, the moment its own touching took the node there (read after every 256 KiB
// until then), on the same clock as the parent. It installs no signal handler: SIGTERM ends it at
// once, even in the middle of its tight loop, as it would a real process.

import { createInterface } from 'node:readline';
import type { BenchCgroup, CgroupProcess } from './bench-cgroup.js';

export type AllocationMode = 'paced' | 'asap';

export interface AllocationPlan {
  readonly mode: AllocationMode;
  /** The requested rate of this process (ignored for `asap`). */
  readonly rateBytesPerSecond: number;
  /** Stops allocating (and holds what it has) past this many bytes. */
  readonly maxBytes: number;
  /** The node cgroup's memory.usage_in_bytes, watched for the crossing target given to go(). */
  readonly usagePath: string;
  /** The oom_score_adj the kubelet would give the pod's containers. */
  readonly oomScoreAdj?: number;
}

/**
 * The kubelet's oom_score_adj for a Burstable container: 1000 − 1000 × request / capacity, kept
 * within 3..999 (pkg/kubelet/qos/policy.go), so the kernel OOM killer prefers the pod furthest
 * over its request, as on a real node.
 */
export function burstableOomScoreAdj(memoryRequestBytes: number, capacityBytes: number): number {
  const adj = 1000 - Math.floor((1000 * memoryRequestBytes) / capacityBytes);
  return Math.min(999, Math.max(3, adj));
}

/** One progress report: by `atNs` (process.hrtime, shared by every process), `bytes` were touched. */
export interface AllocationSample {
  readonly atNs: bigint;
  readonly bytes: number;
}

// Written synchronously (fs.writeSync on the pipe), so a report is out before the next chunk
// even in the tight loop, and nothing is lost when the process is killed.
const ALLOCATOR_PROGRAM = `
const fs = require('fs');
const [mode, rateArg, maxArg, usagePath] = process.argv.slice(1);
const rateBytesPerSecond = Number(rateArg);
const maxBytes = Number(maxArg);
const PAGE = 4096;
const SLICE = 256 * 1024;
const usageFd = fs.openSync(usagePath, 'r');
const usageBuffer = Buffer.alloc(64);
const usageBytes = () => BigInt(usageBuffer.toString('latin1', 0, fs.readSync(usageFd, usageBuffer, 0, 64, 0)).trim());
const held = [];
let allocated = 0;
let crossTarget = null;
const say = (text) => { for (;;) { try { fs.writeSync(1, text); return; } catch (e) { if (e.code !== 'EAGAIN') return; } } };
const report = () => say(process.hrtime.bigint() + ' ' + allocated + '\\n');
// Until the node's usage reaches the target, touch 256 KiB at a time and read the usage after
// each slice, to place the crossing to within one slice.
const touch = (bytes) => {
  const b = Buffer.allocUnsafeSlow(bytes);
  let offset = 0;
  while (crossTarget !== null && offset < bytes) {
    const startedNs = process.hrtime.bigint();
    const end = Math.min(bytes, offset + SLICE);
    b.fill(0x5a, offset, end);
    offset = end;
    if (usageBytes() >= crossTarget) {
      crossTarget = null;
      say('crossed ' + startedNs + '\\n');
    }
  }
  if (offset < bytes) b.fill(0x5a, offset);
  held.push(b);
  allocated += bytes;
};
const hold = () => { say('done\\n'); setInterval(() => {}, 1 << 30); };
const paced = () => {
  const chunk = Math.max(PAGE, Math.round(rateBytesPerSecond / 100 / PAGE) * PAGE);
  const startNs = process.hrtime.bigint();
  const tick = () => {
    const elapsedS = Number(process.hrtime.bigint() - startNs) / 1e9;
    const target = Math.min(maxBytes, rateBytesPerSecond * elapsedS);
    while (allocated + chunk <= target) touch(chunk);
    report();
    if (allocated + chunk > maxBytes) return hold();
    setTimeout(tick, 10);
  };
  report();
  setTimeout(tick, 10);
};
const asap = () => {
  const CHUNK = 4 << 20;
  report();
  while (allocated + CHUNK <= maxBytes) {
    touch(CHUNK);
    if (allocated % (16 << 20) === 0) report();
  }
  report();
  hold();
};
let started = false;
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, target] = line.split(' ');
  if (command !== 'go' || started) return;
  started = true;
  crossTarget = target === undefined || target === '' ? null : BigInt(target);
  if (mode === 'asap') asap(); else paced();
});
process.stdin.on('end', () => process.exit(0));
say('ready\\n');
`;

export class AllocatorProcess {
  readonly samples: AllocationSample[] = [];
  goNs: bigint | null = null;
  /** When the node's usage reached the target given to go() (process.hrtime ns), if it did. */
  crossedNs: bigint | null = null;
  /** Resolves once every report has been read (its output closed). */
  readonly finished: Promise<void>;
  private readyResolve: (() => void) | null = null;
  private doneResolve: (() => void) | null = null;
  private done = false;

  private constructor(readonly process: CgroupProcess) {
    const stdout = process.child.stdout;
    if (stdout === null) throw new Error('the allocator has no stdout');
    const lines = createInterface({ input: stdout });
    this.finished = new Promise((resolve) => lines.once('close', resolve));
    lines.on('line', (line) => {
      if (line === 'ready') {
        this.readyResolve?.();
        return;
      }
      if (line.startsWith('crossed ')) {
        this.crossedNs = BigInt(line.slice('crossed '.length));
        return;
      }
      if (line === 'done') {
        this.done = true;
        this.doneResolve?.();
        return;
      }
      const space = line.indexOf(' ');
      if (space > 0) this.samples.push({ atNs: BigInt(line.slice(0, space)), bytes: Number(line.slice(space + 1)) });
    });
  }

  /** Starts one allocating process in `relative` and waits until it is ready (Node started, nothing allocated yet). */
  static async start(cgroup: BenchCgroup, relative: string, plan: AllocationPlan, timeoutMs = 20_000): Promise<AllocatorProcess> {
    const started = cgroup.spawn(relative, [globalThis.process.execPath, '-e', ALLOCATOR_PROGRAM, plan.mode, String(Math.round(plan.rateBytesPerSecond)), String(plan.maxBytes), plan.usagePath], {
      env: { PATH: globalThis.process.env['PATH'] ?? '/usr/bin:/bin' },
      ...(plan.oomScoreAdj === undefined ? {} : { oomScoreAdj: plan.oomScoreAdj }),
    });
    const allocator = new AllocatorProcess(started);
    let stderr = '';
    started.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the allocator was not ready after ${timeoutMs} ms`)), timeoutMs);
      allocator.readyResolve = () => {
        clearTimeout(timer);
        resolve();
      };
      void started.exited.then(({ code, signal }) => {
        clearTimeout(timer);
        reject(new Error(`the allocator exited before it was ready (code ${code}, signal ${signal}): ${stderr.trim()}`));
      });
    });
    return allocator;
  }

  /**
   * Starts allocating; with `crossTargetBytes`, it reports when the node's usage reaches it.
   * Returns when the command was sent (process.hrtime ns).
   */
  go(crossTargetBytes?: bigint): bigint {
    this.goNs = globalThis.process.hrtime.bigint();
    this.process.child.stdin?.write(crossTargetBytes === undefined ? 'go\n' : `go ${crossTargetBytes}\n`);
    return this.goNs;
  }

  /** Resolves once it has allocated everything it was asked to (`maxBytes`) and holds it. */
  whenDone(): Promise<void> {
    if (this.done) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.doneResolve = resolve;
      void this.process.exited.then(() => reject(new Error('the allocator exited before it was done')));
    });
  }

  get alive(): boolean {
    return this.process.child.exitCode === null && this.process.child.signalCode === null;
  }

  /** Bytes touched by `atNs`, interpolated between reports (0 before the first). */
  bytesAt(atNs: bigint): number {
    let before: AllocationSample | null = null;
    for (const sample of this.samples) {
      if (sample.atNs <= atNs) {
        before = sample;
        continue;
      }
      if (before === null) return 0;
      const fraction = Number(atNs - before.atNs) / Number(sample.atNs - before.atNs);
      return before.bytes + fraction * (sample.bytes - before.bytes);
    }
    return before?.bytes ?? 0;
  }

  /** The last report's time, or null before any. */
  get lastSampleNs(): bigint | null {
    return this.samples.at(-1)?.atNs ?? null;
  }
}

/** The rate several processes achieved together between two moments (bytes per second), from their own reports. */
export function rateBetween(allocators: readonly AllocatorProcess[], fromNs: bigint, toNs: bigint): number | null {
  if (toNs <= fromNs) return null;
  const bytes = allocators.reduce((sum, a) => sum + a.bytesAt(toNs) - a.bytesAt(fromNs), 0);
  return bytes / (Number(toNs - fromNs) / 1e9);
}
