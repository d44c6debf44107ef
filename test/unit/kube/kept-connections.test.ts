// The agent's API calls share kept-alive connections: against a local HTTPS server (a TLS
// handshake per connection, as the API server pays it) and a plain HTTP one, calls in a row use
// one connection, a burst of calls opens at most one per call in flight and reuses them after,
// and a connection the server closed is replaced without failing the next call. Which agents
// are shared and which are left alone (a proxy's), by their options.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { systemClock } from '../../../src/api/clock.js';
import { connect } from '../../../src/kube/index.js';
import { KeptConnections } from '../../../src/kube/kept-connections.js';

const dir = mkdtempSync(join(tmpdir(), 'kea-kept-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
const tls = { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };

interface Served {
  readonly url: string;
  /** Connections accepted (for HTTPS: TLS handshakes completed). */
  connections(): number;
  requests(): number;
  /** Ends every connection the server holds, as an API server restart does. */
  dropConnections(): void;
  close(): Promise<void>;
}

const servers: Served[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
});

async function serve(secure: boolean): Promise<Served> {
  let connections = 0;
  let requests = 0;
  const sockets = new Set<Socket>();
  const handler = (_req: IncomingMessage, res: ServerResponse): void => {
    requests++;
    // A little later, so calls started together are in flight together.
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default', uid: '00000000-0000-4000-8000-000000000001' }, spec: { containers: [] } }));
    }, 20);
  };
  const server = secure ? https.createServer(tls, handler) : http.createServer(handler);
  server.on(secure ? 'secureConnection' : 'connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const served: Served = {
    url: `${secure ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    requests: () => requests,
    dropConnections: () => {
      for (const socket of sockets) socket.destroy();
    },
    close: async () => {
      served.dropConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  servers.push(served);
  return served;
}

function kubeconfig(server: Served, secure: boolean): string {
  const cluster = secure ? `    certificate-authority-data: ${Buffer.from(tls.cert).toString('base64')}` : '    insecure-skip-tls-verify: true';
  return ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: c', '  cluster:', `    server: ${server.url}`, cluster, 'users:', '- name: u', '  user:', '    token: t', 'contexts:', '- name: c', '  context: {cluster: c, user: u}', 'current-context: c', ''].join('\n');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

for (const secure of [true, false]) {
  describe(secure ? 'HTTPS' : 'plain HTTP', () => {
    test('calls in a row share one connection; a burst opens one per call in flight and reuses them after', async () => {
      const server = await serve(secure);
      const client = await connect({ kubeconfigYaml: kubeconfig(server, secure), nodeName: 'node-a', logger: new RecordingLogger(), clock: systemClock, env: {} });
      const actions = client.podActions();
      for (let i = 0; i < 10; i++) expect(await actions.getPod('default', 'p')).not.toBeNull();
      expect(server.connections()).toBe(1);
      await Promise.all(Array.from({ length: 5 }, () => actions.getPod('default', 'p')));
      const afterBurst = server.connections();
      expect(afterBurst).toBeGreaterThanOrEqual(2);
      expect(afterBurst).toBeLessThanOrEqual(5);
      await Promise.all(Array.from({ length: 5 }, () => actions.getPod('default', 'p')));
      for (let i = 0; i < 5; i++) await actions.getPod('default', 'p');
      expect(server.connections()).toBe(afterBurst);
      expect(server.requests()).toBe(25);
    });

    test('a connection the server ended is replaced: the next call succeeds on a new one', async () => {
      const server = await serve(secure);
      const client = await connect({ kubeconfigYaml: kubeconfig(server, secure), nodeName: 'node-a', logger: new RecordingLogger(), clock: systemClock, env: {} });
      const actions = client.podActions();
      expect(await actions.getPod('default', 'p')).not.toBeNull();
      server.dropConnections();
      // The close reaches the client's idle socket (as an API server's restart does) before the next call.
      await sleep(50);
      expect(await actions.getPod('default', 'p')).not.toBeNull();
      expect(server.connections()).toBe(2);
    });
  });
}

describe('which agents are shared', () => {
  const ca = tls.cert;
  const cases: { name: string; made: () => http.Agent | undefined; same: 'kept' | 'itself' | 'another' }[] = [
    { name: 'an HTTPS agent with the same options as the last: the kept one', made: () => new https.Agent({ ca }), same: 'kept' },
    { name: 'an HTTPS agent with another CA: a new kept one', made: () => new https.Agent({ ca: `${ca}\n` }), same: 'another' },
    { name: 'an HTTPS agent with a client certificate: a new kept one', made: () => new https.Agent({ ca, cert: tls.cert, key: tls.key }), same: 'another' },
    { name: 'a plain HTTP agent: a new kept one', made: () => new http.Agent(), same: 'another' },
    { name: 'a proxy\'s agent (a subclass): left as it is', made: () => new (class ProxyAgent extends https.Agent {})({ ca }), same: 'itself' },
    { name: 'no agent: none', made: () => undefined, same: 'itself' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const kept = new KeptConnections();
      const first = kept.agentFor(new https.Agent({ ca }));
      expect(first).toBeInstanceOf(https.Agent);
      expect((first as http.Agent & { keepAlive?: boolean }).keepAlive).toBe(true);
      const made = tc.made();
      const answer = kept.agentFor(made);
      if (tc.same === 'kept') expect(answer).toBe(first);
      if (tc.same === 'itself') expect(answer).toBe(made);
      if (tc.same === 'another') {
        expect(answer).not.toBe(first);
        expect(answer).not.toBe(made);
        expect((answer as http.Agent & { keepAlive?: boolean }).keepAlive).toBe(true);
        expect(kept.agentFor(tc.made())).toBe(answer);
      }
    });
  }
});
