// Registers a cgroup v1 OOM notification, as cgroup-v1/memory.rst describes it: a fresh eventfd,
// the cgroup's memory.oom_control opened for reading, and "<eventfd> <fd of memory.oom_control>"
// written to its cgroup.event_control. The kernel then adds to the eventfd's counter each time an
// OOM starts in the cgroup or in any ancestor (mem_cgroup_oom_notify walks the OOMing cgroup's
// subtree), before it picks a victim, and once more when the cgroup is removed. Unlike a memory
// threshold, the registration takes no RCU grace period (30 to 450 µs measured here), so it is
// written on the main thread. Closing the eventfd unregisters it.

import { join } from 'node:path';
import type { EventFd, FileFd, NativeEvents } from '../../native/native-events.js';
import { EVENT_CONTROL_FILE } from '../../native/memcg-threshold.js';

export const OOM_CONTROL_FILE = 'memory.oom_control';

const encoder = new TextEncoder();

/** Arms the OOM notification of `cgroupDir`; returns the eventfd, which the caller owns. Throws the NativeError, leaving nothing open. */
export function registerOomControl(native: NativeEvents, cgroupDir: string): EventFd {
  const eventFd = native.createEventFd();
  let watchFd: FileFd | null = null;
  let controlFd: FileFd | null = null;
  try {
    watchFd = native.openFile(join(cgroupDir, OOM_CONTROL_FILE), 'read');
    controlFd = native.openFile(join(cgroupDir, EVENT_CONTROL_FILE), 'write');
    native.writeFile(controlFd, encoder.encode(`${eventFd} ${watchFd}`));
  } catch (error) {
    native.close(eventFd);
    throw error;
  } finally {
    if (controlFd !== null) native.close(controlFd);
    if (watchFd !== null) native.close(watchFd);
  }
  return eventFd;
}
