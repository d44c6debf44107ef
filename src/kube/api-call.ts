// One bounded API call: every request the agent makes goes through `ApiCaller.call`, which aborts
// it after a timeout (on the injected clock), sets per-call headers (the patch content type), and
// turns whatever the client library threw into an `ApiFailure` with the HTTP status and the
// message of the API's `Status` body. Callers decide what a status means; nothing here throws.

import type { ConfigurationOptions, RequestContext } from '@kubernetes/client-node';
import type { Clock } from '../api/clock.js';
import { errorMessage } from '../errors.js';
import type { ClientLibrary } from './client-library.js';

/** A `StatusCause` of the API's `Status` body (the JSON calls the cause's type `reason`). */
export interface StatusCause {
  readonly reason?: string;
  readonly message?: string;
  readonly field?: string;
}

/** Why a call failed: the HTTP status (0 when the server was not reached or did not answer in time). */
export interface ApiFailure {
  readonly status: number;
  /** The `Status` reason (`NotFound`, `Conflict`, `TooManyRequests`...), or `Timeout` / `NetworkError`. */
  readonly reason: string;
  readonly message: string;
  readonly causes: readonly StatusCause[];
}

export type ApiResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: ApiFailure };

export interface CallOptions {
  /** The request's Content-Type (patches: strategic merge, merge or JSON patch). */
  readonly contentType?: string;
}

export interface ApiCaller {
  /** Runs `request` with options that bound it; resolves with its value or the failure. */
  call<T>(request: (options: ConfigurationOptions) => Promise<T>, callOptions?: CallOptions): Promise<ApiResult<T>>;
}

/** The default bound on one request: long enough for a loaded API server, short enough to retry. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export function createApiCaller(deps: { readonly lib: ClientLibrary; readonly clock: Clock; readonly timeoutMs?: number }): ApiCaller {
  const timeoutMs = deps.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  return {
    async call<T>(request: (options: ConfigurationOptions) => Promise<T>, callOptions: CallOptions = {}): Promise<ApiResult<T>> {
      const controller = new AbortController();
      let timedOut = false;
      let cancelTimer = (): void => {};
      // The abort ends the HTTP request; the race makes the bound hold even if something in the
      // library ignored the signal.
      const deadline = new Promise<'timeout'>((resolve) => {
        cancelTimer = deps.clock.after(timeoutMs, () => {
          timedOut = true;
          controller.abort();
          resolve('timeout');
        });
      });
      const middleware = {
        pre: (context: RequestContext) => {
          context.setSignal(controller.signal);
          if (callOptions.contentType !== undefined) context.setHeaderParam('Content-Type', callOptions.contentType);
          return new deps.lib.Observable(Promise.resolve(context));
        },
        post: <R>(response: R) => new deps.lib.Observable(Promise.resolve(response)),
      };
      const options = { middleware: [middleware], middlewareMergeStrategy: 'append' } as unknown as ConfigurationOptions;
      try {
        const outcome = await Promise.race([request(options).then((value) => ({ value })), deadline]);
        if (outcome === 'timeout') return { ok: false, failure: timeoutFailure(timeoutMs) };
        return { ok: true, value: outcome.value };
      } catch (err) {
        return { ok: false, failure: timedOut ? timeoutFailure(timeoutMs) : toApiFailure(err) };
      } finally {
        cancelTimer();
      }
    },
  };
}

function timeoutFailure(timeoutMs: number): ApiFailure {
  return { status: 0, reason: 'Timeout', message: `no answer from the API server within ${timeoutMs} ms`, causes: [] };
}

/**
 * Maps an error thrown by the client library: `ApiException` carries the HTTP status in `code`
 * and the raw response text (a `Status` JSON document) in `body`; anything else is a transport
 * error (connection refused, reset, TLS), reported with status 0.
 */
export function toApiFailure(err: unknown): ApiFailure {
  if (isApiException(err)) {
    const status = parseStatusBody(err.body);
    return {
      status: err.code,
      reason: status?.reason ?? httpReason(err.code),
      message: status?.message ?? (typeof err.body === 'string' && err.body !== '' ? err.body : exceptionMessage(err.message)),
      causes: status?.details?.causes ?? [],
    };
  }
  const message = errorMessage(err);
  return { status: 0, reason: 'NetworkError', message, causes: [] };
}

interface StatusBody {
  readonly message?: string | undefined;
  readonly reason?: string | undefined;
  readonly details?: { readonly causes?: StatusCause[] | undefined } | undefined;
}

function isApiException(err: unknown): err is { code: number; body: unknown; message: string } {
  return typeof err === 'object' && err !== null && typeof (err as { code?: unknown }).code === 'number' && 'body' in err;
}

function parseStatusBody(body: unknown): StatusBody | null {
  let value: unknown = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return null;
    }
  }
  if (typeof value !== 'object' || value === null) return null;
  const record = value as Record<string, unknown>;
  const details = typeof record.details === 'object' && record.details !== null ? (record.details as Record<string, unknown>) : undefined;
  return {
    message: typeof record.message === 'string' ? record.message : undefined,
    reason: typeof record.reason === 'string' ? record.reason : undefined,
    details: details === undefined ? undefined : { causes: Array.isArray(details.causes) ? (details.causes as StatusCause[]) : undefined },
  };
}

function httpReason(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    default:
      return status >= 500 ? 'InternalError' : 'Unknown';
  }
}

// ApiException's own message is `HTTP-Code: 401\nMessage: Unauthorized\nBody: ...`.
function exceptionMessage(text: string): string {
  return /^Message: (.*)$/m.exec(text)?.[1] ?? text.split('\n')[0] ?? text;
}
