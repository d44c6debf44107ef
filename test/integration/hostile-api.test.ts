// The running agent against a hostile API server: the in-process stand-in, through the real
// Kubernetes client, serving what a compromised or broken server could (pods with crafted UIDs,
// other nodes' pods in this node's field-selected list and watch, a pod replaced under its name
// between the decision and the DELETE, a Node that is another machine), while the node is under
// hard memory pressure and each crafted pod is the biggest user of memory. Each case asserts
// outcomes: which requests reached the server, what the terminator was asked to end, and the log
// line, metric or readiness check that names the refusal. The worst a bad answer may do is make
// the agent refuse.

import type { Node } from '../../src/api/pod.js';
import { systemClock } from '../../src/api/clock.js';
import { parseConfigText } from '../../src/config/load.js';
import { startAgent, type RunningAgent } from '../../src/daemon/agent.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn, type RecordedRequest } from '../../src/demo/api-stand-in.js';
import { connect } from '../../src/kube/index.js';
import type { HostIdentity } from '../../src/api/host-identity.js';
import { FakeNotifier, FakeObserver, FakeTerminator, memorySummary } from '../fakes/fake-node.js';
import { RecordingLogger } from '../fakes/recording-logger.js';
import { makePod, mirrorAnnotations } from '../fixtures/pods.js';
import { waitFor } from '../helpers/wait-for.js';

