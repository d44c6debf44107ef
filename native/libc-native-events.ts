// NativeEvents on the real kernel, through the libc declarations in libc.ts. Every descriptor is
// created close-on-exec (the agent spawns nothing that should inherit them) and eventfds are
// non-blocking, so reading one on the main thread never blocks; the calls that do block (epoll_wait,
// and a control-file write that waits for an RCU grace period) run through koffi's `.async` on a
// libuv pool thread, or, for the kill thread's own epoll_wait, on that thread.

import {
  decodeEpollEvent,
  EFD_CLOEXEC,
  EFD_NONBLOCK,
  EPOLL_CLOEXEC,
  EPOLL_CTL_ADD,
  EPOLL_CTL_DEL,
  epollEventSizeBytes,
  libc,
  O_CLOEXEC,
  O_NONBLOCK,
  O_RDONLY,
  O_RDWR,
  O_WRONLY,
  SEEK_END,
} from './libc.js';
import { errorMessage } from '../src/errors.js';
import { ERRNO_EAGAIN, ERRNO_EINTR, ERRNO_ENODATA, nativeError } from './native-error.js';
import type { AnyFd, EpollFd, EventFd, FileAccess, FileFd, NativeEvents, ReadyEvent } from './native-events.js';

const EVENTFD_COUNTER_BYTES = 8;
/** The attributes kept here are a few dozen bytes; a larger one is not the agent's. */
const XATTR_MAX_BYTES = 1024;

const accessFlags: Readonly<Record<FileAccess, number>> = {
  read: O_RDONLY,
  write: O_WRONLY,
  'read-write-nonblock': O_RDWR | O_NONBLOCK,
  'read-nonblock': O_RDONLY | O_NONBLOCK,
};

