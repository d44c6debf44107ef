// The real OOM kill watcher (kernel log, oom_control eventfds or memory.events, counters) on a
// sandbox cgroup, as the kernel tests on cgroup v1 and in the cgroup v2 guest run it: every kill it
// reports is kept, and `next()` waits for the next one.

import { closeSync, openSync } from 'node:fs';
import { systemClock } from '../../src/api/clock.js';
import type { KernelOomKill, OomKillWatcher } from '../../src/daemon/ports.js';
import { nodeHostFs } from '../../src/host/host-fs.js';
import { createOomKillWatcher } from '../../src/notifier/create-oom-kill-watcher.js';
import { SharedEpollLoop } from '../../src/notifier/shared-epoll-loop.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import { RecordingLogger } from '../fakes/recording-logger.js';
import type { CgroupSandbox } from './cgroup-sandbox.js';

export const KERNEL_LOG = '/dev/kmsg';

/** Why this process cannot read the kernel log (no device, or no CAP_SYSLOG), or null. */
export function kernelLogUnreadable(): string | null {
  try {
    closeSync(openSync(KERNEL_LOG, 'r'));
    return null;
  } catch (error) {
    return `${KERNEL_LOG} unreadable: ${(error as NodeJS.ErrnoException).code ?? String(error)}`;
  }
}

export interface OomKillWatching {
  readonly watcher: OomKillWatcher;
  readonly kills: KernelOomKill[];
  readonly logger: RecordingLogger;
  /** The next kill reported; rejects, with what the watcher logged, after `nextTimeoutMs`. */
  next(): Promise<KernelOomKill>;
}

export interface OomKillWatchingOptions {
  readonly kernelLog: boolean;
  readonly kernelLogPath?: string;
  readonly nextTimeoutMs: number;
}

/** Starts the watcher on the sandbox as the node cgroup, its `kubepods` as the pods' root. */
export function watchOomKills(box: CgroupSandbox, options: OomKillWatchingOptions): OomKillWatching {
  const logger = new RecordingLogger();
  const native = createLibcNativeEvents();
  const kills: KernelOomKill[] = [];
  const waiters: ((kill: KernelOomKill) => void)[] = [];
  const watcher = createOomKillWatcher(
    { enabled: true, kernelLog: options.kernelLog, scanIntervalMs: 60_000, kernelLogWaitMs: 500 },
    {
      cgroupRoot: '/sys/fs/cgroup',
      nodeCgroup: box.name,
      podCgroupRoot: `${box.name}/kubepods`,
      loop: new SharedEpollLoop(native, logger),
      fs: nodeHostFs,
      clock: systemClock,
      logger,
      native,
      kernelLogPath: options.kernelLogPath ?? KERNEL_LOG,
    },
  );
  watcher.start((kill) => {
    kills.push(kill);
    waiters.shift()?.(kill);
  });
  return {
    watcher,
    kills,
    logger,
    next: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no OOM kill reported in ${options.nextTimeoutMs / 1000} s: ${JSON.stringify(logger.lines)}`)), options.nextTimeoutMs);
        waiters.push((kill) => {
          clearTimeout(timer);
          resolve(kill);
        });
      }),
  };
}
