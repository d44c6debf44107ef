import { formatRfc3339, parseReplayLine } from '../../../src/replay/input.js';
import { ReplayInputError } from '../../../src/errors.js';

const T0 = '2026-11-01T12:00:00Z';
const pod = (extra: Record<string, unknown> = {}) => ({ metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: { containers: [{ name: 'app' }] }, ...extra });

describe('parseReplayLine rejects bad input, naming the line and the field', () => {
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
    { name: 'pod-without-uid', text: JSON.stringify({ time: T0, pods: [pod({ metadata: { name: 'p' } })] }), field: 'pods[0].metadata.uid', message: /is required/ },
    { name: 'pod-without-containers', text: JSON.stringify({ time: T0, pods: [pod({ spec: {} })] }), field: 'pods[0].spec.containers', message: /is required/ },
    { name: 'pod-priority-not-integer', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a' }], priority: 'high' } })] }), field: 'pods[0].spec.priority', message: /integer/ },
    { name: 'pod-request-not-quantity', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a', resources: { requests: { memory: {} } } }] } })] }), field: 'pods[0].spec.containers[0].resources.requests.memory', message: /quantity string/ },
    // Unparsed, the engine read these as zero: a pod with "lots" of memory requested ranked as requesting none.
    { name: 'pod-request-invalid-quantity', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a', resources: { requests: { memory: 'lots' } } }] } })] }), field: 'pods[0].spec.containers[0].resources.requests.memory', message: /^line 7: pods\[0\]\.spec\.containers\[0\]\.resources\.requests\.memory: invalid quantity "lots": quantities must match/ },
    { name: 'pod-limit-invalid-quantity', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a', resources: { limits: { 'ephemeral-storage': '1Gb' } } }] } })] }), field: 'pods[0].spec.containers[0].resources.limits["ephemeral-storage"]', message: /invalid quantity "1Gb"/ },
    { name: 'init-container-request-invalid-quantity', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a' }], initContainers: [{ name: 'i', resources: { requests: { memory: '' } } }] } })] }), field: 'pods[0].spec.initContainers[0].resources.requests.memory', message: /invalid quantity ""/ },
    { name: 'pod-level-request-invalid-quantity', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a' }], resources: { requests: { memory: '1.2.3Gi' } } } })] }), field: 'pods[0].spec.resources.requests.memory', message: /invalid quantity "1.2.3Gi"/ },
    { name: 'duplicate-pod-uid', text: JSON.stringify({ time: T0, pods: [pod(), pod()] }), field: 'pods[1].metadata.uid', message: /duplicate pod UID u1/ },
    {
      name: 'mirror-annotation-not-a-static-pod-uid',
      text: JSON.stringify({ time: T0, pods: [pod({ metadata: { name: 'p', uid: 'u1', annotations: { 'kubernetes.io/config.mirror': 'f00d' } } })] }),
      field: 'pods[0].metadata.annotations["kubernetes.io/config.mirror"]',
      message: /"f00d" is not a static pod UID/,
    },
    {
      name: 'mirror-annotation-differs-from-config-hash',
      text: JSON.stringify({ time: T0, pods: [pod({ metadata: { name: 'p', uid: 'u1', annotations: { 'kubernetes.io/config.mirror': 'a'.repeat(32), 'kubernetes.io/config.hash': 'b'.repeat(32) } } })] }),
      field: 'pods[0].metadata.annotations["kubernetes.io/config.mirror"]',
      message: /differs from its kubernetes.io\/config.hash/,
    },
    {
      name: 'static-pod-uid-is-another-pods-uid',
      text: JSON.stringify({
        time: T0,
        pods: [pod({ metadata: { name: 'a', uid: '0a1b2c3d-0000-4000-8000-00000000000a' } }), pod({ metadata: { name: 'm', uid: 'u2', annotations: { 'kubernetes.io/config.mirror': '0a1b2c3d-0000-4000-8000-00000000000a' } } })],
      }),
      field: 'pods[1].metadata.annotations["kubernetes.io/config.mirror"]',
      message: /static pod UID 0a1b2c3d-0000-4000-8000-00000000000a is also the UID of pods\[0\]/,
    },
    { name: 'dedicated-imagefs-not-boolean', text: `{"time": "${T0}", "dedicatedImageFs": "yes"}`, field: 'dedicatedImageFs', message: /boolean/ },
    { name: 'taint-without-effect', text: JSON.stringify({ time: T0, node: { metadata: { name: 'n' }, spec: { taints: [{ key: 'k' }] } } }), field: 'node.spec.taints[0].effect', message: /is required/ },
    { name: 'toleration-seconds-not-integer', text: JSON.stringify({ time: T0, pods: [pod({ spec: { containers: [{ name: 'a' }], tolerations: [{ key: 'k', tolerationSeconds: '5' }] } })] }), field: 'pods[0].spec.tolerations[0].tolerationSeconds', message: /integer/ },
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
