// Fault injection: requests matching a FaultSpec are held for its delay on the stand-in's clock
// (abandoned when the client gives up or the server stops) and then answered with its status and
// the Status body the API server would send for it.

import type { ServerResponse } from 'node:http';
import type { Clock } from '../../api/clock.js';
import { conflict, OBJECT_MODIFIED, StatusError } from './status-error.js';

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
