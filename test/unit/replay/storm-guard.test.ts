// The replay shows the eviction storm guard's decisions: a soft eviction held back by the budget
// (and nothing evicted at that step), and the owner reported when its evictions reach the threshold.

import type { Pod } from '../../../src/api/pod.js';
import { parseConfigText } from '../../../src/config/load.js';
import type { ReplayStep } from '../../../src/replay/input.js';
import { ReplayRunner } from '../../../src/replay/runner.js';
import { memorySummary } from '../../fakes/fake-node.js';
import { testNode } from '../../fixtures/host-identity.js';
import { makePod } from '../../fixtures/pods.js';

const Gi = 1024 ** 3;
const Mi = 1024 ** 2;
const T0 = Date.UTC(2026, 10, 1, 12);

function replica(n: number): Pod {
  const pod = makePod({ name: `leaky-abc12-r${n}`, namespace: 'shop' });
  pod.metadata.labels = { 'pod-template-hash': 'abc12' };
  pod.metadata.ownerReferences = [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'leaky-abc12', uid: 'uid-rs', controller: true }];
  return pod;
}

// Each step: replica n alone on the node, using 3 GiB, with 800 MiB available (below the soft threshold).
// A first step at T0 - 30 s starts the soft grace period (replica 1 already there).
function steps(count: number): ReplayStep[] {
  const at = (timeMs: number, pod: Pod): ReplayStep => ({
    line: 0,
    timeMs,
    pods: [pod],
    summary: memorySummary(8 * Gi, 800 * Mi, { [pod.metadata.uid ?? '']: { name: pod.metadata.name ?? '', namespace: 'shop', bytes: 3 * Gi } }),
  });
  return [{ ...at(T0 - 30_000, replica(1)), node: testNode('node-a') }, ...Array.from({ length: count }, (_, i) => at(T0 + i * 60_000, replica(i + 1)))];
}

const config = parseConfigText(
  'evictionSoft:\n  memory.available: 1Gi\nevictionSoftGracePeriod:\n  memory.available: 10s\nstormGuard:\n  softEvictionBudget:\n    maxEvictions: 3\n  owners:\n    eventThreshold: 2\n',
  'storm.yaml',
);

test('the replay holds back the soft eviction past the budget and reports the owner at its threshold', () => {
  const runner = new ReplayRunner(config.eviction, {}, config.agent.stormGuard);
  const lines = steps(4).map((step) => runner.step(step)).slice(1);
  expect(lines.map((l) => l.evictions.map((e) => e.pod))).toEqual([['shop/leaky-abc12-r1'], ['shop/leaky-abc12-r2'], ['shop/leaky-abc12-r3'], []]);
  expect(lines[0]?.stormGuard).toBeUndefined();
  expect(lines[1]?.stormGuard).toEqual({
    ownerStorms: [{ owner: 'Deployment shop/leaky', count: 2, message: '2 pods of Deployment shop/leaky evicted from node node-a for memory in the last 10 minutes' }],
  });
  expect(lines[2]?.stormGuard).toBeUndefined();
  expect(lines[3]?.stormGuard?.heldBack).toEqual({
    pod: 'shop/leaky-abc12-r4',
    signal: 'memory.available',
    message:
      'Soft eviction of shop/leaky-abc12-r4 for memory.available held back: 3 soft evictions from node node-a in the last 10 minutes reached the budget of 3; the next is allowed in 7 minutes. Hard evictions are not held back.',
  });
  expect(runner.stormGuardAtLastStep()?.state).toMatchObject({ budget: { used: 3, max: 3 }, owners: [{ count: 3 }] });
});

test('without the guard (the default runner) every decision goes ahead and the lines carry no stormGuard', () => {
  const runner = new ReplayRunner(config.eviction);
  const lines = steps(4).map((step) => runner.step(step)).slice(1);
  expect(lines.every((l) => l.evictions.length === 1 && l.stormGuard === undefined)).toBe(true);
});
