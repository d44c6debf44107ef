// The kubelet's stuck case (kubernetes/kubernetes#123872), reproduced against the running agent,
// the API stand-in and the real Kubernetes client: a soft eviction of a pod with an hour-long
// terminationGracePeriodSeconds, then a hard crossing. The hard eviction is on time (the pod's
// grace period is shortened to the hard one by a second DELETE), and when the pod is still there
// past the escalation timeout (the stand-in has no kubelet to end it), the next ranked pod is
// evicted and the escalation is reported.

import type { Pod } from '../../src/api/pod.js';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseConfigText } from '../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../src/daemon/agent.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from '../../src/demo/api-stand-in.js';
import { connect } from '../../src/kube/index.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../fakes/fake-node.js';
import { makePod } from '../fixtures/pods.js';
import { nodeOfThisHost, thisHostIdentity } from '../../src/compose/this-host.js';
import { waitFor } from '../helpers/wait-for.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;
const HOUR_S = 3600;

// Local termination off: the hard eviction goes through the API alone, as the kubelet's does.
const CONFIG = `
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 1s
evictionMaxPodGracePeriod: ${HOUR_S}
housekeepingInterval: 1s
actions:
  localTermination: false
  podCleanupTimeout: 10m
  escalationTimeout: 2s
`;

let standIn: ApiStandIn | null = null;
let agent: RunningAgent | null = null;

afterEach(async () => {
  await agent?.stop();
  await standIn?.stop();
  agent = null;
  standIn = null;
});

test('a soft eviction with an hour-long grace period never delays the hard eviction; a pod still there past the escalation timeout is passed over', async () => {
  const server = await startApiStandIn();
  standIn = server;
  server.setNode(nodeOfThisHost('node-a'));
  const usage: Record<string, { name: string; bytes: number }> = {};
  const specs: [Pod, number][] = [
    [makePod({ name: 'slow', requests: { memory: '100Mi' }, tgps: HOUR_S, nodeName: 'node-a' }), 3 * Gi],
    [makePod({ name: 'batch', requests: { memory: '100Mi' }, tgps: HOUR_S, nodeName: 'node-a' }), 500 * Mi],
  ];
  for (const [pod, bytes] of specs) {
    const { uid: _uid, ...metadata } = pod.metadata;
    void _uid;
    const created = server.createPod({ ...pod, metadata, status: { phase: 'Running' } });
    usage[created.metadata.uid ?? ''] = { name: pod.metadata.name ?? '', bytes };
  }
  const observer = new FakeObserver();
  observer.summary = memorySummary(16 * Gi, 8 * Gi, usage);
  const notifier = new FakeNotifier();
  const client = await connect({ kubeconfigYaml: kubeconfigFor(server), nodeName: 'node-a', clock: systemClock, logger: silentLogger, requestTimeoutMs: 2000 });
  const running = await startAgent(
    { config: parseConfigText(CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null, serverPort: 0 },
    { cluster: client.clusterView(), actions: client.podActions(), events: client.eventRecorder('kube-eviction-agent'), nodeReporter: client.nodeReporter(), observer, notifier, terminator: new FakeTerminator(), hostIdentity: thisHostIdentity(), clock: systemClock, logger: silentLogger },
  );
  agent = running;
  await waitFor('the watches to sync', () => observer.observedPods.some((pods) => pods.length === 2));
  const evictionsOf = (name: string) => server.requests().filter((r) => r.method === 'POST' && r.path.endsWith(`/pods/${name}/eviction`) && r.status === 201);
  const deletesOf = (name: string) => server.requests().filter((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${name}`) && r.status === 200);

  // Soft pressure: slow is evicted through the Eviction API with its hour-long grace period, and stays Terminating.
  observer.summary = memorySummary(16 * Gi, 800 * Mi, usage);
  await waitFor('the soft eviction of slow', () => evictionsOf('slow').length > 0, 15_000);
  expect(server.pod('default', 'slow')?.metadata.deletionGracePeriodSeconds).toBe(HOUR_S);

  // The hard crossing. The kubelet would wait out the hour; the agent deletes slow again with 1 s.
  observer.summary = memorySummary(16 * Gi, 300 * Mi, usage);
  const crossedAtMs = Date.now();
  notifier.fire(crossedAtMs);
  await waitFor('the hard DELETE of slow', () => deletesOf('slow').length > 0, 15_000);
  const hardAfterMs = Date.now() - crossedAtMs;
  expect(deletesOf('slow')[0]?.body).toMatchObject({ gracePeriodSeconds: 1 });
  expect(server.pod('default', 'slow')?.metadata.deletionGracePeriodSeconds).toBe(1);
  // Generous: on an idle machine it is a few tens of milliseconds; the hour is what it is compared with.
  expect(hardAfterMs).toBeLessThan(10_000);

  // No kubelet here ends slow: past the escalation timeout (2 s) the next ranked pod goes.
  await waitFor('the hard DELETE of batch', () => deletesOf('batch').length > 0, 20_000);
  const escalatedAfterMs = Date.now() - crossedAtMs;
  expect(escalatedAfterMs).toBeGreaterThanOrEqual(2000);
  expect(deletesOf('batch')[0]?.body).toMatchObject({ gracePeriodSeconds: 1 });
  await waitFor('the EvictionEscalated Event', () => server.events().some((e) => e.reason === 'EvictionEscalated'), 10_000);
  const event = server.events().find((e) => e.reason === 'EvictionEscalated') as { type: string; message: string; involvedObject: { name: string } };
  expect(event).toMatchObject({ type: 'Warning', involvedObject: { name: 'slow' } });
  expect(event.message).toMatch(/^Evicted \d+ ms ago for memory\.available and it is still on the API server: the next ranked pod is evicted instead of waiting for it$/);
  expect(await running.metrics.registry.getSingleMetricAsString('kube_eviction_agent_escalations_total')).toMatch(/signal="memory.available",kind="api"\} 1/);
  // Once each: slow is not escalated past again, batch not deleted twice while it is awaited.
  expect(evictionsOf('batch')).toEqual([]);
  process.stdout.write(`stuck case: hard eviction ${hardAfterMs} ms after the crossing (the soft eviction's grace period: ${HOUR_S} s); escalation to the next pod ${escalatedAfterMs} ms after it\n`);
});
