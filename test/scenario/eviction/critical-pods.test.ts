// Critical pods (static, mirror, system-critical priority) are ranked but never evicted: the next
// non-critical pod in rank order goes instead, and when every pod is critical nothing goes.

import { CONFIG_SOURCE_ANNOTATION_KEY, SYSTEM_CRITICAL_PRIORITY } from '../../../src/eviction/critical.js';
import { mirrorAnnotations, STATIC_POD_UID } from '../../fixtures/pods.js';
import { MEMORY_RANK, memoryPressurePods } from './memory-pods.js';
import { Scenario, evictedNames, hardThreshold, makeConfig, quantity, rankedNames, messages } from './support.js';

function newScenario(): Scenario {
  const s = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))] }));
  const { pods, podStats } = memoryPressurePods();
  s.pods = pods;
  s.podStats = podStats;
  s.node = { memory: { available: '500Mi' } };
  return s;
}

const byName = (s: Scenario, name: string) => s.pods.find((p) => p.metadata.name === name)!;

test('critical pods: static and mirror pods ranked first are skipped', () => {
  const s = newScenario();
  byName(s, 'best-effort-low-priority').metadata.annotations = { [CONFIG_SOURCE_ANNOTATION_KEY]: 'file' };
  // A mirror pod: the kubelet reports its stats under the static pod's own UID.
  byName(s, 'burstable-above-requests').metadata.annotations = mirrorAnnotations();
  const stats = s.podStats.find((p) => p.podRef.name === 'burstable-above-requests')!;
  stats.podRef = { ...stats.podRef, uid: STATIC_POD_UID };
  const result = s.sync();
  expect(rankedNames(result)).toEqual(MEMORY_RANK);
  expect(result.ranking.map((r) => r.critical)).toEqual([true, true, false, false, false]);
  expect(evictedNames(result)).toEqual(['best-effort-high-priority-large']);
  expect(result.fallbacks.map((f) => f.pod.metadata.name)).toEqual(['guaranteed-low-priority-high-usage', 'burstable-below-requests']);
  expect(messages(result)).toEqual(['cannot evict a critical pod default/best-effort-low-priority', 'cannot evict a critical pod default/burstable-above-requests']);
  // Typed records, so the loop logs the pod as a field.
  expect(result.notes[0]).toEqual({ code: 'critical-pod', pod: 'default/best-effort-low-priority', message: 'cannot evict a critical pod default/best-effort-low-priority' });
});

test('critical pods: an api-sourced pod is not static', () => {
  const s = newScenario();
  byName(s, 'best-effort-low-priority').metadata.annotations = { [CONFIG_SOURCE_ANNOTATION_KEY]: 'api' };
  expect(evictedNames(s.sync())).toEqual(['best-effort-low-priority']);
});

test('critical pods: a system-critical priority pod is skipped, and ranks last by priority', () => {
  const s = newScenario();
  byName(s, 'best-effort-low-priority').spec.priority = SYSTEM_CRITICAL_PRIORITY;
  const result = s.sync();
  expect(rankedNames(result)).toEqual(['burstable-above-requests', 'best-effort-high-priority-large', 'best-effort-low-priority', 'guaranteed-low-priority-high-usage', 'burstable-below-requests']);
  expect(evictedNames(result)).toEqual(['burstable-above-requests']);
  // Not met before the chosen pod, so no note.
  expect(messages(result)).toEqual([]);
  expect(result.fallbacks.map((f) => f.pod.metadata.name)).not.toContain('best-effort-low-priority');
});

test('critical pods: all critical, nothing evicted', () => {
  const s = newScenario();
  for (const pod of s.pods) pod.spec.priority = SYSTEM_CRITICAL_PRIORITY;
  const result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.reclaim?.threshold.signal).toBe('memory.available');
  expect(result.ranking).toHaveLength(5);
  expect(result.evictions).toEqual([]);
  expect(result.fallbacks).toEqual([]);
  expect(messages(result)).toEqual([...result.ranking.map((r) => `cannot evict a critical pod default/${r.pod.metadata.name}`), 'unable to evict any pods from the node']);
});

test('no active pods: thresholds met, nothing to rank', () => {
  const s = newScenario();
  s.pods = [];
  const result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(result.reclaim?.resource).toBe('memory');
  expect(result.ranking).toEqual([]);
  expect(result.evictions).toEqual([]);
  expect(messages(result)).toEqual(['eviction thresholds have been met, but no pods are active to evict']);
});
