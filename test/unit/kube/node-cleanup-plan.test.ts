// Which conditions and taints `cleanup` takes off a Node: the agent's own condition types under its
// prefix and its own NoSchedule taint, whatever their status; every other condition and taint is
// written back exactly as read, in its order.

import type { Node, Taint } from '../../../src/api/pod.js';
import { agentConditionTypes, nodeCleanupPlan, nothingToClean } from '../../../src/kube/node-cleanup-plan.js';

const PREFIX = 'kube-eviction-agent.io/';
const MARKS = { conditionTypePrefix: PREFIX, taintKey: 'kube-eviction-agent.io/pressure' };

const kubelet = [
  { type: 'MemoryPressure', status: 'False', reason: 'KubeletHasSufficientMemory' },
  { type: 'Ready', status: 'True', reason: 'KubeletReady', lastHeartbeatTime: '2026-01-01T00:00:00Z' },
];
const agent = (name: string, status = 'True') => ({ type: `${PREFIX}${name}`, status, reason: 'AgentHasInsufficientMemory' });
const foreignTaint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
const agentTaint = { key: 'kube-eviction-agent.io/pressure', value: '', effect: 'NoSchedule' };

function nodeWith(conditions: readonly object[], taints: readonly object[]): Node {
  return { metadata: { name: 'node-a', resourceVersion: '7' }, spec: { taints: taints as Taint[] }, status: { conditions: conditions as { type: string; status: string }[] } };
}

describe('agentConditionTypes', () => {
  test('the three pressure types under the prefix', () => {
    expect(agentConditionTypes(PREFIX)).toEqual([`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`, `${PREFIX}PIDPressure`]);
  });

  test('never a type the kubelet owns, even with an empty prefix', () => {
    expect(agentConditionTypes('')).toEqual([]);
  });
});

describe('nodeCleanupPlan', () => {
  const cases: { name: string; conditions: object[]; taints: object[]; removeConditions: string[]; removeTaints: string[]; keepConditions: object[]; keepTaints: object[] }[] = [
    {
      name: 'the agent\'s conditions (any status) and taint go; the kubelet\'s conditions and a foreign taint stay, in order',
      conditions: [kubelet[0]!, agent('MemoryPressure'), kubelet[1]!, agent('DiskPressure', 'Unknown'), agent('PIDPressure', 'False')],
      taints: [foreignTaint, agentTaint],
      removeConditions: [`${PREFIX}MemoryPressure`, `${PREFIX}DiskPressure`, `${PREFIX}PIDPressure`],
      removeTaints: ['kube-eviction-agent.io/pressure:NoSchedule'],
      keepConditions: kubelet,
      keepTaints: [foreignTaint],
    },
    {
      name: 'other types under the same prefix are not the agent\'s: kept',
      conditions: [{ type: `${PREFIX}Custom`, status: 'True' }, { type: 'example.com/MemoryPressure', status: 'True' }, agent('MemoryPressure')],
      taints: [],
      removeConditions: [`${PREFIX}MemoryPressure`],
      removeTaints: [],
      keepConditions: [{ type: `${PREFIX}Custom`, status: 'True' }, { type: 'example.com/MemoryPressure', status: 'True' }],
      keepTaints: [],
    },
    {
      name: 'the agent\'s key with another effect is not the agent\'s taint: kept',
      conditions: kubelet,
      taints: [{ key: 'kube-eviction-agent.io/pressure', effect: 'NoExecute' }, { key: 'kube-eviction-agent.io/other', effect: 'NoSchedule' }, agentTaint],
      removeConditions: [],
      removeTaints: ['kube-eviction-agent.io/pressure:NoSchedule'],
      keepConditions: kubelet,
      keepTaints: [{ key: 'kube-eviction-agent.io/pressure', effect: 'NoExecute' }, { key: 'kube-eviction-agent.io/other', effect: 'NoSchedule' }],
    },
    {
      name: 'nothing of the agent\'s: nothing to remove, everything kept',
      conditions: kubelet,
      taints: [foreignTaint],
      removeConditions: [],
      removeTaints: [],
      keepConditions: kubelet,
      keepTaints: [foreignTaint],
    },
  ];

  test.each(cases)('$name', ({ conditions, taints, removeConditions, removeTaints, keepConditions, keepTaints }) => {
    const plan = nodeCleanupPlan(nodeWith(conditions, taints), MARKS);
    expect(plan).toEqual({ removeConditions, removeTaints, keepConditions, keepTaints });
    expect(nothingToClean(plan)).toBe(removeConditions.length + removeTaints.length === 0);
  });

  test('a Node without spec or status has nothing to remove', () => {
    const plan = nodeCleanupPlan({ metadata: { name: 'bare' } }, MARKS);
    expect(plan).toEqual({ removeConditions: [], removeTaints: [], keepConditions: [], keepTaints: [] });
  });

  test('another prefix and taint key from the settings are what go', () => {
    const plan = nodeCleanupPlan(nodeWith([agent('MemoryPressure'), { type: 'eviction.example.com/MemoryPressure', status: 'True' }], [agentTaint, { key: 'eviction.example.com/pressure', effect: 'NoSchedule' }]), {
      conditionTypePrefix: 'eviction.example.com/',
      taintKey: 'eviction.example.com/pressure',
    });
    expect(plan.removeConditions).toEqual(['eviction.example.com/MemoryPressure']);
    expect(plan.removeTaints).toEqual(['eviction.example.com/pressure:NoSchedule']);
    expect(plan.keepConditions).toEqual([agent('MemoryPressure')]);
    expect(plan.keepTaints).toEqual([agentTaint]);
  });
});
