// The node status reporter writes on change only: at rest its conditions are never re-sent on a
// timer (every node of a cluster would pay a write per period), yet a Node that lost them
// (recreated, or edited by hand) gets them back once the watch shows it, and a watch that lags
// behind the last write does not turn into a write every pass.

import { NodeStatusReporter, nodeLacks, agentConditions } from '../../../src/daemon/node-status.js';
import type { Node } from '../../../src/api/pod.js';
import { fakeCluster } from '../../fakes/fake-cluster.js';
import { FakeClock } from '../../fakes/fake-clock.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';

const PREFIX = 'kube-eviction-agent.io/';
const settings = { enabled: true, dryRun: false, conditionTypePrefix: PREFIX, taint: { enabled: true, key: 'kube-eviction-agent.io/pressure' } };
const node = (): Node => ({ metadata: { name: 'n1', uid: '11111111-1111-1111-1111-111111111111' }, status: { conditions: [] } }) as Node;

function setup() {
  const clock = new FakeClock();
  const cluster = fakeCluster({ node: node() });
  const reporter = new NodeStatusReporter(settings, { reporter: cluster.reporter, cluster: cluster.view, clock, logger: new RecordingLogger() });
  const writes = () => cluster.reporter.calls.filter((c) => c.method === 'setConditions').length;
  return { clock, cluster, reporter, writes };
}

describe('NodeStatusReporter: writes on change, never on a timer', () => {
  test('at rest for an hour of 10 s passes, only the first pass writes', async () => {
    const { clock, reporter, cluster, writes } = setup();
    for (let pass = 0; pass < 360; pass++) {
      await reporter.report([], clock.nowMs());
      clock.step(10_000);
    }
    // The four conditions once; the taint is settled once at start (absent, wanted absent).
    expect(writes()).toBe(1);
    expect(cluster.reporter.calls.map((c) => c.method)).toEqual(['setTaint', 'setConditions']);
  });

  test('a pressure change writes the conditions and the taint once each, and again once when it ends', async () => {
    const { clock, reporter, cluster } = setup();
    await reporter.report([], clock.nowMs());
    for (let pass = 0; pass < 6; pass++) {
      clock.step(10_000);
      await reporter.report(['MemoryPressure'], clock.nowMs());
    }
    for (let pass = 0; pass < 6; pass++) {
      clock.step(10_000);
      await reporter.report([], clock.nowMs());
    }
    // The taint before the conditions: the conditions' write would change the resourceVersion the taint's is conditional on.
    expect(cluster.reporter.calls.map((c) => c.method)).toEqual(['setTaint', 'setConditions', 'setTaint', 'setConditions', 'setTaint', 'setConditions']);
  });

  test('conditions removed from the Node by hand are written again at the first pass 30 s after the last write, and only once', async () => {
    const { clock, reporter, cluster, writes } = setup();
    await reporter.report([], clock.nowMs());
    clock.step(60_000);
    cluster.view.setNode(node());
    await reporter.report([], clock.nowMs());
    expect(writes()).toBe(2);
    for (let pass = 0; pass < 30; pass++) {
      clock.step(10_000);
      await reporter.report([], clock.nowMs());
    }
    expect(writes()).toBe(2);
  });

  test('a watch that has not yet delivered the last write is not taken for a lost condition within 30 s', async () => {
    const { clock, reporter, cluster, writes } = setup();
    await reporter.report([], clock.nowMs());
    // The Node as watched goes back to its state before the write (a stale watch).
    cluster.view.setNode(node());
    for (let ms = 10_000; ms < 30_000; ms += 10_000) {
      clock.step(10_000);
      await reporter.report([], clock.nowMs());
    }
    expect(writes()).toBe(1);
    clock.step(10_000);
    await reporter.report([], clock.nowMs());
    expect(writes()).toBe(2);
  });
});

describe('nodeLacks', () => {
  const wanted = agentConditions([], PREFIX);
  const withConditions = (conditions: object[]): Node => ({ ...node(), status: { conditions } }) as Node;
  test.each([
    ['a Node not seen yet proves nothing', null, false],
    ['a Node without them lacks them', withConditions([]), true],
    ['a Node with all four as written', withConditions(wanted), false],
    ['a Node with one of another status', withConditions(wanted.map((c, i) => (i === 0 ? { ...c, status: 'Unknown' } : c))), true],
    ['a Node with one of another message', withConditions(wanted.map((c, i) => (i === 1 ? { ...c, message: 'edited' } : c))), true],
  ])('%s', (_name, n, lacks) => {
    expect(nodeLacks(n as Node | null, wanted)).toBe(lacks);
  });
});
