// Chooses and builds the memory threshold notifier for this node: memcg v1 eventfd thresholds where
// the v1 memory hierarchy offers cgroup.event_control, a PSI trigger plus a fast check where only
// cgroup v2 has the memory controller, and the logged no-op otherwise. The settings come compiled
// and validated against the kernel's own limits (src/config), so they are taken as they are.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NotifierMode, NotifierModeSetting, NotifierSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { MemoryThresholdNotifier } from '../daemon/ports.js';
import { nodeHostFs } from '../host/host-fs.js';
import type { OpenFileDoor } from '../host/kept-open-file.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import type { NativeEvents } from '../../native/native-events.js';
import { DisabledNotifier } from './disabled-notifier.js';
import type { EpollLoopOptions } from './epoll-loop.js';
import { EVENT_CONTROL_FILE } from '../../native/memcg-threshold.js';
import { MemcgV1Notifier } from './memcg-v1-notifier.js';
import { PsiNotifier } from './psi-notifier.js';
import type { SharedEpollLoop } from './shared-epoll-loop.js';

/** What only the caller knows: where the cgroups are, and the kernel and clock to use. */
export interface NotifierContext {
  /** Where the cgroup filesystems are mounted, as the agent sees them: the v1 memory hierarchy is `<cgroupRoot>/memory`, cgroup v2 is `<cgroupRoot>` itself. */
  readonly cgroupRoot: string;
  /** The cgroup standing for the node (memory.available), relative to the hierarchy's root; `''` is the root cgroup. */
  readonly nodeCgroup: string;
  /** The kubepods cgroup (allocatableMemory.available), relative to the hierarchy's root. */
  readonly podCgroupRoot: string;
  /** Where /proc is mounted (PSI mode arms the system-wide pressure there when the root cgroup has no memory.pressure). */
  readonly procRoot: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The kernel interface; the real one unless a test passes a fake. */
  readonly native?: NativeEvents;
  /** Where the PSI fast check reads its files (kept open); the host's own by default. */
  readonly files?: OpenFileDoor;
  /** Whether a file exists (PSI mode: which cgroup files to use). */
  readonly fileExists?: (path: string) => boolean;
  readonly loop?: EpollLoopOptions;
  /** The node's one epoll loop, shared with the OOM kill watcher; without it the notifier makes its own. */
  readonly sharedLoop?: SharedEpollLoop;
}

export interface DetectedNotifierMode {
  readonly mode: NotifierMode;
  readonly reason: string;
}

/**
 * `auto`: memcg-v1 when `<cgroupRoot>/memory/cgroup.event_control` exists, else psi when
 * `<cgroupRoot>/cgroup.controllers` lists memory, else disabled.
 */
export function detectNotifierMode(cgroupRoot: string): DetectedNotifierMode {
  const eventControl = join(cgroupRoot, 'memory', EVENT_CONTROL_FILE);
  if (existsSync(eventControl)) return { mode: 'memcg-v1', reason: `${eventControl} exists` };
  const controllersPath = join(cgroupRoot, 'cgroup.controllers');
  let controllers: string | null = null;
  try {
    controllers = readFileSync(controllersPath, 'utf8');
  } catch {
    controllers = null;
  }
  if (controllers !== null && controllers.split(/\s+/).includes('memory')) {
    return { mode: 'psi', reason: `${controllersPath} lists the memory controller` };
  }
  return {
    mode: 'disabled',
    reason:
      controllers === null
        ? `neither ${eventControl} (cgroup v1) nor ${controllersPath} (cgroup v2) exists`
        : `${eventControl} (cgroup v1) does not exist and ${controllersPath} does not list the memory controller`,
  };
}

/** Builds the notifier the compiled `notifier` settings ask for (validated by src/config). */
export function createMemoryThresholdNotifier(settings: NotifierSettings, context: NotifierContext): MemoryThresholdNotifier {
  const logger = context.logger.child({ component: 'memory-threshold-notifier' });
  const native = context.native ?? createLibcNativeEvents();
  const nodeCgroup = trimSlashes(context.nodeCgroup);
  const podCgroupRoot = trimSlashes(context.podCgroupRoot);
  const loop = { ...(context.loop === undefined ? {} : { loop: context.loop }), ...(context.sharedLoop === undefined ? {} : { sharedLoop: context.sharedLoop }) };

  const chosen = chooseMode(settings.mode, context.cgroupRoot, logger);
  logger.info('memory threshold notifier mode chosen', { mode: chosen.mode, reason: chosen.reason });
  switch (chosen.mode) {
    case 'memcg-v1':
      return new MemcgV1Notifier({ memoryMount: join(context.cgroupRoot, 'memory'), nodeCgroup, podCgroupRoot, clock: context.clock, logger, native, ...loop });
    case 'psi':
      return new PsiNotifier({
        cgroupRoot: context.cgroupRoot,
        nodeCgroup,
        podCgroupRoot,
        procRoot: context.procRoot,
        psiStallThresholdMs: settings.psiStallThresholdMs,
        psiWindowMs: settings.psiWindowMs,
        fastCheck: { minIntervalMs: settings.fastCheckMinIntervalMs, maxIntervalMs: settings.fastCheckMaxIntervalMs, allocationBytesPerSecond: settings.fastCheckAllocationBytesPerSecond },
        memoryHighWakeup: settings.memoryHighWakeup,
        clock: context.clock,
        logger,
        native,
        files: context.files ?? nodeHostFs,
        fileExists: context.fileExists ?? existsSync,
        ...loop,
      });
    case 'disabled':
      return new DisabledNotifier(chosen.reason, logger);
  }
}

// `auto` takes what the node offers; a configured mode is taken as it is, with a warning when the
// node offers something else.
function chooseMode(mode: NotifierModeSetting, cgroupRoot: string, logger: Logger): DetectedNotifierMode {
  if (mode === 'auto') return detectNotifierMode(cgroupRoot);
  if (mode === 'disabled') return { mode: 'disabled', reason: 'mode is disabled in the configuration' };
  const detected = detectNotifierMode(cgroupRoot);
  if (detected.mode !== mode) logger.warn('the configured notifier mode does not match this node', { configured: mode, detected: detected.mode, why: detected.reason });
  return { mode, reason: 'mode set in the configuration' };
}

function trimSlashes(cgroup: string): string {
  return cgroup.replace(/^\/+|\/+$/g, '');
}
