// process_mrelease on the real kernel (root, cgroup v1, Linux 5.15 or later): the native call's
// outcomes (a live process is refused as not dying, a killed one is released), the pod terminator
// killing and releasing a container with its sandbox left alone, and the measurement of how much sooner the
// memory is back with process_mrelease than with the kill alone, for a victim that is slow to run
// its exit (niced to 19 behind two busy processes, as on a node under pressure). The figures are
// printed, not asserted: they depend on the machine's load; what is asserted is the kernel's
// behaviour.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import { createPodTerminator } from '../../src/act/pod-terminator.js';
import { createLibcProcessHandles } from '../../native/libc-process-handles.js';
import type { ProcessHandles } from '../../native/process-handles.js';
import { observeSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable, type SandboxProcess } from '../helpers/cgroup-sandbox.js';
import { containerIdOf, NODE_CGROUP_IN_SANDBOX, startScenePod } from '../helpers/terminator-scene.js';

const MiB = 1024 * 1024;
const VICTIM_BYTES = 256 * MiB;
// Memory is "back" once the victim's cgroup charges less than this (its runtime's own pages aside).
const BACK_BELOW_BYTES = 48 * MiB;

function mreleaseUnavailable(): string | null {
  const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(readFileSync('/proc/sys/kernel/osrelease', 'utf8')) ?? []).slice(1).map(Number);
  if (major < 5 || (major === 5 && minor < 15)) return `Linux ${major}.${minor} has no process_mrelease (5.15 and later)`;
  return null;
}

const unavailable = cgroupV1Unavailable() ?? mreleaseUnavailable();
let sandbox: CgroupSandbox | undefined;
beforeAll(async () => {
  if (unavailable === null) sandbox = await CgroupSandbox.create();
});
afterAll(async () => {
  await sandbox?.cleanup();
});

function theSandbox(): CgroupSandbox {
  if (sandbox === undefined) throw new Error('no sandbox');
  return sandbox;
}

const usageBytes = (cgroup: string): number => Number(readFileSync(`${cgroup}/memory.usage_in_bytes`, 'utf8'));

// Polls the cgroup's charge until it is back below the mark; the time since `startNs`, in ms.
function msUntilBack(cgroup: string, startNs: bigint, timeoutMs = 30_000): number {
  for (;;) {
    const elapsedMs = Number(process.hrtime.bigint() - startNs) / 1e6;
    if (usageBytes(cgroup) < BACK_BELOW_BYTES) return elapsedMs;
    if (elapsedMs > timeoutMs) throw new Error(`memory of ${cgroup} not back after ${timeoutMs} ms`);
  }
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

let run = 0;
async function startVictim(niced: boolean): Promise<SandboxProcess> {
  const script = `const held=[];for(let left=${VICTIM_BYTES};left>0;left-=16<<20){const c=Buffer.allocUnsafeSlow(16<<20);c.fill(0x5a);held.push(c)}globalThis.held=held;process.stdout.write('ready\\n');setInterval(()=>{},1<<30);`;
  const victim = await theSandbox().startCommand(`victims/v${run++}`, [process.execPath, '-e', script]);
  for (const deadlineMs = Date.now() + 60_000; usageBytes(victim.cgroup) < VICTIM_BYTES; ) {
    if (Date.now() > deadlineMs) throw new Error('the victim did not allocate its memory');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Niced once its memory is allocated, so a loaded machine does not starve the allocation itself.
  if (niced) spawnSync('renice', ['-n', '19', '-p', String(victim.pid)]);
  return victim;
}

describe('process_mrelease (root, cgroup v1, Linux 5.15+)', () => {
  test('a live process is refused as not dying; a killed one has its memory released before it exits', async () => {
    if (unavailable !== null) return void console.log(`skipped: ${unavailable}`);
    const handles = createLibcProcessHandles();
    const victim = await startVictim(false);
    const handle = handles.open(victim.pid);
    if (handle === null) throw new Error('the victim is gone');
    try {
      expect(handles.release?.(handle)).toBe('not-dying');
      expect(handles.signal(handle, 'SIGKILL')).toBe(true);
      // Released; or gone, when the process already runs its exit (its memory is then being freed
      // by the exit itself, and process_mrelease has nothing left to take).
      expect(['released', 'gone']).toContain(handles.release?.(handle));
    } finally {
      handles.close(handle);
    }
    await victim.exited;
  });

  test('the pod terminator kills a container (and releases its memory) with its sandbox left alone', async () => {
    if (unavailable !== null) return void console.log(`skipped: ${unavailable}`);
    const s = theSandbox();
    const scene = await startScenePod(s, 'mrelease-pod', { app: 'a' });
    // The container's main process beside a second one holding 256 MiB.
    const allocator = await s.startAllocator(scene.container(containerIdOf('a')), 256 * MiB);
    const terminator = createPodTerminator(observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', procRoot: '/proc', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' }), {
      nodeCgroup: `${s.name}/${NODE_CGROUP_IN_SANDBOX}`,
      clock: systemClock,
      logger: silentLogger,
    });
    const outcome = await terminator.terminate(scene.pod, 0);
    expect(outcome.signalled).toBe(2);
    await allocator.exited;
    expect(usageBytes(allocator.cgroup)).toBeLessThan(BACK_BELOW_BYTES);
    expect(scene.pause.exitSignal()).toBeNull();
  });

  test('measured: memory back sooner with process_mrelease than with the kill alone, for a victim slow to exit', async () => {
    if (unavailable !== null) return void console.log(`skipped: ${unavailable}`);
    const real = createLibcProcessHandles();
    const killAlone: ProcessHandles = { open: real.open, signal: real.signal, close: real.close };
    const figures: Record<'kill alone' | 'kill + process_mrelease', number[]> = { 'kill alone': [], 'kill + process_mrelease': [] };
    let busy: ChildProcess[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        for (const [name, handles] of [['kill alone', killAlone], ['kill + process_mrelease', real]] as const) {
          const victim = await startVictim(true);
          // Two busy processes at normal priority from the kill on: the niced victim waits for a CPU to exit on.
          busy = [0, 1].map(() => spawn('/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
          await new Promise((resolve) => setTimeout(resolve, 200));
          const handle = handles.open(victim.pid);
          if (handle === null) throw new Error('the victim is gone');
          const startNs = process.hrtime.bigint();
          handles.signal(handle, 'SIGKILL');
          const outcome = handles.release?.(handle);
          if (outcome !== undefined) expect(['released', 'gone']).toContain(outcome);
          figures[name].push(msUntilBack(victim.cgroup, startNs));
          handles.close(handle);
          for (const child of busy.splice(0)) child.kill('SIGKILL');
          await victim.exited;
        }
      }
    } finally {
      for (const child of busy) child.kill('SIGKILL');
    }
    const summary = Object.entries(figures).map(([name, ms]) => `${name}: median ${median(ms).toFixed(2)} ms (${ms.map((v) => v.toFixed(2)).join(', ')})`);
    process.stdout.write(`process_mrelease, ${VICTIM_BYTES / MiB} MiB victim niced to 19 behind 2 busy processes, until its cgroup charges < ${BACK_BELOW_BYTES / MiB} MiB: ${summary.join('; ')}\n`);
    expect(figures['kill alone']).toHaveLength(3);
    expect(figures['kill + process_mrelease']).toHaveLength(3);
  }, 300_000);
});
