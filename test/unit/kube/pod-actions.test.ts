// PodActions over the stand-in: what each call sends, and how every answer maps to an outcome.

import type { Pod } from '../../../src/api/pod.js';
import type { PodActions } from '../../../src/daemon/ports.js';
import { KubeApiError } from '../../../src/errors.js';
import { node, NODE_NAME, pod, startHarness, type Harness } from './harness.js';

const PDB_MESSAGE = "Cannot evict pod as it would violate the pod's disruption budget.";

let h: Harness;
let actions: PodActions;

beforeEach(async () => {
  h = await startHarness();
  h.standIn.setNode(node());
  actions = h.client.podActions();
});
afterEach(async () => {
  await h.close();
});

function requestsTo(suffix: string): { method: string; status: number; body?: unknown; contentType: string; query: string }[] {
  return h.standIn.requests().filter((r) => r.path.endsWith(suffix));
}

describe('evictPod', () => {
  test('accepted: a policy/v1 Eviction with the grace period and a UID precondition', async () => {
    const created = h.standIn.createPod(pod('a', { grace: 30 }));
    await expect(actions.evictPod(created, 1)).resolves.toEqual({ result: 'accepted' });
    const [request] = requestsTo('/pods/a/eviction');
    expect(request?.method).toBe('POST');
    expect(request?.body).toEqual({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'a', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 1, preconditions: { uid: created.metadata.uid } } });
    expect(h.standIn.pod('default', 'a')?.metadata).toMatchObject({ deletionGracePeriodSeconds: 1 });
  });

  test('without a grace period the pod\'s own applies', async () => {
    const created = h.standIn.createPod(pod('a', { grace: 45 }));
    await expect(actions.evictPod(created, null)).resolves.toEqual({ result: 'accepted' });
    expect((requestsTo('/pods/a/eviction')[0]?.body as { deleteOptions: Record<string, unknown> }).deleteOptions).toEqual({ preconditions: { uid: created.metadata.uid } });
    expect(h.standIn.pod('default', 'a')?.metadata).toMatchObject({ deletionGracePeriodSeconds: 45 });
  });

  test('a PodDisruptionBudget refusal is blocked, with the API server\'s message and the budget\'s detail', async () => {
    const web = [h.standIn.createPod(pod('web-0', { labels: { app: 'web' } })), h.standIn.createPod(pod('web-1', { labels: { app: 'web' } }))];
    h.standIn.addPdb({ metadata: { name: 'web' }, spec: { selector: { matchLabels: { app: 'web' } }, minAvailable: 2 } });
    const outcome = await actions.evictPod(web[0] as Pod, 1);
    expect(outcome).toEqual({ result: 'blocked', message: `${PDB_MESSAGE} The disruption budget web needs 2 healthy pods and has 2 currently` });
    expect(h.standIn.pod('default', 'web-0')?.metadata.deletionTimestamp).toBeUndefined();
  });

  test('a budget with room lets one pod go and blocks the next', async () => {
    const db = [0, 1, 2].map((i) => h.standIn.createPod(pod(`db-${i}`, { labels: { app: 'db' } })));
    h.standIn.addPdb({ metadata: { name: 'db' }, spec: { selector: { matchLabels: { app: 'db' } }, maxUnavailable: 1 } });
    const outcomes = [];
    for (const p of db) outcomes.push((await actions.evictPod(p, 1)).result);
    expect(outcomes).toEqual(['accepted', 'blocked', 'blocked']);
  });

  test('a pod that no longer exists is gone', async () => {
    const created = h.standIn.createPod(pod('a'));
    h.standIn.deletePodNow('default', 'a');
    await expect(actions.evictPod(created, 1)).resolves.toEqual({ result: 'gone', message: 'pods "a" not found' });
  });

  test('a pod replaced under the same name is gone, and the new one is left alone', async () => {
    const old = h.standIn.createPod(pod('web-0'));
    h.standIn.deletePodNow('default', 'web-0');
    const replacement = h.standIn.createPod(pod('web-0'));
    const outcome = await actions.evictPod(old, 1);
    expect(outcome.result).toBe('gone');
    expect(outcome.result === 'gone' ? outcome.message : '').toContain(`UID in precondition: ${old.metadata.uid ?? ''}`);
    expect(h.standIn.pod('default', 'web-0')?.metadata).toMatchObject({ uid: replacement.metadata.uid });
    expect(h.standIn.pod('default', 'web-0')?.metadata.deletionTimestamp).toBeUndefined();
  });

  const failures: { name: string; status: number; outcome: object }[] = [
    { name: 'load-shedding-429-is-a-failure-not-a-refusal', status: 429, outcome: { result: 'failed', status: 429, message: 'Too many requests, please try again later.' } },
    { name: 'internal-error-500', status: 500, outcome: { result: 'failed', status: 500, message: 'Internal error occurred: injected fault' } },
    { name: 'unavailable-503', status: 503, outcome: { result: 'failed', status: 503, message: 'The server is currently unable to handle the request' } },
  ];
  for (const tc of failures) {
    test(tc.name, async () => {
      const created = h.standIn.createPod(pod('a'));
      h.standIn.injectFault({ pathPattern: '/eviction', status: tc.status });
      await expect(actions.evictPod(created, 1)).resolves.toEqual(tc.outcome);
    });
  }

  test('an API server that is down is a failure with status 0', async () => {
    const created = h.standIn.createPod(pod('a'));
    await h.standIn.stop();
    const outcome = await actions.evictPod(created, 1);
    expect(outcome).toMatchObject({ result: 'failed', status: 0 });
  });
});

