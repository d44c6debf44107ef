// The filesystem layout guessed from a Summary alone, for the kubelet-summary source, which sees
// no devices. Two filesystem stats taken from one device report the same capacity and inode
// count, and nearly the same available bytes (they are read moments apart); different devices
// almost never agree on all three. So a stat "differs" when capacity or inodes differ, or available
// bytes differ by more than 1% of capacity. Two equal-sized, equally-full disks would be taken for
// one, which only costs the imagefs-specific ranking; the cgroup observer compares real devices.

import type { FsStats } from '../api/summary.js';

/** Available bytes two reads of one filesystem may differ by, as a fraction of capacity. */
export const SAME_FS_AVAILABLE_TOLERANCE_RATIO = 0.01;

export function fsStatsDiffer(a: FsStats, b: FsStats): boolean {
  if (a.capacityBytes !== b.capacityBytes || a.inodes !== b.inodes) return true;
  if (a.availableBytes === undefined || b.availableBytes === undefined || a.capacityBytes === undefined) return false;
  return Math.abs(a.availableBytes - b.availableBytes) > a.capacityBytes * SAME_FS_AVAILABLE_TOLERANCE_RATIO;
}

/**
 * `dedicatedImageFs`: the image filesystem differs from nodefs. `splitContainerFs`: the container
 * filesystem differs from the image filesystem (only meaningful with a dedicated image filesystem,
 * the one combination the kubelet acts on).
 */
export function filesystemLayoutFromSummary(node: { fs?: FsStats; runtime?: { imageFs?: FsStats; containerFs?: FsStats } }): {
  dedicatedImageFs: boolean;
  splitContainerFs: boolean;
} {
  const imageFs = node.runtime?.imageFs;
  const containerFs = node.runtime?.containerFs;
  const dedicatedImageFs = node.fs !== undefined && imageFs !== undefined && fsStatsDiffer(node.fs, imageFs);
  const splitContainerFs = dedicatedImageFs && imageFs !== undefined && containerFs !== undefined && fsStatsDiffer(imageFs, containerFs);
  return { dedicatedImageFs, splitContainerFs };
}
