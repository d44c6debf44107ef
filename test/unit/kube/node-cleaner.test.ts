// The clean-up of Nodes over the stand-in: the agent's conditions go through the status
// subresource and its taint through the Node, each write carrying the resourceVersion read; a
// conflict reads the Node again and retries, a bounded number of times; a dry run writes nothing.

import type { Node } from '../../../src/api/pod.js';
import type { NodeCleaner } from '../../../src/kube/index.js';
import { node, startHarness, type Harness } from './harness.js';

const PREFIX = 'kube-eviction-agent.io/';
const MARKS = { conditionTypePrefix: PREFIX, taintKey: 'kube-eviction-agent.io/pressure' };
const FOREIGN_TAINT = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const AGENT_TAINT = { key: 'kube-eviction-agent.io/pressure', value: '', effect: 'NoSchedule' };

let h: Harness;
let cleaner: NodeCleaner;

function marked(name: string): Node {
  const base = node(name);
  return {
    ...base,
    spec: { taints: [FOREIGN_TAINT, AGENT_TAINT] },
    status: {
      conditions: [
        ...(base.status?.conditions ?? []),
        { type: `${PREFIX}MemoryPressure`, status: 'True', reason: 'AgentHasInsufficientMemory', message: 'm' },
        { type: `${PREFIX}DiskPressure`, status: 'Unknown', reason: 'AgentStopped', message: 'm' },
        { type: 'example.com/Custom', status: 'True', reason: 'R', message: 'm' },
      ],
    },
  };
}

const types = (name: string): string[] => (h.standIn.node(name)?.status?.conditions ?? []).map((c) => c.type);
const taintKeys = (name: string): string[] => (h.standIn.node(name)?.spec?.taints ?? []).map((t) => t.key);

beforeEach(async () => {
  h = await startHarness({ random: () => 0.5 });
  cleaner = h.client.nodeCleaner();
});

afterEach(async () => {
  await h.close();
});

test('removes only the agent\'s conditions and taint, each write with the resourceVersion it read', async () => {
  h.standIn.setNode(marked('node-a'));
  await expect(cleaner.clean('node-a', MARKS, false)).resolves.toEqual({
    node: 'node-a',
    result: 'cleaned',
    conditions: [`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`],
    taints: ['kube-eviction-agent.io/pressure:NoSchedule'],
  });
  expect(types('node-a')).toEqual(['MemoryPressure', 'Ready', 'example.com/Custom']);
  expect(taintKeys('node-a')).toEqual(['dedicated']);
  const patches = h.standIn.requests().filter((r) => r.method === 'PATCH');
  expect(patches.map((p) => [p.path, p.contentType, p.status])).toEqual([
    ['/api/v1/nodes/node-a/status', 'application/merge-patch+json', 200],
    ['/api/v1/nodes/node-a', 'application/merge-patch+json', 200],
  ]);
  for (const patch of patches) expect((patch.body as { metadata: { resourceVersion: string } }).metadata.resourceVersion).toMatch(/^[0-9]+$/);
  // Again: nothing left, nothing written.
  h.standIn.clearRequests();
  await expect(cleaner.clean('node-a', MARKS, false)).resolves.toMatchObject({ result: 'clean', conditions: [], taints: [] });
  expect(h.standIn.requests().filter((r) => r.method === 'PATCH')).toEqual([]);
});

test('the last taint removed leaves no taint list', async () => {
  h.standIn.setNode({ ...node('node-a'), spec: { taints: [AGENT_TAINT] } });
  await expect(cleaner.clean('node-a', MARKS, false)).resolves.toMatchObject({ result: 'cleaned', conditions: [], taints: ['kube-eviction-agent.io/pressure:NoSchedule'] });
  expect(h.standIn.node('node-a')?.spec?.taints ?? []).toEqual([]);
});

test('a dry run lists what would go and writes nothing', async () => {
  h.standIn.setNode(marked('node-a'));
  const before = h.standIn.node('node-a');
  await expect(cleaner.clean('node-a', MARKS, true)).resolves.toEqual({
    node: 'node-a',
    result: 'would-clean',
    conditions: [`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`],
    taints: ['kube-eviction-agent.io/pressure:NoSchedule'],
  });
  expect(h.standIn.node('node-a')).toEqual(before);
  expect(h.standIn.requests().filter((r) => r.method !== 'GET')).toEqual([]);
});

test('a conflict (the Node changed meanwhile) reads it again and retries', async () => {
  h.standIn.setNode(marked('node-a'));
  h.standIn.injectFault({ method: 'PATCH', pathPattern: /\/status$/, status: 409, count: 2 });
  await expect(cleaner.clean('node-a', MARKS, false)).resolves.toMatchObject({ result: 'cleaned', conditions: [`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`] });
  expect(h.standIn.requests().filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 409, 200, 200]);
  expect(types('node-a')).toEqual(['MemoryPressure', 'Ready', 'example.com/Custom']);
});

test('a real resourceVersion conflict: a taint added by someone else between the read and the write is kept', async () => {
  h.standIn.setNode({ ...node('node-a'), spec: { taints: [AGENT_TAINT] } });
  // Delay the write; meanwhile another controller adds its taint (a new resourceVersion).
  h.standIn.injectFault({ method: 'PATCH', pathPattern: /nodes\/node-a$/, delayMs: 200 });
  const cleaning = cleaner.clean('node-a', MARKS, false);
  await new Promise((resolve) => setTimeout(resolve, 50));
  const current = h.standIn.node('node-a')!;
  h.standIn.setNode({ ...current, spec: { taints: [...(current.spec?.taints ?? []), FOREIGN_TAINT] } });
  await expect(cleaning).resolves.toMatchObject({ result: 'cleaned', taints: ['kube-eviction-agent.io/pressure:NoSchedule'] });
  expect(h.standIn.requests().filter((r) => r.method === 'PATCH').map((r) => r.status)).toEqual([409, 200]);
  expect(taintKeys('node-a')).toEqual(['dedicated']);
});

test('conflicts without end: gives up after a bounded number of attempts and says so', async () => {
  h.standIn.setNode(marked('node-a'));
  h.standIn.injectFault({ method: 'PATCH', status: 409, count: 1000 });
  const outcome = await cleaner.clean('node-a', MARKS, false);
  expect(outcome).toMatchObject({ result: 'failed', conditions: [], taints: [] });
  expect(outcome.error).toMatch(/kept changing \(8 attempts\)/);
  expect(h.standIn.requests().filter((r) => r.method === 'PATCH')).toHaveLength(8);
}, 20_000);

test('a refused write is a failure naming the status; what was removed before is listed', async () => {
  h.standIn.setNode(marked('node-a'));
  h.standIn.injectFault({ method: 'PATCH', pathPattern: /nodes\/node-a$/, status: 500 });
  const outcome = await cleaner.clean('node-a', MARKS, false);
  expect(outcome).toMatchObject({ result: 'failed', conditions: [`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`], taints: [] });
  expect(outcome.error).toMatch(/writing the node taints failed \(500\)/);
  expect(taintKeys('node-a')).toEqual(['dedicated', 'kube-eviction-agent.io/pressure']);
});

test('a Node that does not exist is reported missing', async () => {
  await expect(cleaner.clean('node-x', MARKS, false)).resolves.toEqual({ node: 'node-x', result: 'missing', conditions: [], taints: [] });
});

test('every Node\'s name is listed', async () => {
  for (const name of ['node-a', 'node-b', 'node-c']) h.standIn.setNode(node(name));
  await expect(cleaner.nodeNames()).resolves.toEqual(['node-a', 'node-b', 'node-c']);
});
