// Local termination on the real kernel (root, cgroup v1), with real processes in a sandbox cgroup:
// whatever UID the API server sends, nothing outside the pod is signalled (traversal, absolute
// paths, empty, very long, unicode, slashes); the pod's containers end and its sandbox (pause)
// process lives; a container restarted in the pod is ended too; a PID freed by a pod process and
// reused by a process outside the pod, between any two steps, is never hit; and the observer gives
// a crafted UID no stats (it would otherwise rank first with the whole parent's memory).

import { type ChildProcess } from 'node:child_process';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { createPodTerminator } from '../../src/act/pod-terminator.js';
import { nodeHostFs } from '../../src/host/host-fs.js';
import { createCgroupObserver } from '../../src/observe/cgroup-observer.js';
import { createLibcProcessHandles } from '../../native/libc-process-handles.js';
import type { ProcessHandles } from '../../native/process-handles.js';
import { observeSettings } from '../fixtures/settings.js';
import { CgroupSandbox, cgroupV1Unavailable, type SandboxProcess } from '../helpers/cgroup-sandbox.js';
import { FaultyHostFs } from '../fakes/faulty-host-fs.js';
import {
  containerIdOf,
  hostileUids,
  NODE_CGROUP_IN_SANDBOX,
  pidChoiceUnavailable,
  scenePod,
  startBystanders,
  startScenePod,
  startWithPid,
  waitPidFreedSync,
} from '../helpers/terminator-scene.js';
import { processAlive as alive, waitFor } from './cgroup-v2/guest/kernel-numbers.js';

const unavailable = cgroupV1Unavailable();
let sandbox: CgroupSandbox | undefined;
beforeAll(async () => {
  if (unavailable === null) sandbox = await CgroupSandbox.create();
});
afterAll(async () => {
  await sandbox?.cleanup();
});

const settings = observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', procRoot: '/proc', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' });

function theSandbox(): CgroupSandbox {
  if (sandbox === undefined) throw new Error('no sandbox');
  return sandbox;
}

function terminator(options: { processes?: ProcessHandles; hostFs?: FaultyHostFs } = {}) {
  return createPodTerminator(settings, { nodeCgroup: `${theSandbox().name}/${NODE_CGROUP_IN_SANDBOX}`, clock: systemClock, logger: silentLogger, ...options });
}

function expectAlive(processes: readonly SandboxProcess[]): void {
  expect(processes.filter((p) => !alive(p.pid)).map((p) => p.cgroup)).toEqual([]);
}

const skip = (): boolean => {
  if (unavailable === null) return false;
  console.log(`skipped: ${unavailable}`);
  return true;
};

