import { conditionsToWrite, type NodeConditionWire } from '../../../src/kube/node-conditions.js';

const T0 = '2026-01-01T00:00:00Z';
const NOW = '2026-01-01T00:10:00Z';
const TYPE = 'kube-eviction-agent.io/MemoryPressure';

describe('conditionsToWrite: the heartbeat always moves, the transition time only on a flip', () => {
  const cases: { name: string; current: NodeConditionWire[]; status: 'True' | 'False'; transition: string }[] = [
    { name: 'new-condition-starts-now', current: [], status: 'True', transition: NOW },
    { name: 'same-status-keeps-its-transition-time', current: [{ type: TYPE, status: 'True', lastTransitionTime: T0, lastHeartbeatTime: T0 }], status: 'True', transition: T0 },
    { name: 'flip-true-to-false-moves-it', current: [{ type: TYPE, status: 'True', lastTransitionTime: T0 }], status: 'False', transition: NOW },
    { name: 'flip-from-unknown-moves-it', current: [{ type: TYPE, status: 'Unknown', lastTransitionTime: T0 }], status: 'False', transition: NOW },
    { name: 'missing-transition-time-is-set', current: [{ type: TYPE, status: 'True' }], status: 'True', transition: NOW },
    { name: 'a-kubelet-condition-of-another-type-does-not-count', current: [{ type: 'MemoryPressure', status: 'True', lastTransitionTime: T0 }], status: 'True', transition: NOW },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const [written] = conditionsToWrite(tc.current, [{ type: TYPE, status: tc.status, reason: 'R', message: 'm' }], NOW);
      expect(written).toEqual({ type: TYPE, status: tc.status, reason: 'R', message: 'm', lastHeartbeatTime: NOW, lastTransitionTime: tc.transition });
    });
  }

  test('only the desired conditions are written, whatever else the node carries', () => {
    const written = conditionsToWrite([{ type: 'Ready', status: 'True' }], [{ type: TYPE, status: 'False', reason: 'R', message: 'm' }], NOW);
    expect(written.map((c) => c.type)).toEqual([TYPE]);
  });
});
