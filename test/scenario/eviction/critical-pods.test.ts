// Critical pods (mirror pods, system-critical priority) are ranked but never evicted: the next
// non-critical pod in rank order goes instead, and when every pod is critical nothing goes. The
// annotations the kubelet overwrites on a pod from the API server (config.source) protect nothing.

import { SYSTEM_CRITICAL_PRIORITY } from '../../../src/eviction/critical.js';
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

test('critical pods: mirror and system-critical pods ranked first are skipped', () => {
  const s = newScenario();
  // Critical by priority, yet first: ranking puts a pod above its request first, whatever its priority.
  byName(s, 'best-effort-low-priority').spec.priority = SYSTEM_CRITICAL_PRIORITY;
  // A mirror pod: the kubelet reports its stats under the static pod's own UID.
  byName(s, 'burstable-above-requests').metadata.annotations = mirrorAnnotations();
  const stats = s.podStats.find((p) => p.podRef.name === 'burstable-above-requests')!;
  stats.podRef = { ...stats.podRef, uid: STATIC_POD_UID };
  const result = s.sync();
  expect(rankedNames(result)).toEqual(['burstable-above-requests', 'best-effort-high-priority-large', 'best-effort-low-priority', 'guaranteed-low-priority-high-usage', 'burstable-below-requests']);
  expect(result.ranking.map((r) => r.critical)).toEqual([true, false, true, false, false]);
  expect(evictedNames(result)).toEqual(['best-effort-high-priority-large']);
  expect(result.fallbacks.map((f) => f.pod.metadata.name)).toEqual(['guaranteed-low-priority-high-usage', 'burstable-below-requests']);
  expect(messages(result)).toEqual(['cannot evict a critical pod default/burstable-above-requests']);
  // Typed records, so the loop logs the pod as a field.
  expect(result.notes[0]).toEqual({ code: 'critical-pod', pod: 'default/burstable-above-requests', message: 'cannot evict a critical pod default/burstable-above-requests' });
});

test('critical pods: a config.source annotation of any value protects nothing (the kubelet overwrites it with api)', () => {
  for (const source of ['file', 'http', 'api', '']) {
    const s = newScenario();
    byName(s, 'best-effort-low-priority').metadata.annotations = { 'kubernetes.io/config.source': source, 'kubernetes.io/config.hash': STATIC_POD_UID, 'kubernetes.io/config.seen': '2026-11-01T12:00:00.000000000Z' };
    const result = s.sync();
    expect(rankedNames(result)).toEqual(MEMORY_RANK);
    expect(result.ranking.map((r) => r.critical)).toEqual([false, false, false, false, false]);
    expect(evictedNames(result)).toEqual(['best-effort-low-priority']);
  }
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
