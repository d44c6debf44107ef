// The way of one request through the stand-in: recorded on arrival, its body read, an injected
// fault applied first, then the token check a real API server makes, then its route; a refusal
// is answered with its Status body.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { faultError, type FaultInjector } from './fault-injection.js';
import { readBody } from './request-body.js';
import type { RequestLog } from './request-log.js';
import { sendError, type RequestContext } from './responses.js';
import { route, type Route } from './routes.js';
import { StatusError } from './status-error.js';

export interface Serving {
  readonly log: RequestLog;
  readonly faults: FaultInjector;
  readonly routes: readonly Route[];
}

export async function serveRequest(request: IncomingMessage, response: ServerResponse, { log, faults, routes }: Serving): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://stand-in');
  const method = (request.method ?? 'GET').toUpperCase();
  const entry = log.record(request, method, url);
  const body = await readBody(request);
  log.recordBody(entry, body);
  const ctx: RequestContext = { request, response, entry, url, body };

  const fault = faults.take(method, `${url.pathname}${url.search}`);
  if (fault !== null) {
    if (fault.delayMs !== undefined && fault.delayMs > 0 && !(await faults.delay(fault.delayMs, response))) return;
    if (fault.status !== undefined) {
      sendError(ctx, faultError(fault.status, url.pathname));
      return;
    }
  }
  if (!/^Bearer \S+/.test(String(request.headers.authorization ?? ''))) {
    sendError(ctx, new StatusError(401, 'Unauthorized', 'Unauthorized'));
    return;
  }
  try {
    route(routes, ctx, method);
  } catch (err) {
    if (err instanceof StatusError) sendError(ctx, err);
    else throw err;
  }
}
