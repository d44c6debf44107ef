// `run` as a node's process: against the API stand-in, observing this machine in dry-run mode; it
// becomes ready, serves its endpoints, and stops promptly on SIGTERM, during start-up too; SIGHUP
// reloads. Bad input and a start that cannot complete fail at once, with nothing armed. A flood of
// the metrics port never reaches the probe port, holds no more than the port's limit, and costs
// memory that neither grows with the flood nor stays after it.

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { makePod } from '../fixtures/pods.js';
import { CLI, REPO_ROOT, runCli } from './run-cli.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { defaultAgentSettings } from '../../src/config/defaults.js';
import { acceptedConnections, OpsFlood, probe, rssBytes } from '../../bench/lib/ops-flood.js';

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
// The default server.maxConnections, which the tests' configurations keep.
const METRICS_MAX_CONNECTIONS = defaultAgentSettings().server.maxConnections;
// Preloaded into the agent (with --expose-gc): on SIGUSR2, a full collection, then its memory as a log line.
const HEAP_ON_SIGUSR2 = 'data:text/javascript,process.on("SIGUSR2", () => { globalThis.gc(); const m = process.memoryUsage(); process.stderr.write(JSON.stringify({ msg: "kea-test memory", heapUsed: m.heapUsed, external: m.external, rss: m.rss }) + "\\n"); });';

