// Events over the stand-in, which applies the API server's core/v1 validation: what the kubelet's
// record package would write, with the eviction annotations, and never an exception.

import { FakeClock } from '../../fakes/fake-clock.js';
import type { Pod } from '../../../src/api/pod.js';
import { node, NODE_NAME, pod, startHarness, type Harness } from './harness.js';

const ANNOTATIONS = { offending_containers: 'app', offending_containers_usage: '900Mi', starved_resource: 'memory' };
const NOW_MS = Date.UTC(2026, 2, 1, 8, 0, 0);

let h: Harness;
let clock: FakeClock;

beforeEach(async () => {
  clock = new FakeClock(NOW_MS);
  h = await startHarness({ clock });
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
  { name: 'a-500', breakIt: (harness) => harness.standIn.injectFault({ method: 'POST', pathPattern: '/events', status: 500 }), status: 500 },
  { name: 'an-api-server-that-is-down', breakIt: (harness) => harness.standIn.stop(), status: 0 },
];
for (const tc of failures) {
  test(`recording is best effort: ${tc.name} is logged, never thrown`, async () => {
    const target = h.standIn.createPod(pod('a'));
    await tc.breakIt(h);
    await expect(h.client.eventRecorder('kube-eviction-agent').podEvent(target, { type: 'Warning', reason: 'Evicted', message: 'm' })).resolves.toBeUndefined();
    const logged = h.logger.lines.find((e) => e.msg === 'recording an event failed');
    expect(logged?.level).toBe('warn');
    expect(logged?.fields).toMatchObject({ object: 'default/a', reason: 'Evicted', status: tc.status });
  });
}

test('a pod without a namespace is reported in default, where it lives', async () => {
  const bare: Pod = { metadata: { name: 'bare', uid: 'u-1' }, spec: { containers: [] } };
  await h.client.eventRecorder('kube-eviction-agent').podEvent(bare, { type: 'Normal', reason: 'R', message: 'm' });
  expect(h.standIn.events()[0]).toMatchObject({ metadata: { namespace: 'default' }, involvedObject: { namespace: 'default', name: 'bare' } });
});
