// Filesystem stats for nodefs, imagefs and containerfs from statfs(2), computed as cAdvisor does:
// capacity = f_blocks * block size, available = f_bavail * block size (what an unprivileged writer
// can still use), used = (f_blocks - f_bfree) * block size, inodes = f_files, inodesFree = f_ffree.
//
// Node's statfs reports f_bsize and not f_frsize. Linux counts blocks in f_frsize units, which is
// equal to f_bsize on the local filesystems a kubelet root or a runtime root live on (ext4, xfs,
// btrfs, overlay, tmpfs); a filesystem where they differ would be reported scaled.

import type { FsStats } from '../api/summary.js';
import type { HostStatfs } from '../host/host-fs.js';

export function statfsToFsStats(s: HostStatfs, time: string): FsStats {
  return {
    time,
    availableBytes: Number(s.blocksAvailable * s.blockSizeBytes),
    capacityBytes: Number(s.blocks * s.blockSizeBytes),
    usedBytes: Number((s.blocks - s.blocksFree) * s.blockSizeBytes),
    inodesFree: Number(s.filesFree),
    inodes: Number(s.files),
    inodesUsed: Number(s.files - s.filesFree),
  };
}
