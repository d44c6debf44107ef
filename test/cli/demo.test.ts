// The README's first command, as a newcomer runs it: the demo evicts the leaking pod before the
// kernel OOM killer fires, and leaves nothing behind, also when interrupted.

import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { CLI, REPO_ROOT, runCli } from './run-cli.js';

const realCgroups = process.getuid?.() === 0 && existsSync('/sys/fs/cgroup/memory/cgroup.event_control');

function demoCgroups(): string[] {
  return existsSync('/sys/fs/cgroup/memory') ? readdirSync('/sys/fs/cgroup/memory').filter((n) => n.startsWith('kea-demo-')) : [];
}

describe('demo', () => {
  const modes = realCgroups ? [['real cgroups (root, cgroup v1)', []], ['simulated memory', ['--simulated']]] : [['simulated memory', ['--simulated']]];
  if (!realCgroups) console.log('demo with real cgroups skipped: needs root and the cgroup v1 memory controller');
  for (const [name, flags] of modes as [string, string[]][]) {
    test(`evicts the leaking pod before the OOM killer fires (${name})`, () => {
      const result = runCli(['demo', '--leak-rate', '100', '--time-limit', '45', ...flags]);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/evicted: +shop\/leaky\n/);
      expect(result.stdout).toMatch(/kernel OOM kills: +0 /);
      // The full pass names the critical pod it passes over; the memory shortcut, the critical pods it never considers.
      expect(result.stdout).toMatch(/cannot evict a critical pod kube-system\/etcd-demo-node|critical pods are never candidates: kube-system\/etcd-demo-node/);
      expect(result.stdout).toMatch(/API: DELETE shop\/leaky \(grace 1s, UID precondition\): accepted/);
      expect(result.stdout).toMatch(/Everything the demo created has been removed/);
      expect(demoCgroups()).toEqual([]);
    }, 90_000);
  }

  test('Ctrl-C stops it and removes everything it created', async () => {
    const child = spawn(process.execPath, [CLI, 'demo', '--leak-rate', '10', '--time-limit', '60'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (stdout.includes('agent running')) {
          clearInterval(check);
          resolve();
        }
      }, 50);
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stdout).toMatch(/Interrupted\./);
    expect(stdout).toMatch(/Everything the demo created has been removed/);
    expect(code).toBe(1);
    expect(demoCgroups()).toEqual([]);
  }, 90_000);
});
