// Which pods are never evicted: mirror pods and system-critical priority, and nothing a pod's
// author can write in an annotation the kubelet overwrites for a pod from the API server.

import { isCriticalPod, isCriticalPodBasedOnPriority, isMirrorPod } from '../../../src/eviction/critical.js';
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

describe('mirror and critical pods', () => {
  const cases: { name: string; pod: PodOptions; mirror: boolean; critical: boolean }[] = [
    { name: 'plain-pod', pod: { name: 'plain-pod' }, mirror: false, critical: false },
    {
      name: 'mirror-pod-with-hash',
      pod: { name: 'mirror-pod-with-hash', annotations: { 'kubernetes.io/config.mirror': '2d1e6c9e0f' } },
      mirror: true,
      critical: true,
    },
    {
      name: 'mirror-pod-empty-value',
      pod: { name: 'mirror-pod-empty-value', annotations: { 'kubernetes.io/config.mirror': '' } },
      mirror: true,
      critical: true,
    },
    {
      name: 'system-node-critical-pod',
      pod: { name: 'system-node-critical-pod', priority: 2_000_001_000 },
      mirror: false,
      critical: true,
    },
    {
      name: 'system-cluster-critical-pod',
      pod: { name: 'system-cluster-critical-pod', priority: 2_000_000_000 },
      mirror: false,
      critical: true,
    },
    {
      name: 'high-user-priority-pod',
      pod: { name: 'high-user-priority-pod', priority: 1_000_000_000 },
      mirror: false,
      critical: false,
    },
    {
      name: 'null-priority-pod',
      pod: { name: 'null-priority-pod', priority: null },
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
      mirror: false,
      critical: false,
    },
    {
      name: 'kube-system-default-priority-pod',
      pod: { name: 'kube-system-default-priority-pod', namespace: 'kube-system' },
      mirror: false,
      critical: false,
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod(tc.pod);
      expect(isMirrorPod(pod)).toBe(tc.mirror);
      expect(isCriticalPod(pod)).toBe(tc.critical);
    });
  }
});

// The kubelet sets these on every pod it gets, overwriting what the API object says (config.source
// becomes `api`): on a pod from the API server they are its author's words, and none of them may
// protect it. A pod carrying them is ranked and evicted like any other.
describe('annotations the kubelet overwrites make no pod critical', () => {
  const HASH = '3c9f2b7e1a4d4c8f9e0b5a6d7c8e9f01';
  const cases: { name: string; annotations: Record<string, string> }[] = [
    { name: 'config.source file (a static pod read from a manifest file)', annotations: { 'kubernetes.io/config.source': 'file' } },
    { name: 'config.source http (a static pod read from a URL)', annotations: { 'kubernetes.io/config.source': 'http' } },
    { name: 'config.source api', annotations: { 'kubernetes.io/config.source': 'api' } },
    { name: 'config.source empty', annotations: { 'kubernetes.io/config.source': '' } },
    { name: 'config.source anything else', annotations: { 'kubernetes.io/config.source': 'trust-me' } },
    { name: 'config.hash alone', annotations: { 'kubernetes.io/config.hash': HASH } },
    { name: 'config.seen alone', annotations: { 'kubernetes.io/config.seen': '2026-11-01T12:00:00.000000000Z' } },
    {
      name: 'all three, as the kubelet writes them on a static pod',
      annotations: { 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': HASH, 'kubernetes.io/config.seen': '2026-11-01T12:00:00.000000000Z' },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod({ name: 'annotated', annotations: tc.annotations, priority: 0 });
      expect(isMirrorPod(pod)).toBe(false);
      expect(isCriticalPod(pod)).toBe(false);
    });
  }

  test('beside the mirror annotation they change nothing: a mirror pod stays critical', () => {
    expect(isCriticalPod(makePod({ name: 'mirror', annotations: { 'kubernetes.io/config.mirror': HASH, 'kubernetes.io/config.source': 'api' } }))).toBe(true);
  });
});