describe('deletePod', () => {
  test('a grace period and a UID precondition', async () => {
    const created = h.standIn.createPod(pod('a'));
    await expect(actions.deletePod(created, { gracePeriodSeconds: 10 })).resolves.toEqual({ result: 'accepted' });
    const [request] = requestsTo('/pods/a');
    expect(request?.method).toBe('DELETE');
    expect(new URLSearchParams(request?.query).get('gracePeriodSeconds')).toBe('10');
    expect(request?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 10, preconditions: { uid: created.metadata.uid } });
    expect(h.standIn.pod('default', 'a')?.metadata).toMatchObject({ deletionGracePeriodSeconds: 10 });
  });

  test('grace 0 removes the pod at once', async () => {
    const created = h.standIn.createPod(pod('a'));
    await expect(actions.deletePod(created, { gracePeriodSeconds: 0 })).resolves.toEqual({ result: 'accepted' });
    expect(h.standIn.pod('default', 'a')).toBeNull();
  });

  test('a pod without a UID is not deleted: nothing could make the request conditional', async () => {
    h.standIn.createPod(pod('a'));
    const { uid: _uid, ...metadata } = (h.standIn.pod('default', 'a') as Pod).metadata;
    await expect(actions.deletePod({ ...(h.standIn.pod('default', 'a') as Pod), metadata }, { gracePeriodSeconds: null })).resolves.toEqual({ result: 'gone', message: 'the pod has no UID to make its deletion conditional on' });
    expect(requestsTo('/pods/a')).toEqual([]);
    expect(h.standIn.pod('default', 'a')?.metadata.deletionTimestamp).toBeUndefined();
  });

  test('the UID precondition: a replacement under the same name is gone and stays', async () => {
    const old = h.standIn.createPod(pod('a'));
    h.standIn.deletePodNow('default', 'a');
    h.standIn.createPod(pod('a'));
    const outcome = await actions.deletePod(old, { gracePeriodSeconds: null });
    expect(outcome.result).toBe('gone');
    expect(h.standIn.pod('default', 'a')?.metadata.deletionTimestamp).toBeUndefined();
  });

  test('404 is gone; a DELETE never reads as blocked', async () => {
    const created = h.standIn.createPod(pod('a'));
    h.standIn.deletePodNow('default', 'a');
    await expect(actions.deletePod(created, { gracePeriodSeconds: 1 })).resolves.toEqual({ result: 'gone', message: 'pods "a" not found' });
    h.standIn.createPod(pod('b'));
    h.standIn.injectFault({ method: 'DELETE', status: 429 });
    const b = h.standIn.pod('default', 'b') as Pod;
    await expect(actions.deletePod(b, { gracePeriodSeconds: 1 })).resolves.toMatchObject({ result: 'failed', status: 429 });
  });
});

