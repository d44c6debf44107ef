// A takeover on one node: the agent that held the node lock published its engine state, and the
// one taking over adopts it. A soft threshold's grace period runs on from when the previous agent
// first saw it met (not from the successor's first pass), a pressure condition stays for the rest
// of its transition period, and what cannot be trusted (a threshold not in force, an instant in the
// future, a malformed file) is not carried.

import { parseCarriedEngineState, thresholdKey } from '../../../src/eviction/carried-state.js';
import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { Scenario, evictedNames, hardThreshold, makeConfig, MINUTE_MS, quantity, SECOND_MS, softThreshold } from './support.js';

const SOFT = softThreshold('memory.available', quantity('2Gi'), 30 * SECOND_MS);

function agentOnNode(): Scenario {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('500Mi')), SOFT] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  return s;
}

// Two agents on one node see the same node at the same times.
function both(a: Scenario, b: Scenario, ms: number): void {
  a.step(ms);
  b.step(ms);
}

test('a soft grace period runs on across a takeover: the successor evicts when the first agent\'s period ends, not 30 s after its own first pass', () => {
  const holder = agentOnNode();
  const successor = agentOnNode();
  const control = agentOnNode();
  const pressure = { memory: { available: '1500Mi', capacity: '10Gi' } };
  holder.node = pressure;
  expect(evictedNames(holder.sync())).toEqual([]);
  // The successor (a surge pod, a restarted agent) starts 20 s into the grace period.
  both(holder, successor, 20 * SECOND_MS);
  control.step(20 * SECOND_MS);
  for (const s of [holder, successor, control]) s.node = pressure;
  holder.sync();
  successor.sync();
  control.sync();
  successor.manager.adoptCarriedState(holder.manager.carriedState(), successor.clock.nowMs());
  both(holder, successor, 10 * SECOND_MS);
  control.step(10 * SECOND_MS);
  expect(evictedNames(successor.sync())).toEqual([MEMORY_RANK[0]]);
  // Without the carried state the grace period would have started over at the successor's first pass.
  expect(evictedNames(control.sync())).toEqual([]);
});

test('the transition period runs on across a takeover: the condition the first agent last saw stays until the period ends', () => {
  const holder = agentOnNode();
  const successor = agentOnNode();
  holder.node = { memory: { available: '400Mi', capacity: '10Gi' } };
  expect(holder.sync().nodeConditions).toEqual(['MemoryPressure']);
  both(holder, successor, 60 * SECOND_MS);
  successor.node = { memory: { available: '5Gi', capacity: '10Gi' } };
  expect(successor.sync().nodeConditions).toEqual([]);
  successor.manager.adoptCarriedState(holder.manager.carriedState(), successor.clock.nowMs());
  expect(successor.manager.nodeConditions).toEqual(['MemoryPressure']);
  successor.step(3 * MINUTE_MS);
  expect(successor.sync().nodeConditions).toEqual(['MemoryPressure']);
  // Five minutes after the first agent last saw the pressure.
  successor.step(MINUTE_MS + SECOND_MS);
  expect(successor.sync().nodeConditions).toEqual([]);
});

test('only thresholds in force on both sides, and only past instants, are carried', () => {
  const successor = agentOnNode();
  const nowMs = successor.clock.nowMs();
  const other = softThreshold('memory.available', quantity('2Gi'), 60 * SECOND_MS);
  expect(thresholdKey(other)).not.toBe(thresholdKey(SOFT));
  successor.manager.adoptCarriedState(
    {
      thresholdsFirstObservedAt: [
        { key: thresholdKey(other), observedAtMs: nowMs - 50 * SECOND_MS },
        { key: thresholdKey(SOFT), observedAtMs: nowMs + 50 * SECOND_MS },
      ],
      nodeConditionsLastObservedAt: [{ condition: 'DiskPressure', observedAtMs: nowMs + 1 }],
    },
    nowMs,
  );
  expect(successor.manager.carriedState()).toEqual({ thresholdsFirstObservedAt: [], nodeConditionsLastObservedAt: [] });
});

test.each([
  ['not an object', 'x'],
  ['missing lists', {}],
  ['a key that is not a string', { thresholdsFirstObservedAt: [{ key: 1, observedAtMs: 1 }], nodeConditionsLastObservedAt: [] }],
  ['a negative instant', { thresholdsFirstObservedAt: [{ key: 'k', observedAtMs: -1 }], nodeConditionsLastObservedAt: [] }],
  ['an unknown condition', { thresholdsFirstObservedAt: [], nodeConditionsLastObservedAt: [{ condition: 'Hungry', observedAtMs: 1 }] }],
  ['too many entries', { thresholdsFirstObservedAt: Array.from({ length: 300 }, () => ({ key: 'k', observedAtMs: 1 })), nodeConditionsLastObservedAt: [] }],
])('a carried state read back is refused whole when malformed: %s', (_name, value) => {
  expect(parseCarriedEngineState(value)).toBeNull();
});

test('a well-formed carried state reads back as written', () => {
  const state = { thresholdsFirstObservedAt: [{ key: thresholdKey(SOFT), observedAtMs: 5 }], nodeConditionsLastObservedAt: [{ condition: 'MemoryPressure' as const, observedAtMs: 7 }] };
  expect(parseCarriedEngineState(JSON.parse(JSON.stringify(state)))).toEqual(state);
});
