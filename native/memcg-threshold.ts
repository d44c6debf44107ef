// Registers one cgroup v1 memory threshold, the way the kubelet's cgroup notifier does: a fresh
// eventfd, the cgroup's memory.usage_in_bytes opened for reading, and the line
// "<eventfd> <watchfd> <threshold>" written to its cgroup.event_control. The kernel then adds to the
// eventfd's counter each time usage crosses the threshold, in either direction, and once more when
// the cgroup is removed. Closing the eventfd unregisters it.

import { join } from 'node:path';
import type { EventFd, FileFd, NativeEvents } from './native-events.js';

/** kubelet `memoryUsageAttribute`: the file a memcg threshold watches. */
export const MEMORY_USAGE_ATTRIBUTE = 'memory.usage_in_bytes';
export const EVENT_CONTROL_FILE = 'cgroup.event_control';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A registered threshold: its eventfd (the caller's), and the usage once the registration was in place. */
export interface MemcgRegistration {
  readonly eventFd: EventFd;
  /**
   * memory.usage_in_bytes read right after the registration took effect; null when it could not be
   * read. The kernel signals crossings only: a threshold that usage passed while the registration
   * waited (tens of milliseconds, through which a fast leak climbs megabytes) never fires.
   */
  readonly usageAfterBytes: bigint | null;
}

/**
 * Arms `thresholdBytes` on `<cgroupPath>/memory.usage_in_bytes` and resolves with the new eventfd,
 * which the caller owns, and the usage read once it was armed. The registration write waits for an
 * RCU grace period in the kernel (tens of milliseconds), so it runs off the main thread. The watch
 * and control files are closed before resolving, as upstream does: the kernel keeps its own
 * references. On failure nothing stays open and the NativeError rejects.
 */
export async function registerMemcgThreshold(native: NativeEvents, cgroupPath: string, thresholdBytes: bigint): Promise<MemcgRegistration> {
  const eventFd = native.createEventFd();
  let watchFd: FileFd | null = null;
  let controlFd: FileFd | null = null;
  let usageAfterBytes: bigint | null = null;
  try {
    watchFd = native.openFile(join(cgroupPath, MEMORY_USAGE_ATTRIBUTE), 'read');
    controlFd = native.openFile(join(cgroupPath, EVENT_CONTROL_FILE), 'write');
    await native.writeFileAsync(controlFd, encoder.encode(`${eventFd} ${watchFd} ${thresholdBytes}`));
    usageAfterBytes = readUsage(native, watchFd);
  } catch (error) {
    native.close(eventFd);
    throw error;
  } finally {
    if (controlFd !== null) native.close(controlFd);
    if (watchFd !== null) native.close(watchFd);
  }
  return { eventFd, usageAfterBytes };
}

// The usage file's decimal figure; null when it cannot be read or is not a plain number.
function readUsage(native: NativeEvents, watchFd: FileFd): bigint | null {
  try {
    const buffer = new Uint8Array(32);
    const text = decoder.decode(buffer.subarray(0, native.readFromStart(watchFd, buffer))).trim();
    return /^[0-9]{1,20}$/.test(text) ? BigInt(text) : null;
  } catch {
    return null;
  }
}