describe('addDisruptionTarget', () => {
  const condition = { reason: 'TerminationByKubelet', message: 'The node was low on resource: memory. ' };

  test('adds DisruptionTarget=True through the status subresource, UID-guarded, keeping the other conditions', async () => {
    const created = h.standIn.createPod(pod('a'));
    await expect(actions.addDisruptionTarget(created, condition)).resolves.toEqual({ result: 'accepted' });
    const [request] = requestsTo('/pods/a/status');
    expect(request?.method).toBe('PATCH');
    expect(request?.contentType).toBe('application/strategic-merge-patch+json');
    expect((request?.body as { metadata: unknown }).metadata).toEqual({ uid: created.metadata.uid });
    const conditions = h.standIn.pod('default', 'a')?.status?.conditions ?? [];
    expect(conditions.map((c) => c.type)).toEqual(['Ready', 'DisruptionTarget']);
    expect(conditions[1]).toMatchObject({ type: 'DisruptionTarget', status: 'True', ...condition, observedGeneration: 1 });
    expect(conditions[1]?.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('a pod that already carries the same condition needs no request', async () => {
    h.standIn.createPod(pod('a'));
    await actions.addDisruptionTarget(h.standIn.pod('default', 'a') as Pod, condition);
    const marked = h.standIn.pod('default', 'a') as Pod;
    h.standIn.clearRequests();
    await expect(actions.addDisruptionTarget(marked, condition)).resolves.toEqual({ result: 'accepted' });
    expect(h.standIn.requests()).toEqual([]);
  });

  test('an updated message keeps the transition time of a condition that was already True', async () => {
    h.standIn.createPod(pod('a'));
    h.standIn.updatePod('default', 'a', (p) => {
      p.status?.conditions?.push({ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'old', lastTransitionTime: '2020-01-01T00:00:00Z' });
    });
    await actions.addDisruptionTarget(h.standIn.pod('default', 'a') as Pod, condition);
    expect(h.standIn.pod('default', 'a')?.status?.conditions?.find((c) => c.type === 'DisruptionTarget')).toMatchObject({ ...condition, lastTransitionTime: '2020-01-01T00:00:00Z' });
  });

  test('a replaced pod is gone (409) and a missing one is gone (404)', async () => {
    const old = h.standIn.createPod(pod('a'));
    h.standIn.deletePodNow('default', 'a');
    h.standIn.createPod(pod('a'));
    await expect(actions.addDisruptionTarget(old, condition)).resolves.toMatchObject({ result: 'gone' });
    expect(h.standIn.pod('default', 'a')?.status?.conditions?.some((c) => c.type === 'DisruptionTarget')).toBe(false);
    h.standIn.deletePodNow('default', 'a');
    await expect(actions.addDisruptionTarget(old, condition)).resolves.toEqual({ result: 'gone', message: 'pods "a" not found' });
  });
});

describe('getPod', () => {
  test('reads the API server, not a cache, in the API\'s JSON form', async () => {
    h.standIn.createPod(pod('a'));
    const read = await actions.getPod('default', 'a');
    expect(read?.metadata.name).toBe('a');
    expect(read?.spec.nodeName).toBe(NODE_NAME);
    expect(typeof read?.metadata.creationTimestamp).toBe('string');
    expect(requestsTo('/pods/a')[0]?.method).toBe('GET');
  });

  test('null when the pod does not exist', async () => {
    await expect(actions.getPod('default', 'missing')).resolves.toBeNull();
  });

  test('any other failure rejects with a KubeApiError carrying the status, never a false "not found"', async () => {
    h.standIn.injectFault({ method: 'GET', pathPattern: '/pods/a', status: 500 });
    const failure = actions.getPod('default', 'a');
    await expect(failure).rejects.toBeInstanceOf(KubeApiError);
    await expect(failure).rejects.toMatchObject({ status: 500, code: 'EVA_ERR_KUBE_API' });
  });
});

describe('every call is bounded when the API server hangs', () => {
  let slow: Harness;
  beforeEach(async () => {
    slow = await startHarness({ requestTimeoutMs: 200 });
    slow.standIn.setNode(node());
    slow.standIn.createPod(pod('a'));
    slow.standIn.injectFault({ delayMs: 30_000, count: 100 });
  });
  afterEach(async () => {
    await slow.close();
  });

  const calls: { name: string; run: (s: Harness, p: Pod) => Promise<unknown>; expected: (result: unknown) => void }[] = [
    { name: 'evictPod', run: (s, p) => s.client.podActions().evictPod(p, 1), expected: (r) => expect(r).toMatchObject({ result: 'failed', status: 0 }) },
    { name: 'deletePod', run: (s, p) => s.client.podActions().deletePod(p, { gracePeriodSeconds: 1 }), expected: (r) => expect(r).toMatchObject({ result: 'failed', status: 0 }) },
    { name: 'addDisruptionTarget', run: (s, p) => s.client.podActions().addDisruptionTarget(p, { reason: 'R', message: 'm' }), expected: (r) => expect(r).toMatchObject({ result: 'failed', status: 0 }) },
    { name: 'getPod', run: (s) => s.client.podActions().getPod('default', 'a').catch((err: unknown) => err), expected: (r) => expect(r).toMatchObject({ status: 0 }) },
    // The first try is bounded like every call; an unanswered Event then waits for its retry 10 s
    // later (client-go's recorder), which closing the recorder, as the agent does on stop, ends.
    {
      name: 'podEvent',
      run: (s, p) => {
        const recorder = s.client.eventRecorder('test');
        const written = recorder.podEvent(p, { type: 'Warning', reason: 'Evicted', message: 'm' });
        setTimeout(() => recorder.close?.(), 500);
        return written;
      },
      expected: (r) => expect(r).toBeUndefined(),
    },
    { name: 'setConditions', run: (s) => s.client.nodeReporter().setConditions([{ type: 'example.io/X', status: 'True', reason: 'R', message: 'm' }]), expected: (r) => expect(r).toBe(false) },
    { name: 'setTaint', run: (s) => s.client.nodeReporter().setTaint({ key: 'k', value: 'v', effect: 'NoSchedule' }, true), expected: (r) => expect(r).toBe(false) },
  ];
  for (const tc of calls) {
    test(`${tc.name} answers within a second with status 0`, async () => {
      const p = slow.standIn.pod('default', 'a') as Pod;
      const startedMs = Date.now();
      const result = await tc.run(slow, p);
      expect(Date.now() - startedMs).toBeLessThan(1_000);
      tc.expected(result);
    });
  }
});