// The ports of both listeners, from the agent's start-up log.
async function waitForPorts(run: RunningCli): Promise<{ metricsPort: number; probePort: number }> {
  let metricsPort = 0;
  let probePort = 0;
  await waitFor('the endpoints', () => {
    metricsPort = Number(logged(run.stderr(), 'serving /metrics, /healthz and /readyz')[0]?.port ?? 0);
    probePort = Number(logged(run.stderr(), 'serving /healthz and /readyz for the probes')[0]?.port ?? 0);
    return metricsPort > 0 && probePort > 0;
  });
  return { metricsPort, probePort };
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

  test('--port or --probe-port that is not a port number fails at once', () => {
    writeFileSync(join(dir, 'config.yaml'), '{}\n');
    for (const port of ['abc', '-1', '65536', '8080x', '']) {
      const result = runCli(['run', '--config', join(dir, 'config.yaml'), '--node-name', 'n', '--port', port]);
      expect([port, result.status]).toEqual([port, 1]);
      expect(result.stderr).toMatch(/--port must be an integer from 0 to 65535/);
    }
    for (const port of ['abc', '65536']) {
      const result = runCli(['run', '--config', join(dir, 'config.yaml'), '--node-name', 'n', '--probe-port', port]);
      expect([port, result.status]).toEqual([port, 1]);
      expect(result.stderr).toMatch(/--probe-port must be an integer from 0 to 65535/);
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

  test('the kubelet\'s probes all succeed while one client holds more sockets than the metrics port admits', async () => {
    // --port 0 alone: the probe listener takes a free port of its own too.
    const run = await spawnRun(['--port', '0']);
    const { metricsPort, probePort } = await waitForPorts(run);
    expect(probePort).not.toBe(metricsPort);
    await waitFor('/readyz on the probe port', async () => (await probe(probePort, '/readyz', 10_000)).status === 200);
    const pid = run.child.pid ?? 0;

    // 96 sockets, each one the agent closes (over its limit, or idle past the headers deadline)
    // opened again: the metrics port is full for as long as the flood lasts, as in the report that
    // failed 30 probes of 30.
    const flood = new OpsFlood({ port: metricsPort, idle: 96, slow: 0 });
    let heldMax = 0;
    const sampler = setInterval(() => {
      heldMax = Math.max(heldMax, acceptedConnections(pid, metricsPort));
    }, 200);
    try {
      await waitFor('the metrics port to be full', () => acceptedConnections(pid, metricsPort) >= METRICS_MAX_CONNECTIONS);
      // Thirty probes, liveness and readiness in turn, over more than one headers deadline (5 s) of
      // the flood's sockets. The timeout is generous (the chart's probes allow 3 s): what is tested
      // is that they get through, not how fast on a loaded machine.
      const outcomes: { path: string; status: number | null; error: string | null }[] = [];
      for (let i = 0; i < 30; i++) {
        const path = i % 2 === 0 ? '/healthz' : '/readyz';
        const outcome = await probe(probePort, path, 10_000);
        outcomes.push({ path, status: outcome.status, error: outcome.error });
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      // The flood was on throughout: the agent kept closing its sockets, and they kept coming back.
      const metricsAnswer = await probe(metricsPort, '/healthz', 2_000);
      console.log(`probes under a metrics-port flood: ${outcomes.filter((o) => o.status === 200).length} of ${outcomes.length} answered 200; the flood opened ${flood.opened} connections, the agent held at most ${heldMax} of them; a probe on the metrics port meanwhile: ${metricsAnswer.status ?? metricsAnswer.error}`);
      expect(outcomes.filter((o) => o.status !== 200)).toEqual([]);
      expect(flood.opened).toBeGreaterThan(96);
      expect(heldMax).toBeGreaterThanOrEqual(METRICS_MAX_CONNECTIONS);
    } finally {
      clearInterval(sampler);
      flood.stop();
    }
    run.child.kill('SIGTERM');
    expect((await run.exit()).code).toBe(0);
  }, 120_000);

  test('a flood of idle and slow connections on the ops port: the agent holds at most its limit of them, its memory does not grow with the flood and returns after it, and an eviction happens during the flood', async () => {
    // memory.available below 99% of the machine's memory is always met. Not a dry run: the
    // eviction is the DELETE reaching the stand-in; local termination is off (the pod has no
    // processes on this machine anyway). SIGUSR2 makes the agent collect its garbage and print its
    // memory, so the heap before and after the flood is compared on live data, not on when the
    // collector last ran.
    const config = 'housekeepingInterval: 1s\nevictionHard:\n  memory.available: "99%"\nenforceNodeAllocatable: []\nactions:\n  localTermination: false\n';
    const run = await spawnRun(['--port', '0'], ['--expose-gc', '--import', HEAP_ON_SIGUSR2], config, false);
    const { metricsPort, probePort } = await waitForPorts(run);
    await waitFor('/readyz', async () => (await probe(probePort, '/readyz', 10_000)).status === 200);
    const api = standIn!;
    const pid = run.child.pid ?? 0;
    const openFds = (): number => readdirSync(`/proc/${pid}/fd`).length;
    const heapAfterGc = async (): Promise<{ heapUsed: number; external: number }> => {
      const before = logged(run.stderr(), 'kea-test memory').length;
      run.child.kill('SIGUSR2');
      await waitFor('the memory report', () => logged(run.stderr(), 'kea-test memory').length > before);
      return logged(run.stderr(), 'kea-test memory').at(-1) as unknown as { heapUsed: number; external: number };
    };
    const heapBefore = await heapAfterGc();
    const baselineRss = rssBytes(pid);
    const baselineFds = openFds();

    // One flood: its connections held open (each one the agent closes opened again) until `until`
    // resolves, the agent's RSS and the flood connections it holds sampled throughout.
    let heldMax = 0;
    const flooded = async (idle: number, slow: number, until: () => Promise<void>): Promise<{ growthBytes: number; opened: number }> => {
      const beforeRss = rssBytes(pid);
      let peakRss = beforeRss;
      const flood = new OpsFlood({ port: metricsPort, idle, slow });
      const sampler = setInterval(() => {
        peakRss = Math.max(peakRss, rssBytes(pid));
        heldMax = Math.max(heldMax, acceptedConnections(pid, metricsPort));
      }, 250);
      try {
        await until();
      } finally {
        clearInterval(sampler);
        flood.stop();
      }
      // Every connection the agent accepted, slow ones included, is closed by it or by the client
      // now. (A client socket the kernel's full accept queue never handed to the agent stays open
      // on the client side only; the agent's descriptors are what it holds.)
      await waitFor('the agent to close the flood connections', () => acceptedConnections(pid, metricsPort) === 0 && openFds() <= baselineFds + 10, 40_000);
      return { growthBytes: peakRss - beforeRss, opened: flood.opened };
    };
    const atLeast = (ms: number) => () => new Promise<void>((resolve) => setTimeout(resolve, ms));
    const FLOOD_MS = 8_000;

    // N and 4N connections at once, twice each, in turn: 775 (750 idle, 25 slow), then 3,100 (3,000
    // idle, 100 slow), each flood held past the headers deadline so that the slow ones are closed by
    // it and replaced. What drives growth is how fast connections come and go (garbage the collector
    // has not reached yet), which a loaded machine stretches; how many are open at once must not.
    // Each size's best and worst of two runs are compared, so one run slowed by the machine does not
    // decide.
    const deletes = () => api.requests().filter((r) => r.method === 'DELETE' && r.path.endsWith('/pods/victim'));
    let openAtEviction = 0;
    let probesDuringFlood: (number | null)[] = [];
    const withEviction = async (): Promise<void> => {
      const floodStartMs = Date.now();
      // The pod arrives once the flood is on: its eviction can only come from a pass under flood.
      api.createPod({ ...makePod({ name: 'victim', nodeName: 'node-a' }), status: { phase: 'Running' } });
      await waitFor('the eviction', () => deletes().length > 0, 40_000);
      openAtEviction = acceptedConnections(pid, metricsPort);
      probesDuringFlood = await Promise.all(['/healthz', '/readyz'].map(async (path) => (await probe(probePort, path, 10_000)).status));
      const remainingMs = FLOOD_MS - (Date.now() - floodStartMs);
      if (remainingMs > 0) await atLeast(remainingMs)();
    };
    const small = [await flooded(750, 25, atLeast(FLOOD_MS))];
    const large = [await flooded(3000, 100, withEviction)];
    small.push(await flooded(750, 25, atLeast(FLOOD_MS)));
    large.push(await flooded(3000, 100, atLeast(FLOOD_MS)));
    const settledRss = rssBytes(pid);
    const heapAfter = await heapAfterGc();
    const mib = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
    const growths = (runs: readonly { growthBytes: number; opened: number }[]): string => runs.map((r) => `+${mib(r.growthBytes)} MiB (${r.opened} opened)`).join(', ');
    console.log(
      `ops flood, ${FLOOD_MS / 1000} s each: 775 connections at once: RSS ${growths(small)}; 3,100 at once: ${growths(large)}; ` +
        `the agent held at most ${heldMax} flood connections (limit ${METRICS_MAX_CONNECTIONS}), ${openAtEviction} when the pod was evicted; ` +
        `RSS ${mib(baselineRss)} MiB before, ${mib(settledRss)} MiB after; heap after a collection ${mib(heapBefore.heapUsed)} MiB before, ${mib(heapAfter.heapUsed)} MiB after, external ${mib(heapBefore.external)} and ${mib(heapAfter.external)} MiB (shared machine; absolute RSS figures are the benchmark's: npm run bench -- --part ops-flood)`,
    );
    expect(deletes()[0]?.status).toBe(200);
    expect(openAtEviction).toBeGreaterThan(0);
    expect(probesDuringFlood).toEqual([200, 200]);
    // The limit holds: never more flood connections held than server.maxConnections, and the one
    // being refused: a connection over the limit has a descriptor from its accept until the same
    // callback closes it, and a sample can fall in between (about one 20 s benchmark run in two sees it).
    expect(heldMax).toBeLessThanOrEqual(METRICS_MAX_CONNECTIONS + 1);
    // Memory does not follow the connections: four times the flood is nowhere near four times the
    // growth. (Holding even 12 KiB per open connection would put the larger flood's growth past
    // the bound: 4 x 775 x 12 KiB = 36 MiB against 2 x 775 x 12 KiB + 16 MiB = 34 MiB.)
    const smallWorst = Math.max(...small.map((r) => r.growthBytes), 0);
    const largeBest = Math.min(...large.map((r) => r.growthBytes));
    expect(largeBest).toBeLessThan(2 * smallWorst + 16 * 1024 * 1024);
    // And it returns: the live heap and the buffers outside it come back to what they were, within
    // what one more pod, one Event and the metrics of one eviction take. (Not RSS: V8 and malloc
    // keep pages they freed for the next allocation, so the RSS after says when pages were last
    // needed, not what is held; the benchmark reports it.)
    expect(heapAfter.heapUsed + heapAfter.external - (heapBefore.heapUsed + heapBefore.external)).toBeLessThan(8 * 1024 * 1024);
    expect((await probe(probePort, '/healthz', 10_000)).status).toBe(200);
    run.child.kill('SIGTERM');
    expect((await run.exit()).code).toBe(0);
  }, 180_000);
});
