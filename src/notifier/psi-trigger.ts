// Arms a PSI trigger: a pressure file (`<cgroup>/memory.pressure`, or the system-wide
// /proc/pressure/memory) opened read-write and given "some <stall us> <window us>". The kernel then
// reports EPOLLPRI on that descriptor when tasks stalled on memory for at least the stall time within
// a window, at most once per window. Closing the descriptor removes the trigger.

import { PSI_MAX_WINDOW_MS, PSI_MIN_WINDOW_MS } from '../api/agent-settings.js';
import type { FileFd, NativeEvents } from '../../native/native-events.js';

/**
 * Without CAP_SYS_RESOURCE the kernel (6.5 and later) accepts only windows that are a multiple of
 * 2 s, and checks such triggers at its 2 s averaging period instead of polling them.
 */
export const PSI_UNPRIVILEGED_WINDOW_STEP_MS = 2000;

/** The window an unprivileged trigger may use instead of `windowMs`; null when there is none or no need. */
export function unprivilegedWindowMs(windowMs: number): number | null {
  if (windowMs < PSI_MIN_WINDOW_MS || windowMs > PSI_MAX_WINDOW_MS || windowMs % PSI_UNPRIVILEGED_WINDOW_STEP_MS === 0) return null;
  const widenedMs = Math.ceil(windowMs / PSI_UNPRIVILEGED_WINDOW_STEP_MS) * PSI_UNPRIVILEGED_WINDOW_STEP_MS;
  return widenedMs > PSI_MAX_WINDOW_MS ? null : widenedMs;
}

/** The trigger line. The kernel overwrites the last byte written with a NUL, so one is sent. */
export function psiTriggerLine(stallThresholdMs: number, windowMs: number): string {
  return `some ${Math.round(stallThresholdMs * 1000)} ${Math.round(windowMs * 1000)}\0`;
}

/**
 * Opens `pressurePath` and arms the trigger; resolves with the descriptor (the caller owns it). The
 * write runs off the main thread: the first trigger on a cgroup starts a kernel thread.
 */
export async function openPsiTrigger(native: NativeEvents, pressurePath: string, stallThresholdMs: number, windowMs: number): Promise<FileFd> {
  const fd = native.openFile(pressurePath, 'read-write-nonblock');
  try {
    await native.writeFileAsync(fd, new TextEncoder().encode(psiTriggerLine(stallThresholdMs, windowMs)));
  } catch (error) {
    native.close(fd);
    throw error;
  }
  return fd;
}
