// The ops server's bounds on what a client holds, on a real socket: a connection that drips header
// lines is closed once its headers are overdue, an answered keep-alive connection gets the same time
// for its next request's headers, and a prompt request is answered. The probe listener serves only
// the health paths, and what holds every connection of the ops port never reaches it.

import { connect, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { OPS_HEADERS_TIMEOUT_MS, startOpsServer, startProbeServer, type OpsServer } from '../../../src/daemon/http-server.js';

const health = { live: () => null, ready: () => null };

function closedWithinMs(socket: Socket, startedMs: number): Promise<number> {
  return new Promise((resolve) => socket.once('close', () => resolve(Date.now() - startedMs)));
}

// A header line every half second keeps the socket from ever going idle.
function dripHeaders(socket: Socket): NodeJS.Timeout {
  return setInterval(() => {
    if (!socket.destroyed) socket.write(`X-Slow-${Date.now()}: 1\r\n`);
  }, 500);
}

// Closed at the headers deadline: not before it, and late only by what a loaded machine delays a
// timer, never by seconds more.
function expectHeadersDeadline(closedAfterMs: number): void {
  expect(closedAfterMs).toBeGreaterThanOrEqual(OPS_HEADERS_TIMEOUT_MS - 100);
  expect(closedAfterMs).toBeLessThan(OPS_HEADERS_TIMEOUT_MS + 4_000);
}

describe('ops server connection deadlines', () => {
  let server: OpsServer;
  beforeEach(async () => {
    server = await startOpsServer('127.0.0.1', 0, new Registry(), health, { maxConnections: 100 });
  });
  afterEach(async () => {
    await server.stop();
  });

  it('closes a connection whose headers drip in past the headers timeout', async () => {
    const startedMs = Date.now();
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const closed = closedWithinMs(socket, startedMs);
    socket.once('connect', () => socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n'));
    const drip = dripHeaders(socket);
    try {
      expectHeadersDeadline(await closed);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  }, 15_000);

  it('answers a prompt request, then gives the kept-alive connection the headers timeout again', async () => {
    const socket = connect(server.port, '127.0.0.1');
    socket.on('error', () => undefined);
    const received: string[] = [];
    socket.on('data', (chunk: Buffer) => received.push(chunk.toString('utf8')));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /healthz HTTP/1.1\r\nHost: agent\r\n\r\n');
    for (let i = 0; i < 100 && !received.join('').includes('ok\n'); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(received.join('')).toMatch(/^HTTP\/1\.1 200 OK/);
    const answeredMs = Date.now();
    const closed = closedWithinMs(socket, answeredMs);
    // Half a request, then drips: the deadline (not the idle timeout) ends it.
    socket.write('GET /readyz HTTP/1.1\r\n');
    const drip = dripHeaders(socket);
    try {
      expectHeadersDeadline(await closed);
      // The half request was never answered.
      expect(received.join('').split('HTTP/1.1 200 OK').length - 1).toBe(1);
    } finally {
      clearInterval(drip);
      socket.destroy();
    }
  }, 15_000);
});

// Idle sockets to `port`, each resolved once connected (the server may close it at once, over its limit).
async function holdSockets(port: number, count: number): Promise<Socket[]> {
  const sockets = Array.from({ length: count }, () => connect(port, '127.0.0.1').on('error', () => undefined));
  await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('connect', resolve).once('close', resolve))));
  return sockets;
}

describe('the probe listener', () => {
  let ops: OpsServer;
  let probes: OpsServer;
  const sockets: Socket[] = [];
  beforeEach(async () => {
    ops = await startOpsServer('127.0.0.1', 0, new Registry(), { live: () => null, ready: () => 'pods: not synced' }, { maxConnections: 2 });
    probes = await startProbeServer('127.0.0.1', 0, { live: () => null, ready: () => 'pods: not synced' }, { maxConnections: 2 });
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await ops.stop();
    await probes.stop();
  });

  const cases: { path: string; status: number; body: string }[] = [
    { path: '/healthz', status: 200, body: 'ok\n' },
    { path: '/readyz', status: 503, body: 'pods: not synced\n' },
    // Scrapes stay on the port whose limit they share.
    { path: '/metrics', status: 404, body: 'not found\n' },
    { path: '/', status: 404, body: 'not found\n' },
  ];
  for (const tc of cases) {
    it(`answers ${tc.path} with ${tc.status}`, async () => {
      const res = await fetch(`http://127.0.0.1:${probes.port}${tc.path}`);
      expect({ status: res.status, body: await res.text() }).toEqual({ status: tc.status, body: tc.body });
    });
  }

  it('answers every probe while the ops port has every connection held, and counts no drop of its own', async () => {
    sockets.push(...(await holdSockets(ops.port, 6)));
    // Accepted and dropped by the server a moment after the client saw them connect.
    for (let i = 0; i < 100 && ops.droppedConnections() < 4; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ops.droppedConnections()).toBe(4);
    for (let i = 0; i < 5; i++) expect((await fetch(`http://127.0.0.1:${probes.port}/healthz`)).status).toBe(200);
    expect(probes.droppedConnections()).toBe(0);
  });

  it('has a limit of its own: over it, connections are dropped there too', async () => {
    sockets.push(...(await holdSockets(probes.port, 5)));
    for (let i = 0; i < 100 && probes.droppedConnections() < 3; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(probes.droppedConnections()).toBe(3);
    expect(ops.droppedConnections()).toBe(0);
  });

  it('a port in use fails its start, naming what it would serve', async () => {
    await expect(startProbeServer('127.0.0.1', ops.port, { live: () => null, ready: () => null }, { maxConnections: 2 })).rejects.toThrow(`cannot serve /healthz and /readyz for the probes on 127.0.0.1:${ops.port}: EADDRINUSE`);
  });
});