// The host the agent runs on, as its files say, and its Node as its kubelet registers it.
const HOST: HostIdentity = { bootID: '3f2a9c1e-7b4d-4e8f-a6c5-1d0b9e8f7a6c', machineID: '8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a39', systemUUID: 'ec2a1b3c-4d5e-4f60-8172-93a4b5c6d7e8', problems: [] };
const NODE_INFO = { bootID: HOST.bootID ?? '', machineID: HOST.machineID ?? '', systemUUID: HOST.systemUUID ?? '' };
const nodeA = (nodeInfo = NODE_INFO): Node => ({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' }, status: { nodeInfo } });

const Mi = 1024 ** 2;
const Gi = 1024 ** 3;

const CONFIG = `
evictionHard:
  memory.available: 500Mi
evictionMaxPodGracePeriod: 10
housekeepingInterval: 1s
evictionPressureTransitionPeriod: 2s
actions:
  podCleanupTimeout: 1s
`;

/** A crafted pod: its name, what the server says of it, and how much memory it is said to use. */
interface CraftedPod {
  readonly name: string;
  readonly uid?: string;
  readonly nodeName?: string;
  /** The UID of an earlier pod, by name: one UID for two pods. */
  readonly uidOf?: string;
  readonly annotations?: Record<string, string>;
  readonly bytes: number;
}

interface Hostile {
  readonly standIn: ApiStandIn;
  readonly agent: RunningAgent;
  readonly notifier: FakeNotifier;
  readonly observer: FakeObserver;
  readonly terminator: FakeTerminator;
  readonly logger: RecordingLogger;
  /** Each pod's UID as the server handed it out, by name. */
  readonly uids: Record<string, string>;
  setAvailable(bytes: number): void;
}

const sleep = async (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const running: Hostile[] = [];

/**
 * The agent for node-a, its stand-in serving `leaky` (a genuine pod of node-a, 1 GiB) and the
 * crafted pods; `node` replaces this host's Node.
 */
async function hostile(crafted: readonly CraftedPod[], options: { ignoreFieldSelectors?: boolean; node?: Node } = {}): Promise<Hostile> {
  const standIn = await startApiStandIn({ ignoreFieldSelectors: options.ignoreFieldSelectors ?? false });
  standIn.setNode(options.node ?? nodeA());
  const uids: Record<string, string> = {};
  const usage: Record<string, { name: string; bytes: number }> = {};
  const pods: CraftedPod[] = [{ name: 'leaky', nodeName: 'node-a', bytes: 1 * Gi }, ...crafted];
  for (const spec of pods) {
    const pod = makePod({ name: spec.name, requests: { memory: '100Mi' }, nodeName: spec.nodeName ?? 'node-a', annotations: spec.annotations });
    const { uid: _fresh, ...metadata } = pod.metadata;
    void _fresh;
    if (spec.nodeName === '') delete pod.spec.nodeName;
    const uid = spec.uidOf === undefined ? spec.uid : uids[spec.uidOf];
    const created = standIn.createPod({ ...pod, metadata, status: { phase: 'Running' } }, uid === undefined ? {} : { uid });
    uids[spec.name] = created.metadata.uid ?? '';
    // The stats say what the server says: the worst case, a crafted pod the biggest user.
    usage[created.metadata.uid ?? ''] = { name: spec.name, bytes: spec.bytes };
  }
  const observer = new FakeObserver();
  const setAvailable = (bytes: number): void => {
    observer.summary = memorySummary(16 * Gi, bytes, usage);
  };
  setAvailable(8 * Gi);
  const notifier = new FakeNotifier();
  const terminator = new FakeTerminator();
  const logger = new RecordingLogger();
  const client = await connect({ kubeconfigYaml: kubeconfigFor(standIn), nodeName: 'node-a', clock: systemClock, logger, requestTimeoutMs: 500, watchBackoff: { initialDelayMs: 50, maxDelayMs: 500, factor: 2, jitterRatio: 0.1 } });
  const agent = await startAgent(
    { config: parseConfigText(CONFIG, 'test.yaml'), nodeName: 'node-a', reload: null, serverPort: 0 },
    { cluster: client.clusterView(), actions: client.podActions(), events: client.eventRecorder('kube-eviction-agent'), nodeReporter: client.nodeReporter(), observer, notifier, terminator, hostIdentity: HOST, clock: systemClock, logger },
  );
  const setup = { standIn, agent, notifier, observer, terminator, logger, uids, setAvailable };
  running.push(setup);
  await waitFor('a first pass', () => observer.observedPods.length > 0);
  return setup;
}

afterEach(async () => {
  for (const s of running.splice(0)) {
    await s.agent.stop();
    await s.standIn.stop();
  }
});

/** Requests that change something, but Events (which name pods without acting on them). */
const actions = (standIn: ApiStandIn): RecordedRequest[] => standIn.requests().filter((r) => r.method !== 'GET' && !r.path.endsWith('/events'));
const touching = (standIn: ApiStandIn, name: string): RecordedRequest[] => actions(standIn).filter((r) => r.path.includes(`/pods/${name}`));
/** The UIDs the terminator was asked to end (a pod still there under hard pressure is asked again). */
const signalled = (h: Hostile): string[] => [...new Set(h.terminator.calls.map((c) => c.uid))];
const preconditionUid = (r: RecordedRequest): string | undefined => (r.body as { preconditions?: { uid?: string } } | undefined)?.preconditions?.uid;

/** Hard pressure for `ms`, with a kernel notification at its start. */
async function underPressure(h: Hostile, ms: number): Promise<void> {
  h.setAvailable(300 * Mi);
  h.notifier.fire(Date.now());
  await sleep(ms);
}

const REAL = '0b7e4f39-3c1d-4c8e-9f0a-6d2b5e8a1c47';

// Every form a UID must not take: the pod's cgroup is `kubepods/<qos>/pod<uid>`, and its log
// directory `<namespace>_<name>_<uid>`.
const CRAFTED_UIDS: readonly [string, string][] = [
  ['a traversal out of the pod cgroup', `${REAL}/../../..`],
  ['a slash', `${REAL.slice(0, 8)}/${REAL.slice(9)}`],
  ['".."', '..'],
  ['an absolute path', '/sys/fs/cgroup/memory'],
  ['empty', ''],
  ['very long (64 KiB)', 'a'.repeat(64 * 1024)],
  ['a unicode digit', `${REAL.slice(0, -1)}\u0665`],
  ['a fullwidth letter', `${REAL.slice(0, -1)}\uff46`],
  ['uppercase hex', REAL.toUpperCase()],
  ['a NUL', `${REAL}\u0000`],
  ['a newline', `${REAL}\n..`],
  ['a glob', `${REAL.slice(0, -1)}*`],
];

describe('the agent against a hostile API server', () => {
  test.each(CRAFTED_UIDS)('a pod whose UID is %s: never evicted, deleted or signalled, and refused in a log line and a metric', async (_what, uid) => {
    const h = await hostile([{ name: 'crafted', uid, bytes: 6 * Gi }]);
    await underPressure(h, 3000);
    expect(touching(h.standIn, 'crafted')).toEqual([]);
    expect(signalled(h)).toEqual([h.uids.leaky]);
    // The genuine pod is evicted: the agent keeps working beside the crafted one.
    expect(touching(h.standIn, 'leaky').some((r) => r.method === 'DELETE' && preconditionUid(r) === h.uids.leaky)).toBe(true);
    const refusals = h.logger.lines.filter((l) => l.msg.startsWith('pod refused') && l.fields.pod === 'default/crafted');
    expect(refusals).toHaveLength(1);
    expect(String(refusals[0]?.fields.reason)).toMatch(/UID .* is not in the API server's form/);
    expect(await h.agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_refused_pods')).toMatch(/reason="uid"\} 1/);
  });

  test.each([
    ['another node', 'node-b'],
    ['no node (not scheduled)', ''],
    ['a node named like this one with a suffix', 'node-a2'],
  ])('a field selector the server ignores: a pod bound to %s is never evicted, deleted or signalled, and refused', async (_what, nodeName) => {
    const h = await hostile([{ name: 'elsewhere', nodeName, bytes: 6 * Gi }], { ignoreFieldSelectors: true });
    await underPressure(h, 3000);
    expect(touching(h.standIn, 'elsewhere')).toEqual([]);
    expect(signalled(h)).toEqual([h.uids.leaky]);
    expect(touching(h.standIn, 'leaky').some((r) => r.method === 'DELETE')).toBe(true);
    // Nor was it measured as one of this node's pods.
    expect(h.observer.observedPods.every((pods) => pods.every((p) => p.metadata.name !== 'elsewhere'))).toBe(true);
    const refusal = h.logger.lines.find((l) => l.msg.startsWith('pod refused') && l.fields.pod === 'default/elsewhere');
    expect(String(refusal?.fields.reason)).toContain(`bound to ${nodeName === '' ? 'no node' : `"${nodeName}"`}`);
    expect(await h.agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_refused_pods')).toMatch(/reason="other-node"\} 1/);
  });

  test('a mirror pod whose static pod UID (its cgroup\'s name) is a traversal: refused, and never acted on', async () => {
    const h = await hostile([{ name: 'static-web', annotations: mirrorAnnotations('../../..'), bytes: 6 * Gi }]);
    await underPressure(h, 3000);
    expect(touching(h.standIn, 'static-web')).toEqual([]);
    expect(signalled(h)).toEqual([h.uids.leaky]);
    const refusal = h.logger.lines.find((l) => l.msg.startsWith('pod refused') && l.fields.pod === 'default/static-web');
    expect(String(refusal?.fields.reason)).toMatch(/kubernetes\.io\/config\.mirror annotation "\.\.\/\.\.\/\.\." is not a static pod UID/);
  });

  test('a pod named as a path to another object: refused, and no request reaches anything but the genuine pod and the Node\'s status', async () => {
    const h = await hostile([{ name: '../../../nodes/node-a', bytes: 6 * Gi }]);
    await underPressure(h, 3000);
    for (const r of actions(h.standIn)) expect(`${r.method} ${r.path}`).toMatch(/^(DELETE|POST|PATCH) \/api\/v1\/namespaces\/default\/pods\/leaky(\/status|\/eviction)?$|^PATCH \/api\/v1\/nodes\/node-a(\/status)?$/);
    expect(h.standIn.node('node-a')).not.toBeNull();
    expect(signalled(h)).toEqual([h.uids.leaky]);
    const refusal = h.logger.lines.find((l) => l.msg.startsWith('pod refused'));
    expect(refusal?.fields).toMatchObject({ pod: '"default/../../../nodes/node-a" (29 characters)' });
    expect(String(refusal?.fields.reason)).toMatch(/is not a DNS-1123 subdomain/);
    expect(await h.agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_refused_pods')).toMatch(/reason="name"\} 1/);
  });

  test('one UID for two pods (an impostor given the genuine pod\'s): neither is trusted, nothing is evicted or signalled', async () => {
    const h = await hostile([{ name: 'impostor', uidOf: 'leaky', bytes: 6 * Gi }]);
    await underPressure(h, 3000);
    expect(actions(h.standIn).filter((r) => r.path.includes('/pods/'))).toEqual([]);
    expect(h.terminator.calls).toEqual([]);
    const refused = h.logger.lines.filter((l) => l.msg.startsWith('pod refused')).map((l) => [l.fields.pod, l.fields.reason]);
    expect(refused).toEqual([
      ['default/leaky', expect.stringContaining('is also listed for "default/impostor"')],
      ['default/impostor', expect.stringContaining('is also listed for "default/leaky"')],
    ]);
    expect(await h.agent.metrics.registry.getSingleMetricAsString('kube_eviction_agent_refused_pods')).toMatch(/reason="uid"\} 2/);
  });

  test('a pod moved to another node by a watch event: it leaves the agent\'s pods at once and is never acted on', async () => {
    const h = await hostile([{ name: 'moved', bytes: 6 * Gi }], { ignoreFieldSelectors: true });
    await waitFor('the pod observed', () => h.observer.observedPods.at(-1)?.some((p) => p.metadata.name === 'moved') === true);
    h.standIn.updatePod('default', 'moved', (p) => {
      p.spec.nodeName = 'node-b';
    });
    await sleep(500); // the MODIFIED event arrives
    await underPressure(h, 3000);
    expect(touching(h.standIn, 'moved')).toEqual([]);
    expect(signalled(h)).toEqual([h.uids.leaky]);
    expect(h.logger.lines.filter((l) => l.msg.startsWith('pod refused') && l.fields.pod === 'default/moved')).toHaveLength(1);
  });

  test('the pod replaced under its name between the decision and the DELETE: the DELETE carries the old UID, the 409 is a refusal, never retried, and the replacement is untouched', async () => {
    const h = await hostile([]);
    const old = h.uids.leaky ?? '';
    // The server holds the DELETE 300 ms; meanwhile the pod is replaced by one of the same name.
    h.standIn.injectFault({ method: 'DELETE', pathPattern: /\/pods\/leaky(\?|$)/, delayMs: 300, count: 1 });
    h.setAvailable(300 * Mi);
    h.notifier.fire(Date.now());
    await waitFor('the DELETE', () => touching(h.standIn, 'leaky').some((r) => r.method === 'DELETE'));
    h.standIn.deletePodNow('default', 'leaky');
    const replacement = h.standIn.createPod({ ...makePod({ name: 'leaky', nodeName: 'node-a' }), metadata: { name: 'leaky', namespace: 'default' }, status: { phase: 'Running' } });
    h.setAvailable(8 * Gi); // the old pod's processes are gone
    await waitFor('the answer to the DELETE', () => touching(h.standIn, 'leaky').find((r) => r.method === 'DELETE')?.status !== 0);
    // Long enough for retries of a failed deletion (every 2 s at first) and several passes.
    await sleep(3500);
    const deletes = touching(h.standIn, 'leaky').filter((r) => r.method === 'DELETE');
    expect(deletes.map((r) => [preconditionUid(r), r.status])).toEqual([[old, 409]]);
    expect(h.terminator.calls.map((c) => c.uid)).toEqual([old]);
    expect(h.standIn.pod('default', 'leaky')?.metadata.uid).toBe(replacement.metadata.uid);
    expect(h.standIn.pod('default', 'leaky')?.metadata.deletionTimestamp).toBeUndefined();
  });

  test.each([
    ['bootID', { ...NODE_INFO, bootID: '11111111-2222-4333-8444-555555555555' }],
    ['systemUUID', { ...NODE_INFO, systemUUID: '99999999-8888-4777-8666-555555555555' }],
    ['machineID', { ...NODE_INFO, machineID: 'ffffffffffffffffffffffffffffffff' }],
  ])('a Node whose %s is not this host\'s: the agent acts on nothing, is not ready and says why', async (field, nodeInfo) => {
    const h = await hostile([], { node: nodeA(nodeInfo) });
    await underPressure(h, 2500);
    expect(actions(h.standIn)).toEqual([]);
    expect(h.terminator.calls).toEqual([]);
    expect(h.agent.readiness.reason()).toMatch(new RegExp(`the Node node-a is another machine: its ${field} .* is not this host's`));
    expect(h.logger.lines.some((l) => l.level !== 'debug' && /another machine/.test(`${l.msg} ${JSON.stringify(l.fields)}`))).toBe(true);
    expect(h.standIn.events().filter((e) => e.reason === 'NodeIdentityMismatch')).toHaveLength(1);
  });
});
