import {
  isCriticalPod,
  isCriticalPodBasedOnPriority,
  isMirrorPod,
  isStaticPod,
} from '../../../src/eviction/critical.js';
import { makePod, type PodOptions } from '../../fixtures/pods.js';

describe('isCriticalPodBasedOnPriority', () => {
  const cases: { name: string; priority: number; critical: boolean }[] = [
    { name: 'system-node-critical', priority: 2_000_001_000, critical: true },
    { name: 'system-cluster-critical', priority: 2_000_000_000, critical: true },
    { name: 'one below system critical', priority: 1_999_999_999, critical: false },
    { name: 'highest user-definable priority', priority: 1_000_000_000, critical: false },
    { name: 'default priority', priority: 0, critical: false },
    { name: 'negative priority', priority: -10, critical: false },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(isCriticalPodBasedOnPriority(tc.priority)).toBe(tc.critical);
    });
  }
});

describe('static, mirror and critical pods', () => {
  const cases: { name: string; pod: PodOptions; static: boolean; mirror: boolean; critical: boolean }[] = [
    { name: 'plain-pod', pod: { name: 'plain-pod' }, static: false, mirror: false, critical: false },
    {
      name: 'api-source-pod',
      pod: { name: 'api-source-pod', annotations: { 'kubernetes.io/config.source': 'api' } },
      static: false,
      mirror: false,
      critical: false,
    },
    {
      name: 'file-static-pod',
      pod: { name: 'file-static-pod', annotations: { 'kubernetes.io/config.source': 'file' } },
      static: true,
      mirror: false,
      critical: true,
    },
    {
      name: 'http-static-pod',
      pod: { name: 'http-static-pod', annotations: { 'kubernetes.io/config.source': 'http' } },
      static: true,
      mirror: false,
      critical: true,
    },
    {
      name: 'empty-source-static-pod',
      pod: { name: 'empty-source-static-pod', annotations: { 'kubernetes.io/config.source': '' } },
      static: true,
      mirror: false,
      critical: true,
    },
    {
      name: 'mirror-pod-with-hash',
      pod: { name: 'mirror-pod-with-hash', annotations: { 'kubernetes.io/config.mirror': '2d1e6c9e0f' } },
      static: false,
      mirror: true,
      critical: true,
    },
    {
      name: 'mirror-pod-empty-value',
      pod: { name: 'mirror-pod-empty-value', annotations: { 'kubernetes.io/config.mirror': '' } },
      static: false,
      mirror: true,
      critical: true,
    },
    {
      name: 'system-node-critical-pod',
      pod: { name: 'system-node-critical-pod', priority: 2_000_001_000 },
      static: false,
      mirror: false,
      critical: true,
    },
    {
      name: 'system-cluster-critical-pod',
      pod: { name: 'system-cluster-critical-pod', priority: 2_000_000_000 },
      static: false,
      mirror: false,
      critical: true,
    },
    {
      name: 'high-user-priority-pod',
      pod: { name: 'high-user-priority-pod', priority: 1_000_000_000 },
      static: false,
      mirror: false,
      critical: false,
    },
    {
      name: 'null-priority-pod',
      pod: { name: 'null-priority-pod', priority: null },
      static: false,
      mirror: false,
      critical: false,
    },
    {
      // Very old kubelets honoured this annotation in kube-system; current ones do not.
      name: 'legacy-critical-annotation-pod',
      pod: {
        name: 'legacy-critical-annotation-pod',
        namespace: 'kube-system',
        annotations: { 'scheduler.alpha.kubernetes.io/critical-pod': '' },
      },
      static: false,
      mirror: false,
      critical: false,
    },
    {
      name: 'kube-system-default-priority-pod',
      pod: { name: 'kube-system-default-priority-pod', namespace: 'kube-system' },
      static: false,
      mirror: false,
      critical: false,
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod(tc.pod);
      expect(isStaticPod(pod)).toBe(tc.static);
      expect(isMirrorPod(pod)).toBe(tc.mirror);
      expect(isCriticalPod(pod)).toBe(tc.critical);
    });
  }
});
