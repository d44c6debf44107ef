// Part 8, node lock takeover: how long a node is without an acting agent when the acting one dies.
// Two real `run --dry-run` processes of the built CLI share a node lock directory against the API
// stand-in in this process; the one holding the lock is killed with SIGKILL (as a crash, an OOM
// kill or a node's kill -9 would end it) and the time is taken from the signal to the standby's
// log line saying it holds the lock, from which moment its actions are no longer refused. A new
// standby is started for the next run. Idle, then with the CPUs saturated by two busy processes.
// The real-node test (test/e2e/node-lock.e2e.test.ts) does the same beside a real kubelet and a leak.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { kubeconfigFor, startApiStandIn } from '../../src/demo/api-stand-in.js';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { DEFAULT_NODE_LOCK_POLL_INTERVAL_MS } from '../../src/daemon/node-lock-gate.js';
import { throwIfInterrupted, trackChild } from '../lib/cleanup.js';
import type { BenchPart, PartContext } from '../lib/part.js';
import { distribution, fmt, type Distribution } from '../lib/stats.js';

const NODE_NAME = 'node-lock-node';
const ACQUIRED = 'node lock acquired: this agent acts on the node';
const STANDING_BY = 'standing by: another agent of this release holds the node lock';

export interface NodeLockVariant {
  readonly label: string;
  /** SIGKILL of the holder → the standby holds the lock, ms, one per run. */
  readonly takeoverMs: readonly number[];
  readonly takeover: Distribution | null;
}

export interface NodeLockData {
  readonly pollIntervalMs: number;
  readonly variants: readonly NodeLockVariant[];
}

const runsFor = (quick: boolean): number => (quick ? 3 : 20);

interface Agent {
  readonly child: ChildProcess;
  /** Resolves with the time (ms since the epoch, the agent's clock) of its first log line with this message. */
  logged(msg: string, timeoutMs?: number): Promise<number>;
}

function startAgent(context: PartContext, configPath: string, kubeconfigPath: string, name: string): Agent {
  const child = trackChild(
    spawn(process.execPath, [context.mainJs, 'run', '--config', configPath, '--kubeconfig', kubeconfigPath, '--node-name', NODE_NAME, '--dry-run', '--port', '0', '--probe-port', '0'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { PATH: process.env.PATH ?? '', POD_NAMESPACE: 'kube-system', POD_NAME: name, KEA_RELEASE: 'kube-system/kea', KEA_IMAGE: 'kea:bench' },
    }),
  );
  const seen = new Map<string, number>();
  const waiters: { msg: string; resolve: (ms: number) => void }[] = [];
  if (child.stderr !== null) {
    createInterface({ input: child.stderr }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      try {
        const entry = JSON.parse(line) as { msg?: string; time?: string };
        if (entry.msg === undefined || seen.has(entry.msg)) return;
        const atMs = Date.parse(String(entry.time));
        seen.set(entry.msg, atMs);
        for (const w of waiters.filter((w) => w.msg === entry.msg)) w.resolve(atMs);
      } catch {
        // Not a log line.
      }
    });
  }
  return {
    child,
    logged: (msg, timeoutMs = 30_000) =>
      new Promise<number>((resolve, reject) => {
        const known = seen.get(msg);
        if (known !== undefined) return resolve(known);
        const timer = setTimeout(() => reject(new Error(`${name}: no "${msg}" within ${timeoutMs} ms`)), timeoutMs);
        waiters.push({ msg, resolve: (ms) => (clearTimeout(timer), resolve(ms)) });
        child.once('exit', (code, signal) => reject(new Error(`${name} exited (${code ?? signal}) before "${msg}"`)));
      }),
  };
}

async function kill(agent: Agent): Promise<void> {
  if (agent.child.exitCode !== null || agent.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => agent.child.once('exit', () => r()));
  agent.child.kill('SIGKILL');
  await exited;
}

async function measureVariant(context: PartContext, label: string, busy: boolean): Promise<NodeLockVariant> {
  const standIn = await startApiStandIn();
  const dir = join(context.scratchDir, `node-lock-${busy ? 'busy' : 'idle'}`);
  mkdirSync(dir, { recursive: true });
  const configPath = join(dir, 'agent.yaml');
  const kubeconfigPath = join(dir, 'kubeconfig');
  // Far below what this machine has free: nothing is decided but the lock.
  writeFileSync(configPath, `apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nevictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\nnotifier:\n  mode: disabled\noomKills:\n  enabled: false\nnodeLock:\n  directory: ${join(dir, 'lock')}\nlogLevel: info\n`);
  writeFileSync(kubeconfigPath, kubeconfigFor(standIn));
  standIn.setNode(nodeOfThisHost(NODE_NAME));
  const spinners: ChildProcess[] = busy ? Array.from({ length: Math.min(2, cpus().length) }, () => trackChild(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }))) : [];
  const takeoverMs: number[] = [];
  let count = 0;
  const next = (): Agent => startAgent(context, configPath, kubeconfigPath, `kea-${label.startsWith('idle') ? 'i' : 'b'}${count++}`);
  let holder = next();
  let standby: Agent | null = null;
  try {
    await holder.logged(ACQUIRED);
    const runs = runsFor(context.quick);
    for (let i = 0; i < runs; i++) {
      throwIfInterrupted();
      context.progress.step(i, runs, `${label}: kill -9 of the holder, run ${i + 1}`, true);
      standby = next();
      await standby.logged(STANDING_BY);
      // Settled: the standby past its start-up, trying for the lock at its interval.
      await new Promise((r) => setTimeout(r, 1000));
      const killedAtMs = Date.now();
      const acquired = standby.logged(ACQUIRED, 10_000);
      await kill(holder);
      takeoverMs.push((await acquired) - killedAtMs);
      holder = standby;
      standby = null;
    }
  } finally {
    await kill(holder);
    if (standby !== null) await kill(standby);
    for (const s of spinners) s.kill('SIGKILL');
    await standIn.stop();
  }
  const takeover = distribution(takeoverMs);
  context.progress.note(`${label}: SIGKILL → standby holds the lock, median ${fmt(takeover?.median ?? NaN)} ms, max ${fmt(takeover?.max ?? NaN)} ms`);
  return { label, takeoverMs, takeover };
}

export const nodeLockPart: BenchPart<NodeLockData> = {
  name: 'node-lock',
  title: 'Node lock takeover',
  estimateMs: (quick) => 2 * runsFor(quick) * 3_000 + 10_000,
  unavailable: () => null,
  async run(context: PartContext): Promise<NodeLockData> {
    const variants = [await measureVariant(context, 'idle machine', false), await measureVariant(context, 'CPUs saturated by two busy processes', true)];
    return { pollIntervalMs: DEFAULT_NODE_LOCK_POLL_INTERVAL_MS, variants };
  },
};
