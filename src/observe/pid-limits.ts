// Parsing for `pid.available` (kubelet `pkg/kubelet/stats/pidlimit`): the node's task limit is the
// smaller of kernel.pid_max and kernel.threads-max (both bound the number of tasks), and the tasks
// in use are the denominator of the fourth field of /proc/loadavg (every thread on the node). The
// kubelet prefers loadavg to sysinfo(2) because sysinfo truncates the count at 65535.

/** The denominator of /proc/loadavg's fourth field (`2/3518` -> 3518); undefined when malformed. */
export function parseLoadavgTaskCount(text: string): bigint | undefined {
  const fields = text.trim().split(/\s+/);
  // The kubelet requires all five fields, not only the fourth.
  if (fields.length < 5) return undefined;
  const match = /^\d+\/(\d+)$/.exec(fields[3] as string);
  return match === null ? undefined : BigInt(match[1] as string);
}

/**
 * min(pid_max, threads-max) over the limits that could be read, as the kubelet does: one unreadable
 * file does not lose the other. Undefined when neither was readable.
 */
export function maxPid(limits: readonly (bigint | undefined)[]): bigint | undefined {
  let smallest: bigint | undefined;
  for (const limit of limits) {
    if (limit !== undefined && (smallest === undefined || limit < smallest)) smallest = limit;
  }
  return smallest;
}
