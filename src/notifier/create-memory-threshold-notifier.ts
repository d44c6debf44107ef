// Chooses and builds the memory threshold notifier for this node: memcg v1 eventfd thresholds where
// the v1 memory hierarchy offers cgroup.event_control, a PSI trigger plus a fast check where only
// cgroup v2 has the memory controller, and the logged no-op otherwise. The settings are validated
// here against the kernel's own limits, so a bad value fails at startup rather than at arming.

import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { MemoryThresholdNotifier } from '../daemon/ports.js';
import { ConfigError, type ConfigProblem } from '../errors.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import type { NativeEvents } from '../../native/native-events.js';
import type { ReadText } from './cgroup-v2-memory.js';
import { DisabledNotifier } from './disabled-notifier.js';
import type { EpollLoopOptions } from './epoll-loop.js';
import { EVENT_CONTROL_FILE } from './memcg-threshold.js';
import { MemcgV1Notifier } from './memcg-v1-notifier.js';
import { PsiNotifier } from './psi-notifier.js';
import { PSI_MAX_WINDOW_MS, PSI_MIN_WINDOW_MS } from './psi-trigger.js';

export type NotifierModeSetting = 'auto' | 'memcg-v1' | 'psi' | 'disabled';
export const NOTIFIER_MODES: readonly NotifierModeSetting[] = ['auto', 'memcg-v1', 'psi', 'disabled'];

/** The operator-facing settings. */
export interface MemoryThresholdNotifierSettings {
  readonly mode: NotifierModeSetting;
  /** Where the cgroup filesystems are mounted: the v1 memory hierarchy is `<cgroupRoot>/memory`, cgroup v2 is `<cgroupRoot>` itself. */
  readonly cgroupRoot: string;
  /** The cgroup standing for the node (memory.available), relative to the hierarchy's root; `''` is the root cgroup. */
  readonly nodeCgroup: string;
  /** The kubepods cgroup (allocatableMemory.available), relative to the hierarchy's root. */
  readonly podCgroupRoot: string;
  /** PSI: report when tasks stalled on memory this long... */
  readonly psiStallThresholdMs: number;
  /** ...within a window this long (the kernel allows 500 ms to 10 s). */
  readonly psiWindowMs: number;
  /** PSI mode: how often memory.current and memory.stat are compared with the thresholds. */
  readonly fastCheckIntervalMs: number;
}

export const DEFAULT_NOTIFIER_SETTINGS: MemoryThresholdNotifierSettings = {
  mode: 'auto',
  cgroupRoot: '/sys/fs/cgroup',
  nodeCgroup: '',
  podCgroupRoot: 'kubepods',
  psiStallThresholdMs: 100,
  psiWindowMs: 1000,
  fastCheckIntervalMs: 250,
};

export interface MemoryThresholdNotifierOptions extends Partial<MemoryThresholdNotifierSettings> {
  readonly clock: Clock;
  readonly logger: Logger;
  /** The kernel interface; the real one unless a test passes a fake. */
  readonly native?: NativeEvents;
  /** Where /proc is mounted (PSI mode arms the system-wide pressure there when the root cgroup has no memory.pressure). */
  readonly procRoot?: string;
  /** Reads a file for the PSI fast check. */
  readonly readText?: ReadText;
  /** Whether a file exists (PSI mode: which cgroup files to use). */
  readonly fileExists?: (path: string) => boolean;
  readonly loop?: EpollLoopOptions;
}

export interface DetectedNotifierMode {
  readonly mode: 'memcg-v1' | 'psi' | 'disabled';
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

/** Every problem with the settings, field by field (an empty list when they are valid). */
export function validateNotifierSettings(settings: MemoryThresholdNotifierSettings): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!NOTIFIER_MODES.includes(settings.mode)) {
    problems.push({ field: 'mode', value: settings.mode, message: `must be one of ${NOTIFIER_MODES.join(', ')}` });
  }
  if (settings.mode === 'disabled') return problems;
  if (!Number.isInteger(settings.psiWindowMs) || settings.psiWindowMs < PSI_MIN_WINDOW_MS || settings.psiWindowMs > PSI_MAX_WINDOW_MS) {
    problems.push({ field: 'psiWindowMs', value: settings.psiWindowMs, message: `must be a whole number of milliseconds from ${PSI_MIN_WINDOW_MS} to ${PSI_MAX_WINDOW_MS}` });
  }
  const stallUs = settings.psiStallThresholdMs * 1000;
  // The kernel takes whole microseconds; allow for binary fractions (0.1 ms is not exact).
  if (!(settings.psiStallThresholdMs > 0) || settings.psiStallThresholdMs > settings.psiWindowMs || Math.abs(stallUs - Math.round(stallUs)) > 1e-6) {
    problems.push({ field: 'psiStallThresholdMs', value: settings.psiStallThresholdMs, message: 'must be above 0, at most psiWindowMs, and a whole number of microseconds' });
  }
  if (!Number.isInteger(settings.fastCheckIntervalMs) || settings.fastCheckIntervalMs <= 0) {
    problems.push({ field: 'fastCheckIntervalMs', value: settings.fastCheckIntervalMs, message: 'must be a positive whole number of milliseconds' });
  }
  for (const field of ['nodeCgroup', 'podCgroupRoot'] as const) {
    if (settings[field].split('/').includes('..')) problems.push({ field, value: settings[field], message: 'must stay inside the cgroup hierarchy (no "..")' });
  }
  return problems;
}

