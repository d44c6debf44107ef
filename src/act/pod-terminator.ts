// Ends an evicted pod's processes on this node, from its cgroup, without waiting for the API
// server or the kubelet: SIGTERM to every process in the pod's cgroup tree at once, SIGKILL to
// whatever is left after the grace period. This is what frees memory within milliseconds under
// hard memory pressure. It needs the host's PID namespace (hostPID) and its cgroup mount.

import { join } from 'node:path';
import type { ObserveSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Pod } from '../api/pod.js';
import type { LocalTerminator } from '../daemon/ports.js';
import { logCapabilityError, missingCapabilityError } from '../host/capabilities.js';
import { detectCgroupLayout } from '../host/cgroup-layout.js';
import { nodeHostFs, type HostFs } from '../host/host-fs.js';
import { PodCgroupLocator } from '../host/pod-cgroup-locator.js';
import { describeError } from '../host/read-result.js';

export interface PodTerminatorContext {
  /** The cgroup standing for the node, relative to the memory hierarchy's root ('' on a real node). */
  readonly nodeCgroup?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly hostFs?: HostFs;
  /** Sends a signal; process.kill by default (a test may record instead). */
  readonly kill?: (pid: number, signal: NodeJS.Signals) => void;
}

/** Every PID in a cgroup and its descendants (`cgroup.procs` of each directory). */
export function pidsInCgroupTree(fs: HostFs, dir: string): number[] {
  const pids: number[] = [];
  const walk = (path: string): void => {
    let procs = '';
    try {
      procs = fs.readSmallFile(`${path}/cgroup.procs`);
    } catch {
      return; // The cgroup vanished meanwhile: nothing left to signal there.
    }
    for (const line of procs.split('\n')) {
      const pid = Number.parseInt(line, 10);
      if (Number.isInteger(pid) && pid > 0) pids.push(pid);
    }
    let children: string[];
    try {
      children = fs.subdirectories(path);
    } catch {
      return;
    }
    for (const child of children) walk(`${path}/${child}`);
  };
  walk(dir);
  return pids;
}

/** The terminator for the compiled `observe` settings: the pods' cgroups are found as the observer finds them. */
export function createPodTerminator(settings: Pick<ObserveSettings, 'hostRoot' | 'cgroupRoot' | 'cgroupDriver' | 'podCgroupRoot'>, context: PodTerminatorContext): LocalTerminator {
  const fs = context.hostFs ?? nodeHostFs;
  const log = context.logger.child({ component: 'pod-terminator' });
  const kill = context.kill ?? ((pid: number, signal: NodeJS.Signals) => process.kill(pid, signal));
  const cgroupRoot = join(settings.hostRoot, settings.cgroupRoot);
  const nodeCgroup = (context.nodeCgroup ?? '').replace(/^\/+|\/+$/g, '');
  let locator: PodCgroupLocator | null = null;

  const findLocator = (): PodCgroupLocator | null => {
    if (locator !== null) return locator;
    const layout = detectCgroupLayout(fs, cgroupRoot);
    if (!layout.ok) {
      log.warn('cannot terminate pods locally: no memory cgroup hierarchy', { reason: layout.reason });
      return null;
    }
    const nodeDir = nodeCgroup === '' ? layout.value.memoryRoot : `${layout.value.memoryRoot}/${nodeCgroup}`;
    locator = new PodCgroupLocator(fs, nodeDir, settings.cgroupDriver, settings.podCgroupRoot);
    return locator;
  };

  // Never signal the agent itself or init, whatever a cgroup file says.
  const signalAll = (pod: string, pids: readonly number[], signal: NodeJS.Signals): number => {
    let signalled = 0;
    const refused: number[] = [];
    for (const pid of pids) {
      if (pid === process.pid || pid === 1) continue;
      try {
        kill(pid, signal);
        signalled++;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        // ESRCH: it exited between the read and the signal. EPERM: it runs as another user.
        if (code === 'EPERM') refused.push(pid);
        else if (code !== 'ESRCH') log.warn('signal failed', { pid, signal, err: describeError(err) });
      }
    }
    if (refused.length > 0) {
      const error = missingCapabilityError('CAP_KILL', `Sending ${signal} to ${refused.length} process(es) of pod ${pod} was refused (EPERM)`, 'the pod is left to the API server and the kubelet');
      logCapabilityError(log, error, { pod, signal, pids: refused.slice(0, 10) });
    }
    return signalled;
  };

  return {
    async terminate(pod: Pod, gracePeriodMs: number) {
      const uid = pod.metadata.uid ?? '';
      const dir = findLocator()?.locate(uid, pod.status?.qosClass);
      if (dir === undefined) {
        log.warn('pod cgroup not found; nothing to terminate locally', { pod: `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`, uid });
        return { signalled: 0 };
      }
      const key = `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
      const signalled = signalAll(key, pidsInCgroupTree(fs, dir), gracePeriodMs <= 0 ? 'SIGKILL' : 'SIGTERM');
      if (gracePeriodMs > 0) {
        context.clock.after(gracePeriodMs, () => {
          const left = pidsInCgroupTree(fs, dir);
          if (left.length > 0) log.info('grace period over; killing what is left', { uid, processes: left.length });
          signalAll(key, left, 'SIGKILL');
        });
      }
      return { signalled };
    },
  };
}
