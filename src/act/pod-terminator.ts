// Ends an evicted pod's processes on this node, from its cgroup, without waiting for the API
// server or the kubelet: SIGTERM to every process in the pod's cgroup tree at once, SIGKILL to
// whatever is left after the grace period. This is what frees memory within milliseconds under
// hard memory pressure. It needs the host's PID namespace (hostPID) and its cgroup mount.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Pod } from '../api/pod.js';
import type { LocalTerminator } from '../daemon/ports.js';
import { detectCgroupLayout } from '../host/cgroup-layout.js';
import { nodeHostFs, type HostFs } from '../host/host-fs.js';
import { PodCgroupLocator } from '../host/pod-cgroup-locator.js';
import type { CgroupDriver } from '../host/pod-cgroup-names.js';
import { describeError } from '../host/read-result.js';

export interface PodTerminatorOptions {
  /** The cgroup mount as the agent sees it (host root included), e.g. `/host/sys/fs/cgroup`. */
  readonly cgroupRoot: string;
  /** The cgroup standing for the node, relative to the memory hierarchy's root ('' on a real node). */
  readonly nodeCgroup?: string;
  readonly cgroupDriver: CgroupDriver | 'auto';
  readonly podCgroupRoot?: string;
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

export function createPodTerminator(options: PodTerminatorOptions): LocalTerminator {
  const fs = options.hostFs ?? nodeHostFs;
  const log = options.logger.child({ component: 'pod-terminator' });
  const kill = options.kill ?? ((pid: number, signal: NodeJS.Signals) => process.kill(pid, signal));
  let locator: PodCgroupLocator | null = null;

  const findLocator = (): PodCgroupLocator | null => {
    if (locator !== null) return locator;
    const layout = detectCgroupLayout(fs, options.cgroupRoot);
    if (!layout.ok) {
      log.warn('cannot terminate pods locally: no memory cgroup hierarchy', { reason: layout.reason });
      return null;
    }
    const nodeDir = options.nodeCgroup === undefined || options.nodeCgroup === '' ? layout.value.memoryRoot : `${layout.value.memoryRoot}/${options.nodeCgroup}`;
    locator = new PodCgroupLocator(fs, nodeDir, options.cgroupDriver, options.podCgroupRoot);
    return locator;
  };

  // Never signal the agent itself or init, whatever a cgroup file says.
  const signalAll = (pids: readonly number[], signal: NodeJS.Signals): number => {
    let signalled = 0;
    for (const pid of pids) {
      if (pid === process.pid || pid === 1) continue;
      try {
        kill(pid, signal);
        signalled++;
      } catch (err) {
        // ESRCH: it exited between the read and the signal.
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') log.warn('signal failed', { pid, signal, err: describeError(err) });
      }
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
      const signalled = signalAll(pidsInCgroupTree(fs, dir), gracePeriodMs <= 0 ? 'SIGKILL' : 'SIGTERM');
      if (gracePeriodMs > 0) {
        options.clock.after(gracePeriodMs, () => {
          const left = pidsInCgroupTree(fs, dir);
          if (left.length > 0) log.info('grace period over; killing what is left', { uid, processes: left.length });
          signalAll(left, 'SIGKILL');
        });
      }
      return { signalled };
    },
  };
}