/** Builds the notifier the settings ask for. Throws a ConfigError for invalid settings. */
export function createMemoryThresholdNotifier(options: MemoryThresholdNotifierOptions): MemoryThresholdNotifier {
  const settings: MemoryThresholdNotifierSettings = {
    mode: options.mode ?? DEFAULT_NOTIFIER_SETTINGS.mode,
    cgroupRoot: options.cgroupRoot ?? DEFAULT_NOTIFIER_SETTINGS.cgroupRoot,
    nodeCgroup: trimSlashes(options.nodeCgroup ?? DEFAULT_NOTIFIER_SETTINGS.nodeCgroup),
    podCgroupRoot: trimSlashes(options.podCgroupRoot ?? DEFAULT_NOTIFIER_SETTINGS.podCgroupRoot),
    psiStallThresholdMs: options.psiStallThresholdMs ?? DEFAULT_NOTIFIER_SETTINGS.psiStallThresholdMs,
    psiWindowMs: options.psiWindowMs ?? DEFAULT_NOTIFIER_SETTINGS.psiWindowMs,
    fastCheckIntervalMs: options.fastCheckIntervalMs ?? DEFAULT_NOTIFIER_SETTINGS.fastCheckIntervalMs,
  };
  const problems = validateNotifierSettings(settings);
  if (problems.length > 0) throw new ConfigError(problems);

  const logger = options.logger.child({ component: 'memory-threshold-notifier' });
  const native = options.native ?? createLibcNativeEvents();

  let chosen: DetectedNotifierMode;
  if (settings.mode === 'auto') {
    chosen = detectNotifierMode(settings.cgroupRoot);
  } else if (settings.mode === 'disabled') {
    chosen = { mode: 'disabled', reason: 'mode is disabled in the configuration' };
  } else {
    chosen = { mode: settings.mode, reason: 'mode set in the configuration' };
    const detected = detectNotifierMode(settings.cgroupRoot);
    if (detected.mode !== settings.mode) {
      logger.warn('the configured notifier mode does not match this node', { configured: settings.mode, detected: detected.mode, why: detected.reason });
    }
  }
  logger.info('memory threshold notifier mode chosen', { mode: chosen.mode, reason: chosen.reason });

  switch (chosen.mode) {
    case 'memcg-v1':
      return new MemcgV1Notifier({
        memoryMount: join(settings.cgroupRoot, 'memory'),
        nodeCgroup: settings.nodeCgroup,
        podCgroupRoot: settings.podCgroupRoot,
        clock: options.clock,
        logger,
        native,
        ...(options.loop === undefined ? {} : { loop: options.loop }),
      });
    case 'psi':
      return new PsiNotifier({
        cgroupRoot: settings.cgroupRoot,
        nodeCgroup: settings.nodeCgroup,
        podCgroupRoot: settings.podCgroupRoot,
        procRoot: options.procRoot ?? '/proc',
        psiStallThresholdMs: settings.psiStallThresholdMs,
        psiWindowMs: settings.psiWindowMs,
        fastCheckIntervalMs: settings.fastCheckIntervalMs,
        clock: options.clock,
        logger,
        native,
        readText: options.readText ?? ((path) => readFile(path, 'utf8')),
        fileExists: options.fileExists ?? existsSync,
        ...(options.loop === undefined ? {} : { loop: options.loop }),
      });
    case 'disabled':
      return new DisabledNotifier(chosen.reason, logger);
  }
}

function trimSlashes(cgroup: string): string {
  return cgroup.replace(/^\/+|\/+$/g, '');
}
