// Hugepage-aware memory.available (the kubelet's HugepageAwareEviction, summary provider
// `adjustForHugePages`): the kernel's pools read from sysfs files, the subtraction and its clamp,
// the Node's capacity preferred over the host's with a reported difference, and the cgroup
// observer's node memory (full pass and notification shortcut) with the gate on and off, while
// the `pods` container (allocatableMemory.available) is left alone, as in the kubelet.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeHostFs } from '../../../src/host/host-fs.js';
import { hugepageResourceName, readHugepageCapacity } from '../../../src/host/hugepages.js';
import { createCgroupObserver } from '../../../src/observe/cgroup-observer.js';
import { adjustForHugePages, chooseHugepageCapacity, nodeHugepageCapacityBytes } from '../../../src/observe/hugepage-adjustment.js';
import { hugepageLines } from '../../../src/cli/explain-hugepages.js';
import { parseQuantity, quantityValue } from '../../../src/api/quantity.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { fixturesDir, podA, podB, podC } from '../../fixtures/cgroup-tree-pods.js';
import { observeSettings } from '../../fixtures/settings.js';

const Mi = 1024n ** 2n;
const Gi = 1024n ** 3n;
const MEM_TOTAL_BYTES = 8048576 * 1024;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-hugepages-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A sysfs hugepages directory with these pools: page size in kB to nr_hugepages text. */
function pools(entries: Record<string, string>): string {
  const root = join(dir, 'hugepages');
  mkdirSync(root, { recursive: true });
  for (const [kb, count] of Object.entries(entries)) {
    mkdirSync(join(root, `hugepages-${kb}kB`));
    writeFileSync(join(root, `hugepages-${kb}kB`, 'nr_hugepages'), count);
  }
  return root;
}

describe('the kernel pools', () => {
  test('every page size, reserved pages times size, named as the Node names them', () => {
    const read = readHugepageCapacity(nodeHostFs, pools({ '2048': '512\n', '1048576': '2\n' }));
    expect(read).toEqual({
      ok: true,
      value: {
        pools: [
          { resourceName: 'hugepages-2Mi', pageSizeBytes: 2n * Mi, pages: 512n, bytes: 1n * Gi },
          { resourceName: 'hugepages-1Gi', pageSizeBytes: Gi, pages: 2n, bytes: 2n * Gi },
        ],
        totalBytes: 3n * Gi,
      },
    });
  });

  test.each([
    ['no hugetlb support (no directory): no pools', null, { ok: true, value: { pools: [], totalBytes: 0n } }],
    ['pools of zero pages', { '2048': '0\n' }, { ok: true, value: { pools: [{ resourceName: 'hugepages-2Mi', pageSizeBytes: 2n * Mi, pages: 0n, bytes: 0n }], totalBytes: 0n } }],
  ] as const)('%s', (_name, entries, expected) => {
    expect(readHugepageCapacity(nodeHostFs, entries === null ? join(dir, 'absent') : pools(entries))).toEqual(expected);
  });

  test('a count that is not a number fails the read, so nothing is under-subtracted', () => {
    const read = readHugepageCapacity(nodeHostFs, pools({ '2048': 'lots\n' }));
    expect(read.ok).toBe(false);
    if (!read.ok) expect(read.reason).toMatch(/nr_hugepages is not a page count: "lots\\n"/);
  });

  test.each([
    [2n * Mi, 'hugepages-2Mi'],
    [Gi, 'hugepages-1Gi'],
    [64n * 1024n, 'hugepages-64Ki'],
    [16n * Gi, 'hugepages-16Gi'],
  ])('page size %s bytes is %s', (bytes, name) => {
    expect(hugepageResourceName(bytes)).toBe(name);
  });
});

describe('adjustForHugePages', () => {
  test.each([
    { name: 'subtracted', available: 4 * 2 ** 30, hugepages: Gi, expected: 3 * 2 ** 30 },
    { name: 'available equal to the hugepages: 0', available: 2 ** 30, hugepages: Gi, expected: 0 },
    { name: 'available below the hugepages: clamped at 0', available: 2 ** 29, hugepages: Gi, expected: 0 },
    { name: 'no hugepages: unchanged', available: 2 ** 30, hugepages: 0n, expected: 2 ** 30 },
  ])('$name', ({ available, hugepages, expected }) => {
    const memory = { time: 't', availableBytes: available, workingSetBytes: 100, usageBytes: 200 };
    expect(adjustForHugePages(memory, hugepages)).toEqual({ ...memory, availableBytes: expected });
  });

  test('memory without availableBytes is left as it is', () => {
    expect(adjustForHugePages({ workingSetBytes: 1 }, Gi)).toEqual({ workingSetBytes: 1 });
  });
});

describe('which capacity is subtracted', () => {
  const host = { pools: [{ resourceName: 'hugepages-2Mi', pageSizeBytes: 2n * Mi, pages: 512n, bytes: Gi }], totalBytes: Gi };
  test("the Node's, as the kubelet's, when known and equal", () => {
    expect(chooseHugepageCapacity(host, Gi)).toEqual({ capacityBytes: Gi, source: 'node' });
  });
  test("the Node's, with the difference reported, when the pools changed since the kubelet read them", () => {
    const chosen = chooseHugepageCapacity(host, 2n * Gi);
    expect(chosen).toMatchObject({ capacityBytes: 2n * Gi, source: 'node' });
    expect(chosen.mismatch).toBe(`hugepages: the Node's capacity says ${2n * Gi} bytes, the host's pools hold ${Gi} (hugepages-2Mi=512 pages); memory.available subtracts the Node's, as the kubelet does, until the kubelet updates it`);
  });
  test("the host's without a Node", () => {
    expect(chooseHugepageCapacity(host, undefined)).toEqual({ capacityBytes: Gi, source: 'host' });
    expect(chooseHugepageCapacity(undefined, undefined)).toEqual({ capacityBytes: 0n, source: 'host' });
  });
  test("the Node's capacity sums every hugepages- entry, as IsHugePageResourceName matches them", () => {
    const parse = (raw: string): bigint => quantityValue(parseQuantity(raw));
    expect(nodeHugepageCapacityBytes({ cpu: '4', memory: '8Gi', 'hugepages-2Mi': '1Gi', 'hugepages-1Gi': '2Gi' }, parse)).toBe(3n * Gi);
    expect(nodeHugepageCapacityBytes({ memory: '8Gi' }, parse)).toBe(0n);
    expect(nodeHugepageCapacityBytes(undefined, parse)).toBeUndefined();
  });
});