/** The real native layer. Cheap to create; libc is loaded on the first call. */
export function createLibcNativeEvents(): NativeEvents {
  return {
    createEpoll() {
      const c = libc();
      const fd = c.epoll_create1(EPOLL_CLOEXEC);
      if (fd < 0) throw nativeError('epoll_create1', c.errno());
      return fd as EpollFd;
    },

    createEventFd() {
      const c = libc();
      const fd = c.eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (fd < 0) throw nativeError('eventfd', c.errno());
      return fd as EventFd;
    },

    addToEpoll(epoll, fd, events, token) {
      const c = libc();
      if (c.epoll_ctl(epoll, EPOLL_CTL_ADD, fd, { events, data: BigInt(token) }) < 0) {
        throw nativeError('epoll_ctl', c.errno(), `add fd ${fd}`);
      }
    },

    removeFromEpoll(epoll, fd) {
      const c = libc();
      // Linux ignores the event argument of EPOLL_CTL_DEL, but kernels before 2.6.9 required one.
      if (c.epoll_ctl(epoll, EPOLL_CTL_DEL, fd, { events: 0, data: 0n }) < 0) {
        throw nativeError('epoll_ctl', c.errno(), `delete fd ${fd}`);
      }
    },

    waitEpoll(epoll, maxEvents, timeoutMs) {
      const c = libc();
      // One buffer per call: the pool thread writes into it until the call returns.
      const buffer = Buffer.alloc(maxEvents * epollEventSizeBytes);
      return new Promise<readonly ReadyEvent[]>((resolve, reject) => {
        c.epoll_wait_async(epoll, buffer, maxEvents, timeoutMs, (err, count) => {
          if (err !== null && err !== undefined) {
            reject(err instanceof Error ? err : new Error(errorMessage(err)));
            return;
          }
          if (count < 0) {
            const errno = c.errno();
            if (errno === ERRNO_EINTR) resolve([]);
            else reject(nativeError('epoll_wait', errno, `epoll fd ${epoll}`));
            return;
          }
          resolve(decodeReady(buffer, count));
        });
      });
    },

    waitEpollBlocking(epoll, maxEvents, timeoutMs) {
      const c = libc();
      const buffer = Buffer.alloc(maxEvents * epollEventSizeBytes);
      const count = c.epoll_wait(epoll, buffer, maxEvents, timeoutMs);
      if (count < 0) {
        const errno = c.errno();
        if (errno === ERRNO_EINTR) return [];
        throw nativeError('epoll_wait', errno, `epoll fd ${epoll}`);
      }
      return decodeReady(buffer, count);
    },

    readEventFd(fd) {
      const c = libc();
      const buffer = Buffer.alloc(EVENTFD_COUNTER_BYTES);
      const readBytes = c.read(fd, buffer, EVENTFD_COUNTER_BYTES);
      if (readBytes < 0) {
        const errno = c.errno();
        if (errno === ERRNO_EAGAIN) return 0n;
        throw nativeError('read', errno, `eventfd ${fd}`);
      }
      if (readBytes !== EVENTFD_COUNTER_BYTES) throw nativeError('read', 0, `eventfd ${fd} returned ${readBytes} bytes`);
      return buffer.readBigUInt64LE(0);
    },

    signalEventFd(fd, amount) {
      const c = libc();
      const buffer = Buffer.alloc(EVENTFD_COUNTER_BYTES);
      buffer.writeBigUInt64LE(amount, 0);
      if (c.write(fd, buffer, EVENTFD_COUNTER_BYTES) !== EVENTFD_COUNTER_BYTES) throw nativeError('write', c.errno(), `eventfd ${fd}`);
    },

    openFile(path: string, access: FileAccess): FileFd {
      const c = libc();
      const fd = c.open(path, accessFlags[access] | O_CLOEXEC);
      if (fd < 0) throw nativeError('open', c.errno(), path);
      return fd as FileFd;
    },

    readFromStart(fd, buffer) {
      const c = libc();
      const readBytes = c.pread(fd, buffer, buffer.length, 0);
      if (readBytes < 0) throw nativeError('pread', c.errno(), `fd ${fd}`);
      return readBytes;
    },

    writeFile(fd, bytes) {
      const c = libc();
      const written = c.write(fd, bytes, bytes.length);
      if (written < 0) throw nativeError('write', c.errno(), `fd ${fd}`);
      if (written !== bytes.length) throw nativeError('write', 0, `fd ${fd}: wrote ${written} of ${bytes.length} bytes`);
    },

    writeFileAsync(fd, bytes) {
      const c = libc();
      return new Promise<void>((resolve, reject) => {
        c.write_async(fd, bytes, bytes.length, (err, result) => {
          if (err !== null && err !== undefined) {
            reject(err instanceof Error ? err : new Error(errorMessage(err)));
            return;
          }
          const written = Number(result);
          if (written < 0) reject(nativeError('write', c.errno(), `fd ${fd}`));
          else if (written !== bytes.length) reject(nativeError('write', 0, `fd ${fd}: wrote ${written} of ${bytes.length} bytes`));
          else resolve();
        });
      });
    },

    readFile(fd, maxBytes, offset) {
      const c = libc();
      const buffer = Buffer.alloc(maxBytes);
      const readBytes = offset === null ? c.read(fd, buffer, maxBytes) : c.pread(fd, buffer, maxBytes, offset);
      if (readBytes < 0) {
        const errno = c.errno();
        if (errno === ERRNO_EAGAIN) return null;
        throw nativeError(offset === null ? 'read' : 'pread', errno, `fd ${fd}`);
      }
      return buffer.subarray(0, readBytes);
    },

    seekToEnd(fd) {
      const c = libc();
      if (c.lseek(fd, 0, SEEK_END) < 0) throw nativeError('lseek', c.errno(), `fd ${fd}`);
    },

    close(fd: AnyFd) {
      const c = libc();
      if (c.close(fd) < 0) throw nativeError('close', c.errno(), `fd ${fd}`);
    },

    getXattr(path, name) {
      const c = libc();
      const buffer = Buffer.alloc(XATTR_MAX_BYTES);
      const readBytes = c.getxattr(path, name, buffer, buffer.length);
      if (readBytes < 0) {
        const errno = c.errno();
        if (errno === ERRNO_ENODATA) return null;
        throw nativeError('getxattr', errno, `${name} of ${path}`);
      }
      return buffer.toString('utf8', 0, readBytes);
    },

    setXattr(path, name, value) {
      const c = libc();
      const bytes = Buffer.from(value, 'utf8');
      if (bytes.length > XATTR_MAX_BYTES) throw nativeError('setxattr', 0, `${name} of ${path}: ${bytes.length} bytes is more than ${XATTR_MAX_BYTES}`);
      if (c.setxattr(path, name, bytes, bytes.length, 0) < 0) throw nativeError('setxattr', c.errno(), `${name} of ${path}`);
    },

    removeXattr(path, name) {
      const c = libc();
      if (c.removexattr(path, name) < 0) {
        const errno = c.errno();
        if (errno !== ERRNO_ENODATA) throw nativeError('removexattr', errno, `${name} of ${path}`);
      }
    },
  };
}

function decodeReady(buffer: Buffer, count: number): ReadyEvent[] {
  const ready: ReadyEvent[] = [];
  for (let i = 0; i < count; i++) {
    const event = decodeEpollEvent(buffer, i);
    ready.push({ token: Number(event.data), events: event.events });
  }
  return ready;
}
