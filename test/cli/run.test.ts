// `run` as a node's process: against the API stand-in, observing this machine in dry-run mode; it
// becomes ready, serves its endpoints, and stops promptly on SIGTERM, during start-up too; SIGHUP
// reloads. Bad input and a start that cannot complete fail at once, with nothing armed.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { makePod } from '../fixtures/pods.js';
import { CLI, REPO_ROOT, runCli } from './run-cli.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';

let dir = '';
let standIn: ApiStandIn | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-run-'));
});
afterEach(async () => {
  await standIn?.stop();
  standIn = null;
  rmSync(dir, { recursive: true, force: true });
});

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

interface RunningCli {
  readonly child: ChildProcessWithoutNullStreams;
  stderr(): string;
  exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

// `run` against a stand-in with this host's Node, in dry run, with a config far from any threshold.
async function spawnRun(extra: readonly string[], nodeArgs: readonly string[] = [], configYaml = 'evictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\n', dryRun = true): Promise<RunningCli> {
  standIn ??= await startApiStandIn();
  standIn.setNode(nodeOfThisHost('node-a'));
  writeFileSync(join(dir, 'kubeconfig'), kubeconfigFor(standIn));
  writeFileSync(join(dir, 'config.yaml'), configYaml);
  const child = spawn(process.execPath, [...nodeArgs, CLI, 'run', '--config', join(dir, 'config.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--node-name', 'node-a', ...(dryRun ? ['--dry-run'] : []), ...extra], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  running.push(child);
  return { child, stderr: () => stderr, exit: () => exited };
}
const running: ChildProcessWithoutNullStreams[] = [];

// The JSON log lines with this message.
function logged(stderr: string, msg: string): Record<string, unknown>[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.msg === msg);
}
afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('run', () => {
  test('becomes ready against the API server, serves its endpoints, and exits promptly on SIGTERM (dry run)', async () => {
    standIn = await startApiStandIn();
    standIn.setNode(nodeOfThisHost('node-a'));
    standIn.createPod({ ...makePod({ name: 'web', nodeName: 'node-a' }), status: { phase: 'Running' } });
    writeFileSync(join(dir, 'kubeconfig'), kubeconfigFor(standIn));
    // Thresholds this machine is far from: nothing would be evicted even without --dry-run.
    writeFileSync(join(dir, 'config.yaml'), 'evictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\n');
    const child = spawn(process.execPath, [CLI, 'run', '--config', join(dir, 'config.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--node-name', 'node-a', '--dry-run', '--port', '0'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      let port = 0;
      await waitFor('the endpoint', () => {
        const match = /"port":(\d+)[^\n]*serving \/metrics|serving \/metrics[^\n]*"port":(\d+)/.exec(stderr);
        port = Number(match?.[1] ?? match?.[2] ?? 0);
        return port > 0;
      });
      await waitFor('/readyz', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200);
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/kube_eviction_agent_signal_available\{signal="memory.available"\} \d+/);
      expect(metrics).toMatch(/kube_eviction_agent_config_info\{kind="AgentConfiguration"\} 1/);
      // Dry run: nothing but reads reached the API server.
      expect(standIn.requests().filter((r) => r.method !== 'GET')).toEqual([]);

      const stoppingMs = Date.now();
      child.kill('SIGTERM');
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      const stopMs = Date.now() - stoppingMs;
      console.log(`run stopped ${stopMs} ms after SIGTERM`);
      expect(code).toBe(0);
      expect(stopMs).toBeLessThan(3000);
      expect(stderr).toMatch(/"msg":"stopped"/);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  test('an invalid configuration fails at once, listing every problem', () => {
    writeFileSync(join(dir, 'config.yaml'), 'evictionHard:\n  mem.available: 1Gi\nevictionSoft:\n  memory.available: 1Gi\n');
    const result = runCli(['run', '--config', join(dir, 'config.yaml'), '--node-name', 'n']);
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/unsupported eviction signal mem\.available/);
    expect(result.stderr).toMatch(/grace period must be specified/);
  });

  test('without a node name it fails and says how to give one', () => {
    writeFileSync(join(dir, 'config.yaml'), '{}\n');
    const result = runCli(['run', '--config', join(dir, 'config.yaml')], undefined, { NODE_NAME: '' });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/node name is unknown: pass --node-name, set NODE_NAME/);
  });

  test('--port that is not a port number fails at once', () => {
    writeFileSync(join(dir, 'config.yaml'), '{}\n');
    for (const port of ['abc', '-1', '65536', '8080x', '']) {
      const result = runCli(['run', '--config', join(dir, 'config.yaml'), '--node-name', 'n', '--port', port]);
      expect([port, result.status]).toEqual([port, 1]);
      expect(result.stderr).toMatch(/--port must be an integer from 0 to 65535/);
    }
  });

  test('an ops port already in use fails the start at once, with status 1, before any request reaches the API server', async () => {
    const busy: Server = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (busy.address() as { port: number }).port;
      const startedMs = Date.now();
      const run = await spawnRun(['--port', String(port)]);
      const { code } = await run.exit();
      expect(code).toBe(1);
      expect(Date.now() - startedMs).toBeLessThan(15_000);
      expect(logged(run.stderr(), 'cannot start')).toEqual([expect.objectContaining({ code: 'EVA_ERR_START', err: expect.stringMatching(/EADDRINUSE/) as unknown })]);
      // Nothing was armed: no watch, no read, no write.
      expect(standIn?.requests()).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  }, 30_000);

  test('SIGTERM during start-up stops the agent and exits 0, not killed by the signal', async () => {
    const run = await spawnRun(['--port', '0']);
    // The first log line is written as the start begins; the signal lands somewhere in it.
    await waitFor('the start to begin', () => /"msg":"starting"/.test(run.stderr()));
    run.child.kill('SIGTERM');
    const exit = await run.exit();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(logged(run.stderr(), 'signal received; stopping')).toEqual([expect.objectContaining({ signal: 'SIGTERM' })]);
    // Whatever had started is stopped, once.
    expect(logged(run.stderr(), 'stopped')).toHaveLength(1);
  }, 30_000);

  test('SIGHUP reloads the configuration and the agent keeps running', async () => {
    const run = await spawnRun(['--port', '0']);
    let port = 0;
    await waitFor('the endpoint', () => {
      port = Number(logged(run.stderr(), 'serving /metrics, /healthz and /readyz')[0]?.port ?? 0);
      return port > 0;
    });
    writeFileSync(join(dir, 'config.yaml'), 'evictionHard:\n  memory.available: 2Mi\nenforceNodeAllocatable: []\n');
    run.child.kill('SIGHUP');
    await waitFor('the reload', () => logged(run.stderr(), 'SIGHUP: configuration reload').length === 1);
    run.child.kill('SIGHUP');
    await waitFor('the second reload', () => logged(run.stderr(), 'SIGHUP: configuration reload').length === 2);
    // The change is applied once (by the signal or the file watcher, whichever came first), then unchanged.
    expect(logged(run.stderr(), 'SIGHUP: configuration reload')[1]).toMatchObject({ result: 'unchanged' });
    expect(run.child.exitCode).toBeNull();
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.exit()).code).toBe(0);
  }, 30_000);

  test('an unhandled rejection is logged and exits with status 1', async () => {
    // A rejection nobody handles, once the agent is starting, as a bug in any part would leave one.
    // SIGUSR2 sets it off: a fixed delay could come before the handlers on a loaded machine.
    const rejectOnSignal = 'data:text/javascript,process.on("SIGUSR2", () => { Promise.reject(new Error("nobody handles this")); });';
    const run = await spawnRun(['--port', '0'], ['--import', rejectOnSignal]);
    await waitFor('the start to begin', () => /"msg":"starting"/.test(run.stderr()));
    run.child.kill('SIGUSR2');
    const exit = await run.exit();
    expect(exit.code).toBe(1);
    expect(logged(run.stderr(), 'unhandled rejection; exiting')).toEqual([expect.objectContaining({ err: 'nobody handles this' })]);
  }, 30_000);

  test('a flood of idle and slow connections on the ops port: the agent\'s memory stays bounded, the server closes them, and an eviction happens during the flood', async () => {
    // memory.available below 99% of the machine's memory is always met. Not a dry run: the
    // eviction is the DELETE reaching the stand-in; local termination is off (the pod has no
    // processes on this machine anyway).
    const config = 'housekeepingInterval: 1s\nevictionHard:\n  memory.available: "99%"\nenforceNodeAllocatable: []\nactions:\n  localTermination: false\n';
    const run = await spawnRun(['--port', '0'], [], config, false);
    let port = 0;
    await waitFor('the endpoint', () => {
      port = Number(logged(run.stderr(), 'serving /metrics, /healthz and /readyz')[0]?.port ?? 0);
      return port > 0;
    });
    await waitFor('/readyz', async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200);
    const api = standIn!;
    const pid = run.child.pid ?? 0;
    const rssBytes = (): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
    const openFds = (): number => readdirSync(`/proc/${pid}/fd`).length;
    const baselineRss = rssBytes();
    const baselineFds = openFds();
    const floodStartMs = Date.now();

    // 3000 connections that never send a byte, and 100 that send a header line every half second;
    // each one the agent closes is replaced until the eviction has happened, so it happens under flood.
    const MAX_CONNECTIONS = 20_000;
    const sockets: Socket[] = [];
    let evicted = false;
    const open = (): Socket => {
      const socket = connect(port, '127.0.0.1');
      socket.on('error', () => {});
      socket.on('close', () => {
        if (!evicted && sockets.length < MAX_CONNECTIONS) open();
      });
      sockets.push(socket);
      return socket;
    };
    for (let i = 0; i < 3000; i++) open();
    const slow = Array.from({ length: 100 }, () => open());
    for (const socket of slow) socket.once('connect', () => socket.write('GET /metrics HTTP/1.1\r\nHost: agent\r\n'));
    const drip = setInterval(() => {
      for (const socket of slow) if (!socket.destroyed) socket.write(`X-Slow-${Date.now()}: 1\r\n`);
    }, 500);
    let peakRss = baselineRss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, rssBytes());
    }, 100);
    try {
      // The pod arrives once the flood is on: its eviction can only come from a pass under flood.
      api.createPod({ ...makePod({ name: 'victim', nodeName: 'node-a' }), status: { phase: 'Running' } });
      const deletes = () => api.requests().filter((r) => r.method === 'DELETE' && r.path.endsWith('/pods/victim'));
      await waitFor('the eviction', () => deletes().length > 0, 40_000);
      const evictionMs = Date.now() - floodStartMs;
      const openAtEviction = openFds() - baselineFds;
      evicted = true;
      // Every socket, slow ones included, is closed by the agent: dropped over the limit, or timed out.
      // Every connection the agent accepted, slow ones included, is closed by it: dropped over the
      // limit, or timed out. (A client socket the kernel's full accept queue never handed to the
      // agent stays open on the client side only; the agent's descriptors are what it holds.)
      await waitFor('the agent to close the flood connections', () => openFds() <= baselineFds + 10, 40_000);
      const floodMs = Date.now() - floodStartMs;
      const growthMiB = (peakRss - baselineRss) / 1024 / 1024;
      console.log(`ops flood: ${sockets.length} connections, the agent back to ${openFds()} descriptors (${baselineFds} before) within ${floodMs} ms; the pod evicted ${evictionMs} ms into the flood with ${openAtEviction} flood connections open in the agent; agent RSS ${(baselineRss / 1024 / 1024).toFixed(1)} MiB before, peak ${(peakRss / 1024 / 1024).toFixed(1)} MiB (+${growthMiB.toFixed(1)} MiB) (shared machine)`);
      expect(deletes()[0]?.status).toBe(200);
      expect(openAtEviction).toBeGreaterThan(0);
      expect(growthMiB).toBeLessThan(48);
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    } finally {
      evicted = true;
      clearInterval(drip);
      clearInterval(sampler);
      for (const socket of sockets) socket.destroy();
    }
    run.child.kill('SIGTERM');
    expect((await run.exit()).code).toBe(0);
  }, 120_000);
});
