// When the pods can be ranked on their own numbers, and when too many are missing: the minimum
// count, the share, the warm-up of a just-started pod, terminating and pending pods, static pods
// under their own UID, and a missing pod cgroup root.

import type { Pod } from '../../../src/api/pod.js';
import type { Summary } from '../../../src/api/summary.js';
import { assessStatsCoverage, CGROUP_RANKED_SIGNALS, STATS_WARMUP_MS } from '../../../src/eviction/stats-coverage.js';
import { makePod, makePodStats, mirrorAnnotations } from '../../fixtures/pods.js';

const NOW_MS = Date.UTC(2026, 10, 1, 12);
const LONG_AGO_MS = NOW_MS - 3_600_000;

function running(name: string, startedMs: number | null = LONG_AGO_MS, extra: Partial<Pod['metadata']> = {}): Pod {
  const pod = makePod({ name });
  const state = { running: startedMs === null ? {} : { startedAt: new Date(startedMs).toISOString() } };
  return { ...pod, metadata: { ...pod.metadata, ...extra }, status: { phase: 'Running', containerStatuses: [{ name, containerID: `containerd://${name}`, state }] } };
}

const pending = (name: string): Pod => ({ ...makePod({ name }), status: { phase: 'Pending' } });

function summaryOf(measured: readonly Pod[]): Summary {
  return { node: {}, pods: measured.map((pod) => makePodStats(pod, { workingSetBytes: '100Mi' })) };
}

const many = (prefix: string, count: number, startedMs?: number): Pod[] => Array.from({ length: count }, (_, i) => running(`${prefix}${i}`, startedMs));

const cases: { name: string; measured: Pod[]; unmeasured: Pod[]; rootProblem?: string; blind: boolean; reason?: RegExp }[] = [
  { name: 'every pod measured', measured: many('ok', 5), unmeasured: [], blind: false },
  { name: 'one long-running pod without stats: the kubelet\'s case, ranked first', measured: many('ok', 3), unmeasured: [running('lost')], blind: false },
  { name: 'two of three without stats', measured: many('ok', 1), unmeasured: many('lost', 2), blind: true, reason: /^2 of 3 running pods have no stats \(default\/lost0, default\/lost1\)/ },
  { name: 'two of twenty without stats: not more than a tenth', measured: many('ok', 18), unmeasured: many('lost', 2), blind: false },
  { name: 'three of twenty without stats', measured: many('ok', 17), unmeasured: many('lost', 3), blind: true, reason: /^3 of 20 running pods have no stats/ },
  { name: 'a single pod, unmeasured: its rank changes nothing', measured: [], unmeasured: [running('alone')], blind: false },
  { name: 'every pod unmeasured, named up to three', measured: [], unmeasured: many('lost', 5), blind: true, reason: /^5 of 5 running pods have no stats \(default\/lost0, default\/lost1, default\/lost2, …\)/ },
  { name: 'pods started within the warm-up are not counted', measured: many('ok', 2), unmeasured: many('new', 5, NOW_MS - STATS_WARMUP_MS + 1000), blind: false },
  { name: 'pods started just past the warm-up are counted', measured: many('ok', 2), unmeasured: many('new', 5, NOW_MS - STATS_WARMUP_MS), blind: true },
  { name: 'a running container without a start time counts as long running', measured: many('ok', 2), unmeasured: [running('a', null), running('b', null)], blind: true },
  { name: 'pending pods have no cgroup yet', measured: many('ok', 2), unmeasured: [pending('p1'), pending('p2'), pending('p3')], blind: false },
  {
    name: 'terminating pods lose their cgroups first',
    measured: many('ok', 2),
    unmeasured: [running('t1', LONG_AGO_MS, { deletionTimestamp: new Date(NOW_MS).toISOString() }), running('t2', LONG_AGO_MS, { deletionTimestamp: new Date(NOW_MS).toISOString() })],
    blind: false,
  },
  { name: 'no pod cgroup root, pods running', measured: [], unmeasured: many('lost', 1), rootProblem: 'no pod cgroup root found (looked for /c/kubepods)', blind: true, reason: /^no pod cgroup root found \(looked for \/c\/kubepods\), so none of the 1 running pods can be measured/ },
  { name: 'no pod cgroup root, nothing running: nothing to rank', measured: [], unmeasured: [pending('p')], rootProblem: 'no pod cgroup root found', blind: false },
];

describe('assessStatsCoverage', () => {
  for (const tc of cases) {
    test(tc.name, () => {
      const verdict = assessStatsCoverage({ summary: summaryOf(tc.measured), pods: [...tc.measured, ...tc.unmeasured], nowMs: NOW_MS, podCgroupRootProblem: tc.rootProblem });
      expect(verdict.blind).toBe(tc.blind);
      expect(verdict.missing.map((p) => p.metadata.name)).toEqual(tc.unmeasured.map((p) => p.metadata.name));
      if (verdict.blind) {
        expect(verdict.signals).toEqual(CGROUP_RANKED_SIGNALS);
        if (tc.reason !== undefined) expect(verdict.reason).toMatch(tc.reason);
        expect(verdict.reason).toMatch(/likely a wrong observe\.hostRoot .*observe\.cgroupDriver or observe\.podCgroupRoot/);
      }
    });
  }

  test('a static pod is measured under its own UID, not its mirror pod\'s', () => {
    const mirror = { ...running('static'), metadata: { ...running('static').metadata, annotations: mirrorAnnotations() } };
    const others = many('ok', 2);
    const measured = summaryOf(others);
    measured.pods?.push({ podRef: { name: 'static', namespace: 'default', uid: mirrorAnnotations()['kubernetes.io/config.mirror'] ?? '' }, memory: { workingSetBytes: 1 } });
    const lost = many('lost', 2);
    // The mirror pod found under the static UID: two of five missing, blind; without it three.
    expect(assessStatsCoverage({ summary: measured, pods: [mirror, ...others, ...lost], nowMs: NOW_MS }).missing.map((p) => p.metadata.name)).toEqual(['lost0', 'lost1']);
  });

  test('a pod entry without memory stats (disk only) counts as without stats', () => {
    const pods = many('ok', 3);
    const summary: Summary = { node: {}, pods: pods.map((pod) => ({ podRef: { name: pod.metadata.name ?? '', namespace: 'default', uid: pod.metadata.uid ?? '' } })) };
    expect(assessStatsCoverage({ summary, pods, nowMs: NOW_MS }).blind).toBe(true);
  });
});
