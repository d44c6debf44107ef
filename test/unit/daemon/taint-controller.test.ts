// The NoExecute taint path against the cluster, on fakes and a fake clock: every request is for
// the pod the decision was about. The API server's answer to the re-read decides: a pod of the
// same name recreated elsewhere (a StatefulSet's), with another UID, or bound to another node is
// never touched, and the DELETE always carries the UID precondition. While the agent may not act
// on its Node, nothing is deleted; when it may again, pending work is rebuilt from the taints.

import { silentLogger } from '../../../src/api/logger.js';
import type { Pod } from '../../../src/api/pod.js';
import type { TaintEvictionSettings } from '../../../src/api/agent-settings.js';
import { defaultAgentSettings } from '../../../src/config/defaults.js';
import { createAgentMetrics } from '../../../src/daemon/metrics.js';
import type { PodActions } from '../../../src/daemon/ports.js';
import { TaintController } from '../../../src/daemon/taint-controller.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { fakeCluster, type FakeCluster } from '../../fakes/fake-cluster.js';
import { testNode } from '../../fixtures/host-identity.js';
import { makePod } from '../../fixtures/pods.js';

const NO_EXECUTE = { key: 'example.com/broken', value: '', effect: 'NoExecute' };

function settings(overrides: Partial<TaintEvictionSettings> = {}): TaintEvictionSettings {
  return { ...defaultAgentSettings().taintEviction, enabled: true, ...overrides };
}

interface Setup {
  readonly clock: FakeClock;
  readonly cluster: FakeCluster;
  readonly controller: TaintController;
  readonly refusal: { reason: string | null };
}

// `apiAnswer` stands for the API server: what a fresh GET returns, where it differs from the cache.
function setup(options: { settings?: TaintEvictionSettings; apiAnswer?: (cached: Pod | null) => Pod | null; refused?: string } = {}): Setup {
  const clock = new FakeClock(Date.UTC(2026, 10, 1, 12));
  const pod = makePod({ name: 'web-0', nodeName: 'node-a' });
  const cluster = fakeCluster({ pods: [pod], node: testNode('node-a'), clock });
  const refusal = { reason: options.refused ?? null };
  const answer = options.apiAnswer;
  const actions: PodActions =
    answer === undefined
      ? cluster.actions
      : {
          getPod: async (namespace, name) => {
            await cluster.actions.getPod(namespace, name);
            return answer(cluster.view.findPod(namespace, name));
          },
          evictPod: (p, grace) => cluster.actions.evictPod(p, grace),
          deletePod: (p, o) => cluster.actions.deletePod(p, o),
          addDisruptionTarget: (p, c) => cluster.actions.addDisruptionTarget(p, c),
        };
  const controller = new TaintController(options.settings ?? settings(), {
    nodeName: 'node-a',
    dryRun: () => false,
    cluster: cluster.view,
    actions,
    events: cluster.events,
    metrics: createAgentMetrics(false),
    clock,
    logger: silentLogger,
    refusal: () => refusal.reason,
  });
  return { clock, cluster, controller, refusal };
}

async function taintNode(s: Setup): Promise<void> {
  const node = s.cluster.view.node();
  s.cluster.view.setNode({ ...node, metadata: node?.metadata ?? { name: 'node-a' }, spec: { taints: [NO_EXECUTE] } });
  await s.clock.stepAsync(100);
  await flushMicrotasks();
}

const controllers: TaintController[] = [];
afterEach(async () => {
  for (const c of controllers.splice(0)) await c.stop();
});

function started(s: Setup): Setup {
  controllers.push(s.controller);
  s.controller.start();
  return s;
}

