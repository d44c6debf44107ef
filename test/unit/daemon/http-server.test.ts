// The ops server's bounds on what a client holds, on a real socket: a connection that drips header
// lines is closed once its headers are overdue, an answered keep-alive connection gets the same time
// for its next request's headers, and a prompt request is answered.

import { connect, type Socket } from 'node:net';
import { Registry } from 'prom-client';
import { OPS_HEADERS_TIMEOUT_MS, startOpsServer, type OpsServer } from '../../../src/daemon/http-server.js';

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
