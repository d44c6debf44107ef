import { makePod, noExecute, T0_MS, tolerate } from '../../fakes/fake-taint-cluster.js';
import type { Taint, Toleration } from '../../../src/api/pod.js';
import { decideTaintEviction, type TaintDecision } from '../../../src/taint/taint-decision.js';
import { DEFAULT_TAINT_OPTIONS, type TaintOptions } from '../../../src/taint/taint-options.js';

const NOW_MS = T0_MS + 10 * 60_000;
const iso = (ms: number): string => new Date(ms).toISOString();

describe('decideTaintEviction', () => {
  const cases: { name: string; taints: Taint[]; tolerations: Toleration[]; options?: Partial<TaintOptions>; terminating?: boolean; expected: TaintDecision }[] = [
    { name: 'no taints: cancel, never delete (quirk Q2 guarded)', taints: [], tolerations: [], expected: { kind: 'untainted' } },
    { name: 'an untolerated taint: delete now', taints: [noExecute('a')], tolerations: [], expected: { kind: 'untolerated' } },
    { name: 'one of two taints untolerated: delete now', taints: [noExecute('a'), noExecute('b')], tolerations: [tolerate('a', 60)], expected: { kind: 'untolerated' } },
    { name: 'tolerated forever', taints: [noExecute('a')], tolerations: [tolerate('a')], expected: { kind: 'forever' } },
    { name: 'tolerated for 60 s', taints: [noExecute('a')], tolerations: [tolerate('a', 60)], expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 } },
    { name: 'the shortest toleration of several taints', taints: [noExecute('a'), noExecute('b')], tolerations: [tolerate('a', 600), tolerate('b', 60)], expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 } },
    { name: 'tolerationSeconds 0 is a timed entry due now (the existing-timer rule still applies)', taints: [noExecute('a')], tolerations: [tolerate('a', 0)], expected: { kind: 'timed', tolerationMs: 0, fireAtMs: NOW_MS } },
    { name: 'a terminating pod is judged like any other by default', taints: [noExecute('a')], tolerations: [], terminating: true, expected: { kind: 'untolerated' } },
    { name: 'skipTerminatingPods leaves a terminating pod alone', taints: [noExecute('a')], tolerations: [], terminating: true, options: { skipTerminatingPods: true }, expected: { kind: 'terminating' } },
    { name: 'skipTerminatingPods does not affect a running pod', taints: [noExecute('a')], tolerations: [], options: { skipTerminatingPods: true }, expected: { kind: 'untolerated' } },
    {
      name: 'timeAdded is ignored by default (quirk Q3)',
      taints: [noExecute('a', undefined, iso(T0_MS))],
      tolerations: [tolerate('a', 900)],
      expected: { kind: 'timed', tolerationMs: 900_000, fireAtMs: NOW_MS + 900_000 },
    },
    {
      name: 'countFromTimeAdded counts from the taint\'s timeAdded',
      taints: [noExecute('a', undefined, iso(T0_MS))],
      tolerations: [tolerate('a', 900)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 900_000, fireAtMs: T0_MS + 900_000 },
    },
    {
      name: 'countFromTimeAdded with the period already over: due now',
      taints: [noExecute('a', undefined, iso(T0_MS))],
      tolerations: [tolerate('a', 300)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 300_000, fireAtMs: NOW_MS },
    },
    {
      name: 'countFromTimeAdded takes the earliest deadline, not the shortest toleration',
      taints: [noExecute('old', undefined, iso(T0_MS)), noExecute('new', undefined, iso(NOW_MS))],
      tolerations: [tolerate('old', 900), tolerate('new', 600)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 600_000, fireAtMs: T0_MS + 900_000 },
    },
    {
      name: 'countFromTimeAdded without timeAdded counts from now',
      taints: [noExecute('a')],
      tolerations: [tolerate('a', 60)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 },
    },
    {
      name: 'countFromTimeAdded never starts later than now (a timeAdded in the future)',
      taints: [noExecute('a', undefined, iso(NOW_MS + 3_600_000))],
      tolerations: [tolerate('a', 60)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 },
    },
    {
      name: 'countFromTimeAdded ignores an unparsable timeAdded',
      taints: [noExecute('a', undefined, 'yesterday')],
      tolerations: [tolerate('a', 60)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 },
    },
    {
      name: 'countFromTimeAdded: a forever toleration on the old taint does not count',
      taints: [noExecute('old', undefined, iso(T0_MS)), noExecute('new', undefined, iso(NOW_MS))],
      tolerations: [tolerate('old'), tolerate('new', 60)],
      options: { countFromTimeAdded: true },
      expected: { kind: 'timed', tolerationMs: 60_000, fireAtMs: NOW_MS + 60_000 },
    },
    {
      name: 'Gt toleration with comparison operators on',
      taints: [{ key: 'slo', value: '950', effect: 'NoExecute' }],
      tolerations: [{ key: 'slo', operator: 'Gt', value: '900', effect: 'NoExecute' }],
      options: { comparisonOperators: true },
      expected: { kind: 'forever' },
    },
    {
      name: 'Gt toleration with comparison operators off: deleted (gate off)',
      taints: [{ key: 'slo', value: '950', effect: 'NoExecute' }],
      tolerations: [{ key: 'slo', operator: 'Gt', value: '900', effect: 'NoExecute' }],
      expected: { kind: 'untolerated' },
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const pod = makePod('p', tc.tolerations, tc.terminating === true ? { deletionTimestamp: iso(T0_MS) } : {});
      expect(decideTaintEviction(pod, tc.taints, NOW_MS, { ...DEFAULT_TAINT_OPTIONS, ...tc.options })).toEqual(tc.expected);
    });
  }
});
