// Hugepage-aware memory.available on a real kernel (the guest's own: the host's pools are never
// touched): hugepages are reserved in the guest, and the cgroup observer's node memory.available
// is compared with the kubelet v1.37.2 formula applied to the kernel's own figures
// (summary.go adjustForHugePages over cAdvisor's root stats: MemTotal − root working set, less
// the hugepage capacity, clamped at 0), gate on and off. The subtraction must be exactly what
// /proc/meminfo says the pools hold (HugePages_Total × Hugepagesize, `Hugetlb`), and the pages a
// process takes from a pool must not appear in any cgroup's memory.current: the reason the kubelet
// subtracts them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { systemClock } from '../../../../../src/api/clock.js';
import { silentLogger } from '../../../../../src/api/logger.js';
import { createCgroupObserver, type CgroupObserver } from '../../../../../src/observe/cgroup-observer.js';
import { observeSettings } from '../../../../fixtures/settings.js';
import { CgroupSandbox } from '../../../../helpers/cgroup-sandbox.js';
import { defineSuite } from '../guest-suite.js';
import { currentBytes, memTotalBytes, MiB, rootKernelWorkingSetBytes } from '../kernel-numbers.js';

const POOL = '/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages';
const RESERVED_PAGES = 96; // 192 MiB of the guest's 2 GiB
const HUGETLBFS = '/tmp/kea-hugetlbfs';
// The whole guest moves between the observer's read and the kernel's (this process allocates).
const ROOT_TOLERANCE_BYTES = 8 * MiB;

function meminfoKb(field: string): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/meminfo', 'utf8'));
  if (match === null) throw new Error(`/proc/meminfo has no ${field}`);
  return Number(match[1]);
}

const hugetlbBytes = (): number => meminfoKb('HugePages_Total') * meminfoKb('Hugepagesize') * 1024;

const observerWith = (gate: boolean): CgroupObserver =>
  createCgroupObserver(observeSettings({ kubeletRootDir: '/tmp', imageFsPath: '/tmp', podLogsDir: '/tmp' }), { clock: systemClock, logger: silentLogger, processCountIntervalMs: 0, hugepageAwareEviction: gate });

function near(what: string, actual: number | undefined, expected: number, toleranceBytes: number): void {
  assert.ok(actual !== undefined, `${what}: not reported`);
  assert.ok(Math.abs(actual - expected) <= toleranceBytes, `${what}: ${actual} vs the kernel's ${expected} (tolerance ${toleranceBytes})`);
}

/** The kubelet's node memory.available from the kernel's figures, read now. */
function kubeletFormula(gate: boolean): number {
  const available = memTotalBytes() - rootKernelWorkingSetBytes();
  if (!gate) return available;
  const hugepages = hugetlbBytes();
  return available > hugepages ? available - hugepages : 0;
}

export const suite = defineSuite({
  name: 'hugepages',
  title: 'hugepage-aware memory.available on a real kernel: the kubelet formula over the kernel\'s own figures, gate on and off',
  async setUp() {
    writeFileSync(POOL, String(RESERVED_PAGES));
    // The kernel reserves what it can; on a 2 GiB guest that is every page asked for.
    assert.equal(Number(readFileSync(POOL, 'utf8').trim()), RESERVED_PAGES);
    assert.equal(hugetlbBytes(), RESERVED_PAGES * 2 * MiB);
  },
  async tearDown() {
    rmSync(`${HUGETLBFS}/pages`, { force: true });
    try {
      execFileSync('umount', [HUGETLBFS]);
    } catch {
      // Not mounted (the case failed before).
    }
    writeFileSync(POOL, '0');
  },
  cases: [
    {
      name: 'gate on: memory.available is MemTotal − root working set − the reserved pools, the subtraction exactly /proc/meminfo\'s Hugetlb',
      async run({ note }) {
        const observer = observerWith(true);
        try {
          const observation = await observer.observe([]);
          const expected = kubeletFormula(true);
          near('memory.available', observation.summary.node.memory?.availableBytes, expected, ROOT_TOLERANCE_BYTES);
          const hugepages = observation.hugepages;
          assert.ok(hugepages !== undefined);
          assert.equal(hugepages.subtractedBytes, BigInt(hugetlbBytes()));
          assert.equal(hugepages.host?.pools.find((p) => p.resourceName === 'hugepages-2Mi')?.pages, BigInt(RESERVED_PAGES));
          assert.equal(BigInt(observation.summary.node.memory?.availableBytes ?? 0), (hugepages.unadjustedAvailableBytes ?? 0n) - BigInt(hugetlbBytes()));
          // The notification's shortcut decides on the same figure.
          near('shortcut memory.available', observer.memory?.nodeMemory().node.memory?.availableBytes, expected, ROOT_TOLERANCE_BYTES);
          note('reservedMiB', hugetlbBytes() / MiB);
          note('availableMiB', Math.round((observation.summary.node.memory?.availableBytes ?? 0) / MiB));
          note('kubeletFormulaMiB', Math.round(expected / MiB));
        } finally {
          observer.close();
        }
      },
    },
    {
      name: 'gate off: memory.available is MemTotal − root working set, the pools counted as free',
      async run({ note }) {
        const observer = observerWith(false);
        try {
          const observation = await observer.observe([]);
          near('memory.available', observation.summary.node.memory?.availableBytes, kubeletFormula(false), ROOT_TOLERANCE_BYTES);
          assert.equal(observation.hugepages?.subtractedBytes, 0n);
          assert.equal(observation.hugepages?.capacityBytes, BigInt(hugetlbBytes()));
          note('availableMiB', Math.round((observation.summary.node.memory?.availableBytes ?? 0) / MiB));
        } finally {
          observer.close();
        }
      },
    },
    {
      name: 'pages taken from the pool by a process in a cgroup are not in its memory.current (why the kubelet subtracts the pools)',
      async run({ note }) {
        const sandbox = await CgroupSandbox.create({ version: 'v2', limitBytes: 1024n * BigInt(MiB) });
        try {
          mkdirSync(HUGETLBFS, { recursive: true });
          execFileSync('mount', ['-t', 'hugetlbfs', '-o', 'pagesize=2M', 'none', HUGETLBFS]);
          sandbox.mkdir('user');
          const before = currentBytes(`${sandbox.path}/user`);
          const freeBefore = meminfoKb('HugePages_Free');
          // A shell in the cgroup fills 64 MiB of hugetlbfs: 32 pages leave the pool's free list.
          execFileSync('sh', ['-c', `echo $$ > ${sandbox.path}/user/cgroup.procs && fallocate -l ${64 * MiB} ${HUGETLBFS}/pages && cat ${sandbox.path}/user/memory.current`]);
          const taken = freeBefore - meminfoKb('HugePages_Free');
          assert.equal(taken, 32);
          const after = currentBytes(`${sandbox.path}/user`);
          // The shell's own pages come and go; 64 MiB of hugetlb would be unmistakable.
          assert.ok(after - before < 8 * MiB, `memory.current grew by ${after - before} bytes with 64 MiB of hugepages taken`);
          note('hugepagesTaken', taken);
          note('memoryCurrentGrowthKiB', Math.round((after - before) / 1024));
        } finally {
          rmSync(`${HUGETLBFS}/pages`, { force: true });
          try {
            execFileSync('umount', [HUGETLBFS]);
          } catch {
            // Not mounted.
          }
          await sandbox.cleanup();
        }
      },
    },
  ],
});
