// Events over the stand-in, which applies the API server's core/v1 validation: what the kubelet's
// record package would write, with the eviction annotations, never an exception, and the retries
// of a write the API server did not answer or answered as a loaded or restarting one does (429,
// 5xx, 401, 403). The jitter of the first retry is pinned at half the interval.

import { FakeClock } from '../../fakes/fake-clock.js';
import type { Pod } from '../../../src/api/pod.js';
import { EVENT_MAX_TRIES, EVENT_RETRY_INTERVAL_MS, retryable } from '../../../src/kube/event-recorder.js';
import { node, NODE_NAME, pod, startHarness, type Harness } from './harness.js';

const ANNOTATIONS = { offending_containers: 'app', offending_containers_usage: '900Mi', starved_resource: 'memory' };
const NOW_MS = Date.UTC(2026, 2, 1, 8, 0, 0);

let h: Harness;
let clock: FakeClock;

beforeEach(async () => {
  clock = new FakeClock(NOW_MS);
  h = await startHarness({ clock, random: () => 0.5 });
  h.standIn.setNode(node());
});
afterEach(async () => {
  await h.close();
});

test('a pod event: involvedObject, source, timestamps, count and the eviction annotations', async () => {
  const target = h.standIn.createPod(pod('web-0', { namespace: 'shop' }));
  await h.client.eventRecorder('kube-eviction-agent').podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'The node was low on resource: memory. ', annotations: ANNOTATIONS });
  const [event] = h.standIn.events();
  expect(event).toMatchObject({
    metadata: { namespace: 'shop', annotations: ANNOTATIONS },
    involvedObject: { apiVersion: 'v1', kind: 'Pod', namespace: 'shop', name: 'web-0', uid: target.metadata.uid },
    reason: 'Evicted',
    message: 'The node was low on resource: memory. ',
    type: 'Warning',
    count: 1,
    source: { component: 'kube-eviction-agent', host: NODE_NAME },
    // As client-go's recorder sets them (the kubelet's: `kubelet` and its node's name).
    reportingComponent: 'kube-eviction-agent',
    reportingInstance: NODE_NAME,
  });
  const record = event as { metadata: { name: string }; firstTimestamp: string; lastTimestamp: string; eventTime?: unknown };
  expect(record.metadata.name).toMatch(/^web-0\.[0-9a-f]+$/);
  expect(new Date(record.firstTimestamp).getTime()).toBe(NOW_MS);
  expect(record.lastTimestamp).toBe(record.firstTimestamp);
  // The legacy form: no eventTime, so the reportingComponent/action rules do not apply.
  expect(record.eventTime).toBeUndefined();
  expect(h.standIn.requests()[0]).toMatchObject({ method: 'POST', path: '/api/v1/namespaces/shop/events', status: 201 });
});

test('a node event goes to the default namespace and names the node as the kubelet does', async () => {
  await h.client.eventRecorder('kube-eviction-agent').nodeEvent({ type: 'Warning', reason: 'EvictionThresholdMet', message: 'Attempting to reclaim memory' });
  const [event] = h.standIn.events();
  expect(event).toMatchObject({
    metadata: { namespace: 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: NODE_NAME, uid: NODE_NAME },
    reason: 'EvictionThresholdMet',
    type: 'Warning',
    source: { component: 'kube-eviction-agent', host: NODE_NAME },
    reportingComponent: 'kube-eviction-agent',
    reportingInstance: NODE_NAME,
  });
  expect((event as { involvedObject: { namespace?: string } }).involvedObject.namespace).toBeUndefined();
  expect((event as { metadata: { annotations?: unknown } }).metadata.annotations).toBeUndefined();
});

test('two events in the same millisecond get different names', async () => {
  const recorder = h.client.eventRecorder('kube-eviction-agent');
  await recorder.nodeEvent({ type: 'Normal', reason: 'A', message: 'a' });
  await recorder.nodeEvent({ type: 'Normal', reason: 'B', message: 'b' });
  const eventNames = h.standIn.events().map((e) => (e as { metadata: { name: string } }).metadata.name);
  expect(eventNames).toHaveLength(2);
  expect(new Set(eventNames).size).toBe(2);
});

