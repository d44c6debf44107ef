// The stand-in must answer like the real API server on the endpoints the agent uses: these tests
// talk HTTP to it directly (no client library), checking status codes and body shapes.

import { parse } from 'yaml';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../../src/demo/api-stand-in.js';
import { FakeClock, flushMicrotasks } from '../../fakes/fake-clock.js';
import { NODE_NAME, node, pod } from './harness.js';

let standIn: ApiStandIn;
const AUTH = { Authorization: 'Bearer t' };

beforeEach(async () => {
  standIn = await startApiStandIn();
});
afterEach(async () => {
  await standIn.stop();
});

async function call(method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(`${standIn.url}${path}`, {
    method,
    headers: { ...AUTH, ...(body === undefined ? {} : { 'Content-Type': contentType }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

/** Opens a watch and collects its events until the server ends it (or `untilCount` arrive). */
async function watchEvents(path: string, untilCount = Infinity): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const controller = new AbortController();
  const response = await fetch(`${standIn.url}${path}`, { headers: AUTH, signal: controller.signal });
  const events: { type: string; object: Record<string, unknown> }[] = [];
  let buffered = '';
  const decoder = new TextDecoder();
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      buffered += decoder.decode(chunk);
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        events.push(JSON.parse(buffered.slice(0, newline)) as { type: string; object: Record<string, unknown> });
        buffered = buffered.slice(newline + 1);
      }
      if (events.length >= untilCount) {
        controller.abort();
        break;
      }
    }
  } catch (err) {
    if (!controller.signal.aborted) throw err;
  }
  return events;
}

function metaOf(obj: unknown): Record<string, unknown> {
  return (obj as { metadata: Record<string, unknown> }).metadata;
}

describe('authentication', () => {
  test('a request without a bearer token gets 401 with a Status body', async () => {
    const response = await fetch(`${standIn.url}/api/v1/pods`);
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401 });
  });
});

