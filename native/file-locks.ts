// The port between the node lock and the kernel's advisory file locks: an exclusive flock(2) on an
// open file, tried without waiting. The kernel drops it when the last descriptor of that open file
// is closed, which includes the process dying however it dies (kill -9 too), so a lock never
// outlives its holder. native/libc-file-locks.ts implements it through koffi.

export interface FileLocks {
  /** `flock(fd, LOCK_EX | LOCK_NB)`: true when taken, false when another open file holds it (EWOULDBLOCK). Throws a NativeError otherwise. */
  tryLockExclusive(fd: number): boolean;
}
