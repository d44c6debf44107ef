import { rebuildOnStart } from '../../../src/taint/rebuild-on-start.js';
import { FakeTaintCluster, makeNode, makePod, MINUTE_MS, noExecute, noSchedule, T0_MS, tolerate } from './fake-taint-cluster.js';

const iso = (ms: number): string => new Date(ms).toISOString();

describe('rebuildOnStart', () => {
  test('no node, or a node without NoExecute taints, schedules nothing', () => {
    const pods = [makePod('a')];
    expect(rebuildOnStart(null, pods, T0_MS)).toEqual({ noExecuteTaints: null, evictions: [] });
    expect(rebuildOnStart(makeNode([noSchedule('a')]), pods, T0_MS)).toEqual({ noExecuteTaints: null, evictions: [] });
  });

  test('untolerated pods at once, tolerating pods at now + tolerationSeconds, forever pods not at all', () => {
    const untolerated = makePod('untolerated');
    const timed = makePod('timed', [tolerate('not-ready', 300)]);
    const forever = makePod('forever', [tolerate('not-ready')]);
    const elsewhere = makePod('elsewhere', [], { nodeName: 'node-b' });
    const node = makeNode([noExecute('not-ready', undefined, iso(T0_MS - 4 * MINUTE_MS))]);
    const result = rebuildOnStart(node, [untolerated, timed, forever, elsewhere], T0_MS);
    expect(result.noExecuteTaints).toEqual([noExecute('not-ready', undefined, iso(T0_MS - 4 * MINUTE_MS))]);
    expect(result.evictions).toEqual([
      { podKey: 'default/untolerated', pod: untolerated, createdAtMs: T0_MS, fireAtMs: T0_MS },
      { podKey: 'default/timed', pod: timed, createdAtMs: T0_MS, fireAtMs: T0_MS + 5 * MINUTE_MS },
    ]);
  });

  test('with countFromTimeAdded the period counts from the taint\'s timeAdded', () => {
    const timed = makePod('timed', [tolerate('not-ready', 300)]);
    const node = makeNode([noExecute('not-ready', undefined, iso(T0_MS - 4 * MINUTE_MS))]);
    expect(rebuildOnStart(node, [timed], T0_MS, { countFromTimeAdded: true }).evictions).toEqual([
      { podKey: 'default/timed', pod: timed, createdAtMs: T0_MS, fireAtMs: T0_MS + MINUTE_MS },
    ]);
  });

  test('the handler fed the node as an informer add schedules exactly the same', () => {
    for (const options of [{}, { countFromTimeAdded: true }]) {
      const cluster = new FakeTaintCluster(options);
      const pods = [makePod('a'), makePod('b', [tolerate('k', 120)]), makePod('c', [tolerate('k')]), makePod('d', [tolerate('k', 30), tolerate('other', 1)])];
      for (const pod of pods) cluster.setPod(pod);
      const node = makeNode([noExecute('k', undefined, iso(T0_MS - MINUTE_MS)), noExecute('other', 'x')]);
      const rebuilt = rebuildOnStart(node, pods, T0_MS, options);
      cluster.setNode(node);
      expect(cluster.handler.pending().map(({ key, createdAtMs, fireAtMs }) => ({ key, createdAtMs, fireAtMs }))).toEqual(
        rebuilt.evictions.map((e) => ({ key: e.podKey, createdAtMs: e.createdAtMs, fireAtMs: e.fireAtMs })).sort((x, y) => x.fireAtMs - y.fireAtMs || x.key.localeCompare(y.key)),
      );
      expect(cluster.handler.noExecuteTaints()).toEqual(rebuilt.noExecuteTaints);
    }
  });
});
