// The koffi declarations of the libc calls the notifiers need (eventfd, epoll_create1, epoll_ctl,
// epoll_wait, read, pread, write, open, lseek, close, and the xattr calls), flock for the node lock, the pidfd calls the pod
// terminator signals through (pidfd_open, pidfd_send_signal), and errno. This is, with native-error.ts, the only code that
// touches the FFI. libc is loaded on first use, so importing this module costs nothing on machines
// (or in tests) that never arm a kernel notifier or end a process.

import * as koffi from 'koffi';

/** Flag values from the Linux UAPI headers; identical on x86_64 and arm64 (the generic ABI). */
export const O_RDONLY = 0o0;
export const O_WRONLY = 0o1;
export const O_RDWR = 0o2;
export const O_NONBLOCK = 0o4000;
export const O_CLOEXEC = 0o2000000;
export const EFD_NONBLOCK = O_NONBLOCK;
export const EFD_CLOEXEC = O_CLOEXEC;
export const EPOLL_CLOEXEC = O_CLOEXEC;
export const EPOLL_CTL_ADD = 1;
export const EPOLL_CTL_DEL = 2;
export const SEEK_END = 2;
/** flock(2) operations (asm-generic/fcntl.h). */
export const LOCK_EX = 2;
export const LOCK_NB = 4;

/**
 * `struct epoll_event` is declared `__attribute__((packed))` on x86 only: 12 bytes with the data at
 * offset 4 there, 16 bytes with the data at offset 8 elsewhere (measured on these machines).
 */
const packedEpollEvent = process.arch === 'x64' || process.arch === 'ia32';
// Anonymous: koffi's type names are process-wide, and a module evaluated twice in one process (a
// test runner's fresh module registry) must not collide with itself.
export const epollEventType = packedEpollEvent
  ? koffi.pack({ events: 'uint32_t', data: 'uint64_t' })
  : koffi.struct({ events: 'uint32_t', data: 'uint64_t' });
export const epollEventSizeBytes = koffi.sizeof(epollEventType);

/** Completion callback of an `.async` call: koffi passes an error only when the call could not be made. */
type AsyncCallback<R> = (err: unknown, result: R) => void;

export interface Libc {
  eventfd(initval: number, flags: number): number;
  epoll_create1(flags: number): number;
  epoll_ctl(epfd: number, op: number, fd: number, event: { events: number; data: bigint } | null): number;
  /** Blocks the calling thread: only on a thread of its own (the kill thread). `events` is a buffer of maxevents epoll_event structs. */
  epoll_wait(epfd: number, events: Buffer, maxevents: number, timeoutMs: number): number;
  /** The same wait on a libuv pool thread (the main thread's way). */
  epoll_wait_async(epfd: number, events: Buffer, maxevents: number, timeoutMs: number, done: AsyncCallback<number>): void;
  read(fd: number, buf: Buffer, count: number): number;
  /** `pread`: reads from `offset` without moving the file offset (a kernel file is generated afresh at offset 0). */
  pread(fd: number, buf: Uint8Array, count: number, offset: number): number;
  write(fd: number, buf: Uint8Array, count: number): number;
  /** `write` on a libuv pool thread; `buf` must stay alive until `done` runs. */
  write_async(fd: number, buf: Uint8Array, count: number, done: AsyncCallback<number | bigint>): void;
  open(path: string, flags: number): number;
  lseek(fd: number, offset: number, whence: number): number;
  getxattr(path: string, name: string, value: Buffer | null, size: number): number;
  setxattr(path: string, name: string, value: Uint8Array, size: number, flags: number): number;
  removexattr(path: string, name: string): number;
  close(fd: number): number;
  /** `flock`: 0, or -1 with errno (EWOULDBLOCK under LOCK_NB when another open file holds the lock). */
  flock(fd: number, operation: number): number;
  /** The calling thread's errno; inside an `.async` completion callback, the errno the pool thread saw. */
  errno(): number;
}

let loaded: Libc | null = null;

