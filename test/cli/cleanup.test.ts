// `cleanup`: the command line is checked before anything is sent (exactly one of --node-name and
// --all-nodes, a valid node name, no unknown flag), and the command run against the stand-in API
// server takes only the agent's conditions and taint off, prints one line per Node, writes nothing
// in a dry run, honours the configuration's prefix and key, and exits 1 when a Node failed.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Node } from '../../src/api/pod.js';
import { cleanupCommand, cleanupTarget, formatOutcome, type CleanupCliOptions } from '../../src/cli/cleanup.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { runCli, runCliAsync, type CliResult } from './run-cli.js';

const PREFIX = 'kube-eviction-agent.io/';

class Text extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: BufferEncoding, done: () => void): void {
    this.text += chunk.toString();
    done();
  }
}

function markedNode(name: string, prefix = PREFIX, taintKey = 'kube-eviction-agent.io/pressure'): Node {
  return {
    metadata: { name },
    spec: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }, { key: taintKey, value: '', effect: 'NoSchedule' }] },
    status: {
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready' },
        { type: `${prefix}MemoryPressure`, status: 'Unknown', reason: 'AgentStopped', message: 'stopped' },
        { type: `${prefix}PIDPressure`, status: 'Unknown', reason: 'AgentStopped', message: 'stopped' },
      ],
    },
  };
}

