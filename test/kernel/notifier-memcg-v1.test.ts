// The cgroup v1 notifier on the real kernel: thresholds armed through cgroup.event_control fire when
// a child process allocates past them, re-arming moves them, several fire independently, and stop is
// prompt while a wait is outstanding (the arm/disarm soak is notifier-memcg-v1-cycles.test.ts).
// Needs root and a cgroup v1 memory hierarchy; skipped with the reason printed otherwise. Cgroups
// come from the shared sandbox (test/helpers/cgroup-sandbox.ts: kea-test-<pid>-<tag>-<n>, removed even when
// a test fails); the allocators are started, and ended, here.

import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FakeClock } from '../fakes/fake-clock.js';
import { notifierSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../helpers/cgroup-sandbox.js';
import { openFds } from '../helpers/open-fds.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseQuantity } from '../../src/api/quantity.js';
import type { Summary } from '../../src/api/summary.js';
import type { Threshold } from '../../src/api/threshold.js';
import type { NotifierEvent } from '../../src/daemon/ports.js';
import { createMemoryThresholdNotifier } from '../../src/notifier/create-memory-threshold-notifier.js';
import type { MemcgV1Notifier } from '../../src/notifier/memcg-v1-notifier.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
const MI = 1n << 20n;

// --- an allocator that grows on command (the shared sandbox's allocators allocate once) --------

/** A child process in a cgroup that allocates and touches more memory on command, 1 MiB at a time. */
class Allocator {
  private readonly child: ChildProcess;
  private readonly waiters: ((line: string) => void)[] = [];
  readonly exited: Promise<void>;

  private constructor(child: ChildProcess) {
    this.child = child;
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => this.waiters.shift()?.(line));
  }

  /** Starts one in `cgroupPath` (the shell joins it before exec'ing node, so all its memory is charged there). */
  static async start(cgroupPath: string): Promise<Allocator> {
    const child = spawn('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && exec "$1" -e "$2"', cgroupPath, process.execPath, ALLOCATOR_SCRIPT], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    });
    const allocator = new Allocator(child);
    allocators.add(allocator);
    await allocator.reply('ready');
    return allocator;
  }

  /** Allocates and touches `bytes` more; resolves when the child has done so. */
  alloc(bytes: bigint): Promise<void> {
    this.child.stdin?.write(`alloc ${bytes}\n`);
    return this.reply('done');
  }

  /** Ends the child (only this process, by its own handle) and waits until it is reaped. */
  async kill(): Promise<void> {
    allocators.delete(this);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private reply(expected: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the allocator did not answer ${expected}`)), 15_000);
      this.waiters.push((line) => {
        clearTimeout(timer);
        if (line === expected) resolve();
        else reject(new Error(`the allocator answered ${line}, expected ${expected}`));
      });
    });
  }
}

const allocators = new Set<Allocator>();

const ALLOCATOR_SCRIPT = `
const chunks = [];
require('readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, amount] = line.split(' ');
  if (command === 'alloc') {
    for (let left = Number(amount); left > 0; left -= 1 << 20) {
      const chunk = Buffer.allocUnsafeSlow(Math.min(left, 1 << 20));
      chunk.fill(1);
      chunks.push(chunk);
    }
    process.stdout.write('done\\n');
  }
});
process.stdin.on('end', () => process.exit(0));
process.stdout.write('ready\\n');
`;

const bytesIn = (cgroupPath: string, file: string): bigint => BigInt(readFileSync(join(cgroupPath, file), 'utf8').trim());
const usageBytes = (cgroupPath: string): bigint => bytesIn(cgroupPath, 'memory.usage_in_bytes');
const maxUsageBytes = (cgroupPath: string): bigint => bytesIn(cgroupPath, 'memory.max_usage_in_bytes');

// --- helpers ----------------------------------------------------------------------------------

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function threshold(signal: Threshold['signal'], value: string, gracePeriodMs = 0): Threshold {
  return { signal, value: { kind: 'quantity', quantity: parseQuantity(value) }, gracePeriodMs, minReclaim: null };
}

/** Memory figures with no inactive page cache, so `capacity - threshold` is the armed usage. */
function memory(availableBytes: bigint): { availableBytes: number; usageBytes: number; workingSetBytes: number } {
  return { availableBytes: Number(availableBytes), usageBytes: 0, workingSetBytes: 0 };
}

function summaryOf(nodeAvailableBytes: bigint, podsAvailableBytes: bigint | null = null): Summary {
  return {
    node: {
      memory: memory(nodeAvailableBytes),
      ...(podsAvailableBytes === null ? {} : { systemContainers: [{ name: 'pods', memory: memory(podsAvailableBytes) }] }),
    },
  };
}


const skip = cgroupV1Unavailable();
if (skip !== null) console.log(`skipping the cgroup v1 notifier tests: ${skip}`);
const maybe = skip === null ? describe : describe.skip;

maybe('MemcgV1Notifier on the kernel (root, cgroup v1)', () => {
  const sandboxes: CgroupSandbox[] = [];
  const notifiers: MemcgV1Notifier[] = [];

  const newSandbox = async (limitBytes: bigint): Promise<CgroupSandbox> => {
    const sandbox = await CgroupSandbox.create({ limitBytes });
    sandboxes.push(sandbox);
    return sandbox;
  };

  /** A notifier whose node is the sandbox's top cgroup and whose kubepods is `<top>/kubepods`. */
  const newNotifier = (sandbox: CgroupSandbox, clock = new FakeClock()): MemcgV1Notifier => {
    const notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'memcg-v1' }), {
      cgroupRoot: CGROUP_ROOT,
      nodeCgroup: sandbox.name,
      podCgroupRoot: `${sandbox.name}/kubepods`,
      procRoot: '/proc',
      clock,
      logger: silentLogger,
    }) as MemcgV1Notifier;
    notifiers.push(notifier);
    return notifier;
  };

  afterEach(async () => {
    await Promise.all(notifiers.splice(0).map((n) => n.stop()));
    // The allocators are this file's own children: end them before the sandbox removes the cgroups.
    await Promise.all([...allocators].map((a) => a.kill()));
    for (const sandbox of sandboxes.splice(0)) await sandbox.cleanup();
  });

  test('a child allocating past an armed threshold wakes onEvent, with usage past it at the event (root, cgroup v1)', async () => {
    const sandbox = await newSandbox(512n * MI);
    const node = sandbox.path;
    const allocator = await Allocator.start(node);
    const thresholdBytes = usageBytes(node) + 64n * MI;
    const notifier = newNotifier(sandbox);
    let atEvent: { event: NotifierEvent; usageBytes: bigint; maxUsageBytes: bigint } | null = null;
    const fired = new Promise<void>((resolve) => {
      notifier.start((event) => {
        atEvent ??= { event, usageBytes: usageBytes(node), maxUsageBytes: maxUsageBytes(node) };
        resolve();
      });
    });
    // capacity thresholdBytes + 1Gi, threshold 1Gi: armed at thresholdBytes
    notifier.updateThresholds(summaryOf(thresholdBytes + 1024n * MI), [threshold('memory.available', '1Gi')]);
    await notifier.settled();
    expect(notifier.armedThresholds().map((a) => [a.cgroupPath, a.memcgThresholdBytes])).toEqual([[node, thresholdBytes]]);
    await allocator.alloc(96n * MI);
    await within(fired, 5000, 'the threshold event');
    const seen = atEvent as unknown as { event: NotifierEvent; usageBytes: bigint; maxUsageBytes: bigint };
    expect(seen.event.description).toBe('hard memory eviction threshold');
    expect(seen.maxUsageBytes).toBeGreaterThanOrEqual(thresholdBytes);
    expect(seen.usageBytes).toBeGreaterThanOrEqual(thresholdBytes);
  });

  test('re-arming moves the threshold: the old value no longer fires, the new one does (root, cgroup v1)', async () => {
    const sandbox = await newSandbox(512n * MI);
    const node = sandbox.path;
    const allocator = await Allocator.start(node);
    const baseBytes = usageBytes(node);
    const clock = new FakeClock();
    const notifier = newNotifier(sandbox, clock);
    const events: { description: string; maxUsageBytes: bigint }[] = [];
    let firedAfterRearm: () => void = () => {};
    const fired = new Promise<void>((resolve) => {
      firedAfterRearm = resolve;
    });
    notifier.start((event) => {
      events.push({ description: event.description, maxUsageBytes: maxUsageBytes(node) });
      firedAfterRearm();
    });
    const hard = [threshold('memory.available', '1Gi')];
    notifier.updateThresholds(summaryOf(baseBytes + 64n * MI + 1024n * MI), hard);
    await notifier.settled();
    clock.step(10_001);
    const movedBytes = baseBytes + 160n * MI;
    notifier.updateThresholds(summaryOf(movedBytes + 1024n * MI), hard);
    await notifier.settled();
    expect(notifier.armedThresholds().map((a) => a.memcgThresholdBytes)).toEqual([movedBytes]);

    await allocator.alloc(96n * MI);
    await sleepMs(300);
    expect(events).toEqual([]);
    await allocator.alloc(96n * MI);
    await within(fired, 5000, 'the event at the re-armed value');
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    expect(events[0]?.maxUsageBytes).toBeGreaterThanOrEqual(movedBytes);
  });

  test('a point usage passed before its registration took effect is reported at once; the kernel alone never signals it (root, cgroup v1)', async () => {
    const sandbox = await newSandbox(512n * MI);
    const node = sandbox.path;
    const allocator = await Allocator.start(node);
    await allocator.alloc(64n * MI);
    const clock = new FakeClock();
    const notifier = newNotifier(sandbox, clock);
    const events: NotifierEvent[] = [];
    notifier.start((event) => events.push(event));
    // Armed above usage: nothing to report.
    const aboveBytes = usageBytes(node) + 128n * MI;
    notifier.updateThresholds(summaryOf(aboveBytes + 1024n * MI), [threshold('memory.available', '1Gi')]);
    await notifier.settled();
    await sleepMs(200);
    expect(events).toEqual([]);
    // Re-armed (after the re-arm interval) at a point usage has already passed, as when a fast leak
    // climbs past a re-armed point during the registration's RCU wait: reported as a crossing.
    clock.step(10_001);
    const passedBytes = usageBytes(node) - 16n * MI;
    notifier.updateThresholds(summaryOf(passedBytes + 1024n * MI), [threshold('memory.available', '1Gi')]);
    await notifier.settled();
    expect(notifier.armedThresholds().map((a) => a.memcgThresholdBytes)).toEqual([passedBytes]);
    expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
    // The kernel itself stays silent while usage grows further above the point: it signals crossings only.
    await allocator.alloc(16n * MI);
    await sleepMs(300);
    expect(events).toHaveLength(1);
  });

  test('several thresholds at once: the soft one fires first, then hard and allocatable, each past its value (root, cgroup v1)', async () => {
    const sandbox = await newSandbox(768n * MI);
    const node = sandbox.path;
    const pods = sandbox.mkdir('kubepods');
    const allocator = await Allocator.start(pods);
    const nodeBaseBytes = usageBytes(node);
    const podsBaseBytes = usageBytes(pods);
    const notifier = newNotifier(sandbox);
    const events: { description: string; maxUsageBytes: bigint }[] = [];
    const waiters: { count: number; resolve: () => void }[] = [];
    notifier.start((event) => {
      const cgroup = event.description.includes('allocatable') ? pods : node;
      events.push({ description: event.description, maxUsageBytes: maxUsageBytes(cgroup) });
      for (const w of waiters) if (events.length >= w.count) w.resolve();
    });
    const eventsReach = (count: number): Promise<void> =>
      new Promise((resolve) => {
        if (events.length >= count) resolve();
        else waiters.push({ count, resolve });
      });

    // node capacity base + 264Mi: soft 200Mi arms at base + 64Mi, hard 100Mi at base + 164Mi;
    // kubepods capacity base + 212Mi: hard allocatable 100Mi arms at base + 112Mi.
    const softBytes = nodeBaseBytes + 64n * MI;
    const hardBytes = nodeBaseBytes + 164n * MI;
    const allocatableBytes = podsBaseBytes + 112n * MI;
    notifier.updateThresholds(summaryOf(nodeBaseBytes + 264n * MI, podsBaseBytes + 212n * MI), [
      threshold('memory.available', '100Mi'),
      threshold('memory.available', '200Mi', 60_000),
      threshold('allocatableMemory.available', '100Mi'),
    ]);
    await notifier.settled();
    expect(new Map(notifier.armedThresholds().map((a) => [a.description, a.memcgThresholdBytes]))).toEqual(
      new Map([
        ['hard memory eviction threshold', hardBytes],
        ['soft memory eviction threshold', softBytes],
        ['hard allocatable memory eviction threshold', allocatableBytes],
      ]),
    );

    await allocator.alloc(96n * MI);
    await within(eventsReach(1), 5000, 'the soft threshold event');
    await sleepMs(300);
    expect(events.map((e) => e.description)).toEqual(['soft memory eviction threshold']);
    expect(events[0]?.maxUsageBytes).toBeGreaterThanOrEqual(softBytes);

    await allocator.alloc(96n * MI);
    await within(eventsReach(3), 5000, 'the hard and allocatable threshold events');
    await sleepMs(300);
    expect(events.slice(1).map((e) => e.description).sort()).toEqual(['hard allocatable memory eviction threshold', 'hard memory eviction threshold']);
    for (const event of events.slice(1)) {
      expect(event.maxUsageBytes).toBeGreaterThanOrEqual(event.description.includes('allocatable') ? allocatableBytes : hardBytes);
    }
  });

  test('stop while a wait is outstanding returns within 1 s and closes every descriptor (root, cgroup v1)', async () => {
    const sandbox = await newSandbox(512n * MI);
    const node = sandbox.path;
    const baselineFds = openFds();
    const notifier = newNotifier(sandbox);
    notifier.start(() => {});
    notifier.updateThresholds(summaryOf(usageBytes(node) + 2048n * MI), [threshold('memory.available', '1Gi'), threshold('memory.available', '1500Mi', 1000)]);
    await notifier.settled();
    expect(openFds()).toBe(baselineFds + 4);
    await sleepMs(50);
    const startedMs = performance.now();
    await notifier.stop();
    const stopMs = performance.now() - startedMs;
    console.log(`stop with a wait outstanding took ${stopMs.toFixed(2)} ms`);
    expect(stopMs).toBeLessThan(1000);
    expect(openFds()).toBe(baselineFds);
    await notifier.stop();
  });
});
