// The operations endpoint: `/metrics` (Prometheus), `/healthz` (liveness: the loop is turning)
// and `/readyz` (readiness: watches synced and the observer working), with the reasons in the body.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { errorMessage } from '../errors.js';

export interface HealthState {
  /** Null when healthy, else why not. */
  live(): string | null;
  ready(): string | null;
}

export interface OpsServer {
  readonly port: number;
  stop(): Promise<void>;
}

export async function startOpsServer(address: string, port: number, registry: Registry, health: HealthState): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(405, 'method not allowed\n');
    switch (path) {
      case '/metrics':
        registry.metrics().then(
          (text) => answer(200, text, registry.contentType),
          (err: unknown) => answer(500, `${errorMessage(err)}\n`),
        );
        return;
      case '/healthz': {
        const reason = health.live();
        return reason === null ? answer(200, 'ok\n') : answer(503, `${reason}\n`);
      }
      case '/readyz': {
        const reason = health.ready();
        return reason === null ? answer(200, 'ok\n') : answer(503, `${reason}\n`);
      }
      default:
        return answer(404, 'not found\n');
    }
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, address, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