describe('the command line', () => {
  const refused: { name: string; options: CleanupCliOptions; message: RegExp }[] = [
    { name: 'neither --node-name nor --all-nodes', options: {}, message: /exactly one of --node-name NODE or --all-nodes/ },
    { name: 'both', options: { nodeName: 'node-a', allNodes: true }, message: /exactly one of/ },
    { name: 'an upper-case name', options: { nodeName: 'Node-A' }, message: /--node-name must be a node name.*"Node-A"/ },
    { name: 'a path', options: { nodeName: '../node-a' }, message: /--node-name must be a node name/ },
    { name: 'an empty name', options: { nodeName: '' }, message: /--node-name must be a node name/ },
    { name: 'too long', options: { nodeName: 'a'.repeat(254) }, message: /--node-name must be a node name/ },
    { name: 'an unknown log level', options: { allNodes: true, logLevel: 'loud' }, message: /--log-level must be/ },
  ];
  test.each(refused)('refused: $name', ({ options, message }) => {
    expect(() => cleanupTarget(options)).toThrow(message);
  });

  test('accepted: one node, every node, dry run', () => {
    expect(cleanupTarget({ nodeName: 'node-a.example.com' })).toEqual({ nodes: { name: 'node-a.example.com' }, dryRun: false });
    expect(cleanupTarget({ allNodes: true, dryRun: true })).toEqual({ nodes: 'all', dryRun: true });
  });

  test.each([
    [['cleanup'], /exactly one of --node-name NODE or --all-nodes/],
    [['cleanup', '--all-nodes', '--force'], /unknown option '--force'/],
    [['cleanup', '--all-nodes', 'extra'], /too many arguments/],
    [['cleanup', '--node-name', 'node_a'], /--node-name must be a node name/],
  ])('through the command: %j is refused before any request', (args, message) => {
    const result = runCli(args, undefined, { KUBECONFIG: '/nonexistent' });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});

test('each outcome\'s line', () => {
  const conditions = [`${PREFIX}MemoryPressure`];
  const taints = ['kube-eviction-agent.io/pressure:NoSchedule'];
  expect(formatOutcome({ node: 'a', result: 'cleaned', conditions, taints })).toBe('a: removed conditions kube-eviction-agent.io/MemoryPressure; removed taint kube-eviction-agent.io/pressure:NoSchedule');
  expect(formatOutcome({ node: 'a', result: 'would-clean', conditions: [], taints })).toBe('a: would remove taint kube-eviction-agent.io/pressure:NoSchedule (dry run: nothing changed)');
  expect(formatOutcome({ node: 'a', result: 'clean', conditions: [], taints: [] })).toBe("a: nothing of the agent's on it");
  expect(formatOutcome({ node: 'a', result: 'missing', conditions: [], taints: [] })).toBe('a: no such node');
  expect(formatOutcome({ node: 'a', result: 'failed', conditions, taints: [], error: 'writing the node taints failed (500): boom' })).toBe(
    'a: FAILED: writing the node taints failed (500): boom (before that: removed conditions kube-eviction-agent.io/MemoryPressure)',
  );
});

describe('against the stand-in API server', () => {
  let standIn: ApiStandIn;
  let dir: string;
  let kubeconfig: string;

  beforeEach(async () => {
    standIn = await startApiStandIn();
    dir = mkdtempSync(join(tmpdir(), 'kea-cleanup-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, kubeconfigFor(standIn));
  });

  afterEach(async () => {
    await standIn.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function cleanup(options: CleanupCliOptions): Promise<CliResult> {
    const [stdout, stderr] = [new Text(), new Text()];
    const status = await cleanupCommand({ kubeconfig, ...options }, { stdout, stderr });
    return { status, stdout: stdout.text, stderr: stderr.text };
  }

  const types = (name: string): string[] => (standIn.node(name)?.status?.conditions ?? []).map((c) => c.type);
  const taintKeys = (name: string): string[] => (standIn.node(name)?.spec?.taints ?? []).map((t) => t.key);

  test('--all-nodes: the agent\'s marks go from every Node, the rest stay; a second run finds nothing', async () => {
    standIn.setNode(markedNode('node-a'));
    standIn.setNode(markedNode('node-b'));
    standIn.setNode({ metadata: { name: 'node-c' }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } });
    const result = await cleanup({ allNodes: true });
    expect(result.status).toBe(0);
    expect(result.stdout.trim().split('\n')).toEqual([
      'node-a: removed conditions kube-eviction-agent.io/MemoryPressure, kube-eviction-agent.io/PIDPressure; removed taint kube-eviction-agent.io/pressure:NoSchedule',
      'node-b: removed conditions kube-eviction-agent.io/MemoryPressure, kube-eviction-agent.io/PIDPressure; removed taint kube-eviction-agent.io/pressure:NoSchedule',
      "node-c: nothing of the agent's on it",
    ]);
    expect(result.stderr).toMatch(/cleanup: 3 node\(s\): 2 cleaned, 1 already clean, 0 gone, 0 failed/);
    for (const name of ['node-a', 'node-b']) {
      expect(types(name)).toEqual(['Ready']);
      expect(taintKeys(name)).toEqual(['dedicated']);
    }
    const again = await cleanup({ allNodes: true });
    expect(again.stdout).not.toMatch(/removed/);
    expect(again.status).toBe(0);
  });

  test('--dry-run: prints what would go and changes nothing', async () => {
    standIn.setNode(markedNode('node-a'));
    const before = standIn.node('node-a');
    const result = await cleanup({ nodeName: 'node-a', dryRun: true });
    expect(result.status).toBe(0);
    expect(result.stdout).toBe('node-a: would remove conditions kube-eviction-agent.io/MemoryPressure, kube-eviction-agent.io/PIDPressure; taint kube-eviction-agent.io/pressure:NoSchedule (dry run: nothing changed)\n');
    expect(standIn.node('node-a')).toEqual(before);
    expect(standIn.requests().filter((r) => r.method !== 'GET')).toEqual([]);
  });

  test('the configuration\'s prefix and taint key are the ones removed', async () => {
    standIn.setNode(markedNode('node-a', 'eviction.example.com/', 'eviction.example.com/pressure'));
    const config = join(dir, 'config.yaml');
    writeFileSync(config, 'apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nreporting:\n  conditionTypePrefix: eviction.example.com/\n  taint:\n    key: eviction.example.com/pressure\n');
    const withDefaults = await cleanup({ nodeName: 'node-a' });
    expect(withDefaults.stdout).toBe("node-a: nothing of the agent's on it\n");
    const result = await cleanup({ nodeName: 'node-a', config });
    expect(result.status).toBe(0);
    expect(types('node-a')).toEqual(['Ready']);
    expect(taintKeys('node-a')).toEqual(['dedicated']);
  });

  test('an invalid configuration is refused with its problems, before any request', async () => {
    const config = join(dir, 'bad.yaml');
    writeFileSync(config, 'apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nreporting:\n  conditionTypePrefix: no-slash\n');
    const result = await cleanup({ allNodes: true, config });
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/invalid configuration[\s\S]*conditionTypePrefix/);
    expect(standIn.requests()).toEqual([]);
  });

  test('a Node that fails, or a named Node that does not exist, makes the exit status 1; the others are still cleaned', async () => {
    standIn.setNode(markedNode('node-a'));
    standIn.setNode(markedNode('node-b'));
    standIn.injectFault({ method: 'PATCH', pathPattern: /nodes\/node-a\/status/, status: 403 });
    const result = await cleanup({ allNodes: true });
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/^node-a: FAILED: writing the node status failed \(403\)/m);
    expect(result.stdout).toMatch(/^node-b: removed conditions/m);
    expect(result.stderr).toMatch(/1 cleaned, 0 already clean, 0 gone, 1 failed/);
    expect(types('node-b')).toEqual(['Ready']);
    const missing = await cleanup({ nodeName: 'node-x' });
    expect(missing).toMatchObject({ status: 1, stdout: 'node-x: no such node\n' });
  });

  test('the built command does the same', async () => {
    standIn.setNode(markedNode('node-a'));
    const result = await runCliAsync(['cleanup', '--node-name', 'node-a', '--kubeconfig', kubeconfig]);
    expect(result).toMatchObject({ status: 0, stdout: 'node-a: removed conditions kube-eviction-agent.io/MemoryPressure, kube-eviction-agent.io/PIDPressure; removed taint kube-eviction-agent.io/pressure:NoSchedule\n' });
    expect(types('node-a')).toEqual(['Ready']);
  }, 30_000);
});
