// FileLocks on libc's flock(2), through koffi. EINTR is retried (a signal arriving during the call);
// EWOULDBLOCK is the answer "held by another open file"; anything else is an error worth reporting.

import { ERRNO_EAGAIN, ERRNO_EINTR, nativeError } from './native-error.js';
import type { FileLocks } from './file-locks.js';
import { LOCK_EX, LOCK_NB, libc } from './libc.js';

export function createLibcFileLocks(): FileLocks {
  const c = libc();
  return {
    tryLockExclusive(fd) {
      for (;;) {
        if (c.flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
        const errno = c.errno();
        if (errno === ERRNO_EINTR) continue;
        // EWOULDBLOCK is EAGAIN on Linux.
        if (errno === ERRNO_EAGAIN) return false;
        throw nativeError('flock', errno, `fd ${fd}`);
      }
    },
  };
}
