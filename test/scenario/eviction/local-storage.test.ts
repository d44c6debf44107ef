// Local ephemeral-storage limits: every violator is evicted in the same pass, at once (grace 1),
// with the kubelet's message, no annotations and no DisruptionTarget condition, and threshold
// pressure is not acted on in that pass (its conditions are still updated).

import { emptyDirVolume, makeContainer, makeContainerStats, makePod, makePodStats, mirrorAnnotations } from '../../fixtures/pods.js';
import { MINUTE_MS, Scenario, evictedNames, hardThreshold, makeConfig, quantity, signalsOf, messages } from './support.js';

function newScenario(localStorageCapacityIsolation = true): Scenario {
  const s = new Scenario(makeConfig({ localStorageCapacityIsolation, thresholds: [hardThreshold('memory.available', quantity('1Gi'))] }));
  const emptyDirPod = makePod({ name: 'emptydir-over-limit', volumes: [emptyDirVolume('scratch', { sizeLimit: '1Gi' })] });
  const podLimitPod = makePod({ name: 'pod-over-ephemeral-limit', limits: { 'ephemeral-storage': '1Gi' } });
  const containerPod = makePod({
    name: 'container-over-limit',
    containers: [makeContainer('app', { limits: { 'ephemeral-storage': '500Mi' } })],
  });
  const withinPod = makePod({ name: 'within-limits', limits: { 'ephemeral-storage': '1Gi' }, volumes: [emptyDirVolume('scratch', { sizeLimit: '1Gi' })] });
  const criticalPod = makePod({
    name: 'critical-over-limit',
    annotations: mirrorAnnotations(),
    volumes: [emptyDirVolume('scratch', { sizeLimit: '1Gi' })],
  });
  s.pods = [withinPod, emptyDirPod, criticalPod, podLimitPod, containerPod];
  s.podStats = [
    makePodStats(withinPod, { volumes: { scratch: '100Mi' }, ephemeralBytes: '200Mi', workingSetBytes: '10Mi' }),
    makePodStats(emptyDirPod, { volumes: { scratch: '2Gi' }, workingSetBytes: '10Mi' }),
    makePodStats(criticalPod, { volumes: { scratch: '2Gi' }, workingSetBytes: '10Mi' }),
    makePodStats(podLimitPod, { ephemeralBytes: '1.5Gi', workingSetBytes: '10Mi' }),
    makePodStats(containerPod, { containers: [makeContainerStats('app', { rootfsBytes: '400Mi', logsBytes: '200Mi' })], workingSetBytes: '10Mi' }),
  ];
  return s;
}

test('local storage: every violator in one pass, thresholds skipped that pass', () => {
  const s = newScenario();
  // Memory pressure at the same time.
  s.node = { memory: { available: '500Mi' } };
  let result = s.sync();
  expect(result.nodeConditions).toEqual(['MemoryPressure']);
  expect(signalsOf(result.thresholdsMet)).toEqual(['memory.available']);
  expect(result.reclaim).toBeNull();
  expect(result.ranking).toEqual([]);
  expect(result.fallbacks).toEqual([]);
  expect(evictedNames(result)).toEqual(['emptydir-over-limit', 'pod-over-ephemeral-limit', 'container-over-limit']);
  expect(result.evictions.map((e) => [e.reason, e.message])).toEqual([
    [{ kind: 'local-storage', limit: 'emptydirfs.limit' }, 'Usage of EmptyDir volume "scratch" exceeds the limit "1Gi". '],
    [{ kind: 'local-storage', limit: 'ephemeralpodfs.limit' }, 'Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. '],
    [{ kind: 'local-storage', limit: 'ephemeralcontainerfs.limit' }, 'Container app exceeded its local ephemeral storage limit "500Mi". '],
  ]);
  for (const eviction of result.evictions) {
    expect(eviction.gracePeriodSeconds).toBe(1);
    expect(eviction.annotations).toEqual({});
    expect(eviction.condition).toBeNull();
  }
  // The critical violator is refused.
  expect(messages(result)).toContain('cannot evict a critical pod default/critical-over-limit');

  // The violators are gone; now the memory threshold is acted on, one pod.
  s.step(MINUTE_MS);
  s.pods = s.pods.filter((p) => ['within-limits', 'critical-over-limit'].includes(p.metadata.name ?? ''));
  result = s.sync();
  expect(result.reclaim?.threshold.signal).toBe('memory.available');
  expect(evictedNames(result)).toEqual(['within-limits']);
  expect(result.evictions[0]!.reason).toEqual({ kind: 'threshold', signal: 'memory.available', hard: true });
  expect(messages(result)).toContain('cannot evict a critical pod default/critical-over-limit');
});

test('local storage: runs without any threshold configured', () => {
  const s = new Scenario(makeConfig({ localStorageCapacityIsolation: true, thresholds: [] }));
  const pod = makePod({ name: 'emptydir-over-limit', volumes: [emptyDirVolume('scratch', { sizeLimit: '1Gi' })] });
  s.pods = [pod];
  s.podStats = [makePodStats(pod, { volumes: { scratch: '1025Mi' } })];
  expect(evictedNames(s.sync())).toEqual(['emptydir-over-limit']);
});

test('local storage: with a dedicated imagefs a container limit counts its logs only', () => {
  const s = newScenario();
  s.dedicatedImageFs = true;
  s.node = { memory: { available: '4Gi' } };
  expect(evictedNames(s.sync())).toEqual(['emptydir-over-limit', 'pod-over-ephemeral-limit']);
});

test('local storage: isolation off evicts nothing for limits', () => {
  const s = newScenario(false);
  s.node = { memory: { available: '4Gi' } };
  const result = s.sync();
  expect(result.evictions).toEqual([]);
  expect(messages(result)).toEqual([]);
});

test('local storage: a violation with no threshold pressure still evicts, and the next pass sees none', () => {
  const s = newScenario();
  s.node = { memory: { available: '4Gi' } };
  expect(s.sync().evictions).toHaveLength(3);
  s.step(10_000);
  s.podStats = [];
  const result = s.sync();
  expect(result.evictions).toEqual([]);
  expect(result.nodeConditions).toEqual([]);
});
