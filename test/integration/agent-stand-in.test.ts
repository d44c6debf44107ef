// The running agent against the in-process API stand-in, through the real Kubernetes client:
// the requests it makes, PodDisruptionBudget refusals, dry run, and faults (server down, slow,
// 500, 409, 429, watches closed and expired, the Node object missing). In every case it keeps
// observing, retries, never evicts twice, never evicts a critical pod, and recovers.

import type { Pod } from '../../src/api/pod.js';
import { systemClock } from '../../src/api/clock.js';
import { silentLogger } from '../../src/api/logger.js';
import { parseConfigText } from '../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../src/daemon/agent.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn, type RecordedRequest } from '../../src/demo/api-stand-in.js';
import { connect } from '../../src/kube/index.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../fakes/fake-node.js';
import { makePod } from '../fixtures/pods.js';
import { nodeOfThisHost, thisHostIdentity } from '../../src/compose/this-host.js';
import { waitFor } from '../helpers/wait-for.js';

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

const CONFIG = `
evictionHard:
  memory.available: 500Mi
evictionSoft:
  memory.available: 1Gi
evictionSoftGracePeriod:
  memory.available: 1s
evictionMaxPodGracePeriod: 10
housekeepingInterval: 1s
evictionPressureTransitionPeriod: 2s
actions:
  podCleanupTimeout: 2s
`;

interface Setup {
  standIn: ApiStandIn;
  agent: RunningAgent;
  observer: FakeObserver;
  notifier: FakeNotifier;
  terminator: FakeTerminator;
  uids: Record<string, string>;
  /** Sets node memory; every pod's working set stays as created. */
  setAvailable(bytes: number): void;
}

const setups: Setup[] = [];

