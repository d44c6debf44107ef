// The running agent with one live and one dry-run threshold, against the in-process API stand-in
// through the real Kubernetes client: the dry-run threshold is met first and only reports (a
// Normal "would evict" Event, metrics labelled dry_run="true", no pressure condition on the Node);
// the live threshold, crossed next, evicts.

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

// Live: hard at 500Mi. Dry run: soft at 2Gi with a 1 s grace period.
const CONFIG = `
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 2Gi
evictionSoftGracePeriod:
  memory.available: 1s
dryRunThresholds:
  evictionSoft: [memory.available]
housekeepingInterval: 1s
evictionPressureTransitionPeriod: 2s
actions:
  podCleanupTimeout: 2s
`;

let standIn: ApiStandIn | null = null;
let agent: RunningAgent | null = null;

afterEach(async () => {
  await agent?.stop();
  await standIn?.stop();
  agent = null;
  standIn = null;
});

const mutatingPodRequests = (s: ApiStandIn) => s.requests().filter((r) => r.method !== 'GET' && r.path.includes('/pods/'));

test('the dry-run threshold reports "would evict" and acts on nothing; the live one evicts', async () => {
  const server = await startApiStandIn();
  standIn = server;
  server.setNode(nodeOfThisHost('node-a'));
  const usage: Record<string, { name: string; bytes: number }> = {};
  const specs: [Pod, number][] = [
    [makePod({ name: 'leaky', requests: { memory: '100Mi' }, tgps: 30, nodeName: 'node-a' }), 3 * Gi],
    [makePod({ name: 'batch', requests: { memory: '100Mi' }, tgps: 30, nodeName: 'node-a' }), 500 * Mi],
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
  const terminator = new FakeTerminator();
  const client = await connect({ kubeconfigYaml: kubeconfigFor(server), nodeName: 'node-a', clock: systemClock, logger: silentLogger, requestTimeoutMs: 2000 });
  const running = await startAgent(
    { config: parseConfigText(CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null, serverPort: 0 },
    { cluster: client.clusterView(), actions: client.podActions(), events: client.eventRecorder('kube-eviction-agent'), nodeReporter: client.nodeReporter(), observer, notifier, terminator, hostIdentity: thisHostIdentity(), clock: systemClock, logger: silentLogger },
  );
  agent = running;
  await waitFor('the watches to sync', () => observer.observedPods.some((pods) => pods.length === 2));
  const metric = (name: string): Promise<string> => running.metrics.registry.getSingleMetricAsString(name);

  // 1.5Gi available: under the dry-run soft threshold only. Its grace period (1 s) runs out and it would evict leaky.
  observer.summary = memorySummary(16 * Gi, 1536 * Mi, usage);
  await waitFor('the would-evict Event', () => server.events().some((e) => e.reason === 'DryRunEviction'), 15_000);
  const event = server.events().find((e) => e.reason === 'DryRunEviction') as { type: string; message: string; involvedObject: { name: string } };
  expect(event.type).toBe('Normal');
  expect(event.involvedObject.name).toBe('leaky');
  expect(event.message).toMatch(/^Dry-run threshold memory\.available \(soft\) would evict this pod: The node was low on resource: memory\. Threshold quantity: 2Gi, available: 1536Mi\./);
  // The metrics are set by the pass that sent the Event, before it, and by every pass after it.
  expect(await metric('kube_eviction_agent_threshold_met')).toMatch(/signal="memory.available",hard="false",dry_run="true"\} 1/);
  expect(await metric('kube_eviction_agent_evictions_total')).toMatch(/signal="memory.available",action="none",result="would-evict",dry_run="true"\} [1-9]/);
  expect(await metric('kube_eviction_agent_dry_run_node_condition')).toMatch(/condition="MemoryPressure"\} 1/);
  expect(await metric('kube_eviction_agent_node_condition')).toMatch(/condition="MemoryPressure"\} 0/);
  // Nothing was done to any pod, and the Node does not report the dry run's pressure.
  expect(mutatingPodRequests(server)).toEqual([]);
  expect(terminator.calls).toEqual([]);
  const conditions = server.node('node-a')?.status?.conditions ?? [];
  expect(conditions.filter((c) => c.type.endsWith('MemoryPressure') && c.status === 'True')).toEqual([]);

  // 300Mi available: the live hard threshold is crossed and leaky is evicted.
  observer.summary = memorySummary(16 * Gi, 300 * Mi, usage);
  notifier.fire(Date.now());
  await waitFor('the DELETE of leaky', () => server.requests().some((r) => r.method === 'DELETE' && r.path.endsWith('/pods/leaky')), 15_000);
  expect(server.requests().filter((r) => r.method === 'DELETE' && r.path.endsWith('/pods/batch'))).toEqual([]);
  // The attempt is counted once the API server has answered, which may be a moment after it saw the request.
  const accepted = /signal="memory.available",action="delete",result="accepted"\} 1/;
  for (const deadlineMs = Date.now() + 10_000; !accepted.test(await metric('kube_eviction_agent_evictions_total')) && Date.now() < deadlineMs; ) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(await metric('kube_eviction_agent_evictions_total')).toMatch(accepted);
});
