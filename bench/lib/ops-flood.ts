// A flood of an agent's ops port, for the benchmark's ops-flood part and the `run` tests: idle
// connections that never send a byte and slow ones that drip a header line every half second, each
// one the agent closes opened again while the flood is on; what the agent holds of it, counted from
// its descriptors (the sockets it accepted on that port); a probe as the kubelet sends it (a fresh
// connection, no keep-alive); and the process's RSS.

import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { get } from 'node:http';
import { connect, type Socket } from 'node:net';
import { statusFieldBytes } from './proc-status.js';

export interface OpsFloodOptions {
  readonly port: number;
  readonly host?: string;
  /** Connections that never send a byte. */
  readonly idle: number;
  /** Connections that send half a request, then a header line every half second. */
  readonly slow: number;
}

/** Opens the flood at once; `stop()` ends it and closes every client socket. */
export class OpsFlood {
  private readonly sockets = new Set<Socket>();
  private readonly slowSockets = new Set<Socket>();
  private readonly drip: NodeJS.Timeout;
  private stopped = false;
  private openedCount = 0;

  constructor(private readonly options: OpsFloodOptions) {
    for (let i = 0; i < options.idle; i++) this.open(false);
    for (let i = 0; i < options.slow; i++) this.open(true);
    this.drip = setInterval(() => {
      for (const socket of this.slowSockets) if (!socket.destroyed && socket.writable) socket.write(`X-Slow-${Date.now()}: 1\r\n`);
    }, 500);
  }

  /** Connections opened so far, the replacements included. */
  get opened(): number {
    return this.openedCount;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.drip);
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    this.slowSockets.clear();
  }

  private open(slow: boolean): void {
    const socket = connect(this.options.port, this.options.host ?? '127.0.0.1');
    this.openedCount++;
    this.sockets.add(socket);
    if (slow) {
      this.slowSockets.add(socket);
      socket.once('connect', () => socket.write('GET /metrics HTTP/1.1\r\nHost: agent\r\n'));
    }
    socket.on('error', () => {});
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.slowSockets.delete(socket);
      // The next tick: a storm of synchronous reconnects would starve the caller's own timers.
      if (!this.stopped) setImmediate(() => !this.stopped && this.open(slow));
    });
  }
}

/**
 * The connections to local `port` that process `pid` holds open: its socket descriptors matched
 * against the TCP tables of its network namespace, the listening socket left out. Counted by inode:
 * a table read in several chunks while sockets come and go can list one twice. A socket counted was
 * open both when its descriptor was read and when its table line was, so at the moment between the
 * two passes: the count never exceeds what was held at one instant.
 */
export function acceptedConnections(pid: number, port: number): number {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const target = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (target !== null) inodes.add(target[1] as string);
    } catch {
      // Closed since the directory was read.
    }
  }
  const held = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      const localPort = Number.parseInt((fields[1] as string).slice((fields[1] as string).lastIndexOf(':') + 1), 16);
      // 0A: LISTEN.
      if (localPort === port && fields[3] !== '0A' && inodes.has(fields[9] as string)) held.add(fields[9] as string);
    }
  }
  return held.size;
}

/** The process's VmRSS in bytes (0 once it has exited). */
export function rssBytes(pid: number): number {
  try {
    return statusFieldBytes(readFileSync(`/proc/${pid}/status`, 'utf8'), 'VmRSS');
  } catch {
    return 0;
  }
}

export interface ProbeOutcome {
  /** The HTTP status, or null when the request failed (refused, reset, timed out). */
  readonly status: number | null;
  readonly error: string | null;
  readonly ms: number;
}

/** One GET as the kubelet's HTTP probe makes it: a connection of its own, closed after the answer. */
export function probe(port: number, path: string, timeoutMs: number, host = '127.0.0.1'): Promise<ProbeOutcome> {
  const startedMs = performance.now();
  return new Promise((resolve) => {
    const done = (status: number | null, error: string | null): void => resolve({ status, error, ms: performance.now() - startedMs });
    const req = get({ host, port, path, agent: false, headers: { 'user-agent': 'kube-probe/1.37', connection: 'close' }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.once('end', () => done(res.statusCode ?? null, null));
      res.once('error', (err) => done(null, err.message));
    });
    req.once('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.once('error', (err) => done(null, err.message));
  });
}
