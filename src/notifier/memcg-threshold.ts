// Registers one cgroup v1 memory threshold, the way the kubelet's cgroup notifier does: a fresh
// eventfd, the cgroup's memory.usage_in_bytes opened for reading, and the line
// "<eventfd> <watchfd> <threshold>" written to its cgroup.event_control. The kernel then adds to the
// eventfd's counter each time usage crosses the threshold, in either direction, and once more when
// the cgroup is removed. Closing the eventfd unregisters it.

import { join } from 'node:path';
import type { EventFd, FileFd, NativeEvents } from '../../native/native-events.js';

/** kubelet `memoryUsageAttribute`: the file a memcg threshold watches. */
export const MEMORY_USAGE_ATTRIBUTE = 'memory.usage_in_bytes';
export const EVENT_CONTROL_FILE = 'cgroup.event_control';

const encoder = new TextEncoder();

/**
 * Arms `thresholdBytes` on `<cgroupPath>/memory.usage_in_bytes` and resolves with the new eventfd,
 * which the caller owns. The registration write waits for an RCU grace period in the kernel (tens of
 * milliseconds), so it runs off the main thread. The watch and control files are closed before
 * resolving, as upstream does: the kernel keeps its own references. On failure nothing stays open
 * and the NativeError rejects.
 */
export async function registerMemcgThreshold(native: NativeEvents, cgroupPath: string, thresholdBytes: bigint): Promise<EventFd> {
  const eventFd = native.createEventFd();
  let watchFd: FileFd | null = null;
  let controlFd: FileFd | null = null;
  try {
    watchFd = native.openFile(join(cgroupPath, MEMORY_USAGE_ATTRIBUTE), 'read');
    controlFd = native.openFile(join(cgroupPath, EVENT_CONTROL_FILE), 'write');
    await native.writeFileAsync(controlFd, encoder.encode(`${eventFd} ${watchFd} ${thresholdBytes}`));
  } catch (error) {
    native.close(eventFd);
    throw error;
  } finally {
    if (controlFd !== null) native.close(controlFd);
    if (watchFd !== null) native.close(watchFd);
  }
  return eventFd;
}
