// The kernel's hugepage pools (`/sys/kernel/mm/hugepages/hugepages-<size>kB/nr_hugepages`), read as
// cAdvisor reads them for the kubelet's machine info: one pool per page size, its pages reserved
// whether used or not. The Node's `status.capacity` `hugepages-<size>` entries come from these
// same files (the global pools: the per-NUMA-node pools under /sys/devices/system/node add up to
// them), so the sum here is what the kubelet subtracts from `memory.available`.

import type { HugepageCapacity, HugepagePool } from '../api/hugepages.js';
import { describeError, isNotFound, readFailed, readOk, type ReadResult } from './read-result.js';
import type { HostFs } from './host-fs.js';

/** The machine's hugepages directory, as the kernel publishes it (sysfs is not namespaced for it). */
export const HUGEPAGES_DIR = '/sys/kernel/mm/hugepages';

const POOL_NAME = /^hugepages-([1-9][0-9]{0,9})kB$/;
const COUNT = /^([0-9]{1,19})\n?$/;
const UNITS: readonly [string, bigint][] = [
  ['Ei', 1n << 60n],
  ['Pi', 1n << 50n],
  ['Ti', 1n << 40n],
  ['Gi', 1n << 30n],
  ['Mi', 1n << 20n],
  ['Ki', 1n << 10n],
];

/** `v1helper.HugePageResourceName`: the page size as a BinarySI quantity (2048 kB is `hugepages-2Mi`). */
export function hugepageResourceName(pageSizeBytes: bigint): string {
  for (const [suffix, unit] of UNITS) {
    if (pageSizeBytes % unit === 0n) return `hugepages-${pageSizeBytes / unit}${suffix}`;
  }
  return `hugepages-${pageSizeBytes}`;
}

/**
 * The pool directories under `dir` (`hugepages-2048kB`, ...): fixed by the kernel at boot (one per
 * supported page size), so a caller lists them once. None when the kernel has no hugetlb support
 * (no such directory), as cAdvisor then reports none.
 */
export function listHugepagePools(fs: HostFs, dir: string = HUGEPAGES_DIR): ReadResult<readonly string[]> {
  try {
    return readOk(fs.subdirectories(dir).filter((name) => POOL_NAME.test(name)));
  } catch (error) {
    if (isNotFound(error)) return readOk([]);
    return readFailed(`cannot list ${dir}: ${describeError(error)}`);
  }
}

/**
 * The pools named `names` under `dir`, in page-size order, each count read now. A pool whose count
 * cannot be read or parsed fails the whole read: a partial sum would under-subtract.
 */
export function readHugepagePools(fs: HostFs, dir: string, names: readonly string[]): ReadResult<HugepageCapacity> {
  const pools: HugepagePool[] = [];
  for (const name of names) {
    const match = POOL_NAME.exec(name);
    if (match === null) continue;
    const path = `${dir}/${name}/nr_hugepages`;
    let text: string;
    try {
      text = fs.readSingleRecordFile(path);
    } catch (error) {
      return readFailed(`cannot read ${path}: ${describeError(error)}`, isNotFound(error));
    }
    const count = COUNT.exec(text);
    if (count === null) return readFailed(`${path} is not a page count: ${JSON.stringify(text.slice(0, 40))}`);
    const pageSizeBytes = BigInt(match[1] as string) * 1024n;
    const pages = BigInt(count[1] as string);
    pools.push({ resourceName: hugepageResourceName(pageSizeBytes), pageSizeBytes, pages, bytes: pages * pageSizeBytes });
  }
  pools.sort((a, b) => (a.pageSizeBytes < b.pageSizeBytes ? -1 : a.pageSizeBytes > b.pageSizeBytes ? 1 : 0));
  return readOk({ pools, totalBytes: pools.reduce((sum, pool) => sum + pool.bytes, 0n) });
}

/** Every hugepage pool under `dir`: {@link listHugepagePools} then {@link readHugepagePools}. */
export function readHugepageCapacity(fs: HostFs, dir: string = HUGEPAGES_DIR): ReadResult<HugepageCapacity> {
  const names = listHugepagePools(fs, dir);
  return names.ok ? readHugepagePools(fs, dir, names.value) : names;
}
