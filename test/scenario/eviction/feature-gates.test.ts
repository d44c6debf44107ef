// The kubelet feature gates that change a decision, each on and off on the same node: the pod
// chosen, the eviction message, the containerfs signal and the local-storage limits follow the
// gate as the pinned kubelet's eviction manager follows it (pkg/kubelet/eviction, v1.37.2).

import { DECISION_GATE_DEFAULTS, type DecisionFeatureGates } from '../../../src/api/feature-gates.js';
import { emptyDirVolume, makeContainer, makePod, makePodStats } from '../../fixtures/pods.js';
import { evictedNames, hardThreshold, makeConfig, makeSummary, messages, quantity, rankedNames, Scenario, SECOND_MS } from './support.js';

const gates = (overrides: Partial<DecisionFeatureGates>): DecisionFeatureGates => ({ ...DECISION_GATE_DEFAULTS, ...overrides });

describe('PodLevelResources', () => {
  // Both pods use 600Mi. `limits-only` sets pod-level limits only, its container requests 100Mi;
  // `containers` requests 500Mi in its container. With the gate on, a pod with pod-level
  // resources is judged on pod-level requests alone (none here: 0); with it off, on its
  // containers' (pod-level requests, when set, still replace their sum: PodRequests skips them
  // only when asked to).
  const limitsOnly = makePod({
    name: 'limits-only',
    containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
    podResources: { limits: { memory: '2Gi' } },
  });
  const containers = makePod({ name: 'containers', requests: { memory: '500Mi' } });

  function pass(podLevelResources: boolean): ReturnType<Scenario['sync']> {
    const scenario = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))], featureGates: gates({ PodLevelResources: podLevelResources }) }));
    scenario.node = { memory: { available: '500Mi' } };
    scenario.pods = [limitsOnly, containers];
    scenario.podStats = [limitsOnly, containers].map((pod) => makePodStats(pod, { workingSetBytes: '600Mi', containerWorkingSetBytes: '600Mi' }));
    return scenario.step(SECOND_MS).sync();
  }

  test.each([
    // Both exceed either way; limits-only is further over (600Mi or 500Mi, against 100Mi).
    { gate: true, ranked: ['limits-only', 'containers'], request: 0n },
    { gate: false, ranked: ['limits-only', 'containers'], request: 100n * 1024n ** 2n },
  ])('gate $gate: the requests ranked on', ({ gate, ranked, request }) => {
    const result = pass(gate);
    expect(rankedNames(result)).toEqual(ranked);
    expect(result.ranking.find((r) => r.pod === limitsOnly)?.request).toBe(request);
  });

  test('the pod-level sentence of the eviction message needs the gate', () => {
    const podLevel = makePod({ name: 'pod-level', containers: [makeContainer('app')], podResources: { requests: { memory: '100Mi' } } });
    for (const gate of [true, false]) {
      const scenario = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))], featureGates: gates({ PodLevelResources: gate }) }));
      scenario.node = { memory: { available: '500Mi' } };
      scenario.pods = [podLevel];
      scenario.podStats = [makePodStats(podLevel, { workingSetBytes: '600Mi', containerWorkingSetBytes: '600Mi' })];
      const [eviction] = scenario.step(SECOND_MS).sync().evictions;
      const podSentence = 'Pod pod-level was using 600Mi, request is 100Mi, has larger consumption of memory. ';
      if (gate) {
        expect(eviction?.message).toContain(podSentence);
        expect(eviction?.annotations).toMatchObject({ offending_pod: 'pod-level', offending_pod_usage: '600Mi' });
      } else {
        expect(eviction?.message).not.toContain(podSentence);
        expect(eviction?.annotations.offending_pod).toBeUndefined();
      }
    }
  });

  test('the order changes with the gate where requests decide it', () => {
    // `within` uses 450Mi of its 500Mi request; `pod-limits-only` uses 300Mi and requests 0 with the
    // gate (pod-level limits only), 400Mi without it.
    const within = makePod({ name: 'within', requests: { memory: '500Mi' } });
    const podLimitsOnly = makePod({ name: 'pod-limits-only', containers: [makeContainer('app', { requests: { memory: '400Mi' } })], podResources: { limits: { memory: '1Gi' } } });
    const orders = [true, false].map((gate) => {
      const scenario = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi'))], featureGates: gates({ PodLevelResources: gate }) }));
      scenario.node = { memory: { available: '500Mi' } };
      scenario.pods = [within, podLimitsOnly];
      scenario.podStats = [makePodStats(within, { workingSetBytes: '450Mi', containerWorkingSetBytes: '450Mi' }), makePodStats(podLimitsOnly, { workingSetBytes: '300Mi', containerWorkingSetBytes: '300Mi' })];
      return evictedNames(scenario.step(SECOND_MS).sync());
    });
    // Gate on: pod-limits-only exceeds its request and goes first. Gate off: neither exceeds, both
    // have priority 0, and the smaller shortfall below request (-50Mi against -100Mi) goes first.
    expect(orders).toEqual([['pod-limits-only'], ['within']]);
  });
});

