// The wire between the stand-in and its clients: request bodies, the request log, JSON answers
// and Status errors, and the faults a test injects.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../api/clock.js';
import { errorMessage } from '../../errors.js';
import { badRequest, conflict, OBJECT_MODIFIED, StatusError } from './objects.js';

// Request bodies: read whole, then decoded as JSON with the API server's 400 for a body that is
// not JSON (an empty body decodes to undefined).

export function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw badRequest(`the body of the request could not be decoded: ${errorMessage(err)}`);
  }
}

// The record of every request the stand-in received, in arrival order, for a test to assert on
// what the agent actually sent.

/** One request as the stand-in saw it, for assertions. */
export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  /** The query string without `?`. */
  readonly query: string;
  /** The answer's status; 0 while unanswered or when the client gave up first. */
  status: number;
  readonly contentType: string;
  readonly userAgent: string;
  /** The parsed JSON body, if any. */
  body?: unknown;
}

export class RequestLog {
  private entries: RecordedRequest[] = [];

  /** Records a request on arrival, before its body is read: a request whose body never comes is still seen. */
  record(request: IncomingMessage, method: string, url: URL): RecordedRequest {
    const entry: RecordedRequest = {
      method,
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      status: 0,
      contentType: String(request.headers['content-type'] ?? ''),
      userAgent: String(request.headers['user-agent'] ?? ''),
    };
    this.entries.push(entry);
    return entry;
  }

  /** Adds the body once read: parsed when it is JSON, as text otherwise. */
  recordBody(entry: RecordedRequest, body: string): void {
    if (body === '') return;
    try {
      entry.body = JSON.parse(body) as unknown;
    } catch {
      entry.body = body;
    }
  }

  all(): RecordedRequest[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  clear(): void {
    this.entries = [];
  }
}

// One request in flight and the JSON answers to it: a body with its status, or a StatusError as
// its Status body (with the Retry-After a 429 carries).

export interface RequestContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly entry: RecordedRequest;
  readonly url: URL;
  readonly body: string;
}

export function send(ctx: RequestContext, status: number, body: unknown): void {
  ctx.entry.status = status;
  const text = JSON.stringify(body);
  ctx.response.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  ctx.response.end(text);
}

export function sendError(ctx: RequestContext, err: StatusError): void {
  if (err.code === 429) ctx.response.setHeader('Retry-After', '1');
  send(ctx, err.code, err.body());
}

// Fault injection: requests matching a FaultSpec are held for its delay on the stand-in's clock
// (abandoned when the client gives up or the server stops) and then answered with its status and
// the Status body the API server would send for it.

/** A fault to inject: requests matching `method` and `pathPattern` wait `delayMs`, then get `status`. */
export interface FaultSpec {
  /** HTTP method, any case (default: any). */
  readonly method?: string;
  /** Tested against the path with its query string, `/api/v1/pods?fieldSelector=...&watch=true` (default: any). */
  readonly pathPattern?: RegExp | string;
  /** The status to answer with, with a matching Status body; absent: only the delay, then the normal answer. */
  readonly status?: 500 | 409 | 429 | 503 | number;
  /** How many requests it applies to (default 1). */
  readonly count?: number;
  /** Wait this long first (on the stand-in's clock); a client that gives up first gets nothing. */
  readonly delayMs?: number;
}

export class FaultInjector {
  private faults: { spec: FaultSpec; remaining: number }[] = [];
  private readonly delayed = new Set<() => void>();

  constructor(private readonly clock: Clock) {}

  inject(fault: FaultSpec): void {
    this.faults.push({ spec: fault, remaining: fault.count ?? 1 });
  }

  clear(): void {
    this.faults = [];
  }

  /** The first fault matching the request, counted as used. */
  take(method: string, pathAndQuery: string): FaultSpec | null {
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.spec.method !== undefined && fault.spec.method.toUpperCase() !== method) continue;
      const pattern = fault.spec.pathPattern;
      if (pattern !== undefined && !(typeof pattern === 'string' ? pathAndQuery.includes(pattern) : pattern.test(pathAndQuery))) continue;
      fault.remaining--;
      this.faults = this.faults.filter((f) => f.remaining > 0);
      return fault.spec;
    }
    return null;
  }

  /** Resolves true after `ms`, or false as soon as the client goes away or the server stops. */
  delay(ms: number, response: ServerResponse): Promise<boolean> {
    return new Promise((resolve) => {
      const finish = (waited: boolean): void => {
        cancelTimer();
        this.delayed.delete(abandon);
        response.off('close', abandon);
        resolve(waited);
      };
      const abandon = (): void => finish(false);
      const cancelTimer = this.clock.after(ms, () => finish(true));
      this.delayed.add(abandon);
      response.on('close', abandon);
    });
  }

  /** Ends every delay still running, as the server stops. */
  abandonDelays(): void {
    for (const cancel of [...this.delayed]) cancel();
  }
}

export function faultError(status: number, path: string): StatusError {
  switch (status) {
    case 409: {
      const target = targetOfPath(path);
      return conflict(target.resource, target.name, OBJECT_MODIFIED);
    }
    case 429:
      return new StatusError(429, 'TooManyRequests', 'Too many requests, please try again later.', { retryAfterSeconds: 1 });
    case 503:
      return new StatusError(503, 'ServiceUnavailable', 'The server is currently unable to handle the request');
    case 500:
      return new StatusError(500, 'InternalError', 'Internal error occurred: injected fault');
    default:
      return new StatusError(status, undefined, `injected fault ${status}`);
  }
}

/** The resource and the object name a request path addresses, for the Status body of a fault. */
function targetOfPath(path: string): { resource: string; name: string } {
  const parts = path.split('/').filter((p) => p !== '');
  const index = parts.findIndex((p) => p === 'pods' || p === 'nodes' || p === 'events');
  if (index === -1) return { resource: 'resource', name: '' };
  return { resource: parts[index] ?? 'resource', name: parts[index + 1] ?? '' };
}
