// The record of every request the stand-in received, in arrival order, for a test to assert on
// what the agent actually sent.

import type { IncomingMessage } from 'node:http';

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
