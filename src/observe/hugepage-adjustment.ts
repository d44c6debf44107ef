// The kubelet's hugepage-aware `memory.available` (summary provider `adjustForHugePages`, feature
// gate HugepageAwareEviction): the root cgroup's capacity is MemTotal, which counts the RAM the
// kernel keeps in hugepage pools, but the memory controller does not charge hugetlb pages to the
// working set, so `capacity - workingSet` overstates the regular memory left by the whole pool.
// The kubelet subtracts the Node's total hugepage capacity from the node's availableBytes, clamped
// at zero, and leaves the `pods` system container (allocatableMemory.available) as it is: its limit
// is node allocatable, set without the hugepage pools. Applied by the cgroupfs observer only: the
// kubelet's own /stats/summary already carries the adjustment (or not, by the kubelet's gate).

import type { MemoryStats } from '../api/summary.js';
import type { HugepageCapacity } from '../api/hugepages.js';

/**
 * `adjustForHugePages`: availableBytes less `hugepageBytes`, and 0 when it is not larger (the
 * regular memory is then exhausted). Memory without availableBytes, or no hugepages, is returned as it is.
 */
export function adjustForHugePages(memory: MemoryStats, hugepageBytes: bigint): MemoryStats {
  if (memory.availableBytes === undefined || hugepageBytes <= 0n) return memory;
  const availableBytes = BigInt(Math.trunc(memory.availableBytes));
  return { ...memory, availableBytes: Number(availableBytes > hugepageBytes ? availableBytes - hugepageBytes : 0n) };
}

/**
 * Chooses the capacity to subtract and says where it differs: the kubelet subtracts its Node's
 * `status.capacity` (filled from the same kernel pools at its start), so the Node's figure is used
 * when known; a host figure that differs means the pools changed since the kubelet read them
 * (or the Node is stale), and the agent then follows the kubelet while saying so.
 */
export function chooseHugepageCapacity(
  host: HugepageCapacity | undefined,
  nodeCapacityBytes: bigint | undefined,
): { capacityBytes: bigint; source: 'node' | 'host'; mismatch?: string } {
  if (nodeCapacityBytes !== undefined) {
    if (host !== undefined && host.totalBytes !== nodeCapacityBytes) {
      return {
        capacityBytes: nodeCapacityBytes,
        source: 'node',
        mismatch: `hugepages: the Node's capacity says ${nodeCapacityBytes} bytes, the host's pools hold ${host.totalBytes} (${describePools(host)}); memory.available subtracts the Node's, as the kubelet does, until the kubelet updates it`,
      };
    }
    return { capacityBytes: nodeCapacityBytes, source: 'node' };
  }
  return { capacityBytes: host?.totalBytes ?? 0n, source: 'host' };
}

/** `hugepages-2Mi=512 pages, hugepages-1Gi=2 pages`, or `none`. */
export function describePools(capacity: HugepageCapacity): string {
  if (capacity.pools.length === 0) return 'none';
  return capacity.pools.map((pool) => `${pool.resourceName}=${pool.pages} pages`).join(', ');
}

/** The Node's total hugepage capacity: the sum of its `status.capacity` `hugepages-<size>` entries, in bytes. */
export function nodeHugepageCapacityBytes(capacity: Readonly<Record<string, string>> | undefined, parseBytes: (raw: string) => bigint): bigint | undefined {
  if (capacity === undefined) return undefined;
  let total = 0n;
  for (const [name, raw] of Object.entries(capacity)) {
    if (name.startsWith('hugepages-')) total += parseBytes(raw);
  }
  return total;
}
