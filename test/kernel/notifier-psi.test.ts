// The PSI notifier on the real kernel. These machines have no cgroup v2 memory controller, but the
// system-wide /proc/pressure/memory accepts triggers, so the trigger mechanics are tested there:
// arming (with the kernel's own validation), registration in the epoll set, and a prompt stop. A
// real memory stall is attempted in a small cgroup v1 memory cgroup (from the shared sandbox); when
// none can be caused the test says so instead of failing. The fast check runs on a real clock against fixture files.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { notifierSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../helpers/cgroup-sandbox.js';
import { openFds } from '../helpers/open-fds.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import type { NotifierSettings } from '../../src/api/agent-settings.js';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseQuantity } from '../../src/api/quantity.js';
import type { Threshold } from '../../src/api/threshold.js';
import type { NotifierEvent } from '../../src/daemon/ports.js';
import { createMemoryThresholdNotifier, type NotifierContext } from '../../src/notifier/create-memory-threshold-notifier.js';
import type { PsiNotifier } from '../../src/notifier/psi-notifier.js';

const PROC_PRESSURE = '/proc/pressure/memory';
const GI = 1024 ** 3;

const scratch = mkdtempSync(join(tmpdir(), 'kea-notifier-psi-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function pressureSkipReason(): string | null {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root';
  if (!existsSync(PROC_PRESSURE)) return `${PROC_PRESSURE} does not exist (kernel without PSI)`;
  return null;
}

const openPaths = (): string[] =>
  readdirSync('/proc/self/fd').flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/self/fd/${fd}`)];
    } catch {
      return [];
    }
  });

function sleepMs(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Resolves with `promise`'s outcome, or 'timeout' after `ms`; the timer never outlives the race. */
async function orTimeout<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

function someStallTotalUs(): number {
  return Number(/^some .* total=(\d+)$/m.exec(readFileSync(PROC_PRESSURE, 'utf8'))?.[1] ?? 0);
}

function psiNotifier(settings: Partial<NotifierSettings>, context: Partial<NotifierContext> = {}): PsiNotifier {
  return createMemoryThresholdNotifier(notifierSettings({ mode: 'psi', ...settings }), {
    cgroupRoot: scratch,
    nodeCgroup: '',
    podCgroupRoot: 'kubepods',
    procRoot: '/proc',
    clock: systemClock,
    logger: silentLogger,
    ...context,
  }) as PsiNotifier;
}

const skip = pressureSkipReason();
if (skip !== null) console.log(`skipping the PSI trigger tests: ${skip}`);
const maybe = skip === null ? describe : describe.skip;

maybe('PSI triggers on /proc/pressure/memory (root, /proc/pressure/memory)', () => {
  test('the root cgroup arms a trigger on the system-wide pressure file, registered until stop (root, /proc/pressure/memory)', async () => {
    const baselineFds = openFds();
    const notifier = psiNotifier({});
    notifier.start(() => {});
    await notifier.settled();
    const [trigger] = notifier.psiTriggers();
    expect(trigger?.description).toBe('psi memory pressure');
    expect(trigger?.pressurePath).toBe(PROC_PRESSURE);
    // 1000 ms with CAP_SYS_RESOURCE; the next multiple of 2 s without it
    expect([1000, 2000]).toContain(trigger?.windowMs);
    console.log(`PSI trigger armed on ${PROC_PRESSURE} with a ${trigger?.windowMs} ms window`);
    expect(openPaths()).toContain(PROC_PRESSURE);
    // the epoll set, its wake-up eventfd, the trigger
    expect(openFds()).toBe(baselineFds + 3);
    await sleepMs(50);
    const startedMs = performance.now();
    await notifier.stop();
    expect(performance.now() - startedMs).toBeLessThan(1000);
    expect(openFds()).toBe(baselineFds);
    expect(openPaths()).not.toContain(PROC_PRESSURE);
  });

  test('the kernel overwrites the last byte of a trigger with a NUL, so the line must end with one (root, /proc/pressure/memory)', () => {
    const native = createLibcNativeEvents();
    const withoutNul = native.openFile(PROC_PRESSURE, 'read-write-nonblock');
    try {
      // read as "some 100000 200000": a 200 ms window, below the kernel's 500 ms minimum
      expect(() => native.writeFile(withoutNul, new TextEncoder().encode('some 100000 2000000'))).toThrow('write failed with errno 22: EINVAL');
    } finally {
      native.close(withoutNul);
    }
    const withNul = native.openFile(PROC_PRESSURE, 'read-write-nonblock');
    try {
      native.writeFile(withNul, new TextEncoder().encode('some 100000 2000000\0'));
    } finally {
      native.close(withNul);
    }
  });

  const stallSkip = cgroupV1Unavailable();
  (stallSkip === null ? test : test.skip)('a real memory stall fires the trigger when one can be caused (root, cgroup v1, /proc/pressure/memory)', async () => {
    // dd's 48 MiB buffer cannot fit under this 32 MiB limit with no swap: each run reclaims, stalls
    // and is OOM-killed inside the sandbox only.
    const sandbox = await CgroupSandbox.create({ limitBytes: 32n << 20n });
    let child: ChildProcess | null = null;
    const notifier = psiNotifier({ psiStallThresholdMs: 5, psiWindowMs: 2000 });
    try {
      let fired: NotifierEvent | null = null;
      const event = new Promise<void>((resolve) => {
        notifier.start((e) => {
          fired ??= e;
          resolve();
        });
      });
      await notifier.settled();
      const stallBeforeUs = someStallTotalUs();
      child = spawn('/bin/sh', ['-c', 'echo $$ > "$0/cgroup.procs" && for i in $(seq 1 400); do dd if=/dev/zero of=/dev/null bs=48M count=1 2>/dev/null; done', sandbox.path], {
        stdio: 'ignore',
        detached: true,
      });
      const outcome = await orTimeout(event, 10_000);
      const stallUs = someStallTotalUs() - stallBeforeUs;
      if (outcome === 'timeout') {
        console.log(`no PSI event within 10 s: the attempt caused ${stallUs} us of memory stall system-wide; nothing more to check here`);
        return;
      }
      console.log(`PSI event after causing ${stallUs} us of memory stall`);
      expect((fired as NotifierEvent | null)?.description).toBe('psi memory pressure');
      expect(stallUs).toBeGreaterThan(0);
    } finally {
      await notifier.stop();
      const started = child as ChildProcess | null;
      if (started?.pid !== undefined && started.exitCode === null && started.signalCode === null) {
        const exited = new Promise((resolve) => started.once('exit', resolve));
        // The shell and the dd it runs: the process group this test started.
        process.kill(-started.pid, 'SIGKILL');
        await exited;
      }
      await sandbox.cleanup();
    }
  }, 30_000);
});

describe('the PSI fast check on a real clock against fixture files', () => {
  test('a working set crossing capacity - threshold is reported within a few check intervals', async () => {
    const root = mkdtempSync(join(scratch, 'cgroup2-'));
    mkdirSync(join(root, 'kea-node'));
    const writeMemory = (currentBytes: number, inactiveFileBytes: number): void => {
      writeFileSync(join(root, 'kea-node', 'memory.current'), `${currentBytes}\n`);
      writeFileSync(join(root, 'kea-node', 'memory.stat'), `anon ${currentBytes}\nactive_file 0\ninactive_file ${inactiveFileBytes}\n`);
    };
    writeMemory(2 * GI, 0);
    // The fixture cgroup has no memory.pressure: its PSI trigger fails and is reported; the fast check goes on.
    const notifier = psiNotifier({ fastCheckMinIntervalMs: 20, fastCheckMaxIntervalMs: 20 }, { cgroupRoot: root, nodeCgroup: 'kea-node' });
    const events: { description: string; atMs: number }[] = [];
    let onNext: () => void = () => {};
    notifier.start((event) => {
      events.push({ description: event.description, atMs: performance.now() });
      onNext();
    });
    const nextEvent = (): Promise<void> => new Promise((resolve) => (onNext = resolve));
    try {
      // capacity 8Gi, hard threshold 1Gi: met once the working set passes 7Gi
      const threshold: Threshold = { signal: 'memory.available', value: { kind: 'quantity', quantity: parseQuantity('1Gi') }, gracePeriodMs: 0, minReclaim: null };
      notifier.updateThresholds({ node: { memory: { availableBytes: 6 * GI, usageBytes: 2 * GI, workingSetBytes: 2 * GI } } }, [threshold]);
      await sleepMs(100);
      expect(events).toEqual([]);

      const up = nextEvent();
      const changedMs = performance.now();
      writeMemory(8 * GI, 512 * 2 ** 20);
      await orTimeout(up, 1000);
      expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold']);
      console.log(`fast check noticed the crossing ${((events[0]?.atMs ?? 0) - changedMs).toFixed(1)} ms after the files changed`);

      const down = nextEvent();
      writeMemory(8 * GI, 2 * GI);
      await orTimeout(down, 1000);
      expect(events.map((e) => e.description)).toEqual(['hard memory eviction threshold', 'hard memory eviction threshold']);
    } finally {
      await notifier.stop();
    }
  });
});
