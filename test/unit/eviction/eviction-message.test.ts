import type { Container } from '../../../src/api/pod.js';
import { parseQuantity, quantityFromInteger } from '../../../src/api/quantity.js';
import type { ResourceName } from '../../../src/api/signals.js';
import type { ContainerStats } from '../../../src/api/summary.js';
import { evictionMessage, type ThresholdMetInfo } from '../../../src/eviction/eviction-message.js';
import { makeContainer, makeContainerStats, makePod, makePodStats, statsFuncOf, type PodOptions } from '../../fixtures/pods.js';

const noThresholds: ThresholdMetInfo[] = [];

function threshold(signal: ThresholdMetInfo['signal'], quantity: string, availableBytes: bigint, format: 'BinarySI' | 'DecimalSI' = 'BinarySI'): ThresholdMetInfo {
  return { signal, quantity: parseQuantity(quantity), available: quantityFromInteger(availableBytes, format) };
}

describe('evictionMessage: container sentences and annotations (upstream TestEvictionMessage)', () => {
  interface Case {
    name: string;
    resource: ResourceName;
    containers: Container[];
    initContainers?: Container[];
    containerStats: ContainerStats[];
    message: string;
    annotations: Record<string, string>;
  }
  const cases: Case[] = [
    {
      name: 'no container exceeds its memory request',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '1Gi' } })],
      containerStats: [makeContainerStats('foo', { workingSetBytes: '1Gi' })],
      message: 'The node was low on resource: memory. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' },
    },
    {
      name: 'one container exceeds its memory request',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '100Mi' } }), makeContainer('bar', { requests: { memory: '1Gi' } })],
      containerStats: [makeContainerStats('foo', { workingSetBytes: '200Mi' }), makeContainerStats('bar', { workingSetBytes: '100Mi' })],
      message: 'The node was low on resource: memory. Container foo was using 200Mi, request is 100Mi, has larger consumption of memory. ',
      annotations: { offending_containers: 'foo', offending_containers_usage: '200Mi', starved_resource: 'memory' },
    },
    {
      name: 'several containers exceed, listed in stats order',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '100Mi' } }), makeContainer('bar', { requests: { memory: '100Mi' } })],
      containerStats: [makeContainerStats('bar', { workingSetBytes: '300Mi' }), makeContainerStats('foo', { workingSetBytes: '200Mi' })],
      message:
        'The node was low on resource: memory. ' +
        'Container bar was using 300Mi, request is 100Mi, has larger consumption of memory. ' +
        'Container foo was using 200Mi, request is 100Mi, has larger consumption of memory. ',
      annotations: { offending_containers: 'bar,foo', offending_containers_usage: '300Mi,200Mi', starved_resource: 'memory' },
    },
    {
      name: 'a container without a request prints request 0',
      resource: 'memory',
      containers: [makeContainer('best-effort')],
      containerStats: [makeContainerStats('best-effort', { workingSetBytes: '1Gi' })],
      message: 'The node was low on resource: memory. Container best-effort was using 1Gi, request is 0, has larger consumption of memory. ',
      annotations: { offending_containers: 'best-effort', offending_containers_usage: '1Gi', starved_resource: 'memory' },
    },
    {
      name: 'an init container exceeding its request is named',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '1Gi' } })],
      initContainers: [makeContainer('init', { requests: { memory: '100Mi' } })],
      containerStats: [makeContainerStats('foo', { workingSetBytes: '100Mi' }), makeContainerStats('init', { workingSetBytes: '150Mi' })],
      message: 'The node was low on resource: memory. Container init was using 150Mi, request is 100Mi, has larger consumption of memory. ',
      annotations: { offending_containers: 'init', offending_containers_usage: '150Mi', starved_resource: 'memory' },
    },
    {
      name: 'a sidecar exceeding its request is named',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '1Gi' } })],
      initContainers: [makeContainer('mesh', { requests: { memory: '50Mi' }, restartPolicy: 'Always' })],
      containerStats: [makeContainerStats('mesh', { workingSetBytes: '60Mi' })],
      message: 'The node was low on resource: memory. Container mesh was using 60Mi, request is 50Mi, has larger consumption of memory. ',
      annotations: { offending_containers: 'mesh', offending_containers_usage: '60Mi', starved_resource: 'memory' },
    },
    {
      name: 'an ephemeral container is never blamed',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '1Gi' } })],
      containerStats: [makeContainerStats('debugger', { workingSetBytes: '2Gi' }), makeContainerStats('foo', { workingSetBytes: '100Mi' })],
      message: 'The node was low on resource: memory. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' },
    },
    {
      name: 'usage equal to the request is not larger',
      resource: 'memory',
      containers: [makeContainer('foo', { requests: { memory: '100Mi' } })],
      containerStats: [makeContainerStats('foo', { workingSetBytes: '100Mi' })],
      message: 'The node was low on resource: memory. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' },
    },
    {
      name: 'a container stat without a working set is skipped',
      resource: 'memory',
      containers: [makeContainer('foo')],
      containerStats: [makeContainerStats('foo', { rootfsBytes: '1Gi' })],
      message: 'The node was low on resource: memory. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' },
    },
    {
      name: 'quantities print canonically: 1.5Gi usage, 0.5Gi request, sub-1024 usage',
      resource: 'memory',
      containers: [makeContainer('big', { requests: { memory: '0.5Gi' } }), makeContainer('tiny', { requests: { memory: '100' } })],
      containerStats: [makeContainerStats('big', { workingSetBytes: '1.5Gi' }), makeContainerStats('tiny', { workingSetBytes: 1000 })],
      message:
        'The node was low on resource: memory. ' +
        'Container big was using 1536Mi, request is 512Mi, has larger consumption of memory. ' +
        'Container tiny was using 1k, request is 100, has larger consumption of memory. ',
      annotations: { offending_containers: 'big,tiny', offending_containers_usage: '1536Mi,1k', starved_resource: 'memory' },
    },
    {
      name: 'usage that is not a whole number of Ki prints in bytes',
      resource: 'memory',
      containers: [makeContainer('odd', { requests: { memory: '1Gi' } })],
      containerStats: [makeContainerStats('odd', { workingSetBytes: 1073741825 })],
      message: 'The node was low on resource: memory. Container odd was using 1073741825, request is 1Gi, has larger consumption of memory. ',
      annotations: { offending_containers: 'odd', offending_containers_usage: '1073741825', starved_resource: 'memory' },
    },
    {
      name: 'ephemeral-storage usage is writable layer plus logs',
      resource: 'ephemeral-storage',
      containers: [makeContainer('foo', { requests: { 'ephemeral-storage': '100Mi' } })],
      containerStats: [makeContainerStats('foo', { rootfsBytes: '100Mi', logsBytes: '50Mi', workingSetBytes: '1Gi' })],
      message: 'The node was low on resource: ephemeral-storage. Container foo was using 150Mi, request is 100Mi, has larger consumption of ephemeral-storage. ',
      annotations: { offending_containers: 'foo', offending_containers_usage: '150Mi', starved_resource: 'ephemeral-storage' },
    },
    {
      name: 'ephemeral-storage needs both the writable layer and the logs stat',
      resource: 'ephemeral-storage',
      containers: [makeContainer('no-logs'), makeContainer('no-rootfs')],
      containerStats: [makeContainerStats('no-logs', { rootfsBytes: '1Gi' }), makeContainerStats('no-rootfs', { logsBytes: '1Gi' })],
      message: 'The node was low on resource: ephemeral-storage. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'ephemeral-storage' },
    },
    {
      name: 'pids are never attributed to containers',
      resource: 'pids',
      containers: [makeContainer('foo')],
      containerStats: [makeContainerStats('foo', { workingSetBytes: '1Gi', rootfsBytes: '1Gi', logsBytes: '1Gi' })],
      message: 'The node was low on resource: pids. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'pids' },
    },
    {
      name: 'inodes are never attributed to containers',
      resource: 'inodes',
      containers: [makeContainer('foo')],
      containerStats: [makeContainerStats('foo', { rootfsInodes: 1000, logsInodes: 1000 })],
      message: 'The node was low on resource: inodes. ',
      annotations: { offending_containers: '', offending_containers_usage: '', starved_resource: 'inodes' },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod({ name: 'evicted-pod', containers: tc.containers, initContainers: tc.initContainers });
      const stats = statsFuncOf(makePodStats(pod, { containers: tc.containerStats }));
      expect(evictionMessage(tc.resource, pod, stats, noThresholds)).toEqual({ message: tc.message, annotations: tc.annotations });
    });
  }
});