describe('the cgroup observer (cgroup v1 fixture)', () => {
  // The fixture node: working set 2e9 against MemTotal; kubepods limit 7e9, working set 1.5e9.
  function observerWith(gate: boolean | undefined, hugepagesDir: string, nodeCapacityBytes?: bigint) {
    return createCgroupObserver(observeSettings({ hostRoot: `${fixturesDir}cgroup-v1/cgroupfs` }), {
      clock: new FakeClock(Date.UTC(2026, 0, 1, 12)),
      logger: new RecordingLogger(),
      processCountIntervalMs: 10_000,
      hugepagesDir,
      ...(gate === undefined ? {} : { hugepageAwareEviction: gate }),
      ...(nodeCapacityBytes === undefined ? {} : { nodeHugepageCapacityBytes: () => nodeCapacityBytes }),
    });
  }

  test.each([
    { name: 'gate on by default: node available less the 1Gi of pools', gate: undefined, subtracted: 2 ** 30 },
    { name: 'gate off: not subtracted', gate: false, subtracted: 0 },
  ])('$name; allocatable untouched', async ({ gate, subtracted }) => {
    const observer = observerWith(gate, pools({ '2048': '512\n' }));
    const observation = await observer.observe([podA, podB, podC]);
    expect(observation.summary.node.memory?.availableBytes).toBe(MEM_TOTAL_BYTES - 2e9 - subtracted);
    expect(observation.summary.node.systemContainers?.[0]?.memory?.availableBytes).toBe(7e9 - 1.5e9);
    expect(observation.hugepages).toMatchObject({ gateEnabled: gate ?? true, capacityBytes: Gi, capacitySource: 'host', subtractedBytes: BigInt(subtracted), unadjustedAvailableBytes: BigInt(MEM_TOTAL_BYTES - 2e9) });
    // The notification's shortcut reads the same signal as the full pass.
    expect(observer.memory?.nodeMemory().node.memory?.availableBytes).toBe(MEM_TOTAL_BYTES - 2e9 - subtracted);
    observer.close();
  });

  test("the Node's capacity is what is subtracted; a host that differs is reported", async () => {
    const observer = observerWith(true, pools({ '2048': '512\n' }), 2n * Gi);
    const observation = await observer.observe([podA]);
    expect(observation.summary.node.memory?.availableBytes).toBe(MEM_TOTAL_BYTES - 2e9 - 2 * 2 ** 30);
    expect(observation.problems.join('\n')).toMatch(/the Node's capacity says 2147483648 bytes, the host's pools hold 1073741824/);
    observer.close();
  });

  test('unreadable pools are reported and nothing is subtracted without a Node', async () => {
    const observer = observerWith(true, pools({ '2048': 'x\n' }));
    const observation = await observer.observe([podA]);
    expect(observation.summary.node.memory?.availableBytes).toBe(MEM_TOTAL_BYTES - 2e9);
    expect(observation.problems.join('\n')).toMatch(/hugepages not read: .*nr_hugepages is not a page count/);
    observer.close();
  });
});

describe("explain's lines", () => {
  const host = { pools: [{ resourceName: 'hugepages-2Mi', pageSizeBytes: 2n * Mi, pages: 512n, bytes: Gi }], totalBytes: Gi };
  test('the subtraction, with its figures', () => {
    const lines = hugepageLines({ gateEnabled: true, subtractedBytes: Gi, capacityBytes: Gi, capacitySource: 'node', host, nodeCapacityBytes: Gi, unadjustedAvailableBytes: 3n * Gi }, 'cgroupfs');
    expect(lines).toEqual([
      'Hugepages: host pools hugepages-2Mi 512 pages (1Gi); Node capacity 1Gi; HugepageAwareEviction on',
      "  memory.available = 3Gi (capacity - working set) - 1Gi (the Node's hugepages) = 2Gi",
    ]);
  });
  test('clamped at 0', () => {
    expect(hugepageLines({ gateEnabled: true, subtractedBytes: 512n * Mi, capacityBytes: Gi, capacitySource: 'host', host, unadjustedAvailableBytes: 512n * Mi }, 'cgroupfs')[1]).toBe(
      "  memory.available = 512Mi (capacity - working set) - 1Gi (the host's hugepages) = 0, clamped at 0",
    );
  });
  test('the gate off: what it would be', () => {
    expect(hugepageLines({ gateEnabled: false, subtractedBytes: 0n, capacityBytes: Gi, capacitySource: 'host', host, unadjustedAvailableBytes: 3n * Gi }, 'cgroupfs')[1]).toBe('  memory.available 3Gi: hugepages not subtracted (the gate is off; with it on, 2Gi)');
  });
  test("the kubelet's summary: never subtracted again", () => {
    expect(hugepageLines(undefined, 'kubelet')).toEqual(["Hugepages: memory.available as the kubelet's summary reports it (the kubelet's own HugepageAwareEviction applied; not subtracted again)"]);
  });
});