describe('local termination on cgroup v1 (root, real kernel)', () => {
  test('whatever UID the API server sends, nothing outside the pod is signalled, and the observer gives it no stats', async () => {
    if (skip()) return;
    const s = theSandbox();
    const target = await startScenePod(s, 'target', { app: 'c' });
    const outside = await startBystanders(s);
    const everyone = [target.pause, ...Object.values(target.containers), ...outside];
    const term = terminator();
    const crafted = hostileUids(target.uid, s.path);
    for (const { label, uid } of crafted) {
      const pod: Pod = { ...target.pod, metadata: { ...target.pod.metadata, uid } };
      const result = await term.terminate(pod, 0);
      expect([label, result.signalled]).toEqual([label, 0]);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    expectAlive(everyone);
    expect(alive(process.pid)).toBe(true);

    const observer = createCgroupObserver(settings, { clock: systemClock, logger: silentLogger, processCountIntervalMs: 0, nodeCgroup: `${s.name}/${NODE_CGROUP_IN_SANDBOX}` });
    try {
      const pods = crafted.map(({ uid }, i) => ({ ...target.pod, metadata: { ...target.pod.metadata, name: `crafted-${i}`, uid } }));
      const { summary, problems } = await observer.observe([...pods, target.pod]);
      // Only the real pod has stats; every crafted one is refused with a reason.
      expect((summary.pods ?? []).map((p) => p.podRef.uid)).toEqual([target.uid]);
      for (const i of crafted.keys()) expect([i, problems.some((p) => p.startsWith(`pod "termination/crafted-${i}" `) && p.includes('refused'))]).toEqual([i, true]);
    } finally {
      observer.close();
    }
  });

  test("grace 0 ends the pod's containers at once and spares its sandbox; a container restarted in the pod is ended within the sweep interval", async () => {
    if (skip()) return;
    const s = theSandbox();
    const target = await startScenePod(s, 'target', { app: 'd', worker: 'e' });
    const outside = await startBystanders(s);
    const term = terminator();
    const { signalled } = await term.terminate(target.pod, 0);
    expect(signalled).toBe(2);
    await waitFor('the containers to exit', () => Object.values(target.containers).every((p) => !alive(p.pid)), 5000);
    expect(alive(target.pause.pid)).toBe(true);
    expectAlive(outside);

    // The kubelet restarts a container: a new cgroup, named by an ID the (stale) status does not list.
    const restarted = await s.startIdle(target.container(containerIdOf('f')));
    await waitFor('the restarted container to be ended', () => !alive(restarted.pid), 5000);
    expect(alive(target.pause.pid)).toBe(true);
    expectAlive(outside);
    term.release?.(target.uid);
  });

  test("a pod object naming another pod's UID, with container IDs not in that pod, signals nothing", async () => {
    if (skip()) return;
    const s = theSandbox();
    const victim = await startScenePod(s, 'victim', { app: '1', sidecar: '2' });
    const liar = scenePod('liar', victim.uid, { app: containerIdOf('9') });
    const { signalled } = await terminator().terminate(liar, 0);
    expect(signalled).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expectAlive([victim.pause, ...Object.values(victim.containers)]);
  });

  // A pod process whose PID is reused, at the worst moment, by a process outside the pod.
  const pidChoice = unavailable === null ? pidChoiceUnavailable() : unavailable;
  async function reuseRace(inject: (terminate: { fs: FaultyHostFs; handles: ProcessHandles }, reuse: (victimPid: number) => void, victimPid: number) => void): Promise<void> {
    const s = theSandbox();
    for (let attempt = 0; attempt < 10; attempt++) {
      const uid = `5e1f7a2b-3c4d-4e5f-8a6b-${String(900 + attempt).padStart(12, '0')}`;
      const cid = containerIdOf('a');
      // A shell that reaps its child at once: the victim's PID is free the moment it dies.
      const shell = await s.startCommand(`${NODE_CGROUP_IN_SANDBOX}/kubepods/burstable/pod${uid}/${cid}`, ['/bin/sh', '-c', 'sleep 1000 & echo "victim $!"; echo ready; wait']);
      const victimPid = Number(/victim (\d+)/.exec(shell.output())?.[1]);
      let outsider: ChildProcess | null = null;
      let missed = false;
      const reuse = (pid: number): void => {
        process.kill(pid, 'SIGKILL');
        waitPidFreedSync(pid);
        outsider = startWithPid(pid);
        missed = outsider === null;
      };
      const fs = new FaultyHostFs(nodeHostFs);
      const handles = createLibcProcessHandles();
      inject({ fs, handles }, reuse, victimPid);
      try {
        await terminator({ hostFs: fs, processes: handles }).terminate(scenePod('racer', uid, { app: cid }), 0);
        if (missed) continue;
        const reused = outsider as ChildProcess | null;
        if (reused === null) throw new Error('the race was not injected');
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(alive(reused.pid as number)).toBe(true);
        return;
      } finally {
        (outsider as ChildProcess | null)?.kill('SIGKILL');
      }
    }
    throw new Error('another process took the freed PID ten times in a row');
  }

  test('a PID reused outside the pod between reading cgroup.procs and pinning it is never signalled (root, pid choice)', async () => {
    if (skip()) return;
    if (pidChoice !== null) return void console.log(`skipped: ${pidChoice}`);
    await reuseRace(({ fs }, reuse, victimPid) => {
      let done = false;
      const real = fs.readSmallFile.bind(fs);
      fs.readSmallFile = (path: string): string => {
        const text = real(path);
        if (!done && path.endsWith('/cgroup.procs') && text.split('\n').includes(String(victimPid))) {
          done = true;
          reuse(victimPid);
        }
        return text;
      };
    });
  });

  test('a PID reused outside the pod between proving it a member and signalling it is never signalled: the pidfd names the dead process (root, pid choice)', async () => {
    if (skip()) return;
    if (pidChoice !== null) return void console.log(`skipped: ${pidChoice}`);
    await reuseRace(({ handles }, reuse, victimPid) => {
      const opened = new Map<number, number>();
      const realOpen = handles.open.bind(handles);
      const realSignal = handles.signal.bind(handles);
      handles.open = (pid) => {
        const fd = realOpen(pid);
        if (fd !== null) opened.set(fd, pid);
        return fd;
      };
      handles.signal = (fd, signal) => {
        if (opened.get(fd) === victimPid) reuse(victimPid);
        return realSignal(fd, signal);
      };
    });
  });
});
