// Kernel OOM kills on the real kernel's cgroup v1 memory hierarchy: a real process grows until the
// OOM killer kills it, in a container cgroup at its own limit and in a container of a node whose
// cgroup is at its limit, and the watcher reports each kill once, within milliseconds, with the
// victim's PID, process name and both cgroups from the kernel log (and, with the kernel log off,
// from the oom_control eventfd and the cgroups' counters alone). Needs root and a cgroup v1 memory
// hierarchy (and, for the kernel log, a readable /dev/kmsg: CAP_SYSLOG where kernel.dmesg_restrict
// is 1); skipped with the reason printed otherwise. Where /dev/kmsg is unreadable (the DaemonSet's
// capabilities, as CI runs these tests under capsh) the agent's degraded path is what is measured.
// Cgroups come from the shared sandbox (kea-test-<pid>-<tag>-<n>, removed even when a test fails).

import { readFileSync } from 'node:fs';
import type { KernelOomKill } from '../../src/daemon/ports.js';
import { CgroupSandbox, cgroupV1Unavailable, type SandboxProcess } from '../helpers/cgroup-sandbox.js';
import { openFds } from '../helpers/open-fds.js';
import { KERNEL_LOG, kernelLogUnreadable, watchOomKills, type OomKillWatching } from '../helpers/oom-kill-watching.js';
import { awaitOomReportWindow } from '../helpers/oom-report-window.js';

const MI = 1n << 20n;
const POD_UID = '5f0c8a2e-4a61-4c1e-9d55-3f2b8e6b7c10';
const CONTAINER_ID = 'a'.repeat(64);
// Idles until SIGUSR2, then grows 8 MiB every 5 ms, touching every page, until the kernel kills it.
const GROWER = [
  process.execPath,
  '-e',
  "process.on('SIGUSR2',()=>{const k=[];setInterval(()=>{const b=Buffer.allocUnsafe(8<<20);b.fill(1);k.push(b)},5)});console.log('ready');setInterval(()=>{},1<<30)",
];

const reason = cgroupV1Unavailable();
const kernelLogReason = kernelLogUnreadable();
let sandbox: CgroupSandbox | undefined;
beforeAll(async () => {
  if (reason === null) sandbox = await CgroupSandbox.create();
  // The kernel-log tests read the kill's summary line, which the kernel rate-limits.
  if (reason === null && kernelLogReason === null) await awaitOomReportWindow();
});
afterAll(async () => sandbox?.cleanup());

async function killedByTheKernel(box: CgroupSandbox, w: OomKillWatching, grower: SandboxProcess): Promise<{ kill: KernelOomKill; exitedAfterMs: number }> {
  const reported = w.next();
  const startedMs = Date.now();
  process.kill(grower.pid, 'SIGUSR2');
  await grower.exited;
  const exitedAfterMs = Date.now() - startedMs;
  const kill = await reported;
  expect(grower.exitSignal()).toBe('SIGKILL');
  // Once, not again from the counters or the rescans.
  await new Promise((resolve) => setTimeout(resolve, 700));
  expect(w.kills).toHaveLength(1);
  return { kill, exitedAfterMs };
}

// The process name the kernel log gives is the victim's comm, which Node.js sets differently by
// release ("node" on 20, "MainThread" on 24): read it from the process itself.
const commOf = (pid: number): string => readFileSync(`/proc/${pid}/comm`, 'utf8').trim();

// The test pod's container cgroup, made with its memory limit; its path relative to the sandbox.
const CONTAINER = `kubepods/burstable/pod${POD_UID}/${CONTAINER_ID}`;
function containerWithLimit(box: CgroupSandbox, limitBytes: bigint): string {
  box.mkdir(CONTAINER);
  box.setLimit(CONTAINER, limitBytes);
  return CONTAINER;
}

const containerPath = (box: CgroupSandbox): string => `/${box.name}/${CONTAINER}`;

