// The operations endpoint: `/metrics` (Prometheus), `/healthz` (liveness: the loop is turning)
// and `/readyz` (readiness: every readiness check passes), with the reasons in the body; and the
// probe listener, which serves only `/healthz` and `/readyz`, on a port of its own.
//
// Anyone who can reach a port can connect, so what a client can hold is bounded: at most
// `maxConnections` sockets (more are closed as they arrive), request headers within 5 s and 8 KiB,
// a whole request within 10 s, an idle keep-alive socket 5 s, nothing but GET and HEAD (no body is
// read). A flood of idle or slow connections costs the agent a bounded amount of memory and never
// its evictions (docs/operations.md, "Safety guarantees").
//
// That bound is also what a flood takes from everyone else on the port: with every slot held, the
// kubelet's probes were refused with the rest (one client holding 64 sockets failed 30 probes of
// 30), and a failed liveness probe restarts the agent, again and again. So the probes get their own
// listener rather than a reserved slot on the shared one: a slot can only be given to a probe once
// its request has been read, and by then the connection has already been accepted or refused by
// the count; telling a probe by its headers would let anyone claim the slot by copying them. A
// second listener needs no trust in what a client says: its limit is its own, the metrics port's
// clients never count against it, and a NetworkPolicy can admit to it only the node the kubelet
// probes from (deploy/chart/templates/networkpolicy.yaml).

import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Registry } from 'prom-client';
import { AgentError, errorMessage } from '../errors.js';

export interface HealthState {
  /** Null when healthy, else why not. */
  live(): string | null;
  ready(): string | null;
  /** A line a ready answer adds (a standby says so), if any. */
  note?(): string | null;
}

export interface OpsServer {
  readonly port: number;
  /** Connections refused because `maxConnections` were open. */
  readonly droppedConnections: () => number;
  stop(): Promise<void>;
}

export interface OpsServerLimits {
  /** Open connections at most; more are closed at once. */
  readonly maxConnections: number;
}

export const OPS_HEADERS_TIMEOUT_MS = 5_000;
export const OPS_REQUEST_TIMEOUT_MS = 10_000;
export const OPS_KEEP_ALIVE_TIMEOUT_MS = 5_000;
export const OPS_MAX_HEADER_BYTES = 8 * 1024;
// Node checks its header and request timeouts on a period of its own (default 30 s, which would let
// a slow client hold its socket six times longer than the timeout says), on a timer that runs
// whether or not anything is connected: at 1 s it woke an idle agent every second. Instead each
// connection gets its own deadline for its request's headers (below), armed only while it waits for
// them, and Node's period is as long as a timer allows.
const CONNECTIONS_CHECKING_INTERVAL_MS = 2 ** 31 - 1;

/**
 * `/metrics`, `/healthz` and `/readyz` on `address:port` (0: any free port), and `/outcomes` (the last
 * evictions' outcomes as JSON, which `explain` reads) when `outcomes` is given.
 */
export function startOpsServer(address: string, port: number, registry: Registry, health: HealthState, limits: OpsServerLimits, outcomes: (() => unknown) | null = null): Promise<OpsServer> {
  return startListener('/metrics, /healthz and /readyz', address, port, registry, health, limits, outcomes);
}

/** `/healthz` and `/readyz` only, for the kubelet's probes, on `address:port` (0: any free port), with a limit of its own. */
export function startProbeServer(address: string, port: number, health: HealthState, limits: OpsServerLimits): Promise<OpsServer> {
  // No /metrics (no registry): a scrape is the costly request, and scrapers belong on the port whose limit they share.
  return startListener('/healthz and /readyz for the probes', address, port, null, health, limits);
}

async function startListener(what: string, address: string, port: number, registry: Registry | null, health: HealthState, limits: OpsServerLimits, outcomes: (() => unknown) | null = null): Promise<OpsServer> {
  const server: Server = createServer(
    { maxHeaderSize: OPS_MAX_HEADER_BYTES, headersTimeout: OPS_HEADERS_TIMEOUT_MS, requestTimeout: OPS_REQUEST_TIMEOUT_MS, keepAliveTimeout: OPS_KEEP_ALIVE_TIMEOUT_MS, connectionsCheckingInterval: CONNECTIONS_CHECKING_INTERVAL_MS },
    (req, res) => {
      headerDeadlines.clear(req.socket);
      // The next request on a kept-alive connection has the same time for its headers.
      res.once('finish', () => headerDeadlines.arm(req.socket));
      const path = (req.url ?? '/').split('?')[0];
      const answer = (status: number, body: string, type = 'text/plain; charset=utf-8'): void => {
        res.writeHead(status, { 'content-type': type });
        res.end(body);
      };
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        // No body is read: the connection closes after the answer.
        res.setHeader('connection', 'close');
        return answer(405, 'method not allowed\n');
      }
      switch (path) {
        case '/metrics':
          // Served only where there is a registry: the probe listener has none.
          if (registry === null) return answer(404, 'not found\n');
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
          const note = health.note?.() ?? null;
          return reason === null ? answer(200, note === null ? 'ok\n' : `ok: ${note}\n`) : answer(503, `${reason}\n`);
        }
        case '/outcomes':
          // Only on the metrics listener: the probes' port serves the probes alone.
          if (outcomes === null) return answer(404, 'not found\n');
          return answer(200, `${JSON.stringify(outcomes())}\n`, 'application/json');
        default:
          return answer(404, 'not found\n');
      }
    },
  );
  const headerDeadlines = new HeaderDeadlines(OPS_HEADERS_TIMEOUT_MS);
  server.on('connection', (socket: Socket) => {
    socket.once('close', () => headerDeadlines.clear(socket));
    headerDeadlines.arm(socket);
  });
  server.maxConnections = limits.maxConnections;
  // A socket idle this long (no request in progress) is closed whatever the client does.
  server.setTimeout(OPS_REQUEST_TIMEOUT_MS, (socket: Socket) => socket.destroy());
  let dropped = 0;
  server.on('drop', () => {
    dropped++;
  });
  // A malformed request or an over-long header: answer 400 if the socket can still take it, then close.
  server.on('clientError', (_err, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new AgentError('EVA_ERR_START', `cannot serve ${what} on ${address}:${port}: ${err.code ?? err.message}`, { cause: err })));
    server.listen(port, address, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    droppedConnections: () => dropped,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * A connection's deadline for the headers of its next request: a client that drips a header line
 * every few seconds keeps its socket from going idle, and is closed once the deadline passes.
 */
class HeaderDeadlines {
  private readonly timers = new WeakMap<Socket, NodeJS.Timeout>();

  constructor(private readonly timeoutMs: number) {}

  arm(socket: Socket): void {
    if (socket.destroyed) return;
    this.clear(socket);
    const timer = setTimeout(() => socket.destroy(), this.timeoutMs);
    timer.unref();
    this.timers.set(socket, timer);
  }

  clear(socket: Socket): void {
    const timer = this.timers.get(socket);
    if (timer === undefined) return;
    clearTimeout(timer);
    this.timers.delete(socket);
  }
}
