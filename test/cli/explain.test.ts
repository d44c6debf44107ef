// `explain` against a recording: each signal against each threshold, the ranking with its
// figures, and the decision with the kubelet's message.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeconfigFor, startApiStandIn } from '../../src/demo/api-stand-in.js';
import { makePod } from '../fixtures/pods.js';
import { CLI, REPO_ROOT, runCli } from './run-cli.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { agentOutcomes } from '../../src/cli/explain.js';
import { parseConfigText } from '../../src/config/load.js';

const CONFIG = join(REPO_ROOT, 'examples/memory-pressure.config.yaml');
const RECORDING = join(REPO_ROOT, 'examples/memory-pressure.jsonl');

describe('explain --replay', () => {
  test('at a step where a soft threshold has met its grace period: the ranking, the skipped critical pod and the victim', () => {
    const result = runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', '2026-11-01T12:00:40Z']);
    expect(result.status).toBe(0);
    const out = result.stdout;
    expect(out).toMatch(/step at 2026-11-01T12:00:40Z/);
    expect(out).toMatch(/memory\.available\s+860Mi\s+8Gi\s+< 500Mi\s+hard\s+ok/);
    expect(out).toMatch(/memory\.available\s+860Mi\s+8Gi\s+< 1Gi\s+soft 30s\s+MET/);
    expect(out).toMatch(/1\s+kube-system\/etcd-node-a\s+0\s+2Gi\s+0\s+yes\s+critical: never evicted/);
    expect(out).toMatch(/2\s+default\/leaky\s+0\s+1536Mi\s+512Mi\s+yes\s+<- evicted/);
    expect(out).toMatch(/Evict default\/leaky for memory\.available \(soft\), grace period 30s/);
    expect(out).toMatch(/If a PodDisruptionBudget refuses: default\/batch, then default\/web/);
  });

  test('a refused pod: its own section names it, its line, field and reason; the decision is on the rest', () => {
    // The shipped example, its static pod's manifest setting metadata.uid "abc" (which the kubelet
    // keeps, and reports the pod's stats under).
    const recording = readFileSync(RECORDING, 'utf8').replaceAll('8d4b5c1e2f3a49b6a7c8d9e0f1a2b3c4', 'abc');
    const dir = mkdtempSync(join(tmpdir(), 'kea-explain-'));
    try {
      const path = join(dir, 'custom-hash.jsonl');
      writeFileSync(path, recording);
      const result = runCli(['explain', '--config', CONFIG, '--replay', path, '--at', '2026-11-01T12:00:40Z']);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      const out = result.stdout;
      expect(out).toMatch(/^Refused pods: 1 of the recording's pods is left out \(never ranked or evicted\), as the agent leaves out a pod it cannot trust$/m);
      expect(out).toMatch(/^ {2}POD\s+REASON$/m);
      expect(out).toMatch(/^ {2}kube-system\/etcd-node-a\s+line 1: pods\[0\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: "abc" is not a static pod UID \(32 lowercase hex digits, or a UUID\)$/m);
      expect(out).not.toMatch(/\d+\s+kube-system\/etcd-node-a/);
      expect(out).toMatch(/1\s+default\/leaky\s+0\s+1536Mi\s+512Mi\s+yes\s+<- evicted/);
      expect(out).toMatch(/Evict default\/leaky for memory\.available \(soft\), grace period 30s/);
      // The recording without refusals has no such section.
      expect(runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', '2026-11-01T12:00:40Z']).stdout).not.toMatch(/Refused pods/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('within the grace period: the threshold is met but nothing is evicted yet', () => {
    const result = runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', '2026-11-01T12:00:20Z']);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/met, within its 30s grace period/);
    expect(result.stdout).toMatch(/Nothing yet: a soft threshold is met but its grace period has not elapsed/);
    expect(result.stdout).toMatch(/Pod ranking if memory pressure came now/);
    expect(result.stdout).toMatch(/^Kernel OOM kills: reported as OOMKilledByKernel Events .*counters re-read every 10s\)$/m);
  });

  test('the last step by default', () => {
    const result = runCli(['explain', '--config', CONFIG, '--replay', RECORDING]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/step at 2026-11-01T12:02:10Z/);
    expect(result.stdout).toMatch(/Node conditions: none/);
    expect(result.stdout).toMatch(/Nothing to evict/);
  });

  test('the last evictions with their outcomes, judged from the recording\'s later steps', () => {
    const result = runCli(['explain', '--config', CONFIG, '--replay', RECORDING]);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Last evictions and their outcomes \(the replayed decisions, judged from the recording's later steps\)$/m);
    // leaky (1536Mi) went at 12:00:40 and batch at 12:00:50; memory was back past 1Gi + 256Mi at 12:01:00.
    expect(result.stdout).toContain(
      '  Eviction outcome for memory.available (threshold 1024.0 MiB, target 1280.0 MiB): under-eviction (a further pod had to go); 2 pods (default/leaky eviction-api, default/batch eviction-api) freed 540.0 MiB of the 420.0 MiB needed (ratio 1.29), 20.000 s from the first request to relief',
    );
    // Before any outcome is known.
    expect(runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', '2026-11-01T12:00:40Z']).stdout).toMatch(/^ {2}None yet: no eviction has reached the end of its re-trigger window$/m);
  });

  test('bad --at and a time before the recording are reported', () => {
    expect(runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', 'noon']).stderr).toMatch(/--at must be an RFC 3339 time/);
    const early = runCli(['explain', '--config', CONFIG, '--replay', RECORDING, '--at', '2020-01-01T00:00:00Z']);
    expect(early.status).toBe(1);
    expect(early.stderr).toMatch(/holds no step at or before 2020-01-01T00:00:00Z/);
  });
});

describe('explain against a cluster', () => {
  test('one observation of this machine and the pods the API server has for the node', async () => {
    const standIn = await startApiStandIn();
    const dir = mkdtempSync(join(tmpdir(), 'kea-explain-'));
    try {
      standIn.setNode(nodeOfThisHost('node-a'));
      standIn.createPod({ ...makePod({ name: 'web', nodeName: 'node-a' }), status: { phase: 'Running' } });
      writeFileSync(join(dir, 'kubeconfig'), kubeconfigFor(standIn));
      writeFileSync(join(dir, 'config.yaml'), 'evictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\n');
      // The stand-in runs in this process: the CLI must run concurrently, so spawn it asynchronously.
      const child = spawn(process.execPath, [CLI, 'explain', '--config', join(dir, 'config.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--node-name', 'node-a'], { cwd: REPO_ROOT });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(stderr).toBe('');
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Node node-a, observed /);
      expect(stdout).toMatch(/memory\.available\s+\S+\s+\S+\s+< 1Mi\s+hard\s+ok/);
      expect(stdout).toMatch(/default\/web/);
      expect(stdout).toMatch(/Nothing to evict/);
      expect(stdout).toMatch(/^Kernel OOM kills: reported as OOMKilledByKernel Events on the pod and the Node/m);
      expect(stdout).toMatch(/^Last evictions and their outcomes \(http:\/\/127\.0\.0\.1:8080\/outcomes\)$/m);
    } finally {
      await standIn.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('explain: the running agent\'s outcomes', () => {
  const config = (address: string, port: number) => parseConfigText(`server:\n  address: "${address}"\n  port: ${port}\n`, 'test.yaml');

  test('read from its /outcomes, a wildcard address reached on loopback', async () => {
    const server = createServer((req, res) => {
      res.writeHead(req.url === '/outcomes' ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify([{ signal: 'memory.available', message: 'Eviction outcome for memory.available: relieved' }, { message: 7 }]));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      expect(await agentOutcomes(config('0.0.0.0', port))).toEqual({ source: `http://127.0.0.1:${port}/outcomes`, messages: ['Eviction outcome for memory.available: relieved'] });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  test('no agent answering, or none serving: said so', async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const closed = await agentOutcomes(config('127.0.0.1', port));
    expect('unavailable' in closed && closed.unavailable).toMatch(new RegExp(`^the agent did not answer at http://127\\.0\\.0\\.1:${port}/outcomes: `));
    expect(await agentOutcomes(config('0.0.0.0', 0))).toEqual({ source: 'the running agent', unavailable: 'server.port is 0: the agent serves no /outcomes' });
  });
});

describe('explain: kernel OOM kills counted so far', () => {
  const ID = 'c'.repeat(64);

  // A node whose cgroup v1 memory hierarchy lies under a host root of the test's own: the kernel's
  // counters say the node cgroup's own processes were killed once and the pod's container twice.
  function hostRootWithKills(dir: string, podUid: string): string {
    const hostRoot = join(dir, 'host');
    const cgroup = (path: string, oomKills: number): void => {
      const cgroupDir = join(hostRoot, 'sys/fs/cgroup/memory', path);
      mkdirSync(cgroupDir, { recursive: true });
      writeFileSync(join(cgroupDir, 'memory.usage_in_bytes'), '0\n');
      writeFileSync(join(cgroupDir, 'memory.oom_control'), `oom_kill_disable 0\nunder_oom 0\noom_kill ${oomKills}\n`);
    };
    cgroup('', 1);
    cgroup('kubepods', 0);
    cgroup(`kubepods/burstable/pod${podUid}`, 0);
    cgroup(`kubepods/burstable/pod${podUid}/${ID}`, 2);
    return hostRoot;
  }

  test('the node cgroup\'s counter and each container with kills, named from the pod\'s status', async () => {
    const standIn = await startApiStandIn();
    const dir = mkdtempSync(join(tmpdir(), 'kea-explain-oom-'));
    try {
      standIn.setNode(nodeOfThisHost('node-a'));
      const pod = makePod({ name: 'leaky', namespace: 'shop', nodeName: 'node-a' });
      // The stand-in gives the pod its UID, as an API server does.
      const created = standIn.createPod({ ...pod, status: { phase: 'Running', containerStatuses: [{ name: 'app', containerID: `containerd://${ID}` }] } });
      writeFileSync(join(dir, 'kubeconfig'), kubeconfigFor(standIn));
      writeFileSync(join(dir, 'config.yaml'), `evictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\nobserve:\n  hostRoot: ${hostRootWithKills(dir, created.metadata.uid ?? '')}\n`);
      const child = spawn(process.execPath, [CLI, 'explain', '--config', join(dir, 'config.yaml'), '--kubeconfig', join(dir, 'kubeconfig'), '--node-name', 'node-a'], { cwd: REPO_ROOT });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.resume();
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(0);
      expect(stdout).toMatch(/The node cgroup's oom_kill counter \(cgroup v1, its own processes\): 1$/m);
      expect(stdout).toMatch(/^ {2}POD\s+CONTAINER\s+OOM KILLS$/m);
      expect(stdout).toMatch(/^ {2}shop\/leaky\s+app\s+2$/m);
    } finally {
      await standIn.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
