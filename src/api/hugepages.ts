// Hugepages as the node's memory signal sees them: the kernel's pools, and what an observation
// subtracted from `memory.available` for them (the kubelet's HugepageAwareEviction), so `explain`,
// logs and eviction messages can show the subtraction.

export interface HugepagePool {
  /** The Node's resource name for it: `hugepages-2Mi`, `hugepages-1Gi`. */
  readonly resourceName: string;
  readonly pageSizeBytes: bigint;
  readonly pages: bigint;
  /** pages × page size. */
  readonly bytes: bigint;
}

export interface HugepageCapacity {
  /** In page-size order. */
  readonly pools: readonly HugepagePool[];
  readonly totalBytes: bigint;
}

/** What the observer did about hugepages in one observation. */
export interface HugepageAdjustment {
  /** HugepageAwareEviction as in force. */
  readonly gateEnabled: boolean;
  /** Subtracted from node.memory.availableBytes (0 with the gate off or no hugepages; less when clamped at 0). */
  readonly subtractedBytes: bigint;
  /** The capacity the kubelet's formula subtracts: the Node's when known, as the kubelet's, else the host's. */
  readonly capacityBytes: bigint;
  readonly capacitySource: 'node' | 'host';
  /** The host's pools, when they could be read. */
  readonly host?: HugepageCapacity;
  /** The Node's `status.capacity` hugepages total, when known. */
  readonly nodeCapacityBytes?: bigint;
  /** node.memory.availableBytes before the subtraction. */
  readonly unadjustedAvailableBytes?: bigint;
}
