// `run` as a node's process: against the API stand-in, observing this machine in dry-run mode; it
// becomes ready, serves its endpoints, and stops promptly on SIGTERM. Bad input fails at once.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
});
