// The pod terminator's decisions on a simulated node (test/fakes/fake-process-table.ts) and a fake
// clock: which processes get which signal and when (containers yes, the sandbox and a runtime's
// monitor never), what is refused and said (PID 1, the agent, a process /proc places outside the
// pod, no pidfds), the sweep that ends a container restarted in an evicted pod and when it stops,
// and a private cgroup namespace (what /proc shows is relative to the agent's own cgroup).

import type { Pod } from '../../../src/api/pod.js';
import { createPodTerminator, RESTART_SWEEP_INTERVAL_MS, TERMINATED_POD_WATCH_MS } from '../../../src/act/pod-terminator.js';
import type { LocalTerminator } from '../../../src/daemon/ports.js';
import { observeSettings } from '../../fixtures/settings.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { FakeProcessTable } from '../../fakes/fake-process-table.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const UID = '0d5f5c6e-1b2a-4c3d-9e8f-7a6b5c4d3e2f';
const POD_DIR = `kubepods/burstable/pod${UID}`;
const id = (digit: string): string => digit.repeat(64);
const SANDBOX = id('0');
const APP = id('a');
const SIDECAR = id('b');

function pod(containers: Record<string, string>, uid = UID): Pod {
  return {
    metadata: { name: 'web', namespace: 'default', uid },
    spec: { containers: Object.keys(containers).map((name) => ({ name })) },
    status: { phase: 'Running', qosClass: 'Burstable', containerStatuses: Object.entries(containers).map(([name, cid]) => ({ name, containerID: `containerd://${cid}` })) },
  };
}

let node: FakeProcessTable;
let clock: FakeClock;
let logger: RecordingLogger;
beforeEach(() => {
  node = new FakeProcessTable();
  clock = new FakeClock();
  logger = new RecordingLogger();
});
afterEach(() => node.remove());

function terminator(): LocalTerminator {
  return createPodTerminator(observeSettings({ hostRoot: node.root, cgroupRoot: '/sys/fs/cgroup', procRoot: '/proc', cgroupDriver: 'cgroupfs', podCgroupRoot: 'kubepods' }), {
    clock,
    logger,
    processes: node.processHandles(),
    selfPid: node.selfPid,
  });
}

// A pod as the kubelet runs it: the sandbox first (tick 100), then its containers.
function startPod(): void {
  node.start(10, `${POD_DIR}/${SANDBOX}`, 100);
  node.start(11, `${POD_DIR}/${APP}`, 200);
  node.start(12, `${POD_DIR}/${APP}`, 210);
  node.start(13, `${POD_DIR}/${SIDECAR}`, 220);
}

