// GNU du as an independent oracle for the disk-usage walk: `du -s -B1 -x` sums allocated blocks
// and `du -s --inodes -x` counts entries, both counting hard links once and staying on one
// device, which is what the kubelet's DiskUsage does.

import { execFileSync } from 'node:child_process';

export function duBytes(path: string): bigint {
  return BigInt(execFileSync('du', ['-s', '-B1', '-x', path], { encoding: 'utf8' }).split(/\s+/)[0] as string);
}

export function duInodes(path: string): bigint {
  return BigInt(execFileSync('du', ['-s', '--inodes', '-x', path], { encoding: 'utf8' }).split(/\s+/)[0] as string);
}
