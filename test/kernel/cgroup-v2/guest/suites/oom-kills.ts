// Kernel OOM kills on a real cgroup v2 kernel: a real process grows until the OOM killer kills it,
// in a container cgroup at its own memory.max and in a container of a node whose cgroup is at its
// memory.max, and the agent's watcher reports each kill once: told by the pods' memory.events
// (`oom_kill`, notified through the shared epoll set), attributed to the pod and container from
// the victim's cgroup, with the cgroup at its limit from the kernel log or, without it, inferred
// from the peaks.

import assert from 'node:assert/strict';
import type { KernelOomKill } from '../../../../../src/daemon/ports.js';
import { CgroupSandbox, type SandboxProcess } from '../../../../helpers/cgroup-sandbox.js';
import { kernelLogUnreadable, watchOomKills, type OomKillWatching } from '../../../../helpers/oom-kill-watching.js';
import { defineSuite } from '../guest-suite.js';
import { sleepMs } from '../kernel-numbers.js';

const MI = 1n << 20n;
const POD_UID = '6a1d9b3f-5b72-4d2f-8e66-4a3c9f7c8d21';
const CONTAINER_ID = 'b'.repeat(64);
const CONTAINER = `kubepods/burstable/pod${POD_UID}/${CONTAINER_ID}`;
// Idles until SIGUSR2, then grows 8 MiB every 5 ms, touching every page, until the kernel kills it.
const GROWER = [
  process.execPath,
  '-e',
  "process.on('SIGUSR2',()=>{const k=[];setInterval(()=>{const b=Buffer.allocUnsafe(8<<20);b.fill(1);k.push(b)},5)});console.log('ready');setInterval(()=>{},1<<30)",
];

let sandbox: CgroupSandbox | undefined;
const theSandbox = (): CgroupSandbox => {
  if (sandbox === undefined) throw new Error('no sandbox');
  return sandbox;
};

// Starts the grower, lets it meet the limit, and returns the one kill reported (checked to stay one).
async function killedByTheKernel(w: OomKillWatching, grower: SandboxProcess): Promise<KernelOomKill> {
  const reported = w.next();
  process.kill(grower.pid, 'SIGUSR2');
  await grower.exited;
  const kill = await reported;
  assert.equal(grower.exitSignal(), 'SIGKILL');
  // Once, not again from the counters or the rescans (the last rescan is 2 s after the signal).
  await sleepMs(2500);
  assert.equal(w.kills.length, 1, `one kill reported, not ${w.kills.length}`);
  return kill;
}

const containerPath = (): string => `/${theSandbox().name}/${CONTAINER}`;

export const suite = defineSuite({
  name: 'oom-kills',
  title: 'kernel OOM kills found through memory.events and attributed to their pod',
  async setUp() {
    sandbox = await CgroupSandbox.create({ version: 'v2' });
    sandbox.mkdir(CONTAINER);
  },
  async tearDown() {
    await sandbox?.cleanup();
  },
  cases: [
    {
      name: 'a container at its own memory.max, without the kernel log: memory.events tells, the pod and container from the victim\'s cgroup, the limit inferred from the peak',
      async run({ note }) {
        const box = theSandbox();
        box.setLimit(CONTAINER, 96n * MI);
        const grower = await box.startCommand(CONTAINER, GROWER);
        const w = watchOomKills(box, { kernelLog: false, nextTimeoutMs: 30_000 });
        try {
          assert.deepEqual(w.watcher.sources(), ['memory-events', 'counter-scan']);
          const kill = await killedByTheKernel(w, grower);
          note('source', kill.source);
          note('detectionMs', kill.detectedAtMs - kill.atMs);
          assert.equal(kill.source, 'memory-events');
          assert.ok(kill.oomSignalledAtMs !== null, 'memory.events signalled the OOM');
          assert.equal(kill.constraint, null);
          assert.equal(kill.pid, null);
          assert.equal(kill.oomCgroupInferred, true);
          assert.equal(kill.victim?.path, containerPath());
          assert.equal(kill.victim?.level, 'container');
          assert.equal(kill.victim?.podUid, POD_UID);
          assert.deepEqual(kill.victim?.containerIds, [CONTAINER_ID]);
          assert.equal(kill.oomCgroup?.path, containerPath());
          assert.equal(kill.oomCgroup?.level, 'container');
          assert.equal(kill.oomCgroup?.memory?.limitBytes, 96n * MI);
        } finally {
          await w.watcher.stop();
          box.setLimit(CONTAINER, 1n << 40n);
        }
      },
    },
    {
      name: 'a node at its memory.max, the victim in a container without a limit: the OOM at the node cgroup, with the kernel log\'s victim where it is readable',
      async run({ note }) {
        const box = theSandbox();
        box.setLimit('', 192n * MI);
        const grower = await box.startCommand(CONTAINER, GROWER);
        const withLog = kernelLogUnreadable() === null;
        note('kernelLog', withLog ? 'read' : 'unreadable');
        const w = watchOomKills(box, { kernelLog: withLog, nextTimeoutMs: 30_000 });
        try {
          assert.deepEqual(w.watcher.sources(), withLog ? ['kernel-log', 'memory-events', 'counter-scan'] : ['memory-events', 'counter-scan']);
          const kill = await killedByTheKernel(w, grower);
          note('source', kill.source);
          note('detectionMs', kill.detectedAtMs - kill.atMs);
          assert.ok(['memory-events', 'kernel-log'].includes(kill.source), kill.source);
          // The kernel notifies a memory.events file at most every 10 ms: the `oom` count that
          // follows a `max` notification is held back that long, and the kernel log may come first.
          if (kill.source === 'memory-events') assert.ok(kill.oomSignalledAtMs !== null, 'memory.events signalled the OOM');
          assert.equal(kill.victim?.path, containerPath());
          assert.equal(kill.victim?.podUid, POD_UID);
          assert.equal(kill.oomCgroup?.path, `/${box.name}`);
          assert.equal(kill.oomCgroup?.level, 'node');
          assert.equal(kill.oomCgroup?.memory?.limitBytes, 192n * MI);
          if (withLog) {
            assert.equal(kill.constraint, 'CONSTRAINT_MEMCG');
            assert.equal(kill.pid, grower.pid);
            assert.equal(kill.oomCgroupInferred, false);
          }
        } finally {
          await w.watcher.stop();
          box.setLimit('', 1n << 40n);
        }
      },
    },
  ],
});
