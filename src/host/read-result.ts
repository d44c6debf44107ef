// The outcome of reading one stat from the host: a value, or the reason it is missing. Readers
// never throw, so one unreadable file costs one stat, never the whole observation.

import { errorMessage } from '../errors.js';

export type ReadResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reason: string; readonly notFound: boolean };

export function readOk<T>(value: T): ReadResult<T> {
  return { ok: true, value };
}

export function readFailed<T>(reason: string, notFound = false): ReadResult<T> {
  return { ok: false, reason, notFound };
}

/** Whether a thrown fs error means the path does not exist (as opposed to being unreadable). */
export function isNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && (error.code === 'ENOENT' || error.code === 'ENOTDIR');
}

/** A short description of a failed fs call: `ENOENT`, `EACCES`, or the message. */
export function describeError(error: unknown): string {
  if (typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string') return error.code;
  return errorMessage(error);
}
