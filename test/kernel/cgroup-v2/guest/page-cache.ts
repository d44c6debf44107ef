// Page cache a cgroup can call its own. The guest's files come from the host over 9p with the
// guest's page cache in front (cache=loose), and a page is charged to the cgroup that first reads
// it; the kernel's own module tree is on every host that can boot the guest and nothing else in
// the guest reads it, so reading part of it fills a cgroup with file pages: `inactive_file` right
// after one read, reclaimable, and read in again when read again under a limit smaller than the set.
// A page read a second time (by anyone) becomes active, so each user gets its own part of the tree.

import { execFileSync } from 'node:child_process';
import { MiB } from './kernel-numbers.js';

const release = (): string => execFileSync('uname', ['-r'], { encoding: 'utf8' }).trim();

/** Module directories of 30 to 40 MiB each, for {@link pageCacheCommand}; one per user. */
const PAGE_CACHE_PARTS = ['kernel/sound', 'kernel/fs', 'kernel/drivers/gpu'] as const;
export type PageCachePart = 0 | 1 | 2;

/** What {@link pageCacheCommand} leaves in the cache at least. */
export const PAGE_CACHE_MIN_BYTES = 16 * MiB;

/** A command that reads one part of the module tree into the page cache, says `ready`, and idles. */
export function pageCacheCommand(part: PageCachePart): string[] {
  return ['/bin/sh', '-c', `find /lib/modules/${release()}/${PAGE_CACHE_PARTS[part]} -type f -exec cat {} + >/dev/null && echo ready && exec sleep 1000000`];
}

/** A command that says `ready`, then reads a part of the module tree (some 30 MiB) again and again. */
export function pageCacheChurnCommand(): string[] {
  return ['/bin/sh', '-c', `echo ready; while :; do find /lib/modules/${release()}/kernel/sound -type f -exec cat {} + >/dev/null; done`];
}