describe('KubeletSeparateDiskGC', () => {
  function splitNode(separateDiskGC: boolean): Scenario {
    const scenario = new Scenario(makeConfig({ thresholds: [hardThreshold('memory.available', quantity('1Gi')), hardThreshold('imagefs.available', quantity('1Gi'))], featureGates: gates({ KubeletSeparateDiskGC: separateDiskGC }) }));
    scenario.dedicatedImageFs = true;
    scenario.splitContainerFs = true;
    scenario.node = {
      memory: { available: '500Mi' },
      nodefs: { available: '50Gi', capacity: '100Gi' },
      imagefs: { available: '20Gi', capacity: '100Gi' },
      containerfs: { available: '50Gi', capacity: '100Gi' },
    };
    const pod = makePod({ name: 'hog' });
    scenario.pods = [pod];
    scenario.podStats = [makePodStats(pod, { workingSetBytes: '2Gi', containerWorkingSetBytes: '2Gi' })];
    return scenario;
  }

  test('on (the default) a split filesystem is ranked and evicted from', () => {
    const result = splitNode(true).step(SECOND_MS).sync();
    expect(evictedNames(result)).toEqual(['hog']);
    expect(result.observations.get('containerfs.available')?.available).toBe(50n * 1024n ** 3n);
  });

  test('off on a split filesystem: pressure reported, no threshold evicts (the kubelet has no rank function), containerfs is imagefs', () => {
    const result = splitNode(false).step(SECOND_MS).sync();
    expect(result.nodeConditions).toEqual(['MemoryPressure']);
    expect(result.reclaim?.threshold.signal).toBe('memory.available');
    expect(result.evictions).toEqual([]);
    expect(messages(result)).toContain('no ranking function for signal memory.available: KubeletSeparateDiskGC is turned off but we still have a split filesystem');
    expect(result.observations.get('containerfs.available')?.available).toBe(20n * 1024n ** 3n);
  });

  test('off without a split filesystem: no difference', () => {
    const scenario = splitNode(false);
    scenario.splitContainerFs = false;
    expect(evictedNames(scenario.step(SECOND_MS).sync())).toEqual(['hog']);
  });
});

describe('InPlacePodVerticalScalingMemoryBackedVolumes', () => {
  // A memory-backed emptyDir over its sizeLimit: the kubelet evicts for it unless the alpha gate
  // says the kernel enforces the tmpfs size.
  const pod = makePod({ name: 'tmpfs', volumes: [emptyDirVolume('scratch', { medium: 'Memory', sizeLimit: '64Mi' }), emptyDirVolume('disk', { sizeLimit: '1Gi' })] });
  test.each([
    { gate: false, evicted: ['tmpfs'] },
    { gate: true, evicted: [] },
  ])('gate $gate', ({ gate, evicted }) => {
    const scenario = new Scenario(makeConfig({ thresholds: [], localStorageCapacityIsolation: true, featureGates: gates({ InPlacePodVerticalScalingMemoryBackedVolumes: gate }) }));
    scenario.node = { memory: { available: '4Gi' } };
    scenario.pods = [pod];
    scenario.podStats = [makePodStats(pod, { volumes: { scratch: '128Mi', disk: '10Mi' } })];
    const result = scenario.step(SECOND_MS).sync();
    expect(evictedNames(result)).toEqual(evicted);
    if (evicted.length > 0) expect(result.evictions[0]?.message).toBe('Usage of EmptyDir volume "scratch" exceeds the limit "64Mi". ');
  });

  test('a disk emptyDir over its limit is evicted for either way', () => {
    const scenario = new Scenario(makeConfig({ thresholds: [], localStorageCapacityIsolation: true, featureGates: gates({ InPlacePodVerticalScalingMemoryBackedVolumes: true }) }));
    scenario.pods = [pod];
    scenario.podStats = [makePodStats(pod, { volumes: { scratch: '1Mi', disk: '2Gi' } })];
    expect(evictedNames(scenario.step(SECOND_MS).sync())).toEqual(['tmpfs']);
  });
});

describe('HugepageAwareEviction in the eviction message', () => {
  // The observer subtracts the pools from memory.available (src/observe); the engine is told by how
  // much, and a memory.available eviction says so after the kubelet's threshold sentence.
  function evictionFor(signal: 'memory.available' | 'allocatableMemory.available', hugepagesSubtractedBytes: bigint | undefined): string | undefined {
    const scenario = new Scenario(makeConfig({ thresholds: [hardThreshold(signal, quantity('1Gi'))] }));
    const pod = makePod({ name: 'hog' });
    scenario.node = { memory: { available: '500Mi' }, allocatable: { available: '500Mi' } };
    scenario.pods = [pod];
    scenario.podStats = [makePodStats(pod, { workingSetBytes: '2Gi', containerWorkingSetBytes: '2Gi' })];
    scenario.step(SECOND_MS);
    const result = scenario.manager.synchronize({
      nowMs: scenario.clock.nowMs(),
      summary: makeSummary(scenario.node, scenario.podStats, scenario.clock.nowMs()),
      pods: scenario.pods,
      dedicatedImageFs: false,
      splitContainerFs: false,
      ...(hugepagesSubtractedBytes === undefined ? {} : { hugepagesSubtractedBytes }),
    });
    return result.evictions[0]?.message;
  }

  test.each([
    { name: 'hugepages subtracted: said, with the amount', signal: 'memory.available' as const, bytes: 2n * 1024n ** 3n, sentence: true },
    { name: 'none subtracted (the gate off, no pools, or the kubelet\'s summary): the kubelet\'s message', signal: 'memory.available' as const, bytes: undefined, sentence: false },
    { name: 'allocatableMemory.available: never adjusted, never said', signal: 'allocatableMemory.available' as const, bytes: 2n * 1024n ** 3n, sentence: false },
  ])('$name', ({ signal, bytes, sentence }) => {
    const message = evictionFor(signal, bytes);
    expect(message).toMatch(/^The node was low on resource: memory\. Threshold quantity: 1Gi, available: 500Mi\. /);
    if (sentence) expect(message).toContain('Threshold quantity: 1Gi, available: 500Mi. Available excludes 2Gi of hugepages. Container hog was using 2Gi');
    else expect(message).not.toContain('hugepages');
  });
});
