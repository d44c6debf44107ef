// What the numbers were measured on, for every figure and table: kernel, CPU model, cores,
// memory, Node version, the cgroup hierarchy, the load when the part started, and the date.

import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

export interface MachineInfo {
  readonly kernel: string;
  readonly cpuModel: string;
  readonly cores: number;
  readonly memoryBytes: number;
  readonly node: string;
  readonly cgroup: string;
  /** 1-minute load average when the part started (the machine is shared). */
  readonly loadAverage: number;
  /** ISO 8601, when the part started. */
  readonly date: string;
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1] !== undefined) return match[1].trim();
  } catch {
    // Fall through to what Node knows.
  }
  return cpus()[0]?.model ?? 'unknown CPU';
}

export function describeMachine(): MachineInfo {
  let kernel = 'unknown';
  try {
    kernel = readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    // Not Linux.
  }
  const v1 = existsSync('/sys/fs/cgroup/memory/cgroup.event_control');
  return {
    kernel,
    cpuModel: cpuModel(),
    cores: cpus().length,
    memoryBytes: totalmem(),
    node: process.version,
    cgroup: v1 ? 'cgroup v1 memory hierarchy' : 'no cgroup v1 memory hierarchy',
    loadAverage: loadavg()[0] ?? 0,
    date: new Date().toISOString(),
  };
}

/** One line: `Linux 6.1.0, AMD EPYC, 2 cores, 23.5 GiB, Node v20.20.2, cgroup v1; load 1.2; 2026-01-01 10:00 UTC`. */
export function formatMachine(m: MachineInfo): string {
  const date = `${m.date.slice(0, 10)} ${m.date.slice(11, 16)} UTC`;
  return `Linux ${m.kernel}, ${m.cpuModel}, ${m.cores} cores, ${(m.memoryBytes / 2 ** 30).toFixed(1)} GiB RAM, Node ${m.node}, ${m.cgroup}; load average ${m.loadAverage.toFixed(1)} at start; ${date}`;
}