describe('pod terminator (simulated node, fake clock)', () => {
  test("grace 0: every container process gets SIGKILL at once, the sandbox nothing, and every pidfd is closed", async () => {
    startPod();
    const result = await terminator().terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    expect(result).toEqual({ signalled: 3 });
    expect(node.signals).toEqual([
      { pid: 11, signal: 'SIGKILL' },
      { pid: 12, signal: 'SIGKILL' },
      { pid: 13, signal: 'SIGKILL' },
    ]);
    expect(node.alive(10)).toBe(true);
    expect(node.openHandles()).toBe(0);
  });

  test("a mirror pod ends its static pod's containers, found under the UID its config.mirror annotation names; a crafted annotation is refused", async () => {
    const staticUid = '6d4f1e0a9b8c7d6e5f4a3b2c1d0e9f8a';
    node.start(20, `kubepods/burstable/pod${staticUid}/${SANDBOX}`, 100);
    node.start(21, `kubepods/burstable/pod${staticUid}/${APP}`, 200);
    const mirror = (annotation: string): Pod => {
      const base = pod({ app: APP });
      return { ...base, metadata: { ...base.metadata, annotations: { 'kubernetes.io/config.mirror': annotation } } };
    };
    const term = terminator();
    const crafted = await term.terminate(mirror(`${staticUid}/../..`), 0);
    expect(crafted.signalled).toBe(0);
    expect(crafted.refused).toMatch(/not a static pod UID/);
    expect(node.signals).toEqual([]);
    expect(await term.terminate(mirror(staticUid), 0)).toEqual({ signalled: 1 });
    expect(node.signals).toEqual([{ pid: 21, signal: 'SIGKILL' }]);
    expect(node.alive(20)).toBe(true);
    term.release?.(UID);
  });

  test('a grace period: SIGTERM first, SIGKILL to what ignored it once the period is over, never earlier', async () => {
    node.start(10, `${POD_DIR}/${SANDBOX}`, 100);
    node.start(11, `${POD_DIR}/${APP}`, 200);
    node.start(12, `${POD_DIR}/${APP}`, 210, { ignoresSigterm: true });
    const result = await terminator().terminate(pod({ app: APP }), 5000);
    expect(result).toEqual({ signalled: 2 });
    expect(node.signals).toEqual([
      { pid: 11, signal: 'SIGTERM' },
      { pid: 12, signal: 'SIGTERM' },
    ]);
    // The sweep runs meanwhile, but leaves the container in its grace period alone.
    await clock.stepAsync(4999);
    expect(node.signalsTo(12)).toEqual(['SIGTERM']);
    await clock.stepAsync(1);
    expect(node.signalsTo(12)).toEqual(['SIGTERM', 'SIGKILL']);
    expect(node.signalsTo(10)).toEqual([]);
  });

  test("PID 1 and the agent itself are never signalled, even when a container's cgroup lists them; the refusal is returned and logged", async () => {
    node.start(10, `${POD_DIR}/${SANDBOX}`, 100);
    node.start(1, `${POD_DIR}/${APP}`, 1);
    node.start(node.selfPid, `${POD_DIR}/${APP}`, 150);
    node.start(11, `${POD_DIR}/${APP}`, 200);
    const result = await terminator().terminate(pod({ app: APP }), 0);
    expect(result.signalled).toBe(1);
    expect(result.refused).toContain('pid 1: PID 1 is never signalled');
    expect(result.refused).toContain(`pid ${node.selfPid}: the agent never signals itself`);
    expect(node.signals).toEqual([{ pid: 11, signal: 'SIGKILL' }]);
    expect(logger.at('warn').some((l) => l.msg.startsWith('local termination refused for some processes'))).toBe(true);
  });

  test('a process whose /proc/<pid>/cgroup places it outside the pod is refused, whatever cgroup.procs says', async () => {
    startPod();
    node.showCgroup(12, '/system.slice/sshd.service');
    node.showCgroup(13, `/${POD_DIR}/${SIDECAR}/../../../../..`);
    const result = await terminator().terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    expect(node.signals).toEqual([{ pid: 11, signal: 'SIGKILL' }]);
    expect(result.refused).toContain('pid 12: the process is in /system.slice/sshd.service, outside the pod');
    expect(result.refused).toContain('pid 13');
  });

  test('without pidfds (a kernel before 5.3) nothing is signalled, and the refusal says why', async () => {
    startPod();
    node.pidfdErrno = 38;
    const result = await terminator().terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    expect(result.signalled).toBe(0);
    expect(result.refused).toContain('cannot signal through a pidfd');
    expect(node.signals).toEqual([]);
  });

  test.each([
    ['traversal', `${UID}/../../..`],
    ['empty', ''],
    ['absolute', '/'],
    ['unicode', 'ü'.repeat(36)],
  ])('a UID not in the API server form (%s) is refused before any path is built', async (_name, uid) => {
    startPod();
    const result = await terminator().terminate(pod({ app: APP }, uid), 0);
    expect(result.signalled).toBe(0);
    expect(result.refused).toContain("not in the API server's form");
    expect(node.signals).toEqual([]);
  });

  test('a pod cgroup not there: nothing signalled, nothing refused', async () => {
    const result = await terminator().terminate(pod({ app: APP }), 0);
    expect(result).toEqual({ signalled: 0 });
  });

  test("CRI-O's monitor and a child not named like a container are never signalled", async () => {
    startPod();
    node.start(20, `${POD_DIR}/crio-conmon-${APP}`, 150);
    node.start(21, `${POD_DIR}/not-a-container`, 150);
    await terminator().terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    expect([20, 21, 10].map((pid) => node.alive(pid))).toEqual([true, true, true]);
  });

  test('a container restarted after termination (an ID the status does not list) is ended at the next sweep; the sweep stops once the pod cgroup is gone', async () => {
    startPod();
    const term = terminator();
    await term.terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    node.start(30, `${POD_DIR}/${id('c')}`, 900);
    await clock.stepAsync(RESTART_SWEEP_INTERVAL_MS);
    expect(node.signalsTo(30)).toEqual(['SIGKILL']);
    expect(node.alive(10)).toBe(true);
    expect(logger.find('ended a container restarted in a pod being evicted')).toHaveLength(1);
    // The kubelet removes the pod: the sweep forgets it, and a cgroup of the same name later is not touched.
    node.rmdir(POD_DIR);
    await clock.stepAsync(RESTART_SWEEP_INTERVAL_MS);
    node.start(31, `${POD_DIR}/${id('d')}`, 1000);
    await clock.stepAsync(5 * RESTART_SWEEP_INTERVAL_MS);
    expect(node.signalsTo(31)).toEqual([]);
  });

  test('the sweep stops on release (a budget refused the eviction) and after the watch window', async () => {
    startPod();
    const term = terminator();
    await term.terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    term.release?.(UID);
    node.start(30, `${POD_DIR}/${id('c')}`, 900);
    await clock.stepAsync(3 * RESTART_SWEEP_INTERVAL_MS);
    expect(node.signalsTo(30)).toEqual([]);

    const other = '11111111-2222-4333-8444-555555555555';
    node.start(40, `kubepods/burstable/pod${other}/${SANDBOX}`, 100);
    node.start(41, `kubepods/burstable/pod${other}/${APP}`, 200);
    await term.terminate(pod({ app: APP }, other), 0);
    await clock.stepAsync(TERMINATED_POD_WATCH_MS + RESTART_SWEEP_INTERVAL_MS);
    node.start(42, `kubepods/burstable/pod${other}/${id('c')}`, 900);
    await clock.stepAsync(3 * RESTART_SWEEP_INTERVAL_MS);
    expect(node.signalsTo(42)).toEqual([]);
  });

  test("no container the status lists is in the cgroup (another pod's UID, or a stale status): the others are not ended", async () => {
    startPod();
    const result = await terminator().terminate(pod({ app: id('9') }), 0);
    expect(result.signalled).toBe(0);
    await clock.stepAsync(3 * RESTART_SWEEP_INTERVAL_MS);
    expect(node.signals).toEqual([]);
  });

  test('two unlisted containers started in the same clock tick cannot be told apart: both are spared', async () => {
    node.start(10, `${POD_DIR}/${SANDBOX}`, 100);
    node.start(11, `${POD_DIR}/${APP}`, 200);
    node.start(14, `${POD_DIR}/${id('e')}`, 100);
    await terminator().terminate(pod({ app: APP }), 0);
    expect(node.signals).toEqual([{ pid: 11, signal: 'SIGKILL' }]);
  });

  test("in a private cgroup namespace, /proc paths relative to the agent's own cgroup are placed in the hierarchy", async () => {
    startPod();
    // The agent runs in its own pod's container, at the root of its cgroup namespace.
    node.setSelfCgroup('/kubepods/besteffort/pod99999999-2222-4333-8444-555555555555/agent', '/');
    for (const [pid, child] of [
      [11, APP],
      [12, APP],
      [13, SIDECAR],
    ] as const) node.showCgroup(pid, `/../../../burstable/pod${UID}/${child}`);
    const result = await terminator().terminate(pod({ app: APP, sidecar: SIDECAR }), 0);
    expect(result).toEqual({ signalled: 3 });
  });
});
