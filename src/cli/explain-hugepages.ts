// `explain`'s account of hugepages in the node's memory.available: what the kubelet's
// HugepageAwareEviction formula subtracted (or would, with the gate off), from which capacity
// (the Node's or the host's pools), and the figures before and after.

import type { HugepageAdjustment } from '../api/hugepages.js';
import { formatQuantity, quantityFromInteger } from '../api/quantity.js';

const bytes = (value: bigint): string => formatQuantity(quantityFromInteger(value, 'BinarySI'));

/** The section's lines; for the kubelet's summary, which applies its own gate, one line saying so. */
export function hugepageLines(hugepages: HugepageAdjustment | undefined, source: 'cgroupfs' | 'kubelet'): string[] {
  if (source === 'kubelet') return ["Hugepages: memory.available as the kubelet's summary reports it (the kubelet's own HugepageAwareEviction applied; not subtracted again)"];
  if (hugepages === undefined) return [];
  const pools = hugepages.host === undefined ? 'unreadable' : hugepages.host.pools.length === 0 ? 'none' : hugepages.host.pools.map((p) => `${p.resourceName} ${p.pages} pages (${bytes(p.bytes)})`).join(', ');
  const node = hugepages.nodeCapacityBytes === undefined ? 'unknown' : bytes(hugepages.nodeCapacityBytes);
  const lines = [`Hugepages: host pools ${pools}; Node capacity ${node}; HugepageAwareEviction ${hugepages.gateEnabled ? 'on' : 'off'}`];
  const before = hugepages.unadjustedAvailableBytes;
  if (before === undefined) return lines;
  if (!hugepages.gateEnabled) {
    lines.push(`  memory.available ${bytes(before)}: hugepages not subtracted (the gate is off; with it on, ${bytes(before > hugepages.capacityBytes ? before - hugepages.capacityBytes : 0n)})`);
  } else if (hugepages.capacityBytes === 0n) {
    lines.push(`  memory.available ${bytes(before)}: no hugepages to subtract`);
  } else {
    const clamped = hugepages.subtractedBytes < hugepages.capacityBytes ? ', clamped at 0' : '';
    lines.push(`  memory.available = ${bytes(before)} (capacity - working set) - ${bytes(hugepages.capacityBytes)} (${hugepages.capacitySource === 'node' ? "the Node's" : "the host's"} hugepages) = ${bytes(before - hugepages.subtractedBytes)}${clamped}`);
  }
  return lines;
}
