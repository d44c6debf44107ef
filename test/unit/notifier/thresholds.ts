// Threshold and summary builders shared by the notifier tests.

import { parseQuantity } from '../../../src/api/quantity.js';
import type { Signal } from '../../../src/api/signals.js';
import type { Summary } from '../../../src/api/summary.js';
import { percentageRatio, type Threshold } from '../../../src/api/threshold.js';

/** A threshold from its config spelling: `100Mi` or `10%`; a grace period makes it soft. */
export function threshold(signal: Signal, value: string, gracePeriodMs = 0): Threshold {
  return {
    signal,
    value: value.endsWith('%') ? { kind: 'percentage', ratio: percentageRatio(Number(value.slice(0, -1))) } : { kind: 'quantity', quantity: parseQuantity(value) },
    gracePeriodMs,
    minReclaim: null,
  };
}

export interface MemoryFigures {
  availableBytes?: number;
  usageBytes?: number;
  workingSetBytes?: number;
}

/** A summary with node memory and, when given, the `pods` system container's memory. */
export function summary(node: MemoryFigures | null, pods: MemoryFigures | null = null): Summary {
  return {
    node: {
      ...(node === null ? {} : { memory: node }),
      ...(pods === null ? {} : { systemContainers: [{ name: 'pods', memory: pods }] }),
    },
  };
}

/**
 * A node observation for which a `1Gi` threshold arms exactly `memcgThresholdBytes`: no inactive
 * page cache, capacity = memcgThresholdBytes + 1Gi.
 */
export function summaryArming(memcgThresholdBytes: bigint, pods: bigint | null = null): Summary {
  const oneGi = 1n << 30n;
  const figures = (bytes: bigint): MemoryFigures => ({ availableBytes: Number(bytes + oneGi), usageBytes: 0, workingSetBytes: 0 });
  return summary(figures(memcgThresholdBytes), pods === null ? null : figures(pods));
}
