import { formatRfc3339, parseReplayLine } from '../../../src/replay/input.js';
import { ReplayInputError } from '../../../src/errors.js';

const T0 = '2026-11-01T12:00:00Z';
const pod = (extra: Record<string, unknown> = {}) => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'app' }] }, ...extra });
/** A pod named `name` with the UID `uid-<name>`, its spec and metadata extended. */
const named = (name: string, metadata: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...metadata },
  spec: { containers: [{ name: 'app' }], ...spec },
});
const HASH = 'a'.repeat(32);

describe('parseReplayLine rejects a line it cannot use, naming the line and the field', () => {
  const cases: { name: string; text: string; previous?: number; field: string; message: RegExp }[] = [
    { name: 'invalid-json', text: '{"time": ', field: '', message: /invalid JSON/ },
    { name: 'not-an-object', text: '[1,2]', field: '', message: /expected an object, got an array/ },
    { name: 'missing-time', text: '{}', field: 'time', message: /is required/ },
    { name: 'time-not-a-string', text: '{"time": 5}', field: 'time', message: /expected an RFC 3339 timestamp, got a number/ },
    { name: 'time-not-rfc3339', text: '{"time": "yesterday"}', field: 'time', message: /RFC 3339/ },
    { name: 'time-goes-backwards', text: `{"time": "${T0}"}`, previous: Date.parse(T0) + 1000, field: 'time', message: /time goes backwards/ },
    { name: 'unknown-top-level-key', text: `{"time": "${T0}", "sumary": {}}`, field: 'sumary', message: /unknown key/ },
    { name: 'summary-bytes-as-string', text: `{"time": "${T0}", "summary": {"node": {"memory": {"availableBytes": "1Gi"}}}}`, field: 'summary.node.memory.availableBytes', message: /non-negative integer, got "1Gi"/ },
    { name: 'summary-negative-bytes', text: `{"time": "${T0}", "summary": {"node": {"fs": {"capacityBytes": -1}}}}`, field: 'summary.node.fs.capacityBytes', message: /non-negative integer/ },
    { name: 'summary-bad-stat-time', text: `{"time": "${T0}", "summary": {"node": {"memory": {"time": "noon"}}}}`, field: 'summary.node.memory.time', message: /RFC 3339/ },
    { name: 'pod-stats-without-uid', text: `{"time": "${T0}", "summary": {"node": {}, "pods": [{"podRef": {"name": "a"}}]}}`, field: 'summary.pods[0].podRef', message: /name, namespace and uid/ },
    { name: 'pods-not-an-array', text: `{"time": "${T0}", "pods": {}}`, field: 'pods', message: /expected an array/ },
    { name: 'dedicated-imagefs-not-boolean', text: `{"time": "${T0}", "dedicatedImageFs": "yes"}`, field: 'dedicatedImageFs', message: /boolean/ },
    { name: 'taint-without-effect', text: JSON.stringify({ time: T0, node: { metadata: { name: 'n' }, spec: { taints: [{ key: 'k' }] } } }), field: 'node.spec.taints[0].effect', message: /is required/ },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      let caught: unknown;
      try {
        parseReplayLine(tc.text, 7, tc.previous ?? null);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ReplayInputError);
      const err = caught as ReplayInputError;
      expect(err.line).toBe(7);
      expect(err.field).toBe(tc.field);
      expect(err.message).toMatch(/^line 7: /);
      expect(err.message).toMatch(tc.message);
    });
  }
});

