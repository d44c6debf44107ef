// One size field of a process's /proc/<pid>/status (`VmRSS:   76123 kB`), for the parts that
// sample a process's memory.

/** The field's value in bytes; 0 when the line is missing (a kernel thread, or an exited process). */
export function statusFieldBytes(statusText: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(statusText)?.[1] ?? 0) * 1024;
}