describe('evictionMessage: the threshold sentence', () => {
  const pod = makePod({ name: 'best-effort' });
  const stats = statsFuncOf(makePodStats(pod));

  const cases: { name: string; resource: ResourceName; thresholds: ThresholdMetInfo[]; expected: string }[] = [
    {
      name: 'memory threshold',
      resource: 'memory',
      thresholds: [threshold('memory.available', '1Gi', 500n * 1024n * 1024n)],
      expected: 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 500Mi. ',
    },
    {
      name: 'the first threshold of the same resource is quoted',
      resource: 'memory',
      thresholds: [
        threshold('nodefs.available', '10Gi', 1n),
        threshold('allocatableMemory.available', '200Mi', 100n * 1024n * 1024n),
        threshold('memory.available', '1Gi', 500n * 1024n * 1024n),
      ],
      expected: 'The node was low on resource: memory. Threshold quantity: 200Mi, available: 100Mi. ',
    },
    {
      name: 'ephemeral-storage matches any *.available disk signal',
      resource: 'ephemeral-storage',
      thresholds: [threshold('memory.available', '1Gi', 1n), threshold('imagefs.available', '1.5Gi', 1024n * 1024n * 1024n)],
      expected: 'The node was low on resource: ephemeral-storage. Threshold quantity: 1536Mi, available: 1Gi. ',
    },
    {
      name: 'PIDs print as decimal counts',
      resource: 'pids',
      thresholds: [threshold('pid.available', '1200', 1000n, 'DecimalSI')],
      expected: 'The node was low on resource: pids. Threshold quantity: 1200, available: 1k. ',
    },
    {
      name: 'inodes print as decimal counts',
      resource: 'inodes',
      thresholds: [threshold('nodefs.inodesFree', '50k', 40_000n, 'DecimalSI')],
      expected: 'The node was low on resource: inodes. Threshold quantity: 50k, available: 40k. ',
    },
    {
      name: 'no threshold of that resource: no threshold sentence',
      resource: 'memory',
      thresholds: [threshold('nodefs.available', '1Gi', 1n)],
      expected: 'The node was low on resource: memory. ',
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(evictionMessage(tc.resource, pod, stats, tc.thresholds).message).toBe(tc.expected);
    });
  }

  test('a pod without stats gets the node sentences and no annotations', () => {
    const unknown = makePod({ name: 'no-stats', requests: { memory: '1Mi' } });
    expect(evictionMessage('memory', unknown, statsFuncOf(), [threshold('memory.available', '1Gi', 0n)])).toEqual({
      message: 'The node was low on resource: memory. Threshold quantity: 1Gi, available: 0. ',
      annotations: {},
    });
  });
});

