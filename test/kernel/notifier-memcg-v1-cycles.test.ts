// The cgroup v1 notifier's soak: 10,000 arm/disarm cycles on real memcg thresholds leave no
// descriptor behind (counted exactly in /proc/self/fd) and do not grow the RSS with the cycles. Each registration
// waits for an RCU grace period in the kernel, so this takes minutes; it has its own file so it runs
// alongside the other tests. Needs root and a cgroup v1 memory hierarchy; skipped otherwise. Its two
// cgroups come from the shared sandbox (test/helpers/cgroup-sandbox.ts), removed even when it fails.

import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { FakeClock } from '../fakes/fake-clock.js';
import { notifierSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../helpers/cgroup-sandbox.js';
import { openFds } from '../helpers/open-fds.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseQuantity } from '../../src/api/quantity.js';
import type { Summary } from '../../src/api/summary.js';
import type { Threshold } from '../../src/api/threshold.js';
import { createMemoryThresholdNotifier } from '../../src/notifier/create-memory-threshold-notifier.js';
import type { MemcgV1Notifier } from '../../src/notifier/memcg-v1-notifier.js';

const CGROUP_ROOT = '/sys/fs/cgroup';
const MI = 1n << 20n;
const CYCLES = 10_000;

function threshold(signal: Threshold['signal'], value: string, gracePeriodMs = 0): Threshold {
  return { signal, value: { kind: 'quantity', quantity: parseQuantity(value) }, gracePeriodMs, minReclaim: null };
}

function summaryOf(availableBytes: bigint): Summary {
  const memory = { availableBytes: Number(availableBytes), usageBytes: 0, workingSetBytes: 0 };
  return { node: { memory, systemContainers: [{ name: 'pods', memory }] } };
}


const skip = cgroupV1Unavailable();
if (skip !== null) console.log(`skipping the cgroup v1 notifier soak: ${skip}`);
const maybe = skip === null ? describe : describe.skip;

maybe('MemcgV1Notifier soak (root, cgroup v1)', () => {
  let sandbox: CgroupSandbox | null = null;
  let notifier: MemcgV1Notifier | null = null;

  afterAll(async () => {
    await notifier?.stop();
    await sandbox?.cleanup();
  });

  test(`${CYCLES.toLocaleString('en-US')} arm/disarm cycles leave no descriptor behind and do not grow RSS with the cycles (root, cgroup v1)`, async () => {
    sandbox = await CgroupSandbox.create();
    sandbox.mkdir('kubepods');
    const node = sandbox.name;
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const thresholds = [
      threshold('memory.available', '100Mi'),
      threshold('memory.available', '200Mi', 60_000),
      threshold('allocatableMemory.available', '100Mi'),
      threshold('allocatableMemory.available', '200Mi', 60_000),
    ];
    const baselineFds = openFds();
    const clock = new FakeClock();
    notifier = createMemoryThresholdNotifier(notifierSettings({ mode: 'memcg-v1' }), { cgroupRoot: CGROUP_ROOT, nodeCgroup: node, podCgroupRoot: `${node}/kubepods`, procRoot: '/proc', clock, logger: silentLogger }) as MemcgV1Notifier;
    const armed = notifier;
    armed.start(() => {});
    // Each round re-arms all four thresholds at new values: four registrations made, four removed.
    const round = async (i: number): Promise<void> => {
      clock.step(10_001);
      armed.updateThresholds(summaryOf(4096n * MI + BigInt((i % 64) + 1) * 4096n), thresholds);
      await armed.settled();
    };
    const rounds = CYCLES / thresholds.length;
    const warmupRounds = 50;
    for (let i = 0; i < warmupRounds; i++) await round(i);
    gc();
    const fdsArmed = openFds();
    const rssBeforeBytes = process.memoryUsage().rss;
    const startedMs = performance.now();
    const half = warmupRounds + rounds / 2;
    for (let i = warmupRounds; i < half; i++) await round(i);
    gc();
    const rssHalfBytes = process.memoryUsage().rss;
    for (let i = half; i < warmupRounds + rounds; i++) await round(i);
    const elapsedMs = performance.now() - startedMs;
    gc();
    const rssAfterBytes = process.memoryUsage().rss;
    const rssGrowthBytes = rssAfterBytes - rssBeforeBytes;
    // A leak grows with the cycles: the second half's growth. The first half's also holds the
    // allocator's and the JIT's one-time growth, which varies with the machine's load.
    const secondHalfGrowthBytes = rssAfterBytes - rssHalfBytes;
    const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);
    console.log(`${rounds * thresholds.length} arm/disarm cycles in ${(elapsedMs / 1000).toFixed(1)} s; RSS growth ${mib(rssGrowthBytes)} MiB (${mib(rssHalfBytes - rssBeforeBytes)} in the first half, ${mib(secondHalfGrowthBytes)} in the second)`);

    expect(armed.armedThresholds()).toHaveLength(4);
    // the epoll set, its wake-up eventfd and the four threshold eventfds, no more
    expect(fdsArmed).toBe(baselineFds + 6);
    expect(openFds()).toBe(fdsArmed);
    // 5,000 cycles leaking even 1 KiB each would grow it by 5 MiB.
    expect(secondHalfGrowthBytes).toBeLessThan(5 * 2 ** 20);
    expect(rssGrowthBytes).toBeLessThan(32 * 2 ** 20);
    await armed.stop();
    expect(openFds()).toBe(baselineFds);
  }, 900_000);
});
