// Measures one memory sync of the cgroup observer (observe()) on nodes of 10, 110 and 1,000 pods:
// real pod cgroups in a cgroup v1 sandbox when running as root on a v1 host (each pod a pod cgroup
// with an app and a pause container cgroup, a tiny idle process in one pod of ten), otherwise the
// same tree as plain files. Prints median and p99 over the measured runs. The disk-usage walk is
// not part of a sync and is left out (its interval is set beyond the run). CPU time is reported
// beside wall time, since on a shared machine wall time includes waiting for a core.
//
// Run: npx tsc -p tsconfig.json --outDir /tmp/kea-bench && node /tmp/kea-bench/bench/observe-bench.js [runs]

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { ObserveSettings } from '../src/api/agent-settings.js';
import { systemClock } from '../src/api/clock.js';
import { silentLogger } from '../src/api/logger.js';
import type { Pod } from '../src/api/pod.js';
import { DEFAULT_HOUSEKEEPING_INTERVAL_MS } from '../src/config/defaults.js';
import { createCgroupObserver } from '../src/observe/cgroup-observer.js';
import { observeSettings } from '../test/fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable } from '../test/helpers/cgroup-sandbox.js';

const POD_COUNTS = [10, 110, 1000];
const WARMUP_RUNS = 5;
const MEASURED_RUNS = Number(process.argv[2] ?? 50);

function uidOf(i: number): string {
  return `00000000-0000-4000-8000-${i.toString().padStart(12, '0')}`;
}

function containerIdOf(i: number, which: 'app' | 'pause'): string {
  return `${which === 'app' ? 'a' : 'b'}${i.toString(16).padStart(63, '0')}`;
}

function podsFor(count: number): Pod[] {
  return Array.from({ length: count }, (_, i) => ({
    metadata: { name: `pod-${i}`, namespace: 'bench', uid: uidOf(i) },
    spec: { containers: [{ name: 'app' }] },
    status: { phase: 'Running', qosClass: 'Burstable', containerStatuses: [{ name: 'app', containerID: `containerd://${containerIdOf(i, 'app')}` }] },
  }));
}

function podCgroups(i: number): string[] {
  const pod = `kubepods/burstable/pod${uidOf(i)}`;
  return [pod, `${pod}/${containerIdOf(i, 'app')}`, `${pod}/${containerIdOf(i, 'pause')}`];
}

interface Host {
  readonly description: string;
  readonly settings: Partial<ObserveSettings>;
  /** The sandbox cgroup standing in for the node, on real cgroups. */
  readonly nodeCgroup?: string;
  cleanup(): Promise<void>;
}

// Real cgroups: the sandbox stands in for the node, pods under its kubepods.
async function realHost(count: number): Promise<Host> {
  const sandbox = await CgroupSandbox.create();
  try {
    for (let i = 0; i < count; i++) for (const dir of podCgroups(i)) sandbox.mkdir(dir);
    const idle = [];
    for (let i = 0; i < count; i += 10) idle.push(sandbox.startIdle(podCgroups(i)[2] as string));
    await Promise.all(idle);
  } catch (error) {
    await sandbox.cleanup();
    throw error;
  }
  return {
    description: 'cgroup v1 (kernel)',
    settings: { cgroupDriver: 'cgroupfs' },
    nodeCgroup: sandbox.name,
    cleanup: () => sandbox.cleanup(),
  };
}

