// ProcessHandles on the real kernel: pidfd_open, pidfd_send_signal and process_mrelease through koffi (libc.ts).

import { constants } from 'node:os';
import { pidfdCalls } from './libc.js';
import * as koffi from 'koffi';
import { ERRNO_ESRCH, nativeError } from './native-error.js';
import type { PidFd, ProcessHandles } from './process-handles.js';

const ERRNO_EINVAL = koffi.os.errno.EINVAL ?? 22;
const ERRNO_ENOSYS = koffi.os.errno.ENOSYS ?? 38;
const ERRNO_EPERM = koffi.os.errno.EPERM ?? 1;

/** The real process handles. Cheap to create; libc is loaded on the first call. */
export function createLibcProcessHandles(): ProcessHandles {
  return {
    open(pid) {
      const c = pidfdCalls();
      const fd = c.pidfd_open(pid);
      if (fd >= 0) return fd as PidFd;
      const errno = c.errno();
      if (errno === ERRNO_ESRCH) return null;
      throw nativeError('pidfd_open', errno, `pid ${pid}`);
    },
    signal(handle, signal) {
      const c = pidfdCalls();
      const number = constants.signals[signal];
      if (c.pidfd_send_signal(handle, number) === 0) return true;
      const errno = c.errno();
      if (errno === ERRNO_ESRCH) return false;
      throw nativeError('pidfd_send_signal', errno, `${signal} through pidfd ${handle}`);
    },
    release(handle) {
      const c = pidfdCalls();
      if (c.process_mrelease(handle) === 0) return 'released';
      const errno = c.errno();
      if (errno === ERRNO_ESRCH) return 'gone';
      if (errno === ERRNO_EINVAL) return 'not-dying';
      // ENOSYS before Linux 5.15, EPERM under a seccomp profile that refuses it: the kill alone then frees the memory.
      if (errno === ERRNO_ENOSYS || errno === ERRNO_EPERM) return 'unsupported';
      throw nativeError('process_mrelease', errno, `pidfd ${handle}`);
    },
    close(handle) {
      pidfdCalls().close(handle);
    },
  };
}
