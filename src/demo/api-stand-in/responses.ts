// One request in flight and the JSON answers to it: a body with its status, or a StatusError as
// its Status body (with the Retry-After a 429 carries).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RecordedRequest } from './request-log.js';
import type { StatusError } from './status-error.js';

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
