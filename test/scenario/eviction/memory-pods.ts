// The pods of the kubelet's memory-pressure tests (`TestMemoryPressure`, `TestMinReclaim`,
// `TestAllocatableMemoryPressure`), with their working sets. Rank under memory pressure: pods over
// their request first, then lowest priority, then most memory above request.

import type { Pod } from '../../../src/api/pod.js';
import type { PodStats } from '../../../src/api/summary.js';
import { makePod, makePodStats } from '../../fixtures/pods.js';
import { DEFAULT_PRIORITY, HIGH_PRIORITY, LOW_PRIORITY } from './support.js';

interface MemoryPodSpec {
  readonly name: string;
  readonly priority: number;
  readonly request?: string;
  readonly limit?: string;
  readonly workingSet: string;
}

const specs: readonly MemoryPodSpec[] = [
  { name: 'guaranteed-low-priority-high-usage', priority: LOW_PRIORITY, request: '1Gi', limit: '1Gi', workingSet: '900Mi' },
  { name: 'burstable-below-requests', priority: DEFAULT_PRIORITY, request: '100Mi', limit: '1Gi', workingSet: '50Mi' },
  { name: 'burstable-above-requests', priority: DEFAULT_PRIORITY, request: '100Mi', limit: '1Gi', workingSet: '400Mi' },
  { name: 'best-effort-high-priority-large', priority: HIGH_PRIORITY, workingSet: '400Mi' },
  { name: 'best-effort-low-priority', priority: LOW_PRIORITY, workingSet: '100Mi' },
];

/** The five pods and their stats (pod and container working sets alike), in the kubelet test's order. */
export function memoryPressurePods(): { pods: Pod[]; podStats: PodStats[] } {
  const pods = specs.map((s) =>
    makePod({
      name: s.name,
      priority: s.priority,
      requests: s.request === undefined ? undefined : { cpu: '100m', memory: s.request },
      limits: s.limit === undefined ? undefined : { cpu: s.request === s.limit ? '100m' : '200m', memory: s.limit },
    }),
  );
  const podStats = pods.map((pod, i) => makePodStats(pod, { workingSetBytes: specs[i]!.workingSet, containerWorkingSetBytes: specs[i]!.workingSet }));
  return { pods, podStats };
}

/** The memory-pressure rank of {@link memoryPressurePods}. */
export const MEMORY_RANK = [
  'best-effort-low-priority',
  'burstable-above-requests',
  'best-effort-high-priority-large',
  'guaranteed-low-priority-high-usage',
  'burstable-below-requests',
];
