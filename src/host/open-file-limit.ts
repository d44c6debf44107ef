// The process's own limit on open descriptors (RLIMIT_NOFILE's soft value), from
// /proc/self/limits. Node.js raises the soft limit to the hard one when it starts, so this is what
// the agent may hold; a container runtime sets it (containerd: 1048576, or a soft 1024 where the
// runtime leaves it low), so it is read, never assumed.

import { readFileSync } from 'node:fs';

const OWN_LIMITS_FILE = '/proc/self/limits';

/** The soft "Max open files" of a /proc/<pid>/limits text; Infinity for unlimited; undefined when absent or malformed. */
export function parseOpenFileLimit(limitsText: string): number | undefined {
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(limitsText);
  if (match === null) return undefined;
  if (match[1] === 'unlimited') return Number.POSITIVE_INFINITY;
  const limit = Number(match[1]);
  return Number.isSafeInteger(limit) ? limit : undefined;
}

/** This process's open-file limit; undefined when it cannot be read. */
export function ownOpenFileLimit(limitsFile = OWN_LIMITS_FILE): number | undefined {
  try {
    return parseOpenFileLimit(readFileSync(limitsFile, 'utf8'));
  } catch {
    return undefined;
  }
}
