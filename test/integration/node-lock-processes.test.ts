// Two real `run` processes of the built command line on this machine, sharing a node lock
// directory, against the API stand-in: a holder frozen with SIGSTOP (a frozen cgroup, a debugger)
// keeps its flock but stops beating; after the hung-holder timeout the standby moves the lock file
// aside and acts, and the holder, thawed with SIGCONT, finds it lost the lock and stands by:
// at no moment do both act. Needs only the build (dist/), no root.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { assertBuilt, CLI } from '../cli/run-cli.js';

const NODE = 'lock-freeze-node';
const HUNG_HOLDER_S = 3;

interface Line {
  readonly atMs: number;
  readonly msg: string;
}

interface Agent {
  readonly child: ChildProcess;
  readonly lines: Line[];
  waitFor(msg: string, timeoutMs: number): Promise<Line>;
}

let dir: string;
let standIn: ApiStandIn;
const children: ChildProcess[] = [];
beforeAll(async () => {
  assertBuilt();
  dir = mkdtempSync(join(tmpdir(), 'kea-lock-freeze-'));
  standIn = await startApiStandIn();
  standIn.setNode(nodeOfThisHost(NODE));
});
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGCONT');
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  await standIn.stop();
  rmSync(dir, { recursive: true, force: true });
});

function start(name: string): Agent {
  const config = join(dir, 'agent.yaml');
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(config, `apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nevictionHard:\n  memory.available: 1Mi\nenforceNodeAllocatable: []\nnotifier:\n  mode: disabled\noomKills:\n  enabled: false\nnodeLock:\n  directory: ${join(dir, 'lock')}\n  hungHolderTimeout: ${HUNG_HOLDER_S}s\n`);
  writeFileSync(kubeconfig, kubeconfigFor(standIn));
  const child = spawn(process.execPath, [CLI, 'run', '--config', config, '--kubeconfig', kubeconfig, '--node-name', NODE, '--port', '0', '--probe-port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { PATH: process.env.PATH ?? '', POD_NAMESPACE: 'kube-system', POD_NAME: name, KEA_RELEASE: 'kube-system/kea', KEA_IMAGE: 'kea:test' },
  });
  children.push(child);
  const lines: Line[] = [];
  const waiters: (() => void)[] = [];
  if (child.stderr !== null) {
    createInterface({ input: child.stderr }).on('line', (raw) => {
      if (!raw.startsWith('{')) return;
      try {
        const entry = JSON.parse(raw) as { msg?: string; time?: string };
        lines.push({ atMs: Date.parse(String(entry.time)), msg: String(entry.msg) });
        for (const w of waiters.splice(0)) w();
      } catch {
        // Not a log line.
      }
    });
  }
  const waitFor = async (msg: string, timeoutMs: number): Promise<Line> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = lines.find((l) => l.msg === msg);
      if (found !== undefined) return found;
      if (child.exitCode !== null) throw new Error(`${name} exited: ${lines.slice(-5).map((l) => l.msg).join(' | ')}`);
      if (Date.now() > deadline) throw new Error(`${name}: no "${msg}" within ${timeoutMs} ms; last lines: ${lines.slice(-5).map((l) => l.msg).join(' | ')}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  return { child, lines, waitFor };
}

const ACQUIRED = 'node lock acquired: this agent acts on the node';

test(`a holder frozen with SIGSTOP has its lock broken after the hung-holder timeout (${HUNG_HOLDER_S} s); thawed, it finds the lock lost and stands by (real processes, no root)`, async () => {
  const a = start('kea-a');
  await a.waitFor(ACQUIRED, 30_000);
  const b = start('kea-b');
  await b.waitFor('standing by: another agent of this release holds the node lock', 30_000);

  const frozenAtMs = Date.now();
  a.child.kill('SIGSTOP');
  const taken = await b.waitFor(ACQUIRED, 30_000);
  const brokeAfterMs = taken.atMs - frozenAtMs;
  // Not before the timeout (the holder's last heartbeat was at most a second before the freeze), and not long after it.
  expect(brokeAfterMs).toBeGreaterThanOrEqual((HUNG_HOLDER_S - 1) * 1000);
  expect(brokeAfterMs).toBeLessThan((HUNG_HOLDER_S + 10) * 1000);
  expect(b.lines.some((l) => l.msg === 'the node lock holder is hung: breaking its lock')).toBe(true);

  const thawedAtMs = Date.now();
  a.child.kill('SIGCONT');
  const lost = await a.waitFor('node lock lost: the lock file was moved aside (this agent was taken to be hung); acting stops now', 10_000);
  console.log(`frozen holder: lock broken ${brokeAfterMs} ms after SIGSTOP (hung-holder timeout ${HUNG_HOLDER_S} s); the thawed holder noticed the loss ${lost.atMs - thawedAtMs} ms after SIGCONT`);
  // b keeps the lock: a does not take it back.
  await new Promise((r) => setTimeout(r, 2000));
  expect(a.lines.filter((l) => l.msg === ACQUIRED)).toHaveLength(1);
  expect(b.child.exitCode).toBeNull();
}, 90_000);
