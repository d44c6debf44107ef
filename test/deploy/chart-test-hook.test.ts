// The chart's `helm test` pod script (templates/tests/agents-answer.yaml), run by the real node
// against real HTTP servers standing for the agents: it passes only when every address the
// headless Service resolves to answers /metrics with 200 and kube_eviction_agent_ready 1. Name
// resolution is the one thing replaced (a preload answers the Service's name with the servers'
// addresses), since no cluster DNS runs here.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HELM_SKIP_REASON, renderChart } from './helm.js';
import type { KubeObject } from './manifest.js';

const helmTest = HELM_SKIP_REASON === null ? test : test.skip;
const dir = mkdtempSync(join(tmpdir(), 'kea-test-hook-'));
const servers: Server[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

// An agent's /metrics, answering `status` with `body`, on 127.0.0.x (x = `host`); port 0 picks a
// free one, which the others then share, as every agent of a DaemonSet has the same port.
async function agentAt(host: number, port: number, status: number, body: string): Promise<number> {
  const server = createServer((_req, res) => res.writeHead(status, { 'Content-Type': 'text/plain' }).end(body));
  servers.push(server);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, `127.0.0.${host}`, resolve));
  return (server.address() as { port: number }).port;
}

function run(script: string, addresses: string[] | 'none'): Promise<{ code: number | null; output: string }> {
  const preload = join(dir, `resolve-${Math.random().toString(16).slice(2)}.cjs`);
  writeFileSync(
    preload,
    addresses === 'none'
      ? "require('node:dns').promises.resolve4 = async () => { const e = new Error('queryA ENOTFOUND'); e.code = 'ENOTFOUND'; throw e; };\n"
      : `require('node:dns').promises.resolve4 = async () => ${JSON.stringify(addresses)};\n`,
  );
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', preload, '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

const READY = '# TYPE kube_eviction_agent_ready gauge\nkube_eviction_agent_ready 1\n';
const NOT_READY = '# TYPE kube_eviction_agent_ready gauge\nkube_eviction_agent_ready 0\n';

helmTest('passes when every ready agent answers ready; fails on one not ready, one erroring, one not answering, or none at all', async () => {
  const port = await agentAt(2, 0, 200, READY);
  await agentAt(3, port, 200, READY);
  await agentAt(4, port, 200, NOT_READY);
  await agentAt(5, port, 500, 'internal error');
  const probePort = port === 65_535 ? port - 1 : port + 1;
  const pod = renderChart(['--set', `config.server.port=${port}`, '--set', `config.server.probePort=${probePort}`]).find((o) => o.kind === 'Pod') as KubeObject;
  const script = pod.spec.containers[0].args[0] as string;

  const cases: { name: string; addresses: string[] | 'none'; code: number; says: string }[] = [
    { name: 'two ready agents', addresses: ['127.0.0.2', '127.0.0.3'], code: 0, says: '2 of 2 ready agents answered' },
    { name: 'one not ready', addresses: ['127.0.0.2', '127.0.0.4'], code: 1, says: `127.0.0.4:${port}/metrics: HTTP 200, kube_eviction_agent_ready missing or 0` },
    { name: 'one answering 500', addresses: ['127.0.0.2', '127.0.0.5'], code: 1, says: `127.0.0.5:${port}/metrics: HTTP 500` },
    { name: 'one not listening', addresses: ['127.0.0.2', '127.0.0.6'], code: 1, says: `127.0.0.6:${port}/metrics: connect ECONNREFUSED` },
    { name: 'no ready agent behind the Service', addresses: 'none', code: 1, says: 'no ready agent behind kube-eviction-agent-metrics.kube-eviction-agent.svc: ENOTFOUND' },
  ];
  const results: { name: string; code: number | null; says: boolean; output: string }[] = [];
  for (const c of cases) {
    const { code, output } = await run(script, c.addresses);
    results.push({ name: c.name, code, says: output.includes(c.says), output });
  }
  expect(results.map((r) => ({ name: r.name, code: r.code, says: r.says }))).toEqual(cases.map((c) => ({ name: c.name, code: c.code, says: true })));
}, 60_000);