describe('evictionMessage: pod-level resources', () => {
  const podLevel = (options: Partial<PodOptions> = {}): ReturnType<typeof makePod> =>
    makePod({
      name: 'pod-level-pod',
      containers: [makeContainer('foo', { requests: { memory: '100Mi' } })],
      podResources: { requests: { memory: '1Gi' } },
      ...options,
    });
  const fooOver = [makeContainerStats('foo', { workingSetBytes: '200Mi' })];

  test('the pod sentence comes before the container ones, with the pod annotations', () => {
    const pod = podLevel();
    const stats = statsFuncOf(makePodStats(pod, { workingSetBytes: '1536Mi', containers: fooOver }));
    expect(evictionMessage('memory', pod, stats, noThresholds)).toEqual({
      message:
        'The node was low on resource: memory. ' +
        'Pod pod-level-pod was using 1536Mi, request is 1Gi, has larger consumption of memory. ' +
        'Container foo was using 200Mi, request is 100Mi, has larger consumption of memory. ',
      annotations: {
        offending_pod: 'pod-level-pod',
        offending_pod_usage: '1536Mi',
        offending_containers: 'foo',
        offending_containers_usage: '200Mi',
        starved_resource: 'memory',
      },
    });
  });

  test('the pod sentence is printed even when the pod is within its request, as upstream', () => {
    const pod = podLevel();
    const stats = statsFuncOf(makePodStats(pod, { workingSetBytes: '512Mi' }));
    expect(evictionMessage('memory', pod, stats, noThresholds)).toEqual({
      message: 'The node was low on resource: memory. Pod pod-level-pod was using 512Mi, request is 1Gi, has larger consumption of memory. ',
      annotations: { offending_pod: 'pod-level-pod', offending_pod_usage: '512Mi', offending_containers: '', offending_containers_usage: '', starved_resource: 'memory' },
    });
  });

  test('pod memory stats without a working set print a usage of 0', () => {
    const pod = podLevel();
    const podStats = makePodStats(pod);
    podStats.memory = { usageBytes: 10 };
    expect(evictionMessage('memory', pod, statsFuncOf(podStats), noThresholds).message).toBe(
      'The node was low on resource: memory. Pod pod-level-pod was using 0, request is 1Gi, has larger consumption of memory. ',
    );
  });

  const without: { name: string; pod: () => ReturnType<typeof makePod>; resource: ResourceName; podWorkingSet?: string }[] = [
    { name: 'no pod memory stats', pod: () => podLevel(), resource: 'memory' },
    { name: 'pod-level cpu only', pod: () => podLevel({ podResources: { requests: { cpu: '2' } } }), resource: 'memory', podWorkingSet: '2Gi' },
    { name: 'pod-level memory limit only', pod: () => podLevel({ podResources: { limits: { memory: '2Gi' } } }), resource: 'memory', podWorkingSet: '2Gi' },
    { name: 'ephemeral-storage pressure', pod: () => podLevel(), resource: 'ephemeral-storage', podWorkingSet: '2Gi' },
  ];
  for (const tc of without) {
    test(`no pod sentence: ${tc.name}`, () => {
      const pod = tc.pod();
      const stats = statsFuncOf(makePodStats(pod, { workingSetBytes: tc.podWorkingSet, containers: fooOver }));
      const { message, annotations } = evictionMessage(tc.resource, pod, stats, noThresholds);
      expect(message).not.toContain('Pod pod-level-pod');
      expect(annotations).not.toHaveProperty('offending_pod');
      expect(annotations).not.toHaveProperty('offending_pod_usage');
    });
  }
});
