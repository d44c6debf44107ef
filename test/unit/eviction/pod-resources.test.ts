import { formatQuantity } from '../../../src/api/quantity.js';
import {
  isPodLevelResourcesSet,
  podLimit,
  podLimitQuantity,
  podPriority,
  podRequest,
  podRequestQuantity,
  resourceQuantity,
} from '../../../src/eviction/pod-resources.js';
import { makeContainer, makePod, makeSidecar, type PodOptions } from '../../fixtures/pods.js';

const Mi = 1024n * 1024n;
const Gi = 1024n * Mi;

describe('podRequest: the kubelet GetResourceRequestQuantity', () => {
  const cases: { name: string; pod: PodOptions; resource: 'memory' | 'ephemeral-storage'; expected: bigint }[] = [
    { name: 'best-effort pod requests nothing', pod: { name: 'best-effort' }, resource: 'memory', expected: 0n },
    { name: 'one container', pod: { name: 'burstable', requests: { memory: '100Mi' } }, resource: 'memory', expected: 100n * Mi },
    {
      name: 'app containers are summed',
      pod: {
        name: 'two-containers',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } }), makeContainer('proxy', { requests: { memory: '50Mi' } })],
      },
      resource: 'memory',
      expected: 150n * Mi,
    },
    {
      name: 'a container without the request adds nothing',
      pod: {
        name: 'partial-requests',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } }), makeContainer('proxy', { requests: { cpu: '100m' } })],
      },
      resource: 'memory',
      expected: 100n * Mi,
    },
    {
      name: 'an init container larger than the sum raises it (max semantics)',
      pod: {
        name: 'big-init',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
        initContainers: [makeContainer('migrate', { requests: { memory: '500Mi' } })],
      },
      resource: 'memory',
      expected: 500n * Mi,
    },
    {
      name: 'an init container smaller than the sum changes nothing',
      pod: {
        name: 'small-init',
        containers: [makeContainer('app', { requests: { memory: '300Mi' } })],
        initContainers: [makeContainer('migrate', { requests: { memory: '200Mi' } })],
      },
      resource: 'memory',
      expected: 300n * Mi,
    },
    {
      name: 'init containers are not summed with each other',
      pod: {
        name: 'two-inits',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
        initContainers: [makeContainer('a', { requests: { memory: '200Mi' } }), makeContainer('b', { requests: { memory: '250Mi' } })],
      },
      resource: 'memory',
      expected: 250n * Mi,
    },
    {
      name: 'a sidecar is added to the app containers',
      pod: {
        name: 'with-sidecar',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
        initContainers: [makeSidecar('mesh', { requests: { memory: '50Mi' } })],
      },
      resource: 'memory',
      expected: 150n * Mi,
    },
    {
      name: 'an init container after a sidecar needs the sidecar too',
      pod: {
        name: 'sidecar-then-init',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
        initContainers: [makeSidecar('mesh', { requests: { memory: '50Mi' } }), makeContainer('migrate', { requests: { memory: '200Mi' } })],
      },
      resource: 'memory',
      expected: 250n * Mi,
    },
    {
      name: 'an init container before a sidecar does not',
      pod: {
        name: 'init-then-sidecar',
        containers: [makeContainer('app', { requests: { memory: '100Mi' } })],
        initContainers: [makeContainer('migrate', { requests: { memory: '200Mi' } }), makeSidecar('mesh', { requests: { memory: '50Mi' } })],
      },
      resource: 'memory',
      expected: 200n * Mi,
    },
    {
      name: 'overhead is added to a non-zero request',
      pod: { name: 'kata-burstable', requests: { memory: '100Mi' }, overhead: { memory: '10Mi' } },
      resource: 'memory',
      expected: 110n * Mi,
    },
    {
      name: 'overhead is not added to a zero request',
      pod: { name: 'kata-best-effort', overhead: { memory: '10Mi' } },
      resource: 'memory',
      expected: 0n,
    },
    {
      name: 'overhead of another resource is not added',
      pod: { name: 'kata-cpu-overhead', requests: { memory: '100Mi' }, overhead: { cpu: '250m' } },
      resource: 'memory',
      expected: 100n * Mi,
    },
    {
      name: 'pod-level memory request replaces the container sum',
      pod: { name: 'pod-level', requests: { memory: '100Mi' }, podResources: { requests: { memory: '1Gi' } } },
      resource: 'memory',
      expected: Gi,
    },
    {
      name: 'pod-level resources make container ephemeral-storage requests count for nothing',
      pod: { name: 'pod-level-disk', requests: { 'ephemeral-storage': '1Gi' }, podResources: { requests: { memory: '1Gi' } } },
      resource: 'ephemeral-storage',
      expected: 0n,
    },
    {
      name: 'pod-level limits alone skip container requests and leave the request 0',
      pod: { name: 'pod-level-limits-only', requests: { memory: '100Mi' }, podResources: { limits: { memory: '1Gi' } } },
      resource: 'memory',
      expected: 0n,
    },
    {
      name: 'pod-level resources naming only unsupported resources are ignored',
      pod: { name: 'pod-level-unsupported', requests: { 'ephemeral-storage': '1Gi' }, podResources: { requests: { 'ephemeral-storage': '5Gi' } } },
      resource: 'ephemeral-storage',
      expected: Gi,
    },
    {
      name: 'overhead is added to a pod-level request',
      pod: { name: 'pod-level-kata', podResources: { requests: { memory: '1Gi' } }, overhead: { memory: '100Mi' } },
      resource: 'memory',
      expected: Gi + 100n * Mi,
    },
    {
      name: 'ephemeral-storage requests are summed like memory',
      pod: {
        name: 'disk-requests',
        containers: [makeContainer('app', { requests: { 'ephemeral-storage': '1Gi' } }), makeContainer('log', { requests: { 'ephemeral-storage': '512Mi' } })],
      },
      resource: 'ephemeral-storage',
      expected: Gi + 512n * Mi,
    },
    { name: 'fractional binary quantity', pod: { name: 'fractional', requests: { memory: '1.5Gi' } }, resource: 'memory', expected: 1536n * Mi },
    { name: 'decimal quantity', pod: { name: 'decimal', requests: { memory: '100M' } }, resource: 'memory', expected: 100_000_000n },
    { name: 'a malformed quantity counts as absent', pod: { name: 'malformed', requests: { memory: 'lots' } }, resource: 'memory', expected: 0n },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(podRequest(makePod(tc.pod), tc.resource)).toBe(tc.expected);
    });
  }

  test('inodes cannot be requested', () => {
    const pod = makePod({ name: 'disk-requests', requests: { 'ephemeral-storage': '1Gi', memory: '1Gi' } });
    expect(podRequestQuantity(pod, 'inodes').nanos).toBe(0n);
  });

  test('a zero memory request prints as 0', () => {
    expect(formatQuantity(podRequestQuantity(makePod({ name: 'best-effort' }), 'memory'))).toBe('0');
  });
});

