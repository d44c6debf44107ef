// Local termination on a real cgroup v2 kernel, judged by its outcome: after terminate(), the pod's
// container cgroups hold no process any more (the kernel's own `populated 0` in cgroup.events),
// whatever the containers ran (children and orphans, a process that ignores SIGTERM, one that keeps
// forking), while the pod's sandbox (pause) process and everything outside the pod (a sibling pod, a
// system cgroup, this process) live on, whatever UID the API server sends. For both cgroup drivers'
// names.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { systemClock } from '../../../../../src/api/clock.js';
import { silentLogger } from '../../../../../src/api/logger.js';
import type { Pod } from '../../../../../src/api/pod.js';
import { observeSettings } from '../../../../fixtures/settings.js';
import { createPodTerminator } from '../../../../../src/act/pod-terminator.js';
import { createLibcProcessHandles } from '../../../../../native/libc-process-handles.js';
import type { ProcessHandles } from '../../../../../native/process-handles.js';
import { CgroupSandbox, type SandboxProcess } from '../../../../helpers/cgroup-sandbox.js';
import { hostileUids, NODE_CGROUP_IN_SANDBOX, startBystanders, startScenePod } from '../../../../helpers/terminator-scene.js';
import { defineSuite, type GuestCase } from '../guest-suite.js';
import { cgroupPids, processAlive as alive, sleepMs, waitFor } from '../kernel-numbers.js';
import { containerId, POD_LAYOUTS, runningPod, type PodLayout } from '../pod-layouts.js';

let sandbox: CgroupSandbox | undefined;
let podCounter = 0;

const theSandbox = (): CgroupSandbox => {
  if (sandbox === undefined) throw new Error('no sandbox');
  return sandbox;
};

/** Whether the cgroup or any descendant holds a process, as the kernel says (cgroup.events). */
function populated(relative: string): boolean {
  return /^populated 1$/m.test(theSandbox().read(relative, 'cgroup.events'));
}

/** A fresh pod of the layout: its UID, cgroup path and the Pod object, with containers named by their digits. */
function newPod(layout: PodLayout, containers: Record<string, string>, qos: 'Burstable' | 'Guaranteed' = 'Burstable'): { pod: Pod; dir: string; container: (name: string) => string } {
  const uid = `44444444-5555-4666-8777-${String(++podCounter).padStart(12, '0')}`;
  const dir = qos === 'Burstable' ? layout.burstablePod(uid) : layout.guaranteedPod(uid);
  const ids = Object.fromEntries(Object.entries(containers).map(([name, digit]) => [name, containerId(digit)]));
  return { pod: runningPod(`pod-${podCounter}`, uid, qos, ids), dir, container: (name) => `${dir}/${layout.container(ids[name] as string)}` };
}

