// The port between the notifiers and the kernel: eventfd, one epoll set, the memcg and PSI control
// files, as typed operations on opaque descriptor handles. native/libc-native-events.ts implements
// it on libc through koffi; test/fakes/fake-native.ts simulates it so the notifier logic is testable
// without a kernel. Every call here is non-blocking except waitEpoll, which runs off the main thread.

/** An epoll instance. The brands keep one kind of descriptor from being passed where another belongs. */
export type EpollFd = number & { readonly __handle: 'epoll' };
/** An eventfd (a 64-bit kernel counter), created non-blocking and close-on-exec. */
export type EventFd = number & { readonly __handle: 'eventfd' };
/** A file opened by path (a cgroup control file, a PSI pressure file). */
export type FileFd = number & { readonly __handle: 'file' };

export type AnyFd = EpollFd | EventFd | FileFd;

/** epoll event bits (`<sys/epoll.h>`), the same on every Linux architecture. */
export const EPOLLIN = 0x001;
export const EPOLLPRI = 0x002;
export const EPOLLERR = 0x008;
export const EPOLLHUP = 0x010;

/**
 * How a file is opened: read-only (the memcg watch file, a cgroup v2 memory.events), write-only
 * (cgroup.event_control), read-write non-blocking (a PSI trigger), or read-only non-blocking (the
 * kernel log, /dev/kmsg, whose reads would otherwise wait for the next record).
 */
export type FileAccess = 'read' | 'write' | 'read-write-nonblock' | 'read-nonblock';

/** One ready descriptor from epoll_wait: the token it was added with and the returned event bits. */
export interface ReadyEvent {
  readonly token: number;
  readonly events: number;
}

export interface NativeEvents {
  /** `epoll_create1(EPOLL_CLOEXEC)`. */
  createEpoll(): EpollFd;
  /** `eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)`. */
  createEventFd(): EventFd;
  /**
   * `epoll_ctl(EPOLL_CTL_ADD)`; `token` (a non-negative safe integer) comes back in ReadyEvent, so a
   * late event for a descriptor closed and reused meanwhile can be told apart by its token.
   */
  addToEpoll(epoll: EpollFd, fd: EventFd | FileFd, events: number, token: number): void;
  /** `epoll_ctl(EPOLL_CTL_DEL)`. */
  removeFromEpoll(epoll: EpollFd, fd: EventFd | FileFd): void;
  /**
   * `epoll_wait` on a libuv pool thread (a blocking call holds one of the pool's threads until it
   * returns). Resolves with the ready descriptors, `[]` on timeout or EINTR; rejects with a NativeError.
   */
  waitEpoll(epoll: EpollFd, maxEvents: number, timeoutMs: number): Promise<readonly ReadyEvent[]>;
  /**
   * `epoll_wait` on the calling thread, which it blocks until a descriptor is ready or `timeoutMs`
   * passes: only for a thread of its own (the kill thread), never the main thread. The ready
   * descriptors, `[]` on timeout or EINTR; throws a NativeError.
   */
  waitEpollBlocking(epoll: EpollFd, maxEvents: number, timeoutMs: number): readonly ReadyEvent[];
  /** Reads the 8-byte counter, which resets it; `0n` when it was already zero (EAGAIN). */
  readEventFd(fd: EventFd): bigint;
  /** Adds `amount` to the counter (wakes an epoll_wait watching it for EPOLLIN). */
  signalEventFd(fd: EventFd, amount: bigint): void;
  /** `open(path, flags | O_CLOEXEC)`. */
  openFile(path: string, access: FileAccess): FileFd;
  /**
   * `pread(fd, buffer, buffer.length, 0)`: the number of bytes read. A kernel file read at offset 0
   * is generated afresh, and reading a cgroup file that poll reported clears the report (kernfs).
   */
  readFromStart(fd: FileFd, buffer: Uint8Array): number;
  /** Writes all of `bytes` in one `write` (control files take one command per write). */
  writeFile(fd: FileFd, bytes: Uint8Array): void;
  /**
   * The same write on a libuv pool thread, for writes the kernel makes slow: registering a memcg
   * threshold waits for an RCU grace period (12 to 25 ms measured here), too long for the main thread.
   */
  writeFileAsync(fd: FileFd, bytes: Uint8Array): Promise<void>;
  /**
   * One `read` of at most `maxBytes` (`offset` null), or one `pread` at `offset`: the bytes read,
   * or null when a non-blocking descriptor has nothing to read (EAGAIN). /dev/kmsg hands out one
   * record per read; a kernel file re-read at offset 0 is generated afresh. Rejects nothing: a
   * failure throws the NativeError (EPIPE from /dev/kmsg: records were overwritten before being read).
   */
  readFile(fd: FileFd, maxBytes: number, offset: number | null): Uint8Array | null;
  /** `lseek(fd, 0, SEEK_END)`: on /dev/kmsg, skips every record already in the buffer. */
  seekToEnd(fd: FileFd): void;
  /** `close`. */
  close(fd: AnyFd): void;
  /** An extended attribute of a path (a cgroup directory), as text; null when it has none (ENODATA). */
  getXattr(path: string, name: string): string | null;
  /** Sets an extended attribute (created or replaced). */
  setXattr(path: string, name: string, value: string): void;
  /** Removes an extended attribute; a no-op when there is none. */
  removeXattr(path: string, name: string): void;
}