describe('lists and selectors', () => {
  beforeEach(() => {
    standIn.createPod(pod('a', { labels: { app: 'web' } }));
    standIn.createPod(pod('b', { node: 'node-b', labels: { app: 'web' } }));
    standIn.createPod(pod('c', { namespace: 'other' }));
  });

  const cases: { name: string; path: string; names: string[] }[] = [
    { name: 'all-namespaces', path: '/api/v1/pods', names: ['a', 'b', 'c'] },
    { name: 'node-field-selector', path: `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName=${NODE_NAME}`)}`, names: ['a', 'c'] },
    { name: 'negated-field-selector', path: `/api/v1/pods?fieldSelector=${encodeURIComponent(`spec.nodeName!=${NODE_NAME}`)}`, names: ['b'] },
    { name: 'name-field-selector', path: `/api/v1/pods?fieldSelector=${encodeURIComponent('metadata.name=b')}`, names: ['b'] },
    { name: 'namespace-path', path: '/api/v1/namespaces/other/pods', names: ['c'] },
    { name: 'label-selector', path: `/api/v1/pods?labelSelector=${encodeURIComponent('app=web')}`, names: ['a', 'b'] },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const { status, json } = await call('GET', tc.path);
      expect(status).toBe(200);
      expect(json.kind).toBe('PodList');
      expect(Number(metaOf(json).resourceVersion)).toBe(standIn.resourceVersion());
      const items = json.items as Record<string, unknown>[];
      expect(items.map((i) => metaOf(i).name).sort()).toEqual(tc.names);
      // The API server leaves kind and apiVersion out of list items.
      for (const item of items) expect(item.kind).toBeUndefined();
    });
  }

  test('an unsupported field selector is a 400 with the API server\'s wording', async () => {
    const { status, json } = await call('GET', `/api/v1/pods?fieldSelector=${encodeURIComponent('spec.priority=1')}`);
    expect(status).toBe(400);
    expect(json.message).toBe('field label not supported: spec.priority');
  });

  test('a missing object is a 404 NotFound Status naming it', async () => {
    const { status, json } = await call('GET', '/api/v1/namespaces/default/pods/missing');
    expect(status).toBe(404);
    expect(json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'pods "missing" not found', reason: 'NotFound', details: { name: 'missing', kind: 'pods' }, code: 404 });
  });

  test('an unknown path is 404 and a wrong method 405', async () => {
    expect((await call('GET', '/apis/apps/v1/deployments')).status).toBe(404);
    expect((await call('PUT', '/api/v1/nodes')).status).toBe(405);
  });
});

describe('pod creation', () => {
  const container = (resources: Record<string, Record<string, string>>) => ({ name: 'c', resources });
  const cases: { name: string; containers: object[]; qosClass: string }[] = [
    { name: 'no-resources-is-best-effort', containers: [{ name: 'c' }], qosClass: 'BestEffort' },
    { name: 'limits-only-is-guaranteed', containers: [container({ limits: { cpu: '1', memory: '1Gi' } })], qosClass: 'Guaranteed' },
    { name: 'equal-requests-in-other-units-is-guaranteed', containers: [container({ requests: { cpu: '1000m', memory: '1024Mi' }, limits: { cpu: '1', memory: '1Gi' } })], qosClass: 'Guaranteed' },
    { name: 'requests-below-limits-is-burstable', containers: [container({ requests: { memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } })], qosClass: 'Burstable' },
    { name: 'one-container-without-limits-is-burstable', containers: [container({ limits: { cpu: '1', memory: '1Gi' } }), container({ requests: { memory: '1Mi' } })], qosClass: 'Burstable' },
  ];
  for (const tc of cases) {
    test(`POST stamps the QoS class: ${tc.name}`, async () => {
      const { status, json } = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { nodeName: NODE_NAME, containers: tc.containers } });
      expect(status).toBe(201);
      expect(json.status).toEqual({ phase: 'Pending', qosClass: tc.qosClass });
      expect(metaOf(json).uid).toEqual(expect.any(String));
    });
  }

  test('a pod without containers is invalid, a duplicate name already exists', async () => {
    const invalidPod = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'p' }, spec: { containers: [] } });
    expect(invalidPod.status).toBe(422);
    expect(invalidPod.json.message).toBe('Pod "p" is invalid: spec.containers: Required value');
    standIn.createPod(pod('dup'));
    const duplicate = await call('POST', '/api/v1/namespaces/default/pods', { metadata: { name: 'dup' }, spec: { containers: [{ name: 'c' }] } });
    expect(duplicate.status).toBe(409);
    expect(duplicate.json.reason).toBe('AlreadyExists');
  });
});

describe('watches', () => {
  test('a watch from a resourceVersion replays later changes, filtered by the selector as they enter and leave it', async () => {
    const from = standIn.resourceVersion();
    standIn.createPod(pod('mine'));
    standIn.createPod(pod('theirs', { node: 'node-b' }));
    standIn.createPod(pod('unbound', { node: null }));
    standIn.updatePod('default', 'unbound', (p) => {
      p.spec.nodeName = NODE_NAME;
    });
    standIn.updatePod('default', 'mine', (p) => {
      p.metadata.labels = { changed: 'yes' };
    });
    standIn.deletePodNow('default', 'mine');
    const selector = encodeURIComponent(`spec.nodeName=${NODE_NAME}`);
    const events = await watchEvents(`/api/v1/pods?watch=true&resourceVersion=${from}&fieldSelector=${selector}`, 4);
    expect(events.map((e) => `${e.type} ${String(metaOf(e.object).name)}`)).toEqual(['ADDED mine', 'ADDED unbound', 'MODIFIED mine', 'DELETED mine']);
    expect(events[0]?.object.kind).toBe('Pod');
    const rvs = events.map((e) => Number(metaOf(e.object).resourceVersion));
    expect([...rvs].sort((x, y) => x - y)).toEqual(rvs);
  });

  test('a watch from a compacted resourceVersion gets one ERROR 410 Expired event, then the stream ends', async () => {
    const old = standIn.resourceVersion();
    standIn.createPod(pod('a'));
    standIn.expireWatches();
    const events = await watchEvents(`/api/v1/pods?watch=true&resourceVersion=${old}`);
    expect(events).toEqual([
      {
        type: 'ERROR',
        object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${old} (${standIn.resourceVersion()})`, reason: 'Expired', code: 410 },
      },
    ]);
  });

  test('a watch without a resourceVersion starts with the current objects as ADDED', async () => {
    standIn.setNode(node());
    const events = await watchEvents(`/api/v1/nodes?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${NODE_NAME}`)}`, 1);
    expect(events.map((e) => [e.type, metaOf(e.object).name])).toEqual([['ADDED', NODE_NAME]]);
  });

  test('timeoutSeconds ends the watch on the stand-in\'s clock; closeWatches ends it at once', async () => {
    const clock = new FakeClock(Date.now());
    const timed = await startApiStandIn({ clock });
    try {
      const response = await fetch(`${timed.url}/api/v1/pods?watch=true&timeoutSeconds=60`, { headers: AUTH });
      const ended = response.text();
      await flushMicrotasks();
      expect(timed.openWatches()).toBe(1);
      clock.step(60_000);
      await expect(ended).resolves.toBe('');
      expect(timed.openWatches()).toBe(0);
      const second = await fetch(`${timed.url}/api/v1/pods?watch=true`, { headers: AUTH });
      const secondEnded = second.text();
      await flushMicrotasks();
      expect(timed.openWatches()).toBe(1);
      timed.closeWatches();
      await expect(secondEnded).resolves.toBe('');
      expect(timed.openWatches()).toBe(0);
    } finally {
      await timed.stop();
    }
  });

  test('a bookmark carries the current resourceVersion to watches that allow them', async () => {
    const collected = watchEvents('/api/v1/pods?watch=true&resourceVersion=' + String(standIn.resourceVersion()) + '&allowWatchBookmarks=true', 1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    standIn.setNode(node());
    standIn.sendBookmarks();
    const [bookmark] = await collected;
    expect(bookmark?.type).toBe('BOOKMARK');
    expect(Number(metaOf(bookmark?.object).resourceVersion)).toBe(standIn.resourceVersion());
  });
});

describe('patches', () => {
  beforeEach(() => {
    standIn.setNode(node());
  });

  test('a strategic merge patch on status merges conditions by type and keeps the others', async () => {
    const patch = { status: { conditions: [{ type: 'example.io/Pressure', status: 'True', reason: 'R', message: 'm' }] } };
    const { status, json } = await call('PATCH', `/api/v1/nodes/${NODE_NAME}/status`, patch, 'application/strategic-merge-patch+json');
    expect(status).toBe(200);
    const types = ((json.status as { conditions: { type: string; status: string }[] }).conditions).map((c) => `${c.type}=${c.status}`);
    expect(types).toEqual(['MemoryPressure=False', 'Ready=True', 'example.io/Pressure=True']);
    const again = await call('PATCH', `/api/v1/nodes/${NODE_NAME}/status`, { status: { conditions: [{ type: 'example.io/Pressure', status: 'False' }] } }, 'application/strategic-merge-patch+json');
    expect(((again.json.status as { conditions: { type: string; status: string; reason?: string }[] }).conditions)[2]).toEqual({ type: 'example.io/Pressure', status: 'False', reason: 'R', message: 'm' });
  });

  test('a merge patch replaces a list whole, and null removes a field', async () => {
    await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, { spec: { taints: [{ key: 'a', effect: 'NoSchedule' }, { key: 'b', effect: 'NoSchedule' }] } }, 'application/merge-patch+json');
    const { json } = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, { spec: { taints: [{ key: 'b', effect: 'NoSchedule' }] } }, 'application/merge-patch+json');
    expect((json.spec as { taints: unknown[] }).taints).toEqual([{ key: 'b', effect: 'NoSchedule' }]);
    const cleared = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, { spec: { taints: null } }, 'application/merge-patch+json');
    expect((cleared.json.spec as { taints?: unknown }).taints).toBeUndefined();
  });

  test('a JSON patch applies in order and a failed test operation is a 422', async () => {
    const uid = metaOf(standIn.node(NODE_NAME)).uid as string;
    const ok = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, [{ op: 'test', path: '/metadata/uid', value: uid }, { op: 'add', path: '/metadata/labels/x', value: 'y' }], 'application/json-patch+json');
    expect(ok.status).toBe(200);
    expect((metaOf(ok.json).labels as Record<string, string>).x).toBe('y');
    const refused = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, [{ op: 'test', path: '/metadata/uid', value: 'other' }], 'application/json-patch+json');
    expect(refused.status).toBe(422);
  });

  const conflicts: { name: string; patch: Record<string, unknown>; message: RegExp }[] = [
    { name: 'uid-in-the-patch-must-match', patch: { metadata: { uid: 'someone-else' }, status: {} }, message: /^Operation cannot be fulfilled on nodes "node-a": StorageError: invalid object, Code: 4, Key: \/registry\/minions\/node-a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: someone-else, UID in object meta: / },
    { name: 'resource-version-in-the-patch-must-match', patch: { metadata: { resourceVersion: '1' }, spec: { unschedulable: true } }, message: /the object has been modified; please apply your changes to the latest version and try again$/ },
  ];
  for (const tc of conflicts) {
    test(`409 Conflict: ${tc.name}`, async () => {
      const before = standIn.node(NODE_NAME);
      const { status, json } = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, tc.patch, 'application/merge-patch+json');
      expect(status).toBe(409);
      expect(json.reason).toBe('Conflict');
      expect(String(json.message)).toMatch(tc.message);
      expect(standIn.node(NODE_NAME)).toEqual(before);
    });
  }

  test('the status subresource ignores spec, the main resource ignores status, and a no-op keeps the resourceVersion', async () => {
    const rv = metaOf(standIn.node(NODE_NAME)).resourceVersion;
    const viaStatus = await call('PATCH', `/api/v1/nodes/${NODE_NAME}/status`, { spec: { unschedulable: true } }, 'application/merge-patch+json');
    expect((viaStatus.json.spec as { unschedulable?: boolean }).unschedulable).toBeUndefined();
    expect(metaOf(viaStatus.json).resourceVersion).toBe(rv);
    const viaMain = await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, { status: { conditions: [] } }, 'application/merge-patch+json');
    expect((viaMain.json.status as { conditions: unknown[] }).conditions).toHaveLength(2);
  });

  test('an unsupported patch type is a 415', async () => {
    expect((await call('PATCH', `/api/v1/nodes/${NODE_NAME}`, {}, 'application/json')).status).toBe(415);
  });
});

describe('pod deletion', () => {
  test('a graceful DELETE sets deletionTimestamp and the pod stays until the kubelet finishes it', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const local = await startApiStandIn({ clock });
    try {
      local.createPod(pod('a'));
      const response = await fetch(`${local.url}/api/v1/namespaces/default/pods/a`, { method: 'DELETE', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ gracePeriodSeconds: 20 }) });
      expect(response.status).toBe(200);
      expect(metaOf(local.pod('default', 'a'))).toMatchObject({ deletionTimestamp: '2026-01-01T00:00:20Z', deletionGracePeriodSeconds: 20 });
      expect(local.deletePodNow('default', 'a')).toBe(true);
      expect(local.pod('default', 'a')).toBeNull();
    } finally {
      await local.stop();
    }
  });

  test('grace 0, or an unscheduled pod, is removed at once', async () => {
    standIn.createPod(pod('now'));
    standIn.createPod(pod('unbound', { node: null }));
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/now', { gracePeriodSeconds: 0 })).status).toBe(200);
    expect((await call('DELETE', '/api/v1/namespaces/default/pods/unbound')).status).toBe(200);
    expect(standIn.pods()).toEqual([]);
  });

  test('a UID precondition that fails is a 409 and the pod stays', async () => {
    standIn.createPod(pod('a'));
    const uid = metaOf(standIn.pod('default', 'a')).uid as string;
    const { status, json } = await call('DELETE', '/api/v1/namespaces/default/pods/a', { preconditions: { uid: 'old-uid' } });
    expect(status).toBe(409);
    expect(json.message).toBe(`Operation cannot be fulfilled on pods "a": StorageError: invalid object, Code: 4, Key: /registry/pods/default/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: old-uid, UID in object meta: ${uid}`);
    expect(standIn.pod('default', 'a')).not.toBeNull();
  });
});

describe('the Eviction subresource', () => {
  const eviction = (name: string, deleteOptions: Record<string, unknown> = {}) => ({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: 'default' }, deleteOptions });

  test('accepted: 201 Success, the pod is marked DisruptionTarget and terminating', async () => {
    standIn.createPod(pod('a'));
    const { status, json } = await call('POST', '/api/v1/namespaces/default/pods/a/eviction', eviction('a', { gracePeriodSeconds: 5 }));
    expect(status).toBe(201);
    expect(json).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 201 });
    const after = standIn.pod('default', 'a');
    expect(after?.metadata.deletionTimestamp).toBeDefined();
    expect(after?.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({ status: 'True', reason: 'EvictionByEvictionAPI' });
  });

  test('a budget with no disruption left answers 429 with the real Status body', async () => {
    for (const name of ['w1', 'w2']) standIn.createPod(pod(name, { labels: { app: 'web' } }));
    standIn.addPdb({ metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 2 } });
    const { status, json } = await call('POST', '/api/v1/namespaces/default/pods/w1/eviction', eviction('w1'));
    expect(status).toBe(429);
    expect(json).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      reason: 'TooManyRequests',
      details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget web needs 2 healthy pods and has 2 currently' }] },
      code: 429,
    });
    expect(standIn.pod('default', 'w1')?.metadata.deletionTimestamp).toBeUndefined();
  });

  const budgets: { name: string; spec: { minAvailable?: number | string; maxUnavailable?: number | string }; pods: number; unready?: boolean; allowed: number }[] = [
    { name: 'max-unavailable-1-allows-one', spec: { maxUnavailable: 1 }, pods: 3, allowed: 1 },
    { name: 'min-available-1-of-3-allows-two', spec: { minAvailable: 1 }, pods: 3, allowed: 2 },
    { name: 'min-available-50-percent-rounds-up', spec: { minAvailable: '50%' }, pods: 3, allowed: 1 },
    { name: 'max-unavailable-0-allows-none', spec: { maxUnavailable: 0 }, pods: 2, allowed: 0 },
  ];
  for (const tc of budgets) {
    test(`budget ${tc.name}`, async () => {
      const names = Array.from({ length: tc.pods }, (_, i) => `p${i}`);
      for (const name of names) standIn.createPod(pod(name, { labels: { app: 'db' } }));
      standIn.addPdb({ metadata: { name: 'db' }, spec: { selector: { matchLabels: { app: 'db' } }, ...tc.spec } });
      const statuses: number[] = [];
      for (const name of names) statuses.push((await call('POST', `/api/v1/namespaces/default/pods/${name}/eviction`, eviction(name, { gracePeriodSeconds: 30 }))).status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(tc.allowed);
      expect(statuses.filter((s) => s === 429)).toHaveLength(tc.pods - tc.allowed);
    });
  }

  test('an unready pod may go when the budget is met without it', async () => {
    standIn.createPod(pod('ready-1', { labels: { app: 'q' } }));
    standIn.createPod(pod('ready-2', { labels: { app: 'q' } }));
    standIn.createPod(pod('unready', { labels: { app: 'q' }, ready: false }));
    standIn.addPdb({ metadata: { name: 'q' }, spec: { selector: { matchLabels: { app: 'q' } }, minAvailable: 2 } });
    expect((await call('POST', '/api/v1/namespaces/default/pods/ready-1/eviction', eviction('ready-1'))).status).toBe(429);
    expect((await call('POST', '/api/v1/namespaces/default/pods/unready/eviction', eviction('unready'))).status).toBe(201);
  });

  test('two budgets over one pod is the API server\'s 500', async () => {
    standIn.createPod(pod('a', { labels: { app: 'x' } }));
    standIn.addPdb({ metadata: { name: 'one' }, spec: { selector: { matchLabels: { app: 'x' } }, maxUnavailable: 1 } });
    standIn.addPdb({ metadata: { name: 'two' }, spec: { selector: { matchLabels: { app: 'x' } }, maxUnavailable: 1 } });
    const { status, json } = await call('POST', '/api/v1/namespaces/default/pods/a/eviction', eviction('a'));
    expect(status).toBe(500);
    expect(json.message).toBe('This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.');
  });

  test('404 for a missing pod, 409 for a UID precondition, 400 for a mismatched name', async () => {
    standIn.createPod(pod('a'));
    expect((await call('POST', '/api/v1/namespaces/default/pods/missing/eviction', eviction('missing'))).status).toBe(404);
    expect((await call('POST', '/api/v1/namespaces/default/pods/a/eviction', eviction('a', { preconditions: { uid: 'old' } }))).status).toBe(409);
    expect((await call('POST', '/api/v1/namespaces/default/pods/a/eviction', eviction('b'))).status).toBe(400);
    expect(standIn.pod('default', 'a')?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe('core/v1 Events and their validation', () => {
  const event = (namespace: string, involvedObject: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    metadata: { name: `x.${Math.random().toString(16).slice(2)}`, namespace },
    involvedObject,
    reason: 'Evicted',
    message: 'The node was low on resource: memory. ',
    type: 'Warning',
    ...extra,
  });

  const cases: { name: string; namespace: string; body: Record<string, unknown>; status: number; message?: string }[] = [
    { name: 'pod-event-in-its-namespace', namespace: 'default', body: event('default', { kind: 'Pod', name: 'a', namespace: 'default' }), status: 201 },
    { name: 'node-event-in-default', namespace: 'default', body: event('default', { kind: 'Node', name: NODE_NAME }), status: 201 },
    { name: 'node-event-elsewhere-is-invalid', namespace: 'kube-system', body: event('kube-system', { kind: 'Node', name: NODE_NAME }), status: 422, message: 'involvedObject.namespace: Invalid value: "": does not match event.namespace' },
    { name: 'pod-event-in-another-namespace-is-invalid', namespace: 'default', body: event('default', { kind: 'Pod', name: 'a', namespace: 'other' }), status: 422, message: 'involvedObject.namespace: Invalid value: "other": does not match event.namespace' },
    { name: 'missing-reason-is-invalid', namespace: 'default', body: event('default', { kind: 'Pod', name: 'a', namespace: 'default' }, { reason: '' }), status: 422, message: 'reason: Required value' },
    { name: 'unknown-type-is-invalid', namespace: 'default', body: event('default', { kind: 'Pod', name: 'a', namespace: 'default' }, { type: 'Error' }), status: 422, message: 'type: Unsupported value: "Error": supported values: "Normal", "Warning"' },
    { name: 'missing-involved-object-is-invalid', namespace: 'default', body: event('default', {}), status: 422, message: 'involvedObject.kind: Required value' },
    { name: 'body-namespace-must-match-the-url', namespace: 'other', body: event('default', { kind: 'Pod', name: 'a', namespace: 'default' }), status: 400 },
  ];
  for (const tc of cases) {
    test(tc.name, async () => {
      const { status, json } = await call('POST', `/api/v1/namespaces/${tc.namespace}/events`, tc.body);
      expect(status).toBe(tc.status);
      if (tc.message !== undefined) expect(String(json.message)).toContain(tc.message);
      expect(standIn.events()).toHaveLength(tc.status === 201 ? 1 : 0);
    });
  }
});

describe('faults, and the server going away', () => {
  test('a fault answers its status for `count` matching requests, then the normal answer returns', async () => {
    standIn.setNode(node());
    standIn.injectFault({ method: 'GET', pathPattern: /^\/api\/v1\/nodes\//, status: 503, count: 2 });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('GET', `/api/v1/nodes/${NODE_NAME}`)).status);
    expect(statuses).toEqual([503, 503, 200]);
    expect(standIn.requests().map((r) => r.status)).toEqual([503, 503, 200]);
  });

  test('a delayed request the client gives up on is never answered, and leaves nothing running', async () => {
    standIn.injectFault({ pathPattern: '/api/v1/nodes', delayMs: 60_000 });
    await expect(fetch(`${standIn.url}/api/v1/nodes`, { headers: AUTH, signal: AbortSignal.timeout(100) })).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(standIn.requests()[0]?.status).toBe(0);
  });

  test('stop refuses connections; restart serves the same objects on the same port', async () => {
    standIn.createPod(pod('a'));
    const url = standIn.url;
    await standIn.stop();
    await expect(fetch(`${url}/api/v1/pods`, { headers: AUTH })).rejects.toThrow();
    await standIn.restart();
    expect(standIn.url).toBe(url);
    const { json } = await call('GET', '/api/v1/pods');
    expect((json.items as unknown[]).length).toBe(1);
  });

  test('kubeconfigFor points at the stand-in with token auth', () => {
    const config = parse(kubeconfigFor(standIn)) as { clusters: { cluster: Record<string, unknown> }[]; users: { user: { token: string } }[]; 'current-context': string };
    expect(config.clusters[0]?.cluster).toEqual({ server: standIn.url, 'insecure-skip-tls-verify': true });
    expect(config.users[0]?.user.token).toBe('stand-in-token');
    expect(config['current-context']).toBe('stand-in');
  });
});