const terminator = (layout: PodLayout) => createPodTerminator(observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', cgroupDriver: layout.driver }), { nodeCgroup: theSandbox().name, clock: systemClock, logger: silentLogger });

// Processes outside every pod under test: a sibling pod's container and a system daemon's cgroup.
async function bystanders(layout: PodLayout): Promise<SandboxProcess[]> {
  const s = theSandbox();
  const sibling = newPod(layout, { web: 'b' });
  return [await s.startIdle(sibling.container('web')), await s.startIdle('system.slice/daemon')];
}

function driverCases(layout: PodLayout): GuestCase[] {
  const d = layout.driver;
  return [
    {
      name: `${d}: grace 0 ends every process of the pod's containers (children, orphans), spares its sandbox, and nothing outside it`,
      async run({ note }) {
        const s = theSandbox();
        const target = newPod(layout, { app: 'c', worker: 'd' }, 'Guaranteed');
        const outside = await bystanders(layout);
        // The sandbox (pause) starts first, in a cgroup the status does not list.
        const pause = await s.startIdle(`${target.dir}/${layout.container(containerId('e'))}`);
        await sleepMs(30);
        await s.startAllocator(target.container('app'), 8 << 20);
        // A shell with children, and an orphan whose parent already exited.
        await s.startCommand(target.container('worker'), ['/bin/sh', '-c', 'sleep 1000 & sleep 1000 & (sleep 1000 &) ; echo ready; wait']);
        const pids = [target.container('app'), target.container('worker')].flatMap((c) => cgroupPids(s.resolve(c)));
        note('containerProcesses', pids.length);
        assert.ok(pids.length >= 5, `the containers run ${pids.length} processes`);
        const { signalled } = await terminator(layout).terminate(target.pod, 0);
        assert.equal(signalled, pids.length);
        await waitFor('the container cgroups to be empty', () => !populated(target.container('app')) && !populated(target.container('worker')), 5000);
        assert.ok(pids.every((pid) => !alive(pid)), 'every process of the containers is gone');
        assert.ok(alive(pause.pid), 'the sandbox (pause) process lives');
        assert.ok(outside.every((p) => alive(p.pid)) && alive(process.pid), 'the processes outside the pod live on');
      },
    },
    {
      name: `${d}: a grace period sends SIGTERM first and SIGKILL to what ignores it once it is over`,
      async run({ note }) {
        const s = theSandbox();
        const target = newPod(layout, { polite: '1', stubborn: '2' });
        const outside = await bystanders(layout);
        const polite = await s.startIdle(target.container('polite'));
        const stubborn = await s.startCommand(target.container('stubborn'), [process.execPath, '-e', "process.on('SIGTERM', () => {}); process.stdout.write('ready\\n'); setInterval(() => {}, 1000);"]);
        const startedMs = performance.now();
        const { signalled } = await terminator(layout).terminate(target.pod, 1500);
        assert.equal(signalled, 2);
        await waitFor('the polite process to exit on SIGTERM', () => !alive(polite.pid), 2000);
        assert.ok(alive(stubborn.pid) && performance.now() - startedMs < 1500, 'the one ignoring SIGTERM lives until the grace period is over');
        await waitFor('the pod cgroup to be empty after the grace period', () => !populated(target.dir), 6000);
        note('stubbornEndedAfterMs', Math.round(performance.now() - startedMs));
        assert.ok(performance.now() - startedMs >= 1500);
        assert.ok(outside.every((p) => alive(p.pid)));
      },
    },
    {
      name: `${d}: a pod that keeps forking ends entirely`,
      async run({ note }) {
        const s = theSandbox();
        const target = newPod(layout, { forker: '3' });
        const outside = await bystanders(layout);
        s.mkdir(target.container('forker'));
        // Bounded, so a failure cannot exhaust the guest: forks fail at the limit, the loop goes on.
        s.write(target.dir, 'pids.max', '300\n');
        await s.startCommand(target.container('forker'), ['/bin/sh', '-c', 'echo ready; while :; do sleep 1000 & done 2>/dev/null']);
        await waitFor('the forker to have children', () => cgroupPids(s.resolve(target.container('forker'))).length > 20, 10_000);
        const { signalled } = await terminator(layout).terminate(target.pod, 0);
        note('signalled', signalled);
        await waitFor('the pod cgroup to be empty', () => !populated(target.dir), 5000).catch((error: unknown) => {
          throw new Error(`${(error as Error).message}: ${cgroupPids(s.resolve(target.container('forker'))).length} processes left`);
        });
        assert.ok(outside.every((p) => alive(p.pid)));
      },
    },
  ];
}

export const suite = defineSuite({
  name: 'termination',
  title: 'local termination ends exactly the pod\'s processes',
  async setUp() {
    sandbox = await CgroupSandbox.create({ version: 'v2' });
  },
  async tearDown() {
    await sandbox?.cleanup();
  },
  cases: [
    ...POD_LAYOUTS.flatMap(driverCases),
    {
      name: 'cgroup.kill then process_mrelease: the killed container\'s memory is back, timed against cgroup.kill alone, for a victim niced behind two busy processes',
      timeoutMs: 240_000,
      async run({ note }) {
        const s = theSandbox();
        const layout = POD_LAYOUTS[0];
        if (layout === undefined) throw new Error('no pod layout');
        const real = createLibcProcessHandles();
        // The same terminator, with handles that cannot release: the kill alone.
        const killAlone: ProcessHandles = { open: real.open, signal: real.signal, close: real.close };
        const terminatorWith = (processes: ProcessHandles) =>
          createPodTerminator(observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', cgroupDriver: layout.driver }), { nodeCgroup: s.name, clock: systemClock, logger: silentLogger, processes });
        const figures: Record<string, number[]> = { killAlone: [], killAndRelease: [] };
        for (let i = 0; i < 3; i++) {
          for (const [name, processes] of [['killAlone', killAlone], ['killAndRelease', real]] as const) {
            const target = newPod(layout, { app: 'f' });
            const container = target.container('app');
            await s.startAllocator(container, 128 << 20);
            // The victim niced to 19 behind two busy processes from the kill on: it waits for a CPU to exit on.
            for (const pid of cgroupPids(s.resolve(container))) spawnSync('renice', ['-n', '19', '-p', String(pid)]);
            const busy = [0, 1].map(() => spawn('/bin/sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' }));
            try {
              const startedMs = performance.now();
              await terminatorWith(processes).terminate(target.pod, 0);
              await waitFor('the container memory to be back', () => Number(s.read(container, 'memory.current')) < 24 << 20, 60_000);
              figures[name]?.push(performance.now() - startedMs);
            } finally {
              for (const child of busy) child.kill('SIGKILL');
            }
            await waitFor('the container cgroup to be empty', () => !populated(container), 30_000);
          }
        }
        const median = (values: readonly number[]): number => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)] ?? NaN;
        note('killAloneMedianMs', Math.round(median(figures.killAlone ?? [])));
        note('killAndReleaseMedianMs', Math.round(median(figures.killAndRelease ?? [])));
        note('runsMs', JSON.stringify(Object.fromEntries(Object.entries(figures).map(([k, v]) => [k, v.map(Math.round)]))));
      },
    },
    {
      name: 'whatever UID the API server sends (traversal, absolute paths, empty, very long, unicode, slashes), nothing outside the pod is signalled',
      async run({ note }) {
        const s = theSandbox();
        const target = await startScenePod(s, 'target', { app: 'c' });
        const outside = await startBystanders(s);
        const everyone = [target.pause, ...Object.values(target.containers), ...outside];
        const term = createPodTerminator(observeSettings({ hostRoot: '/', cgroupRoot: '/sys/fs/cgroup', cgroupDriver: 'cgroupfs' }), {
          nodeCgroup: `${s.name}/${NODE_CGROUP_IN_SANDBOX}`,
          clock: systemClock,
          logger: silentLogger,
        });
        const crafted = hostileUids(target.uid, s.path);
        note('craftedUids', crafted.length);
        for (const { label, uid } of crafted) {
          const result = await term.terminate({ ...target.pod, metadata: { ...target.pod.metadata, uid } }, 0);
          assert.equal(result.signalled, 0, `${label}: ${result.signalled} signalled`);
          assert.ok(result.refused !== undefined, `${label}: refused visibly`);
        }
        await sleepMs(200);
        assert.deepEqual(everyone.filter((p) => !alive(p.pid)).map((p) => p.cgroup), []);
        // The real UID ends the pod's container, and only it.
        assert.equal((await term.terminate(target.pod, 0)).signalled, 1);
        await waitFor('the container to exit', () => !alive((target.containers.app as SandboxProcess).pid), 5000);
        assert.ok(alive(target.pause.pid) && outside.every((p) => alive(p.pid)));
        term.release?.(target.uid);
      },
    },
    {
      name: 'a pod without a cgroup here is not terminated, and nothing is signalled',
      async run() {
        const layout = POD_LAYOUTS[0] as PodLayout;
        const outside = await bystanders(layout);
        const ghost = newPod(layout, { app: '9' });
        const { signalled } = await terminator(layout).terminate(ghost.pod, 0);
        assert.equal(signalled, 0);
        await sleepMs(200);
        assert.ok(outside.every((p) => alive(p.pid)));
      },
    },
  ],
});
