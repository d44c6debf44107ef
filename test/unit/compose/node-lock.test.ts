// The node lock as the commands report it: check-config's line (where, the hung-holder timeout,
// whether the directory is the host's), explain's holder (read from the state file a real lock
// gate wrote, trusted only for the lock file there now), and this agent's identity from the pod's
// environment, values of the wrong shape left out.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNodeLockFile } from '../../../src/act/node-lock-file.js';
import { describeLockHolder, describeNodeLock, thisAgentInstance } from '../../../src/compose/node-lock.js';
import { parseConfigText } from '../../../src/config/load.js';
import { NodeLockGate } from '../../../src/daemon/node-lock-gate.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kea-compose-lock-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = (nodeLock: string): ReturnType<typeof parseConfigText> => parseConfigText(`apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\nnodeLock:\n${nodeLock}`, 'c.yaml');

test('check-config says where the lock is, its hung-holder timeout and the verdict; "" says the lock is off; bad values are refused', () => {
  expect(describeNodeLock(config(`  directory: ${dir}\n  hungHolderTimeout: 15s\n`))).toMatch(new RegExp(`^node lock: ${dir}/node\\.lock, a holder hung after 15s; (shared with the host here|NOT SHARED WITH THE HOST here|sharing with the host unknown here)`));
  expect(describeNodeLock(config('  directory: ""\n'))).toBe('node lock: off (nodeLock.directory is ""): this agent acts whatever other agent runs on its node\n');
  expect(() => config('  directory: run/kea\n  hungHolderTimeout: 1s\n')).toThrow(/nodeLock\.directory.*must be an absolute path[\s\S]*nodeLock\.hungHolderTimeout/);
});

test('explain names the holder from its state file, says when its heartbeat is stale, and when there is no lock', () => {
  const loaded = config(`  directory: ${dir}\n`);
  const clock = new FakeClock();
  expect(describeLockHolder(loaded, clock.nowMs())).toBe(`Node lock: ${dir}/node.lock does not exist here: no agent has run on this node with this directory\n`);
  const self = { pid: 4242, pod: 'kube-system/kea-x', release: 'kube-eviction-agent/kube-eviction-agent', image: 'kea:1', startedAtMs: 0 };
  const gate = new NodeLockGate(
    { pollIntervalMs: 20, heartbeatIntervalMs: 1000, hungHolderMs: 10_000, podCleanupTimeoutMs: 30_000 },
    { lock: createNodeLockFile(dir), self, clock, logger: new RecordingLogger(), events: { podEvent: async () => {}, nodeEvent: async () => {}, objectEvent: async () => {} }, engineState: () => null, podGone: () => true, onTakeover: () => {} },
  );
  gate.start();
  try {
    expect(describeLockHolder(loaded, clock.nowMs() + 500)).toBe(
      `Node lock: ${dir}/node.lock, held by pod kube-system/kea-x (release kube-eviction-agent/kube-eviction-agent, image kea:1, pid 4242) since ${new Date(clock.nowMs()).toISOString()}; heartbeat 0.5s ago\n`,
    );
    expect(describeLockHolder(loaded, clock.nowMs() + 60_000)).toMatch(/; last heartbeat 60\.0s ago: exited, or hung \(a standby breaks the lock past 10s\)\n$/);
  } finally {
    gate.stop();
  }
  expect(describeLockHolder(config('  directory: ""\n'), 0)).toBe('Node lock: off (nodeLock.directory is "")\n');
});

test.each([
  ['a pod of a release', { POD_NAMESPACE: 'kube-system', POD_NAME: 'kea-abc12', KEA_RELEASE: 'kube-system/kea', KEA_IMAGE: 'ghcr.io/x/kea:1.2' }, { pod: 'kube-system/kea-abc12', release: 'kube-system/kea', image: 'ghcr.io/x/kea:1.2' }],
  ['a process run by hand', {}, { pod: null, release: null, image: null }],
  ['values of the wrong shape', { POD_NAMESPACE: 'Kube System', POD_NAME: 'x', KEA_RELEASE: 'a b', KEA_IMAGE: 'x'.repeat(600) }, { pod: null, release: null, image: null }],
])('this agent\'s identity from its environment: %s', (_name, env, expected) => {
  expect(thisAgentInstance(env, 7, 1000)).toEqual({ pid: 7, startedAtMs: 1000, ...expected });
});