const failures: { name: string; breakIt: (harness: Harness) => Promise<void> | void; status: number }[] = [
  { name: 'a-422', breakIt: (harness) => harness.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: 422 }), status: 422 },
  { name: 'a-400', breakIt: (harness) => harness.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: 400 }), status: 400 },
  { name: 'a-404', breakIt: (harness) => harness.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: 404 }), status: 404 },
];
for (const tc of failures) {
  test(`recording is best effort: ${tc.name} (an answer about the Event itself) is logged, never thrown, and not retried`, async () => {
    const target = h.standIn.createPod(pod('a'));
    await tc.breakIt(h);
    await expect(h.client.eventRecorder('kube-eviction-agent').podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'm' })).resolves.toBeUndefined();
    const logged = h.logger.lines.filter((e) => e.msg.startsWith('recording an event failed'));
    expect(logged.map((l) => [l.level, l.msg])).toEqual([['warn', 'recording an event failed']]);
    expect(logged[0]?.fields).toMatchObject({ object: 'default/a', reason: 'Evicted', status: tc.status, attempts: 1 });
    expect(h.standIn.requests().filter((r) => r.method === 'POST')).toHaveLength(1);
  });
}

// Polls in real time: the stand-in answers over real sockets while the recorder sleeps on the fake clock.
async function until(what: string, condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!condition()) throw new Error(`timed out waiting for ${what}`);
}

const retrying = (): number => h.logger.find('recording an event failed; retrying').length;

// What a loaded API server answers (429: shedding load), and one still starting (5xx, and 401 or
// 403 while authentication and RBAC load their caches): the Event is tried again.
for (const [first, second] of [[429, 429], [503, 500], [403, 401]] as const) {
  test(`a ${first}, then a ${second}, is retried until the Event lands, once`, async () => {
    const target = h.standIn.createPod(pod('a'));
    h.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: first });
    h.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: second });
    const written = h.client.eventRecorder('kube-eviction-agent').podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'm' });
    await until(`the ${first}`, () => retrying() === 1);
    expect(h.standIn.events()).toEqual([]);
    await clock.stepAsync(EVENT_RETRY_INTERVAL_MS / 2);
    await until(`the ${second}`, () => retrying() === 2);
    await clock.stepAsync(EVENT_RETRY_INTERVAL_MS);
    await expect(written).resolves.toBeUndefined();
    expect(h.standIn.requests().filter((r) => r.method === 'POST').map((r) => r.status)).toEqual([first, second, 201]);
    expect(h.standIn.events().map((e) => (e as { message: string }).message)).toEqual(['m']);
    expect(h.logger.find('recording an event failed')).toEqual([]);
  });
}

const retries: [number, boolean][] = [[0, true], [401, true], [403, true], [429, true], [500, true], [503, true], [504, true], [400, false], [404, false], [409, false], [413, false], [422, false]];
for (const [status, expected] of retries) {
  test(`an Event write answered ${status === 0 ? 'nothing' : status} is ${expected ? '' : 'not '}retried`, () => {
    expect(retryable(status)).toBe(expected);
  });
}

test('an API server that does not answer: the write is retried after a random part of 10 s, then every 10 s, 12 tries in all (client-go\'s recorder), then logged as failed, never thrown', async () => {
  const target = h.standIn.createPod(pod('a'));
  await h.standIn.stop();
  const written = h.client.eventRecorder('kube-eviction-agent').podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'm' });
  for (let attempt = 1; attempt < EVENT_MAX_TRIES; attempt++) {
    await until(`failed try ${attempt}`, () => retrying() === attempt);
    const retryInMs = attempt === 1 ? EVENT_RETRY_INTERVAL_MS / 2 : EVENT_RETRY_INTERVAL_MS;
    expect(h.logger.find('recording an event failed; retrying').at(-1)?.fields).toMatchObject({ object: 'default/a', reason: 'Evicted', status: 0, attempts: attempt, retryInMs });
    await clock.stepAsync(retryInMs);
  }
  await expect(written).resolves.toBeUndefined();
  expect(retrying()).toBe(EVENT_MAX_TRIES - 1);
  expect(h.logger.find('recording an event failed').map((l) => l.fields)).toEqual([expect.objectContaining({ status: 0, attempts: EVENT_MAX_TRIES })]);
});