// The same tree as plain files on disk (page-cached), for machines without cgroup v1.
async function fileHost(count: number): Promise<Host> {
  const root = mkdtempSync(join(tmpdir(), 'kea-bench-'));
  const memory = join(root, 'sys/fs/cgroup/memory');
  const cgroup = (dir: string, procs: string): void => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'memory.usage_in_bytes'), '104857600\n');
    writeFileSync(join(dir, 'memory.limit_in_bytes'), '9223372036854771712\n');
    writeFileSync(join(dir, 'memory.stat'), 'cache 0\nrss 0\ntotal_cache 0\ntotal_rss 0\ntotal_inactive_file 1048576\ntotal_active_file 0\n'.repeat(3));
    writeFileSync(join(dir, 'cgroup.procs'), procs);
  };
  cgroup(memory, '1\n');
  cgroup(join(memory, 'kubepods'), '');
  cgroup(join(memory, 'kubepods/burstable'), '');
  for (let i = 0; i < count; i++) for (const dir of podCgroups(i)) cgroup(join(memory, dir), dir.endsWith(containerIdOf(i, 'pause')) ? '1\n' : '');
  mkdirSync(join(root, 'proc/sys/kernel'), { recursive: true });
  writeFileSync(join(root, 'proc/meminfo'), 'MemTotal: 16384000 kB\n');
  writeFileSync(join(root, 'proc/loadavg'), '0.1 0.1 0.1 1/500 1\n');
  writeFileSync(join(root, 'proc/sys/kernel/pid_max'), '4194304\n');
  writeFileSync(join(root, 'proc/sys/kernel/threads-max'), '100000\n');
  return {
    description: 'cgroup v1 (files)',
    settings: { hostRoot: root, cgroupDriver: 'cgroupfs' },
    cleanup: async () => rmSync(root, { recursive: true, force: true }),
  };
}

function percentile(sortedMs: readonly number[], fraction: number): number {
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil(fraction * sortedMs.length) - 1)] as number;
}

async function measure(count: number, useKernel: boolean): Promise<string> {
  const host = useKernel ? await realHost(count) : await fileHost(count);
  try {
    const pods = podsFor(count);
    const observer = createCgroupObserver(observeSettings({ diskUsageIntervalMs: 24 * 3600_000, ...host.settings }), {
      clock: systemClock,
      logger: silentLogger,
      processCountIntervalMs: DEFAULT_HOUSEKEEPING_INTERVAL_MS,
      ...(host.nodeCgroup === undefined ? {} : { nodeCgroup: host.nodeCgroup }),
    });
    const samplesMs: number[] = [];
    const cpuSamplesMs: number[] = [];
    let podsSeen = 0;
    for (let run = 0; run < WARMUP_RUNS + MEASURED_RUNS; run++) {
      const startMs = performance.now();
      const startCpu = process.cpuUsage();
      const { summary } = await observer.observe(pods);
      const cpu = process.cpuUsage(startCpu);
      const elapsedMs = performance.now() - startMs;
      if (run >= WARMUP_RUNS) {
        samplesMs.push(elapsedMs);
        cpuSamplesMs.push((cpu.user + cpu.system) / 1000);
      }
      podsSeen = summary.pods?.filter((p) => p.memory !== undefined).length ?? 0;
    }
    if (podsSeen !== count) throw new Error(`observed ${podsSeen} of ${count} pods`);
    samplesMs.sort((a, b) => a - b);
    cpuSamplesMs.sort((a, b) => a - b);
    const cells = [percentile(samplesMs, 0.5), percentile(samplesMs, 0.99), percentile(cpuSamplesMs, 0.5), percentile(cpuSamplesMs, 0.99)];
    return `| ${host.description} | ${count} | ${cells.map((ms) => ms.toFixed(2)).join(' | ')} |`;
  } finally {
    await host.cleanup();
  }
}

async function main(): Promise<void> {
  const unavailable = cgroupV1Unavailable();
  if (unavailable !== null) console.log(`kernel cgroups not used: ${unavailable}`);
  console.log(`observe() per memory sync, ${MEASURED_RUNS} runs after ${WARMUP_RUNS} warm-up runs (ms); load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
  console.log('| source | pods | wall median | wall p99 | CPU median | CPU p99 |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const useKernel of unavailable === null ? [true, false] : [false]) {
    for (const count of POD_COUNTS) console.log(await measure(count, useKernel));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
