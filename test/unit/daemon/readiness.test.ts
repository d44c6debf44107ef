// The readiness registry: named checks, failing ones reported in registration order with their
// reasons, the gauges set per check, a throwing check counted as failing, and removal.

import { createAgentMetrics } from '../../../src/daemon/metrics.js';
import { Readiness } from '../../../src/daemon/readiness.js';

async function gaugeLines(metrics: ReturnType<typeof createAgentMetrics>): Promise<string[]> {
  return (await metrics.registry.metrics()).split('\n').filter((l) => /^kube_eviction_agent_(not_)?ready/.test(l));
}

describe('readiness checks', () => {
  test('ready with no failing check; the failing ones in registration order, joined for /readyz', async () => {
    const metrics = createAgentMetrics(false);
    const readiness = new Readiness({ ready: metrics.ready, notReady: metrics.notReady });
    let synced = false;
    readiness.add('watches', () => (synced ? null : 'watches not synced'));
    readiness.add('node-identity', () => 'the Node is another machine');
    readiness.add('observation', () => null);
    expect(readiness.failing()).toEqual([
      { check: 'watches', reason: 'watches not synced' },
      { check: 'node-identity', reason: 'the Node is another machine' },
    ]);
    expect(readiness.reason()).toBe('watches not synced; the Node is another machine');
    expect(await gaugeLines(metrics)).toEqual(
      expect.arrayContaining([
        'kube_eviction_agent_ready 0',
        'kube_eviction_agent_not_ready{check="watches"} 1',
        'kube_eviction_agent_not_ready{check="node-identity"} 1',
        'kube_eviction_agent_not_ready{check="observation"} 0',
      ]),
    );
    synced = true;
    expect(readiness.reason()).toBe('the Node is another machine');
  });

  test('a check that throws fails with its error; a removed check no longer counts; names are unique', async () => {
    const metrics = createAgentMetrics(false);
    const readiness = new Readiness({ ready: metrics.ready, notReady: metrics.notReady });
    const remove = readiness.add('flaky', () => {
      throw new Error('boom');
    });
    expect(readiness.reason()).toBe('the flaky check failed: boom');
    expect(() => readiness.add('flaky', () => null)).toThrow(/already registered/);
    remove();
    expect(readiness.reason()).toBeNull();
    expect(await gaugeLines(metrics)).toEqual(expect.arrayContaining(['kube_eviction_agent_ready 1']));
    expect((await gaugeLines(metrics)).some((l) => l.includes('flaky'))).toBe(false);
  });
});