describe('NoExecute deletions hit only the pod the decision was about', () => {
  const elsewhere = (cached: Pod | null): Pod | null => (cached === null ? null : { ...cached, metadata: { ...cached.metadata, uid: 'uid-recreated' }, spec: { ...cached.spec, nodeName: 'node-b' } });
  const cases: { name: string; apiAnswer?: (cached: Pod | null) => Pod | null; useEvictionApi?: boolean; deleted: boolean }[] = [
    { name: 'the same pod: DisruptionTarget, then DELETE with its UID as precondition', deleted: true },
    { name: 'recreated under the same name on another node (a StatefulSet pod): untouched', apiAnswer: elsewhere, deleted: false },
    { name: 'recreated on this node with another UID: untouched (the new pod is judged on its own)', apiAnswer: (c) => (c === null ? null : { ...c, metadata: { ...c.metadata, uid: 'uid-recreated' } }), deleted: false },
    { name: 'the same UID, but the API says another node: untouched', apiAnswer: (c) => (c === null ? null : { ...c, spec: { ...c.spec, nodeName: 'node-b' } }), deleted: false },
    { name: 'through the Eviction API: recreated elsewhere is untouched too', apiAnswer: elsewhere, useEvictionApi: true, deleted: false },
  ];
  test.each(cases)('$name', async ({ apiAnswer, useEvictionApi, deleted }) => {
    const s = started(setup({ ...(apiAnswer === undefined ? {} : { apiAnswer }), settings: settings({ useEvictionApi: useEvictionApi ?? false }) }));
    await taintNode(s);
    const { actions } = s.cluster;
    expect(actions.callsOf('getPod').length).toBeGreaterThan(0);
    if (deleted) {
      expect(actions.callsOf('addDisruptionTarget').map((c) => c.uid)).toEqual(['uid-default-web-0']);
      expect(actions.callsOf('deletePod').map((c) => [c.name, c.uid, c.outcome.result])).toEqual([['web-0', 'uid-default-web-0', 'accepted']]);
    } else {
      expect(actions.calls.filter((c) => c.method !== 'getPod')).toEqual([]);
    }
  });
});

describe('while the agent may not act on its Node', () => {
  test('nothing is deleted; once it may, the pending work is rebuilt from the current taints', async () => {
    const s = started(setup({ refused: 'the Node node-a is another machine' }));
    await taintNode(s);
    await s.clock.stepAsync(10_000);
    expect(s.cluster.actions.calls).toEqual([]);
    s.refusal.reason = null;
    s.controller.setAllowed(true);
    await s.clock.stepAsync(100);
    expect(s.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['web-0']);
  });

  test('refused after it started: handling stops, and a timer that fires anyway deletes nothing', async () => {
    const s = started(setup({ settings: settings() }));
    s.cluster.view.updatePod('default', 'web-0', (p) => {
      p.spec.tolerations = [{ key: NO_EXECUTE.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60 }];
    });
    await taintNode(s);
    s.refusal.reason = 'the Node node-a is another machine';
    await s.clock.stepAsync(61_000);
    expect(s.cluster.actions.calls).toEqual([]);
    s.controller.setAllowed(false);
    await s.clock.stepAsync(61_000);
    expect(s.cluster.actions.calls).toEqual([]);
  });
});

describe('a toleration meant as "forever"', () => {
  test('int64\'s largest count of seconds schedules nothing it cannot log, and the handling goes on', async () => {
    const s = started(setup());
    s.cluster.view.updatePod('default', 'web-0', (p) => {
      // 9223372036854775807 seconds, as JSON numbers reach the agent: past the last RFC 3339 instant.
      p.spec.tolerations = [{ key: NO_EXECUTE.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: Number("9223372036854775807") }];
    });
    await taintNode(s);
    await s.clock.stepAsync(24 * 3600_000);
    expect(s.cluster.actions.calls).toEqual([]);
    // The same controller still acts on the next decision: a pod that does not tolerate the taint.
    s.cluster.view.upsertPod(makePod({ name: 'batch-0', nodeName: 'node-a' }));
    await s.clock.stepAsync(100);
    expect(s.cluster.actions.callsOf('deletePod').map((c) => c.name)).toEqual(['batch-0']);
  });
});