describe('kernel OOM kills on cgroup v1 (root)', () => {
  test('a container at its own limit: reported once from the kernel log, with the PID, the process and both cgroups', async () => {
    if (sandbox === undefined || kernelLogReason !== null) return void console.log(`skipped: ${reason ?? kernelLogReason}`);
    const box = sandbox;
    const grower = await box.startCommand(containerWithLimit(box, 160n * MI), GROWER);
    const comm = commOf(grower.pid);
    const fdsBefore = openFds();
    const w = watchOomKills(box, { kernelLog: true, nextTimeoutMs: 10_000 });
    try {
      expect(w.watcher.sources()).toEqual(['kernel-log', 'oom-control', 'counter-scan']);
      const { kill, exitedAfterMs } = await killedByTheKernel(box, w, grower);
      // Told first by the eventfd (the counter read at once), or, on a loaded machine, by the log.
      expect(['oom-control', 'kernel-log']).toContain(kill.source);
      expect(kill).toMatchObject({
        constraint: 'CONSTRAINT_MEMCG',
        scope: 'memcg',
        pid: grower.pid,
        process: comm,
        oomCgroupInferred: false,
        victim: { path: containerPath(box), level: 'container', podUid: POD_UID, containerIds: [CONTAINER_ID] },
        oomCgroup: { path: containerPath(box), level: 'container' },
      });
      expect(kill.victim?.memory?.limitBytes).toBe(160n * MI);
      expect(kill.rssBytes).toBeGreaterThan(64n * MI);
      // The oom_control eventfd fires before the kernel picks the victim; the log line follows.
      expect(kill.oomSignalledAtMs).not.toBeNull();
      const detectionMs = kill.detectedAtMs - kill.atMs;
      expect(detectionMs).toBeGreaterThanOrEqual(0);
      expect(detectionMs).toBeLessThan(5000);
      console.log(`container-limit kill: reported ${detectionMs} ms after the kernel's timestamp; the process was reaped ${exitedAfterMs} ms after it started growing`);
    } finally {
      await w.watcher.stop();
    }
    // Every descriptor the watcher opened (eventfds, /dev/kmsg, the epoll set) is closed again.
    expect(openFds()).toEqual(fdsBefore);
  });

  test('a node at its limit: the victim in a container without a limit, the OOM at the node cgroup', async () => {
    if (sandbox === undefined || kernelLogReason !== null) return void console.log(`skipped: ${reason ?? kernelLogReason}`);
    const box = sandbox;
    const container = containerWithLimit(box, 1n << 40n);
    box.setLimit('', 200n * MI);
    const grower = await box.startCommand(container, GROWER);
    const comm = commOf(grower.pid);
    const w = watchOomKills(box, { kernelLog: true, nextTimeoutMs: 10_000 });
    try {
      const { kill } = await killedByTheKernel(box, w, grower);
      expect(kill).toMatchObject({
        constraint: 'CONSTRAINT_MEMCG',
        pid: grower.pid,
        process: comm,
        victim: { path: containerPath(box), level: 'container', podUid: POD_UID },
        oomCgroup: { path: `/${box.name}`, level: 'node' },
      });
      expect(kill.oomCgroup?.memory?.limitBytes).toBe(200n * MI);
    } finally {
      await w.watcher.stop();
      box.setLimit('', 1n << 40n);
    }
  });

  test('without the kernel log: the counters find the kill, and the cgroup at its limit is inferred from its peak', async () => {
    if (sandbox === undefined) return void console.log(`skipped: ${reason}`);
    const box = sandbox;
    const grower = await box.startCommand(containerWithLimit(box, 160n * MI), GROWER);
    const w = watchOomKills(box, { kernelLog: false, nextTimeoutMs: 10_000 });
    try {
      expect(w.watcher.sources()).toEqual(['oom-control', 'counter-scan']);
      const { kill } = await killedByTheKernel(box, w, grower);
      expect(kill).toMatchObject({
        source: 'oom-control',
        constraint: null,
        pid: null,
        process: null,
        oomCgroupInferred: true,
        victim: { path: containerPath(box), level: 'container', podUid: POD_UID },
        oomCgroup: { path: containerPath(box), level: 'container' },
      });
      expect(kill.detectedAtMs - (kill.oomSignalledAtMs ?? 0)).toBeLessThan(1000);
      console.log(`counter kill: found ${kill.detectedAtMs - (kill.oomSignalledAtMs ?? 0)} ms after the oom_control eventfd`);
    } finally {
      await w.watcher.stop();
    }
  });

  test('the kernel log asked for but unreadable (the default DaemonSet: no CAP_SYSLOG, no /dev/kmsg): one warning, the counters find the kill', async () => {
    if (sandbox === undefined) return void console.log(`skipped: ${reason}`);
    const box = sandbox;
    const grower = await box.startCommand(containerWithLimit(box, 160n * MI), GROWER);
    // Under the DaemonSet's capabilities the real device refuses; with CAP_SYSLOG, a container without the device is simulated.
    const w = watchOomKills(box, { kernelLog: true, kernelLogPath: kernelLogReason !== null ? KERNEL_LOG : `/dev/kea-test-${process.pid}-no-kmsg`, nextTimeoutMs: 10_000 });
    try {
      expect(w.watcher.sources()).toEqual(['oom-control', 'counter-scan']);
      const warnings = w.logger.at('warn').map((l) => l.msg);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('cannot read the kernel log');
      const { kill } = await killedByTheKernel(box, w, grower);
      expect(kill).toMatchObject({ source: 'oom-control', pid: null, oomCgroupInferred: true, victim: { path: containerPath(box), podUid: POD_UID } });
      expect(w.logger.at('warn')).toHaveLength(1);
    } finally {
      await w.watcher.stop();
    }
  });
});