/** Loads libc and declares the calls once; later calls return the same object. */
export function libc(): Libc {
  if (loaded !== null) return loaded;
  const lib = koffi.load('libc.so.6');
  const eventfd = lib.func('int eventfd(unsigned int initval, int flags)');
  const epollCreate1 = lib.func('int epoll_create1(int flags)');
  const epollCtl = lib.func('epoll_ctl', 'int', ['int', 'int', 'int', koffi.pointer(epollEventType)]);
  const epollWait = lib.func('int epoll_wait(int epfd, void *events, int maxevents, int timeout)');
  const read = lib.func('long read(int fd, void *buf, size_t count)');
  const pread = lib.func('long pread(int fd, void *buf, size_t count, long offset)');
  const write = lib.func('long write(int fd, const void *buf, size_t count)');
  // open is variadic in C (the mode for O_CREAT); declared so, and never given a mode here.
  const open = lib.func('int open(const char *path, int flags, ...)');
  const lseek = lib.func('long lseek(int fd, long offset, int whence)');
  const close = lib.func('int close(int fd)');
  const flock = lib.func('int flock(int fd, int operation)');
  const getxattr = lib.func('long getxattr(const char *path, const char *name, void *value, size_t size)');
  const setxattr = lib.func('int setxattr(const char *path, const char *name, const void *value, size_t size, int flags)');
  const removexattr = lib.func('int removexattr(const char *path, const char *name)');
  loaded = {
    eventfd: (initval, flags) => eventfd(initval, flags) as number,
    epoll_create1: (flags) => epollCreate1(flags) as number,
    epoll_ctl: (epfd, op, fd, event) => epollCtl(epfd, op, fd, event) as number,
    epoll_wait: (epfd, events, maxevents, timeoutMs) => epollWait(epfd, events, maxevents, timeoutMs) as number,
    epoll_wait_async: (epfd, events, maxevents, timeoutMs, done) => {
      epollWait.async(epfd, events, maxevents, timeoutMs, done);
    },
    read: (fd, buf, count) => Number(read(fd, buf, count)),
    pread: (fd, buf, count, offset) => Number(pread(fd, buf, count, offset)),
    write: (fd, buf, count) => Number(write(fd, buf, count)),
    write_async: (fd, buf, count, done) => {
      write.async(fd, buf, count, done);
    },
    open: (path, flags) => open(path, flags) as number,
    lseek: (fd, offset, whence) => Number(lseek(fd, offset, whence)),
    close: (fd) => close(fd) as number,
    flock: (fd, operation) => flock(fd, operation) as number,
    getxattr: (path, name, value, size) => Number(getxattr(path, name, value, size)),
    setxattr: (path, name, value, size, flags) => setxattr(path, name, value, size, flags) as number,
    removexattr: (path, name) => removexattr(path, name) as number,
    errno: () => koffi.errno(),
  };
  return loaded;
}

export interface PidfdCalls {
  /** `pidfd_open(pid, 0)`: a descriptor on exactly this process (close-on-exec), or -1 with errno. */
  pidfd_open(pid: number): number;
  /** `pidfd_send_signal(pidfd, sig, NULL, 0)`: 0, or -1 with errno (ESRCH once the process has exited). */
  pidfd_send_signal(pidfd: number, signal: number): number;
  /**
   * `process_mrelease(pidfd, 0)` (Linux 5.15): reaps the memory of a process that is dying (SIGKILL
   * pending or exiting) now, in the caller, without waiting for it to exit. 0, or -1 with errno
   * (ENOSYS on older kernels, EINVAL for a process that is not dying, ESRCH once it is gone).
   */
  process_mrelease(pidfd: number): number;
  close(fd: number): number;
  errno(): number;
}

// The system call numbers of the calls added after the generic table was unified (Linux 5.1): the
// same on x86_64, arm64 and every other architecture the agent runs on.
const SYS_PIDFD_SEND_SIGNAL = 424;
const SYS_PIDFD_OPEN = 434;
const SYS_PROCESS_MRELEASE = 448;

let loadedPidfd: PidfdCalls | null = null;

/**
 * The pidfd calls (Linux 5.3 and later): glibc's wrappers where it has them (2.36 and later),
 * the raw system calls otherwise. Loaded once.
 */
export function pidfdCalls(): PidfdCalls {
  if (loadedPidfd !== null) return loadedPidfd;
  const lib = koffi.load('libc.so.6');
  const close = lib.func('int close(int fd)');
  let open: (pid: number) => number;
  let send: (pidfd: number, signal: number) => number;
  try {
    const wrappedOpen = lib.func('int pidfd_open(int pid, unsigned int flags)');
    const wrappedSend = lib.func('int pidfd_send_signal(int pidfd, int sig, void *info, unsigned int flags)');
    open = (pid) => wrappedOpen(pid, 0) as number;
    send = (pidfd, signal) => wrappedSend(pidfd, signal, null, 0) as number;
  } catch {
    // An older glibc: the same calls through syscall(2), which is variadic in C.
    const syscall = lib.func('long syscall(long number, ...)');
    open = (pid) => Number(syscall(SYS_PIDFD_OPEN, 'int', pid, 'unsigned int', 0));
    send = (pidfd, signal) => Number(syscall(SYS_PIDFD_SEND_SIGNAL, 'int', pidfd, 'int', signal, 'void *', null, 'unsigned int', 0));
  }
  // Always through syscall(2): glibc has a wrapper only since 2.36, and the number is the same everywhere.
  const syscall = lib.func('long syscall(long number, ...)');
  const release = (pidfd: number): number => Number(syscall(SYS_PROCESS_MRELEASE, 'int', pidfd, 'unsigned int', 0));
  loadedPidfd = { pidfd_open: open, pidfd_send_signal: send, process_mrelease: release, close: (fd) => close(fd) as number, errno: () => koffi.errno() };
  return loadedPidfd;
}

/** Decodes the i-th `struct epoll_event` of an epoll_wait buffer. */
export function decodeEpollEvent(buffer: Buffer, index: number): { events: number; data: bigint } {
  const decoded = koffi.decode(buffer, index * epollEventSizeBytes, epollEventType) as { events: number; data: number | bigint };
  return { events: decoded.events, data: BigInt(decoded.data) };
}