async function setup(options: { dryRun?: boolean; withNode?: boolean; config?: string } = {}): Promise<Setup> {
  const standIn = await startApiStandIn();
  if (options.withNode !== false) standIn.setNode(nodeOfThisHost('node-a'));
  const specs: [Pod, number][] = [
    [makePod({ name: 'leaky', requests: { memory: '100Mi' }, tgps: 30, nodeName: 'node-a' }), 3 * Gi],
    [makePod({ name: 'batch', requests: { memory: '100Mi' }, tgps: 30, nodeName: 'node-a' }), 500 * Mi],
    [makePod({ name: 'node-critical', priority: 2_000_001_000, nodeName: 'node-a' }), 4 * Gi],
    // The biggest user of all, on another node: it must never even be considered.
    [makePod({ name: 'elsewhere', nodeName: 'node-b' }), 6 * Gi],
  ];
  const uids: Record<string, string> = {};
  const usage: Record<string, { name: string; bytes: number }> = {};
  for (const [pod, bytes] of specs) {
    const { uid: _ignored, ...metadata } = pod.metadata;
    void _ignored;
    const created = standIn.createPod({ ...pod, metadata, status: { phase: 'Running' } });
    const uid = created.metadata.uid ?? '';
    uids[pod.metadata.name ?? ''] = uid;
    usage[uid] = { name: pod.metadata.name ?? '', bytes };
  }
  const observer = new FakeObserver();
  const setAvailable = (bytes: number): void => {
    observer.summary = memorySummary(16 * Gi, bytes, usage);
  };
  setAvailable(8 * Gi);
  const notifier = new FakeNotifier();
  const terminator = new FakeTerminator();
  const client = await connect({ kubeconfigYaml: kubeconfigFor(standIn), nodeName: 'node-a', clock: systemClock, logger: silentLogger, requestTimeoutMs: 500, watchBackoff: { initialDelayMs: 50, maxDelayMs: 500, factor: 2, jitterRatio: 0.1 } });
  const agent = await startAgent(
    { config: parseConfigText(options.config ?? CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null, dryRun: options.dryRun, serverPort: 0 },
    { cluster: client.clusterView(), actions: client.podActions(), events: client.eventRecorder('kube-eviction-agent'), nodeReporter: client.nodeReporter(), observer, notifier, terminator, hostIdentity: thisHostIdentity(), clock: systemClock, logger: silentLogger },
  );
  const result = { standIn, agent, observer, notifier, terminator, uids, setAvailable };
  setups.push(result);
  await waitFor('the watches to sync', () => observer.observedPods.some((pods) => pods.length === 3));
  return result;
}

afterEach(async () => {
  for (const s of setups.splice(0)) {
    await s.agent.stop();
    await s.standIn.stop();
  }
});

const mutating = (standIn: ApiStandIn) => standIn.requests().filter((r) => r.method !== 'GET');
const deletesOf = (standIn: ApiStandIn, name: string) => standIn.requests().filter((r) => r.method === 'DELETE' && r.path.endsWith(`/pods/${name}`));

describe('the agent against the API stand-in', () => {
  test('hard pressure: DisruptionTarget, DELETE with grace 1 and a UID precondition, and an Evicted Event the server accepts', async () => {
    const { standIn, notifier, terminator, uids, setAvailable } = await setup();
    setAvailable(300 * Mi);
    notifier.fire(Date.now());
    await waitFor('the DELETE', () => deletesOf(standIn, 'leaky').length > 0);
    const [del] = deletesOf(standIn, 'leaky');
    expect(del?.status).toBe(200);
    expect(del?.body).toMatchObject({ gracePeriodSeconds: 1, preconditions: { uid: uids.leaky } });
    expect(standIn.requests().some((r) => r.method === 'PATCH' && r.path.endsWith('/pods/leaky/status'))).toBe(true);
    await waitFor('the Evicted event', () => standIn.events().some((e) => e.reason === 'Evicted'));
    const event = standIn.events().find((e) => e.reason === 'Evicted') as { involvedObject: { name: string; uid: string }; metadata: { annotations: Record<string, string> } };
    expect(event.involvedObject).toMatchObject({ name: 'leaky', uid: uids.leaky });
    expect(event.metadata.annotations.starved_resource).toBe('memory');
    expect(terminator.calls.map((c) => c.uid)).toEqual([uids.leaky]);
    // Never the critical pod, never the pod of node-b.
    expect(mutating(standIn).some((r) => /node-critical|elsewhere/.test(r.path))).toBe(false);
  });

  test('soft pressure: a PodDisruptionBudget refusal (429) moves on to the next candidate', async () => {
    const { standIn, setAvailable } = await setup();
    standIn.updatePod('default', 'leaky', (p) => {
      p.metadata.labels = { app: 'leaky' };
    });
    standIn.addPdb({ metadata: { name: 'leaky', namespace: 'default' }, spec: { selector: { matchLabels: { app: 'leaky' } }, minAvailable: 1 } });
    setAvailable(800 * Mi);
    await waitFor('an eviction of batch', () => standIn.requests().some((r) => r.method === 'POST' && r.path.endsWith('/pods/batch/eviction') && r.status === 201));
    const leakyEvictions = standIn.requests().filter((r) => r.method === 'POST' && r.path.endsWith('/pods/leaky/eviction'));
    expect(leakyEvictions.length).toBeGreaterThan(0);
    expect(leakyEvictions.every((r) => r.status === 429)).toBe(true);
    expect(standIn.events().some((e) => e.reason === 'EvictionBlocked')).toBe(true);
    expect(deletesOf(standIn, 'leaky')).toEqual([]);
  });

  test('dry run: only reads, whatever the pressure', async () => {
    const { standIn, notifier, terminator, agent, setAvailable } = await setup({ dryRun: true });
    setAvailable(300 * Mi);
    notifier.fire(Date.now());
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(mutating(standIn)).toEqual([]);
    expect(terminator.calls).toEqual([]);
    expect(await agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_evictions_total')).toMatch(/result="dry-run"/);
  });

  test('API server down: memory is freed locally at once, the deletion lands once the server is back, exactly once', async () => {
    const { standIn, notifier, terminator, uids, setAvailable } = await setup();
    await standIn.stop();
    setAvailable(300 * Mi);
    notifier.fire(Date.now());
    await waitFor('local termination', () => terminator.calls.length > 0);
    expect(terminator.calls.map((c) => c.uid)).toEqual([uids.leaky]);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    setAvailable(8 * Gi); // the processes are gone
    await standIn.restart();
    await waitFor('the retried DELETE', () => deletesOf(standIn, 'leaky').some((r) => r.status === 200), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(deletesOf(standIn, 'leaky').filter((r) => r.status === 200)).toHaveLength(1);
    expect(mutating(standIn).some((r) => /node-critical|elsewhere|batch/.test(r.path))).toBe(false);
  });

  test('a slow server: requests give up at the timeout, the loop keeps observing, and the next pass succeeds', async () => {
    const { standIn, observer, setAvailable } = await setup({ config: CONFIG.replace(/actions:[\s\S]*$/, 'actions:\n  localTermination: false\n  podCleanupTimeout: 2s\n') });
    standIn.injectFault({ method: 'GET', pathPattern: /\/pods\/leaky$/, delayMs: 3000, count: 1 });
    setAvailable(300 * Mi);
    const passesBefore = observer.observedPods.length;
    await waitFor('the DELETE after the slow GET', () => deletesOf(standIn, 'leaky').some((r) => r.status === 200), 15_000);
    expect(observer.observedPods.length).toBeGreaterThan(passesBefore + 1);
    expect(deletesOf(standIn, 'leaky').filter((r) => r.status === 200)).toHaveLength(1);
  });

  test('500 on DELETE is retried, and so is a load-shedding 429', async () => {
    const { standIn, setAvailable } = await setup({ config: CONFIG.replace(/actions:[\s\S]*$/, 'actions:\n  localTermination: false\n  podCleanupTimeout: 2s\n') });
    standIn.injectFault({ method: 'DELETE', pathPattern: /\/pods\/leaky(\?|$)/, status: 500, count: 1 });
    standIn.injectFault({ method: 'DELETE', pathPattern: /\/pods\/leaky(\?|$)/, status: 429, count: 1 });
    setAvailable(300 * Mi);
    await waitFor('a successful DELETE', () => deletesOf(standIn, 'leaky').some((r) => r.status === 200), 15_000);
    expect(deletesOf(standIn, 'leaky').map((r) => r.status)).toEqual([500, 429, 200]);
  });

  test('409, the pod replaced under its name while the DELETE was on its way, is not retried, even after local termination', async () => {
    // Local termination on: a DELETE taken for failed would be retried until it lands.
    const { standIn, observer, terminator, uids, setAvailable } = await setup();
    standIn.deletePodNow('default', 'leaky');
    await waitFor('leaky gone from the observed pods', () => observer.observedPods.at(-1)?.every((p) => p.metadata.name !== 'leaky') === true);
    // The DELETE of batch is held 300 ms; meanwhile batch is replaced by a pod of the same name.
    standIn.injectFault({ method: 'DELETE', pathPattern: /\/pods\/batch(\?|$)/, delayMs: 300, count: 1 });
    setAvailable(300 * Mi);
    await waitFor('the DELETE of batch', () => deletesOf(standIn, 'batch').length > 0, 15_000);
    standIn.deletePodNow('default', 'batch');
    const replacement = standIn.createPod({ ...makePod({ name: 'batch', nodeName: 'node-a' }), metadata: { name: 'batch', namespace: 'default' }, status: { phase: 'Running' } });
    await waitFor('the answer to the DELETE', () => deletesOf(standIn, 'batch')[0]?.status !== 0, 15_000);
    expect(terminator.calls.map((c) => c.uid)).toContain(uids.batch);
    const withOldUid = (): RecordedRequest[] => deletesOf(standIn, 'batch').filter((r) => (r.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid === uids.batch);
    expect(withOldUid().map((r) => r.status)).toEqual([409]);
    // Long enough for a retry of a failed deletion (every 2 s at first) and several passes.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(withOldUid()).toHaveLength(1);
    // A later DELETE of the name is a new decision, about the replacement.
    expect(deletesOf(standIn, 'batch').slice(1).every((r) => (r.body as { preconditions?: { uid?: string } }).preconditions?.uid === replacement.metadata.uid)).toBe(true);
  });

  test('watches closed, then expired (410 Gone): the view relists and the agent sees new pods', async () => {
    const { standIn, observer } = await setup();
    standIn.closeWatches();
    standIn.expireWatches();
    standIn.createPod({ ...makePod({ name: 'late', nodeName: 'node-a' }), metadata: { name: 'late', namespace: 'default' }, status: { phase: 'Running' } });
    await waitFor('the new pod in an observation', () => observer.observedPods.at(-1)?.some((p) => p.metadata.name === 'late') === true, 15_000);
    const names = (observer.observedPods.at(-1) ?? []).map((p) => p.metadata.name).sort();
    expect(names).toEqual(['batch', 'late', 'leaky', 'node-critical']);
  });

  test('the Node object missing: nothing proves this host is the Node, so nothing is done until it appears with this host\'s identity', async () => {
    const { standIn, agent, notifier, terminator, setAvailable } = await setup({ withNode: false });
    setAvailable(300 * Mi);
    notifier.fire(Date.now());
    await waitFor('the Warning Event', () => standIn.events().some((e) => e.reason === 'NodeIdentityUnverified'));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(mutating(standIn).filter((r) => !r.path.endsWith('/events'))).toEqual([]);
    expect(terminator.calls).toEqual([]);
    expect(agent.readiness.reason()).toMatch(/the Node node-a does not exist/);
    // The kubelet registers it: the agent acts.
    standIn.setNode(nodeOfThisHost('node-a'));
    await waitFor('the DELETE', () => deletesOf(standIn, 'leaky').some((r) => r.status === 200));
    expect(agent.readiness.reason()).toBeNull();
  });

  test('the Node is another machine (its nodeInfo is another host\'s): no eviction, no condition or taint, not ready, one Warning Event', async () => {
    const { standIn, agent, notifier, terminator, setAvailable } = await setup({ withNode: false });
    standIn.setNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, status: { nodeInfo: { bootID: '11111111-2222-4333-8444-555555555555', machineID: 'ffffffffffffffffffffffffffffffff', systemUUID: '' } } });
    setAvailable(300 * Mi);
    for (let i = 0; i < 3; i++) {
      notifier.fire(Date.now());
      await new Promise((resolve) => setTimeout(resolve, 700));
    }
    expect(mutating(standIn).filter((r) => !r.path.endsWith('/events'))).toEqual([]);
    expect(terminator.calls).toEqual([]);
    expect(agent.readiness.reason()).toMatch(/the Node node-a is another machine: its bootID "11111111-2222-4333-8444-555555555555" is not this host's/);
    const warnings = standIn.events().filter((e) => e.reason === 'NodeIdentityMismatch');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'Node', name: 'node-a' } });
    expect(await agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_evictions_total')).toMatch(/result="refused"\} [1-9]/);
  });
});
