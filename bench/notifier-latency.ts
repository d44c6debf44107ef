// Measures the cgroup v1 notifier's latency: from the moment a process's allocation carries its
// cgroup's usage past an armed threshold to the moment onEvent runs in JavaScript, over many
// crossings (median, p99, max). A child process in a sandbox cgroup allocates in 64 KiB steps and
// notes CLOCK_MONOTONIC (process.hrtime) just before touching each step; the first step after which
// memory.usage_in_bytes is at or past the threshold is the crossing. The parent notes the same clock
// in onEvent. Both read one system-wide monotonic clock, so the difference is the latency, including
// the kernel's own check interval (memcg checks thresholds every 128 page charges on a CPU) and the
// libuv hop from the epoll_wait pool thread to the main thread. Needs root and cgroup v1.
//
// Run: npm run build && node dist/bench/notifier-latency.js [crossings]
// (or compile elsewhere: npx tsc -p tsconfig.json --outDir /tmp/kea-bench, then give that directory
// the repository's package.json type and node_modules, and run /tmp/kea-bench/bench/notifier-latency.js)

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { silentLogger } from '../src/api/logger.js';
import { parseQuantity } from '../src/api/quantity.js';
import type { Summary } from '../src/api/summary.js';
import { createMemoryThresholdNotifier } from '../src/notifier/create-memory-threshold-notifier.js';
import type { MemcgV1Notifier } from '../src/notifier/memcg-v1-notifier.js';
import { FakeClock } from '../test/fakes/fake-clock.js';
import { notifierSettings } from '../test/fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../test/helpers/cgroup-sandbox.js';
import { STEPPING_PROGRAM } from './lib/stepping-child.js';

const CROSSINGS = Number(process.argv[2] ?? 100);
const WARMUP_CROSSINGS = 5;
const MI = 1n << 20n;
/** How far above the current usage each threshold is armed. */
const HEADROOM_BYTES = 2n * MI;
const ONE_GI = 1024n * MI;

class SteppingChild {
  private readonly child: ChildProcess;
  private readonly waiters: ((line: string) => void)[] = [];

  constructor(cgroupPath: string) {
    // Fixed mmap threshold: every 1 MiB buffer is its own fresh mapping, charged as it is touched.
    this.child = spawn('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$1" -e "$2" "$3"', cgroupPath, process.execPath, STEPPING_PROGRAM, join(cgroupPath, 'memory.usage_in_bytes')], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', MALLOC_MMAP_THRESHOLD_: '65536' },
    });
    createInterface({ input: this.child.stdout as NodeJS.ReadableStream }).on('line', (line) => this.waiters.shift()?.(line));
  }

  next(): Promise<string> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Allocates until usage reaches `targetBytes`; resolves with the crossing step's hrtime. */
  async cross(targetBytes: bigint): Promise<bigint> {
    const reply = this.next();
    this.child.stdin?.write(`cross ${targetBytes}\n`);
    const line = await reply;
    const match = /^crossed (\d+)$/.exec(line);
    if (match === null) throw new Error(`unexpected reply from the child: ${line}`);
    return BigInt(match[1] as string);
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.kill('SIGKILL');
    await exited;
  }
}

function percentile(sortedMs: readonly number[], p: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1)] as number;
}

function summaryArming(memcgThresholdBytes: bigint): Summary {
  // No inactive page cache and a 1Gi threshold: the armed usage is exactly memcgThresholdBytes.
  return { node: { memory: { availableBytes: Number(memcgThresholdBytes + ONE_GI), usageBytes: 0, workingSetBytes: 0 } } };
}

async function main(): Promise<void> {
  const unavailable = cgroupV1Unavailable();
  if (unavailable !== null) {
    console.log(`notifier latency: skipped (${unavailable})`);
    return;
  }
  const sandbox = await CgroupSandbox.create({ limitBytes: 2048n * MI });
  const clock = new FakeClock();
  const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'memcg-v1' }), { cgroupRoot: '/sys/fs/cgroup', nodeCgroup: sandbox.name, podCgroupRoot: `${sandbox.name}/kubepods`, procRoot: '/proc', clock, logger: silentLogger }) as MemcgV1Notifier;
  const child = new SteppingChild(sandbox.path);
  try {
    if ((await child.next()) !== 'ready') throw new Error('the child did not start');
    let onCallback: ((ns: bigint) => void) | null = null;
    notifier.start(() => {
      const calledNs = process.hrtime.bigint();
      onCallback?.(calledNs);
      onCallback = null;
    });
    const threshold = [{ signal: 'memory.available' as const, value: { kind: 'quantity' as const, quantity: parseQuantity('1Gi') }, gracePeriodMs: 0, minReclaim: null }];
    const latenciesMs: number[] = [];
    const armingMs: number[] = [];
    for (let i = 0; i < WARMUP_CROSSINGS + CROSSINGS; i++) {
      const usageBytes = BigInt(readFileSync(join(sandbox.path, 'memory.usage_in_bytes'), 'utf8').trim());
      const targetBytes = usageBytes + HEADROOM_BYTES;
      clock.step(10_001);
      const armStartedMs = performance.now();
      notifier.updateThresholds(summaryArming(targetBytes), threshold);
      await notifier.settled();
      armingMs.push(performance.now() - armStartedMs);
      const called = new Promise<bigint>((resolve) => (onCallback = resolve));
      const crossedNs = await child.cross(targetBytes);
      const calledNs = await Promise.race([called, new Promise<null>((resolve) => setTimeout(() => resolve(null), 2000).unref())]);
      if (calledNs === null) throw new Error(`no event for crossing ${i} at ${targetBytes} bytes`);
      if (i >= WARMUP_CROSSINGS) latenciesMs.push(Number(calledNs - crossedNs) / 1e6);
    }
    const sorted = [...latenciesMs].sort((a, b) => a - b);
    const sortedArming = [...armingMs].sort((a, b) => a - b);
    console.log(`notifier latency over ${CROSSINGS} crossings (kernel ${readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim()}, node ${process.version}, load ${loadavg()[0]?.toFixed(2)})`);
    console.log(`  crossing -> onEvent: median ${percentile(sorted, 50).toFixed(3)} ms, p99 ${percentile(sorted, 99).toFixed(3)} ms, min ${sorted[0]?.toFixed(3)} ms, max ${sorted[sorted.length - 1]?.toFixed(3)} ms`);
    console.log(`  arming (registration write off the main thread): median ${percentile(sortedArming, 50).toFixed(1)} ms, p99 ${percentile(sortedArming, 99).toFixed(1)} ms`);
  } finally {
    await notifier.stop();
    await child.stop();
    await sandbox.cleanup();
  }
}

await main();