// What is wrong with one pod refuses that pod alone, as the agent refuses a pod it cannot trust: the
// others are decided on, and the refusal names the line, the field path and the reason.
describe('parseReplayLine refuses an odd pod and keeps the others', () => {
  const cases: { name: string; pods: unknown[]; kept: string[]; refused: { pod: string; reason: RegExp }[] }[] = [
    {
      name: 'a mirror pod whose static pod UID the manifest set (not 32 hex digits or a UUID): the daemon refuses it too',
      pods: [named('good'), named('etcd', { annotations: { 'kubernetes.io/config.mirror': 'abc', 'kubernetes.io/config.hash': 'abc' } })],
      kept: ['good'],
      refused: [{ pod: 'ns/etcd', reason: /^line 7: pods\[1\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: "abc" is not a static pod UID \(32 lowercase hex digits, or a UUID\)$/ }],
    },
    {
      name: 'a mirror annotation that differs from config.hash',
      pods: [named('good'), named('etcd', { annotations: { 'kubernetes.io/config.mirror': HASH, 'kubernetes.io/config.hash': 'b'.repeat(32) } })],
      kept: ['good'],
      refused: [{ pod: 'ns/etcd', reason: /^line 7: pods\[1\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: a{32} differs from its kubernetes\.io\/config\.hash "b{32}"$/ }],
    },
    {
      name: 'two pods sharing a UID: both refused, each naming the other, in the words of the agent\'s node pod filter',
      pods: [named('a', { uid: 'u1' }), named('good'), named('b', { uid: 'u1' })],
      kept: ['good'],
      refused: [
        { pod: 'ns/a', reason: /^line 7: pods\[0\]\.metadata\.uid: the pod UID u1 is also listed for pods\[2\] \(ns\/b\): the API server gives every pod its own$/ },
        { pod: 'ns/b', reason: /^line 7: pods\[2\]\.metadata\.uid: the pod UID u1 is also listed for pods\[0\] \(ns\/a\): the API server gives every pod its own$/ },
      ],
    },
    {
      name: 'five pods sharing a UID: all refused, three others named and the rest counted',
      pods: [named('good'), ...['a', 'b', 'c', 'd', 'e'].map((n) => named(n, { uid: 'same' }))],
      kept: ['good'],
      refused: ['a', 'b', 'c', 'd', 'e'].map((n) => ({ pod: `ns/${n}`, reason: /the pod UID same is also listed for pods\[\d\] \(ns\/[a-e]\), pods\[\d\] \(ns\/[a-e]\), pods\[\d\] \(ns\/[a-e]\) and 1 more: / })),
    },
    {
      name: 'a pod refused for something else still takes the pod sharing its UID with it',
      pods: [named('a', { uid: 'u1' }, { priority: 'high' }), named('b', { uid: 'u1' }), named('good')],
      kept: ['good'],
      refused: [
        { pod: 'ns/a', reason: /^line 7: pods\[0\]\.spec\.priority: expected an integer, got "high"$/ },
        { pod: 'ns/b', reason: /^line 7: pods\[1\]\.metadata\.uid: the pod UID u1 is also listed for pods\[0\] \(ns\/a\)/ },
      ],
    },
    {
      name: 'a static pod UID that is another pod\'s UID: the mirror pod is refused, the pod whose UID it is kept',
      pods: [named('a', { uid: '0a1b2c3d-0000-4000-8000-00000000000a' }), named('m', { annotations: { 'kubernetes.io/config.mirror': '0a1b2c3d-0000-4000-8000-00000000000a' } })],
      kept: ['a'],
      refused: [{ pod: 'ns/m', reason: /^line 7: pods\[1\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: static pod UID 0a1b2c3d-0000-4000-8000-00000000000a is also the UID of pods\[0\] \(ns\/a\)$/ }],
    },
    {
      name: 'two mirror pods claiming one static pod UID: both refused',
      pods: [named('m1', { annotations: { 'kubernetes.io/config.mirror': HASH } }), named('good'), named('m2', { annotations: { 'kubernetes.io/config.mirror': HASH } })],
      kept: ['good'],
      refused: [
        { pod: 'ns/m1', reason: /pods\[0\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: static pod UID a{32} is also the static pod UID of pods\[2\] \(ns\/m2\)$/ },
        { pod: 'ns/m2', reason: /pods\[2\]\.metadata\.annotations\["kubernetes\.io\/config\.mirror"\]: static pod UID a{32} is also the static pod UID of pods\[0\] \(ns\/m1\)$/ },
      ],
    },
    {
      name: 'an invalid quantity in one container\'s requests (the engine would read it as zero)',
      pods: [named('good'), named('lots', {}, { containers: [{ name: 'a', resources: { requests: { memory: 'lots' } } }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/lots', reason: /^line 7: pods\[1\]\.spec\.containers\[0\]\.resources\.requests\.memory: invalid quantity "lots": quantities must match/ }],
    },
    {
      name: 'an invalid quantity in a limit',
      pods: [named('good'), named('gb', {}, { containers: [{ name: 'a', resources: { limits: { 'ephemeral-storage': '1Gb' } } }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/gb', reason: /pods\[1\]\.spec\.containers\[0\]\.resources\.limits\["ephemeral-storage"\]: invalid quantity "1Gb"/ }],
    },
    {
      name: 'an empty quantity in an init container',
      pods: [named('good'), named('init', {}, { initContainers: [{ name: 'i', resources: { requests: { memory: '' } } }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/init', reason: /pods\[1\]\.spec\.initContainers\[0\]\.resources\.requests\.memory: invalid quantity ""/ }],
    },
    {
      name: 'an invalid pod-level quantity',
      pods: [named('good'), named('level', {}, { resources: { requests: { memory: '1.2.3Gi' } } })],
      kept: ['good'],
      refused: [{ pod: 'ns/level', reason: /pods\[1\]\.spec\.resources\.requests\.memory: invalid quantity "1\.2\.3Gi"/ }],
    },
    {
      name: 'a quantity that is not a string or a number',
      pods: [named('good'), named('object', {}, { containers: [{ name: 'a', resources: { requests: { memory: {} } } }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/object', reason: /pods\[1\]\.spec\.containers\[0\]\.resources\.requests\.memory: expected a quantity string, got an object/ }],
    },
    {
      name: 'a non-integer priority',
      pods: [named('good'), named('half', {}, { priority: 1.5 })],
      kept: ['good'],
      refused: [{ pod: 'ns/half', reason: /^line 7: pods\[1\]\.spec\.priority: expected an integer, got 1\.5$/ }],
    },
    {
      name: 'a non-integer termination grace period',
      pods: [named('good'), named('grace', {}, { terminationGracePeriodSeconds: '30' })],
      kept: ['good'],
      refused: [{ pod: 'ns/grace', reason: /pods\[1\]\.spec\.terminationGracePeriodSeconds: expected an integer, got "30"/ }],
    },
    {
      name: 'a container without a name',
      pods: [named('good'), named('anonymous', {}, { containers: [{ resources: {} }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/anonymous', reason: /^line 7: pods\[1\]\.spec\.containers\[0\]\.name: is required$/ }],
    },
    {
      name: 'no containers at all',
      pods: [named('good'), { metadata: { name: 'empty', namespace: 'ns', uid: 'uid-empty' }, spec: {} }],
      kept: ['good'],
      refused: [{ pod: 'ns/empty', reason: /pods\[1\]\.spec\.containers: is required/ }],
    },
    {
      name: 'a non-string annotation',
      pods: [named('good'), named('annotated', { annotations: { 'example.com/replicas': 3 } })],
      kept: ['good'],
      refused: [{ pod: 'ns/annotated', reason: /^line 7: pods\[1\]\.metadata\.annotations\["example\.com\/replicas"\]: expected a string, got a number$/ }],
    },
    {
      name: 'a toleration that is not an object',
      pods: [named('good'), named('tolerant', {}, { tolerations: ['NoExecute'] })],
      kept: ['good'],
      refused: [{ pod: 'ns/tolerant', reason: /pods\[1\]\.spec\.tolerations\[0\]: expected an object, got a string/ }],
    },
    {
      name: 'a toleration whose key is not a string',
      pods: [named('good'), named('tolerant', {}, { tolerations: [{ key: 5, effect: 'NoExecute' }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/tolerant', reason: /pods\[1\]\.spec\.tolerations\[0\]\.key: expected a string, got a number/ }],
    },
    {
      name: 'tolerationSeconds not an integer',
      pods: [named('good'), named('tolerant', {}, { tolerations: [{ key: 'k', tolerationSeconds: '5' }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/tolerant', reason: /pods\[1\]\.spec\.tolerations\[0\]\.tolerationSeconds: expected an integer, got "5"/ }],
    },
    {
      name: 'owner references that are not a list (the storm guard counts evictions by owner)',
      pods: [named('good'), named('owned', { ownerReferences: 'ReplicaSet/web' })],
      kept: ['good'],
      refused: [{ pod: 'ns/owned', reason: /^line 7: pods\[1\]\.metadata\.ownerReferences: expected an array, got a string$/ }],
    },
    {
      name: 'an owner reference that is not an object',
      pods: [named('good'), named('owned', { ownerReferences: [null] })],
      kept: ['good'],
      refused: [{ pod: 'ns/owned', reason: /pods\[1\]\.metadata\.ownerReferences\[0\]: expected an object, got null/ }],
    },
    {
      name: 'an owner reference without a name',
      pods: [named('good'), named('owned', { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', uid: 'x', controller: true }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/owned', reason: /pods\[1\]\.metadata\.ownerReferences\[0\]\.name: is required/ }],
    },
    {
      name: 'an owner reference whose controller flag is not a boolean',
      pods: [named('good'), named('owned', { ownerReferences: [{ kind: 'ReplicaSet', name: 'web-5d4f', controller: 'yes' }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/owned', reason: /pods\[1\]\.metadata\.ownerReferences\[0\]\.controller: expected a boolean, got a string/ }],
    },
    {
      name: 'a volume without a name',
      pods: [named('good'), named('volumes', {}, { volumes: [{ emptyDir: {} }] })],
      kept: ['good'],
      refused: [{ pod: 'ns/volumes', reason: /pods\[1\]\.spec\.volumes\[0\]\.name: is required/ }],
    },
    {
      name: 'a pod without a UID',
      pods: [named('good'), { metadata: { name: 'nouid', namespace: 'ns' }, spec: { containers: [{ name: 'a' }] } }],
      kept: ['good'],
      refused: [{ pod: 'ns/nouid', reason: /^line 7: pods\[1\]\.metadata\.uid: is required$/ }],
    },
    {
      name: 'a pod without a name: named by its place in the list',
      pods: [named('good'), { metadata: { uid: 'u9' }, spec: { containers: [{ name: 'a' }] } }],
      kept: ['good'],
      refused: [{ pod: 'pods[1]', reason: /^line 7: pods\[1\]\.metadata\.name: is required$/ }],
    },
    {
      name: 'a namespace that is not a string',
      pods: [named('good'), named('ns', { namespace: 7 })],
      kept: ['good'],
      refused: [{ pod: 'default/ns', reason: /pods\[1\]\.metadata\.namespace: expected a string, got a number/ }],
    },
    {
      name: 'an entry that is not an object',
      pods: [named('good'), 'etcd'],
      kept: ['good'],
      refused: [{ pod: 'pods[1]', reason: /^line 7: pods\[1\]: expected an object, got a string$/ }],
    },
    {
      name: 'a status that is not an object',
      pods: [{ ...named('status'), status: 'Running' }, named('good')],
      kept: ['good'],
      refused: [{ pod: 'ns/status', reason: /pods\[0\]\.status: expected an object, got a string/ }],
    },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      const step = parseReplayLine(JSON.stringify({ time: T0, pods: tc.pods }), 7, null);
      expect(step.pods?.map((p) => p.metadata.name)).toEqual(tc.kept);
      expect(step.refusedPods).toEqual(tc.refused.map((r) => ({ pod: r.pod, reason: expect.stringMatching(r.reason) })));
    });
  }

  test('a step without refusals says so with an empty list; a step without pods has none', () => {
    expect(parseReplayLine(JSON.stringify({ time: T0, pods: [named('good')] }), 1, null).refusedPods).toEqual([]);
    expect(parseReplayLine(JSON.stringify({ time: T0 }), 1, null).refusedPods).toBeUndefined();
  });

  test('a UID that is not plain text is shown quoted and bounded', () => {
    const uid = `${'x'.repeat(100)}\n`;
    const step = parseReplayLine(JSON.stringify({ time: T0, pods: [named('a', { uid }), named('b', { uid })] }), 1, null);
    expect(step.refusedPods?.[0]?.reason).toBe(`line 1: pods[0].metadata.uid: the pod UID "${'x'.repeat(80)}..." is also listed for pods[1] (ns/b): the API server gives every pod its own`);
  });
});

describe('parseReplayLine accepts valid steps', () => {
  test('only time is required; absent keys stay undefined', () => {
    const step = parseReplayLine(`{"time": "${T0}"}`, 1, null);
    expect(step.timeMs).toBe(Date.parse(T0));
    expect(step.summary).toBeUndefined();
    expect(step.pods).toBeUndefined();
    expect(step.dedicatedImageFs).toBeUndefined();
  });
  test('equal times are allowed (time must not go backwards)', () => {
    expect(parseReplayLine(`{"time": "${T0}"}`, 2, Date.parse(T0)).timeMs).toBe(Date.parse(T0));
  });
  test('a time offset is honoured', () => {
    expect(parseReplayLine('{"time": "2026-11-01T14:00:00+02:00"}', 1, null).timeMs).toBe(Date.parse(T0));
  });
  test('unknown fields inside a summary and pods are accepted (real objects carry many)', () => {
    const step = parseReplayLine(JSON.stringify({ time: T0, summary: { node: { cpu: { usageNanoCores: 5 }, startTime: T0 } }, pods: [pod({ status: { phase: 'Running', hostIP: '10.0.0.1' } })] }), 1, null);
    expect(step.pods?.[0]?.metadata.uid).toBe('u1');
  });
  test('a pod without a namespace is in default', () => {
    const step = parseReplayLine(JSON.stringify({ time: T0, pods: [{ metadata: { name: 'p', uid: 'u' }, spec: { containers: [{ name: 'a' }] } }] }), 1, null);
    expect(step.pods?.[0]?.metadata.namespace).toBe('default');
  });
  test('numeric request quantities are read as quantity strings', () => {
    const step = parseReplayLine(JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a', resources: { requests: { memory: 1024 } } }] } })] }), 1, null);
    expect(step.pods?.[0]?.spec.containers[0]?.resources?.requests?.memory).toBe('1024');
  });
  test('formatRfc3339 drops zero milliseconds', () => {
    expect(formatRfc3339(Date.parse(T0))).toBe(T0);
    expect(formatRfc3339(Date.parse(T0) + 250)).toBe('2026-11-01T12:00:00.250Z');
  });
});
