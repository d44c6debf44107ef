// The containment check every path the agent builds from an outside value goes through before it is
// read from or acted on (a pod UID spliced into `kubepods/<qos>/pod<uid>`, a configured cgroup root,
// a directory name read from the kernel): lexically, each segment is a plain name (never empty,
// `.`, `..`, nor holding a `/` or a NUL); on the host, its real path (every symlink and `..`
// resolved by the kernel) lies strictly inside the real path of the parent it was built under.

import type { HostFs } from './host-fs.js';
import { describeError, isNotFound, readFailed, readOk, type ReadResult } from './read-result.js';

// NAME_MAX on every Linux filesystem.
const MAX_NAME_BYTES = 255;

/** Whether `segment` is one plain path component: not empty, `.` or `..`, no `/` or NUL, at most 255 bytes. */
export function isPlainName(segment: string): boolean {
  return segment !== '' && segment !== '.' && segment !== '..' && !segment.includes('/') && !segment.includes('\0') && Buffer.byteLength(segment) <= MAX_NAME_BYTES;
}

/** Whether a relative path is made of plain names only (`kubepods/burstable`; '' is the parent itself). */
export function isPlainRelativePath(relative: string): boolean {
  if (relative === '') return true;
  return relative.split('/').every(isPlainName);
}

/** `parent/child` for a plain child name, or null when `child` is not one. */
export function childPath(parent: string, child: string): string | null {
  return isPlainName(child) ? `${parent}/${child}` : null;
}

/**
 * The real path of `path` when it lies strictly inside `parent` (both resolved by the kernel), else
 * why not. Not-found is reported as such (the cgroup may simply not exist yet, or any more).
 */
export function resolveInside(fs: HostFs, parent: string, path: string): ReadResult<string> {
  let realParent: string;
  let realPath: string;
  try {
    realParent = fs.realPath(parent);
    realPath = fs.realPath(path);
  } catch (error) {
    return readFailed(`cannot resolve ${path}: ${describeError(error)}`, isNotFound(error));
  }
  const prefix = realParent.endsWith('/') ? realParent : `${realParent}/`;
  if (!realPath.startsWith(prefix) || realPath.length === prefix.length) return readFailed(`${path} resolves to ${realPath}, outside ${realParent}`);
  return readOk(realPath);
}