describe('isPodLevelResourcesSet', () => {
  const cases: { name: string; pod: PodOptions; expected: boolean }[] = [
    { name: 'no spec.resources', pod: { name: 'plain' }, expected: false },
    { name: 'empty spec.resources', pod: { name: 'empty', podResources: {} }, expected: false },
    { name: 'memory request', pod: { name: 'memory-request', podResources: { requests: { memory: '1Gi' } } }, expected: true },
    { name: 'cpu limit', pod: { name: 'cpu-limit', podResources: { limits: { cpu: '1' } } }, expected: true },
    { name: 'hugepages request', pod: { name: 'hugepages', podResources: { requests: { 'hugepages-2Mi': '4Mi' } } }, expected: true },
    { name: 'only ephemeral-storage', pod: { name: 'disk-only', podResources: { requests: { 'ephemeral-storage': '1Gi' } } }, expected: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(isPodLevelResourcesSet(makePod(tc.pod))).toBe(tc.expected);
    });
  }
});

describe('podLimit: the kubelet PodLimits for ephemeral-storage', () => {
  const cases: { name: string; pod: PodOptions; expected: bigint | null; printed?: string }[] = [
    { name: 'no container sets a limit', pod: { name: 'unlimited', requests: { 'ephemeral-storage': '1Gi' } }, expected: null },
    { name: 'one container', pod: { name: 'limited', limits: { 'ephemeral-storage': '1Gi' } }, expected: Gi, printed: '1Gi' },
    {
      name: 'containers that set it are summed',
      pod: {
        name: 'two-limits',
        containers: [
          makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } }),
          makeContainer('log', { limits: { 'ephemeral-storage': '512Mi' } }),
          makeContainer('proxy'),
        ],
      },
      expected: Gi + 512n * Mi,
      printed: '1536Mi',
    },
    {
      name: 'the sum keeps the first quantity format',
      pod: {
        name: 'mixed-formats',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1G' } }), makeContainer('log', { limits: { 'ephemeral-storage': '1Gi' } })],
      },
      expected: 1_000_000_000n + Gi,
      printed: '2073741824',
    },
    {
      name: 'init container larger than the sum',
      pod: {
        name: 'big-init-limit',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })],
        initContainers: [makeContainer('unpack', { limits: { 'ephemeral-storage': '5Gi' } })],
      },
      expected: 5n * Gi,
      printed: '5Gi',
    },
    {
      name: 'only an init container sets it',
      pod: { name: 'init-only-limit', containers: [makeContainer('app')], initContainers: [makeContainer('unpack', { limits: { 'ephemeral-storage': '2Gi' } })] },
      expected: 2n * Gi,
    },
    {
      name: 'a sidecar limit is added',
      pod: {
        name: 'sidecar-limit',
        containers: [makeContainer('app', { limits: { 'ephemeral-storage': '1Gi' } })],
        initContainers: [makeSidecar('mesh', { limits: { 'ephemeral-storage': '1Gi' } })],
      },
      expected: 2n * Gi,
    },
    {
      name: 'overhead is added to a non-zero limit',
      pod: { name: 'kata-limited', limits: { 'ephemeral-storage': '1Gi' }, overhead: { 'ephemeral-storage': '100Mi' } },
      expected: Gi + 100n * Mi,
    },
    {
      name: 'overhead is not added to a zero limit, which is still a limit',
      pod: { name: 'kata-zero-limit', limits: { 'ephemeral-storage': '0' }, overhead: { 'ephemeral-storage': '100Mi' } },
      expected: 0n,
    },
    {
      name: 'overhead alone is not a limit',
      pod: { name: 'kata-unlimited', overhead: { 'ephemeral-storage': '100Mi' } },
      expected: null,
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod(tc.pod);
      expect(podLimit(pod, 'ephemeral-storage')).toBe(tc.expected);
      if (tc.printed !== undefined) {
        const limit = podLimitQuantity(pod, 'ephemeral-storage');
        expect(limit === null ? null : formatQuantity(limit)).toBe(tc.printed);
      }
    });
  }
});

describe('podPriority', () => {
  const cases: { name: string; priority?: number | null; expected: number }[] = [
    { name: 'unset is 0', expected: 0 },
    { name: 'null is 0', priority: null, expected: 0 },
    { name: 'negative', priority: -5, expected: -5 },
    { name: 'system critical', priority: 2_000_000_000, expected: 2_000_000_000 },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(podPriority(makePod({ name: 'prioritized', priority: tc.priority }))).toBe(tc.expected);
    });
  }
});

describe('resourceQuantity', () => {
  test('absent, malformed and present entries', () => {
    expect(resourceQuantity(undefined, 'memory')).toBeUndefined();
    expect(resourceQuantity({ memory: 'x' }, 'memory')).toBeUndefined();
    expect(resourceQuantity({ memory: '1Gi' }, 'memory')).toEqual({ nanos: Gi * 1_000_000_000n, format: 'BinarySI' });
  });
});
