// ProcessHandles on the real kernel: pidfd_open and pidfd_send_signal through koffi (libc.ts).

import { constants } from 'node:os';
import { pidfdCalls } from './libc.js';
import { ERRNO_ESRCH, nativeError } from './native-error.js';
import type { PidFd, ProcessHandles } from './process-handles.js';

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
    close(handle) {
      pidfdCalls().close(handle);
    },
  };
}