test('a write the API server did not answer in time is retried and lands once; a retry that finds it already there (the first try got through late) counts as written', async () => {
  const target = h.standIn.createPod(pod('a'));
  const recorder = h.client.eventRecorder('kube-eviction-agent');
  // No answer before the request timeout (2 s on the fake clock), then a normal write.
  h.standIn.injectFault({ method: 'POST', pathPattern: '/events', delayMs: 600_000 });
  const first = recorder.podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'first' });
  await until('the request held', () => h.standIn.requests().length > 0 || retrying() > 0);
  await clock.stepAsync(2_000);
  await until('the first try failed', () => retrying() === 1);
  expect(h.standIn.events()).toEqual([]);
  await clock.stepAsync(EVENT_RETRY_INTERVAL_MS);
  await expect(first).resolves.toBeUndefined();
  expect(h.standIn.events().map((e) => (e as { message: string }).message)).toEqual(['first']);

  // The same, where the late first try was written: the retry's 409 AlreadyExists ends it quietly.
  h.standIn.injectFault({ method: 'POST', pathPattern: '/events', delayMs: 600_000 });
  h.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: 409 });
  const second = recorder.podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'second' });
  await until('the request held', () => h.standIn.requests().length > 1 || retrying() > 1);
  await clock.stepAsync(2_000);
  await until('the first try failed', () => retrying() === 2);
  await clock.stepAsync(EVENT_RETRY_INTERVAL_MS);
  await expect(second).resolves.toBeUndefined();
  expect(h.logger.find('recording an event failed')).toEqual([]);
  expect(h.logger.find('event already recorded by an earlier try').map((l) => l.fields)).toEqual([expect.objectContaining({ object: 'default/a', attempts: 2 })]);
});

test('close() ends the retries: an Event still unwritten is dropped, logged, at once', async () => {
  const target = h.standIn.createPod(pod('a'));
  await h.standIn.stop();
  const recorder = h.client.eventRecorder('kube-eviction-agent');
  const written = recorder.podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'm' });
  await until('the first try failed', () => retrying() === 1);
  recorder.close?.();
  await expect(written).resolves.toBeUndefined();
  expect(retrying()).toBe(1);
  expect(h.logger.find('recording an event failed').map((l) => l.fields.error)).toEqual([expect.stringContaining('not retried: the agent is stopping')]);
});

test('a pod without a namespace is reported in default, where it lives', async () => {
  const bare: Pod = { metadata: { name: 'bare', uid: 'u-1' }, spec: { containers: [] } };
  await h.client.eventRecorder('kube-eviction-agent').podEvent(bare, { type: 'Normal', reason: 'R', message: 'm' });
  expect(h.standIn.events()[0]).toMatchObject({ metadata: { namespace: 'default' }, involvedObject: { namespace: 'default', name: 'bare' } });
});

test('an owner event: in the owner\'s namespace, about the owner, its UID when known', async () => {
  const recorder = h.client.eventRecorder('kube-eviction-agent');
  const message = '3 pods of Deployment shop/leaky evicted from node node-a for memory in the last 10 minutes';
  await recorder.objectEvent({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'leaky', uid: 'uid-deploy' }, { type: 'Warning', reason: 'EvictionStorm', message });
  await recorder.objectEvent({ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'db', name: 'pg', uid: null }, { type: 'Warning', reason: 'EvictionStorm', message: 'x' });
  const [deployment, statefulSet] = h.standIn.events() as { metadata: { namespace: string }; involvedObject: Record<string, unknown>; reason: string; message: string }[];
  expect(deployment).toMatchObject({ metadata: { namespace: 'shop' }, involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'leaky', uid: 'uid-deploy' }, reason: 'EvictionStorm', message });
  expect(statefulSet?.metadata.namespace).toBe('db');
  expect(statefulSet?.involvedObject).toEqual({ apiVersion: 'apps/v1', kind: 'StatefulSet', namespace: 'db', name: 'pg' });
});

test('a ReplicaSet the API server cannot return is answered with why, never thrown', async () => {
  const answer = await h.client.ownerLookup().replicaSetOwner('shop', 'leaky-7c9d8');
  expect(typeof answer).toBe('string');
  expect(answer).toMatch(/^reading ReplicaSet shop\/leaky-7c9d8 failed \(404\)/);
});
