// Turns a failed libc call into the catalog's NativeError: the call, the errno and its symbolic
// name, plus what the call was about (a path, a descriptor). Every failure in native/ goes through
// nativeError, so errors read the same wherever they come from.

import * as koffi from 'koffi';
import { NativeError } from '../src/errors.js';

export const ERRNO_EINTR = koffi.os.errno.EINTR ?? 4;
export const ERRNO_EAGAIN = koffi.os.errno.EAGAIN ?? 11;
export const ERRNO_ENODATA = koffi.os.errno.ENODATA ?? 61;
export const ERRNO_ESRCH = koffi.os.errno.ESRCH ?? 3;

// errno number -> the first symbolic name koffi lists for it (EAGAIN before its alias EWOULDBLOCK).
const errnoNames = new Map<number, string>();
for (const [name, value] of Object.entries(koffi.os.errno)) {
  if (!errnoNames.has(value)) errnoNames.set(value, name);
}

/** The symbolic name of an errno value (`ENOENT`), or `errno <n>` when unknown. */
export function errnoName(errno: number): string {
  return errnoNames.get(errno) ?? `errno ${errno}`;
}

/** The NativeError for `syscall` having failed with `errno`; `about` names what it was called on. */
export function nativeError(syscall: string, errno: number, about = ''): NativeError {
  // errno 0 marks a call that returned but did something unexpected (a short write): no name to give.
  if (errno === 0) return new NativeError(syscall, errno, about);
  return new NativeError(syscall, errno, about === '' ? errnoName(errno) : `${errnoName(errno)} (${about})`);
}
