// The kill path's thread (a worker_thread started by kill-path.ts): it runs ArmedKill's turns until
// told to stop, blocked in its own epoll_wait in between, so a kernel event reaches the kill without
// waiting for the main thread, the libuv pool or a garbage collection of the main heap. Messages
// from the main thread are taken synchronously after each wake-up (the main thread writes the
// wake-up eventfd after each one); this thread's own event loop never runs until it stops.

import { statSync } from 'node:fs';
import { receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { nodeHostFs } from '../host/host-fs.js';
import { createLibcNativeEvents } from '../../native/libc-native-events.js';
import { createLibcProcessHandles } from '../../native/libc-process-handles.js';
import type { EventFd } from '../../native/native-events.js';
import { ArmedKill } from './armed-kill.js';
import type { FromThread, ToThread } from './kill-protocol.js';

/** What the main thread hands the thread at its start. */
export interface KillThreadData {
  readonly port: MessagePort;
  readonly control: SharedArrayBuffer;
  readonly wake: number;
}

/** The longest one wait lasts; the thread only ever needs waking by the kernel or the main thread. */
const WAIT_TIMEOUT_MS = 10_000;

// Its imports are loaded before this line runs, so loading it elsewhere shows they resolve.
if (workerData === null) throw new Error("kill-thread.js runs as the kill path's worker thread");
const data = workerData as KillThreadData;
const { port } = data;
const kill = new ArmedKill({
  native: createLibcNativeEvents(),
  fs: nodeHostFs,
  handles: createLibcProcessHandles(),
  control: new Int32Array(data.control),
  wake: data.wake as EventFd,
  post: (message: FromThread) => port.postMessage(message),
  receive: () => receiveMessageOnPort(port)?.message as ToThread | undefined,
  nowNs: () => process.hrtime.bigint(),
  fileId: (path) => {
    try {
      const stats = statSync(path);
      return `${stats.dev}:${stats.ino}`;
    } catch {
      return null;
    }
  },
});
while (kill.step(WAIT_TIMEOUT_MS));
port.close();
