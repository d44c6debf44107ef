// deploy/node-restriction.yaml on the real kube-apiserver: the agent, with the token the kubelet
// would mount into its pod (bound to the agent's Pod, which is bound to node-a), may delete, evict
// and write the status of pods on node-a, and write only its own conditions and taints on node-a and
// Events from node-a; every one of those rights on node-b (and every other change to node-a) is
// refused with a 403 carrying the policy's message, a change to metadata (labels, annotations,
// finalizers, ownerReferences) included, through the Node, its status, a pod's status and Events
// alike. A token that names no node is refused everything. The policies fail closed, and never
// touch what kubelets, controllers and administrators do. Last, the real agent runs with such a
// token under the policies and does its work (NoExecute taint evictions through the Eviction API,
// Events, DisruptionTarget, its node conditions) unhindered.

import { join } from 'node:path';
import { nodeOfThisHost } from '../../src/compose/this-host.js';
import type { ApiClient, ApiResponse } from './harness/api-client.js';
import { CONTENT_TYPE } from './harness/api-client.js';
import { serviceAccountToken } from './harness/agent-identity.js';
import { REPO_ROOT } from './harness/binaries.js';
import { applyObject, loadManifest, type ManifestObject } from './harness/manifest.js';
import { startNodeScenario } from './harness/node-scenario.js';
import { createNamespace, createPod, listEvents, nodeCondition, setTaint, testPod } from './harness/objects.js';
import { agentPodOnNode, whoAmI, type AgentPod } from './harness/pod-bound-token.js';
import { e2eSuite, type TestContext } from './harness/suite.js';
import { waitFor } from './harness/wait.js';

const POLICY_FILE = join(REPO_ROOT, 'deploy', 'node-restriction.yaml');
const suite = e2eSuite({ nodeNames: ['node-a', 'node-b', 'node-agent'] });

const NS = 'restricted';
const PREFIX = 'kube-eviction-agent.io/';
const ADMIN_TAINT = { key: 'example.com/dedicated', value: 'batch', effect: 'NoSchedule' };
const AGENT_TAINT = { key: `${PREFIX}pressure`, value: 'memory', effect: 'NoSchedule' };
// The PSI node conditions' taint (psiConditions.taint): a key under the prefix, which the policy allows as it stands.
const PSI_TAINT = { key: `${PREFIX}memory-contention-pressure`, value: '', effect: 'NoSchedule' };
const POD_NAMES = ['a-pod', 'a-pod-2', 'a-pod-3', 'b-pod', 'b-pod-2', 'b-pod-3', 'b-pod-4'] as const;
type PodName = (typeof POD_NAMES)[number];

interface World {
  readonly agentPod: AgentPod;
  readonly agent: ApiClient;
  readonly uid: Readonly<Record<PodName, string>>;
}

let world: Promise<World> | null = null;

// Shared by every test of the file, built once: nothing here is cleaned up before the control
// plane is thrown away with the file.
function setUp(context: TestContext): Promise<World> {
  world ??= build(context);
  return world;
}

async function registerNode(context: TestContext, name: string, taints: readonly Record<string, string>[]): Promise<void> {
  // As the kubelet registers its Node: itself, with its status.
  const kubelet = context.plane.node(name);
  await kubelet.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const resources = { cpu: '2', memory: '8Gi', pods: '110' };
  await kubelet.patch(
    `/api/v1/nodes/${name}/status`,
    { status: { capacity: resources, allocatable: resources, conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'ready', lastHeartbeatTime: now, lastTransitionTime: now }] } },
    CONTENT_TYPE.strategicMergePatch,
  );
  if (taints.length > 0) await context.admin.patch(`/api/v1/nodes/${name}`, { spec: { taints } }, CONTENT_TYPE.mergePatch);
}

async function build(context: TestContext): Promise<World> {
  const { admin, identity } = context;
  for (const object of loadManifest(POLICY_FILE)) await applyObject(admin, object);
  await registerNode(context, 'node-a', [ADMIN_TAINT]);
  await registerNode(context, 'node-b', []);
  await createNamespace(admin, NS);
  const uid = {} as Record<PodName, string>;
  for (const name of POD_NAMES) uid[name] = (await createPod(admin, NS, testPod(name, { nodeName: name.startsWith('a-') ? 'node-a' : 'node-b' }))).metadata.uid as string;
  const agentPod = await agentPodOnNode(admin, identity, 'node-a');
  const agent = context.plane.client(agentPod.token);
  // The policies take effect once the API server's admission has loaded them (and, for evictions,
  // its pod cache): wait until a dry run of each kind of write on node-b is refused.
  const probes: (() => Promise<ApiResponse>)[] = [
    () => agent.request('DELETE', `/api/v1/namespaces/${NS}/pods/b-pod`, { query: { dryRun: 'All' } }),
    () => agent.request('POST', `/api/v1/namespaces/${NS}/pods/b-pod/eviction`, { query: { dryRun: 'All' }, body: eviction('b-pod', uid['b-pod']) }),
    () => agent.request('PATCH', '/api/v1/nodes/node-b/status', { query: { dryRun: 'All' }, contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('Probe') }),
    () => agent.request('POST', `/api/v1/namespaces/${NS}/events`, { query: { dryRun: 'All' }, body: event('node-b', { kind: 'Pod', name: 'b-pod', namespace: NS }) }),
  ];
  for (const probe of probes) {
    let last = '';
    await waitFor(
      async () => {
        const response = await probe();
        last = describe(response);
        return response.status === 403;
      },
      { what: 'the node-restriction policies to take effect', timeoutMs: 30_000, intervalMs: 250, detail: () => `last answer: ${last}` },
    );
  }
  return { agentPod, agent, uid };
}

function eviction(name: string, uid?: string, namespace = NS): Record<string, unknown> {
  return { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace }, deleteOptions: uid === undefined ? {} : { preconditions: { uid } } };
}

function agentCondition(type: string, status = 'True'): Record<string, unknown> {
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return { status: { conditions: [{ type: `${PREFIX}${type}`, status, reason: 'Test', message: 'set by the test', lastHeartbeatTime: now, lastTransitionTime: now }] } };
}

function event(sourceHost: string, involvedObject: Record<string, string>, namespace = NS, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  const now = new Date().toISOString();
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: `${involvedObject.name}.${Date.now().toString(16)}${Math.floor(Math.random() * 1e6).toString(16)}`, namespace, ...metadata },
    involvedObject: { apiVersion: 'v1', ...involvedObject },
    reason: 'Evicted',
    message: 'set by the test',
    type: 'Warning',
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: { component: 'kube-eviction-agent', host: sourceHost },
  };
}

async function nodeTaints(admin: ApiClient, name: string): Promise<{ taints: Record<string, string>[]; resourceVersion: string }> {
  const node = await admin.get<{ metadata: { resourceVersion: string }; spec: { taints?: Record<string, string>[] } }>(`/api/v1/nodes/${name}`);
  return { taints: node.spec.taints ?? [], resourceVersion: node.metadata.resourceVersion };
}

function describe(response: ApiResponse): string {
  return `${response.status} ${response.text}`;
}

suite.test('the pod-bound token names the pod and its node in every request (real kube-apiserver, ServiceAccountTokenPodNodeInfo)', async (context) => {
  const { agentPod } = await setUp(context);
  const user = await whoAmI(context.plane, agentPod.token);
  const node = await context.admin.get<{ metadata: { uid: string } }>('/api/v1/nodes/node-a');
  expect(user.username).toBe(context.identity.username);
  expect(user.groups).toEqual(expect.arrayContaining(['system:serviceaccounts', `system:serviceaccounts:${context.identity.namespace}`, 'system:authenticated']));
  expect(user.extra).toEqual({
    'authentication.kubernetes.io/node-name': ['node-a'],
    'authentication.kubernetes.io/node-uid': [node.metadata.uid],
    'authentication.kubernetes.io/pod-name': [agentPod.name],
    'authentication.kubernetes.io/pod-uid': [agentPod.uid],
    'authentication.kubernetes.io/credential-id': [expect.stringMatching(/^JTI=/)],
  });
  // A token not bound to a pod (the kind an administrator can mint) names no node.
  const unbound = await whoAmI(context.plane, context.identity.token);
  expect(Object.keys(unbound.extra ?? {}).filter((k) => k.includes('node'))).toEqual([]);
});

suite.test('on its own node the agent may evict, delete and mark pods, write its conditions and taint, and record Events (real kube-apiserver, ValidatingAdmissionPolicy)', async (context) => {
  const { agent, uid } = await setUp(context);
  const { admin } = context;
  const requests: { name: string; send: () => Promise<ApiResponse> }[] = [
    {
      name: 'the DisruptionTarget condition on a pod of node-a',
      send: () =>
        agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/a-pod/status`, {
          contentType: CONTENT_TYPE.strategicMergePatch,
          body: { metadata: { uid: uid['a-pod'] }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet', message: 'The node was low on resource: memory.' }] } },
        }),
    },
    { name: 'an Eviction of a pod of node-a, naming its UID', send: () => agent.request('POST', `/api/v1/namespaces/${NS}/pods/a-pod/eviction`, { body: eviction('a-pod', uid['a-pod']) }) },
    {
      // The status strategy keeps the deletion timestamp the eviction set: the metadata is as it was.
      name: 'the DisruptionTarget condition again, with a new message, on that pod now terminating',
      send: () =>
        agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/a-pod/status`, {
          contentType: CONTENT_TYPE.strategicMergePatch,
          body: { metadata: { uid: uid['a-pod'] }, status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' }] } },
        }),
    },
    { name: 'a DELETE of a pod of node-a', send: () => agent.request('DELETE', `/api/v1/namespaces/${NS}/pods/a-pod-2`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: uid['a-pod-2'] } } }) },
    { name: 'its own condition on node-a', send: () => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('MemoryPressure') }) },
    {
      name: 'its own NoSchedule taint on node-a, beside the administrator\'s',
      send: async () => {
        // As the agent does: read the Node, then patch its taints with that resourceVersion.
        const current = await nodeTaints(admin, 'node-a');
        return agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion: current.resourceVersion }, spec: { taints: [...current.taints, AGENT_TAINT] } } });
      },
    },
    {
      name: 'its own condition taken off node-a, every other one written back as read (cleanup)',
      send: async () => {
        const node = await admin.get<{ metadata: { resourceVersion: string }; status: { conditions: { type: string }[] } }>('/api/v1/nodes/node-a');
        const conditions = node.status.conditions.filter((c) => !c.type.startsWith(PREFIX));
        return agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion: node.metadata.resourceVersion }, status: { conditions } } });
      },
    },
    { name: 'its own condition on node-a again', send: () => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('MemoryPressure', 'False') }) },
    { name: 'its PSI condition on node-a', send: () => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('KubepodsMemoryContentionPressure', 'True') }) },
    {
      name: 'its PSI NoSchedule taint on node-a, beside the others',
      send: async () => {
        const current = await nodeTaints(admin, 'node-a');
        return agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion: current.resourceVersion }, spec: { taints: [...current.taints, PSI_TAINT] } } });
      },
    },
    { name: 'an Event about a pod, from node-a', send: () => agent.request('POST', `/api/v1/namespaces/${NS}/events`, { body: event('node-a', { kind: 'Pod', name: 'a-pod', namespace: NS, uid: uid['a-pod'] }) }) },
    {
      name: 'an annotated Event about a pod, from node-a (the Evicted Event names the offending containers)',
      send: () =>
        agent.request('POST', `/api/v1/namespaces/${NS}/events`, {
          body: event('node-a', { kind: 'Pod', name: 'a-pod', namespace: NS, uid: uid['a-pod'] }, NS, { annotations: { offending_containers: 'app', offending_containers_usage: '300Mi', starved_resource: 'memory' } }),
        }),
    },
    { name: 'an Event about node-a', send: () => agent.request('POST', '/api/v1/namespaces/default/events', { body: event('node-a', { kind: 'Node', name: 'node-a', uid: 'node-a' }, 'default') }) },
  ];
  const outcomes: Record<string, string> = {};
  for (const request of requests) {
    const response = await request.send();
    outcomes[request.name] = response.status >= 200 && response.status < 300 ? 'allowed' : describe(response);
  }
  expect(outcomes).toEqual(Object.fromEntries(requests.map((r) => [r.name, 'allowed'])));
  // What was written is there.
  const aPod = await admin.get<{ metadata: { deletionTimestamp?: string }; status: { conditions?: { type: string; reason?: string }[] } }>(`/api/v1/namespaces/${NS}/pods/a-pod`);
  expect(aPod.metadata.deletionTimestamp).toBeDefined();
  expect(aPod.status.conditions?.find((c) => c.type === 'DisruptionTarget')?.reason).toBe('DeletionByTaintManager');
  expect((await admin.request('GET', `/api/v1/namespaces/${NS}/pods/a-pod-2`)).status).toBe(404);
  expect((await nodeTaints(admin, 'node-a')).taints.map((t) => t.key)).toEqual([ADMIN_TAINT.key, AGENT_TAINT.key, PSI_TAINT.key]);
  const nodeA = await admin.get<{ status: { conditions: { type: string; status: string }[] } }>('/api/v1/nodes/node-a');
  expect(nodeA.status.conditions.map((c) => `${c.type}=${c.status}`).sort()).toEqual(['Ready=True', `${PREFIX}KubepodsMemoryContentionPressure=True`, `${PREFIX}MemoryPressure=False`]);
  // And it may take its taints off again.
  const tainted = await nodeTaints(admin, 'node-a');
  const removed = await agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { resourceVersion: tainted.resourceVersion }, spec: { taints: [ADMIN_TAINT] } } });
  expect(removed.status === 200 ? '' : describe(removed)).toBe('');
});

interface Refusal {
  readonly name: string;
  readonly policy: string;
  readonly send: (world: World, admin: ApiClient) => Promise<ApiResponse>;
  readonly message: string;
}

// A stolen token's ways into an object's metadata: what the garbage collector acts on
// (ownerReferences: the Node goes with the Namespace that "owns" it), what blocks a deletion
// (finalizers), what schedulers and admission trust (labels, such as node-restriction.kubernetes.io/,
// which NodeRestriction keeps even kubelets from setting), and annotations.
const FINALIZER = 'example.com/keep';

async function metadataField(admin: ApiClient): Promise<Record<'labels' | 'annotations' | 'finalizers' | 'ownerReferences', unknown>> {
  const namespace = await admin.get<{ metadata: { uid: string } }>(`/api/v1/namespaces/${NS}`);
  return {
    labels: { 'node-restriction.kubernetes.io/pool': 'trusted' },
    annotations: { 'example.com/owner': 'someone-else' },
    finalizers: [FINALIZER],
    ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: NS, uid: namespace.metadata.uid }],
  };
}

function nodeMetadata(field: string): string {
  return `kube-eviction-agent may change no metadata of node node-a (labels, annotations, finalizers, ownerReferences or any other): this request changes ${field}`;
}

function podMetadata(name: string): (field: string) => string {
  return (field) => `kube-eviction-agent may change no metadata of pod ${NS}/${name} (labels, annotations, finalizers, ownerReferences or any other): this request changes ${field}`;
}

/** One refusal per metadata field, each a merge patch of that field alone to `path`. */
function metadataRefusals(path: string, where: string, policy: string, message: (field: string) => string): Refusal[] {
  const article = { labels: 'a label', annotations: 'an annotation', finalizers: 'a finalizer', ownerReferences: 'an ownerReference' } as const;
  return (Object.keys(article) as (keyof typeof article)[]).map((field) => ({
    name: `${article[field]} on ${where} (${path.replace('/api/v1/', '')})`,
    policy,
    send: async ({ agent }, admin) => agent.request('PATCH', path, { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { [field]: (await metadataField(admin))[field] } } }),
    message: message(field),
  }));
}

const refusals: Refusal[] = [
  {
    name: 'deleting a pod of node-b',
    policy: 'kube-eviction-agent-pods',
    send: ({ agent, uid }) => agent.request('DELETE', `/api/v1/namespaces/${NS}/pods/b-pod`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: uid['b-pod'] } } }),
    message: `kube-eviction-agent on node node-a may delete pods and write pod status only on that node: pod ${NS}/b-pod is bound to node node-b`,
  },
  {
    name: 'the DisruptionTarget condition on a pod of node-b',
    policy: 'kube-eviction-agent-pods',
    send: ({ agent }) => agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/b-pod/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { conditions: [{ type: 'DisruptionTarget', status: 'True', reason: 'TerminationByKubelet' }] } } }),
    message: `kube-eviction-agent on node node-a may delete pods and write pod status only on that node: pod ${NS}/b-pod is bound to node node-b`,
  },
  {
    name: 'evicting a pod of node-b',
    policy: 'kube-eviction-agent-evictions',
    send: ({ agent, uid }) => agent.request('POST', `/api/v1/namespaces/${NS}/pods/b-pod/eviction`, { body: eviction('b-pod', uid['b-pod']) }),
    message: `kube-eviction-agent on node node-a may evict only pods on that node: pod ${NS}/b-pod is bound to node node-b`,
  },
  {
    name: 'an Eviction that names no UID',
    policy: 'kube-eviction-agent-evictions',
    send: ({ agent }) => agent.request('POST', `/api/v1/namespaces/${NS}/pods/a-pod-3/eviction`, { body: eviction('a-pod-3') }),
    message: `kube-eviction-agent must name the UID of the pod it evicts (deleteOptions.preconditions.uid): eviction of pod ${NS}/a-pod-3 has none`,
  },
  {
    name: "an Eviction of a pod of node-a naming another pod's UID",
    policy: 'kube-eviction-agent-evictions',
    send: ({ agent, uid }) => agent.request('POST', `/api/v1/namespaces/${NS}/pods/a-pod-3/eviction`, { body: eviction('a-pod-3', uid['b-pod']) }),
    message: `kube-eviction-agent on node node-a may evict only pods on that node: pod ${NS}/a-pod-3 does not have UID `,
  },
  {
    name: 'a condition on node-b',
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-b/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('MemoryPressure') }),
    message: 'kube-eviction-agent on node node-a may change only its own Node, not node node-b',
  },
  {
    name: 'its taint on node-b',
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-b', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { taints: [AGENT_TAINT] } } }),
    message: 'kube-eviction-agent on node node-a may change only its own Node, not node node-b',
  },
  {
    name: 'a label on node-a',
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { labels: { 'node-role.kubernetes.io/control-plane': '' } } } }),
    message: nodeMetadata('labels'),
  },
  {
    name: 'cordoning node-a',
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { unschedulable: true } } }),
    message: `kube-eviction-agent may change only its own taints (${PREFIX}...) in the spec of node node-a: this request changes unschedulable`,
  },
  {
    name: "node-a's providerID",
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { providerID: 'example://node-a' } } }),
    message: `kube-eviction-agent may change only its own taints (${PREFIX}...) in the spec of node node-a: this request changes providerID`,
  },
  ...metadataRefusals('/api/v1/nodes/node-a', 'the Node', 'kube-eviction-agent-node', nodeMetadata),
  ...metadataRefusals('/api/v1/nodes/node-a/status', 'the status of the Node', 'kube-eviction-agent-node', nodeMetadata),
  {
    name: "removing the administrator's taint from node-a",
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { taints: null } } }),
    message: `kube-eviction-agent may add or remove only its own NoSchedule taints (${PREFIX}...) on node node-a`,
  },
  {
    name: 'its taint on node-a with the NoExecute effect',
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { taints: [ADMIN_TAINT, { ...AGENT_TAINT, effect: 'NoExecute' }] } } }),
    message: `kube-eviction-agent may add or remove only its own NoSchedule taints (${PREFIX}...) on node node-a`,
  },
  {
    name: "the kubelet's Ready condition on node-a",
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Test' }] } } }),
    message: `kube-eviction-agent may write only its own conditions (${PREFIX}...) in the status of node node-a: this request changes conditions`,
  },
  {
    name: "node-a's capacity",
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.mergePatch, body: { status: { capacity: { memory: '1Ti' } } } }),
    message: `kube-eviction-agent may write only its own conditions (${PREFIX}...) in the status of node node-a: this request changes capacity`,
  },
  {
    name: "the volumes in use on node-a (a field of the status no rule names)",
    policy: 'kube-eviction-agent-node',
    send: ({ agent }) => agent.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.mergePatch, body: { status: { volumesInUse: ['kubernetes.io/csi/example.com^volume-1'] } } }),
    message: `kube-eviction-agent may write only its own conditions (${PREFIX}...) in the status of node node-a: this request changes volumesInUse`,
  },
  ...metadataRefusals(`/api/v1/namespaces/${NS}/pods/a-pod-3/status`, 'the status of a pod of node-a', 'kube-eviction-agent-pods', podMetadata('a-pod-3')).filter((r) => !r.name.startsWith('an ownerReference')),
  {
    name: 'a condition other than DisruptionTarget on a pod of node-a',
    policy: 'kube-eviction-agent-pods',
    send: ({ agent }) => agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/a-pod-3/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Test' }] } } }),
    message: `kube-eviction-agent may write only the DisruptionTarget condition in the status of pod ${NS}/a-pod-3: this request changes conditions`,
  },
  {
    name: 'the phase of a pod of node-a',
    policy: 'kube-eviction-agent-pods',
    send: ({ agent }) => agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/a-pod-3/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { phase: 'Failed' } } }),
    message: `kube-eviction-agent may write only the DisruptionTarget condition in the status of pod ${NS}/a-pod-3: this request changes phase`,
  },
  {
    name: 'an Event from node-b',
    policy: 'kube-eviction-agent-events',
    send: ({ agent }) => agent.request('POST', `/api/v1/namespaces/${NS}/events`, { body: event('node-b', { kind: 'Pod', name: 'b-pod', namespace: NS }) }),
    message: 'kube-eviction-agent on node node-a may record Events only with source.host node-a',
  },
  {
    name: 'an Event about node-b',
    policy: 'kube-eviction-agent-events',
    send: ({ agent }) => agent.request('POST', '/api/v1/namespaces/default/events', { body: event('node-a', { kind: 'Node', name: 'node-b', uid: 'node-b' }, 'default') }),
    message: 'kube-eviction-agent on node node-a may record Events about its own Node only, not node node-b',
  },
  ...(['labels', 'finalizers', 'ownerReferences'] as const).map(
    (field): Refusal => ({
      name: `an Event from node-a with ${field}`,
      policy: 'kube-eviction-agent-events',
      send: async ({ agent }, admin) => agent.request('POST', `/api/v1/namespaces/${NS}/events`, { body: event('node-a', { kind: 'Pod', name: 'a-pod-3', namespace: NS }, NS, { [field]: (await metadataField(admin))[field] }) }),
      message: `kube-eviction-agent may give an Event only a name, a namespace and annotations, not ${field}`,
    }),
  ),
  {
    name: 'a finalizer on an Event from node-a',
    policy: 'kube-eviction-agent-events',
    send: async ({ agent }, admin) => {
      const recorded = await admin.create<{ metadata: { name: string } }>(`/api/v1/namespaces/${NS}/events`, event('node-a', { kind: 'Pod', name: 'a-pod-3', namespace: NS }, NS, { name: 'a-pod-3.recorded' }));
      return agent.request('PATCH', `/api/v1/namespaces/${NS}/events/${recorded.metadata.name}`, { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { finalizers: [FINALIZER] } } });
    },
    message: `kube-eviction-agent may change no metadata of Event ${NS}/a-pod-3.recorded: this request changes finalizers`,
  },
];

suite.test("everywhere else every right is refused with a 403 carrying the policy's message, and nothing changes (real kube-apiserver, ValidatingAdmissionPolicy)", async (context) => {
  const w = await setUp(context);
  const { admin } = context;
  const nodeABefore = await admin.get<{ metadata: Record<string, unknown> & { labels: Record<string, string> }; spec: unknown; status: { capacity: unknown; conditions: unknown; volumesInUse?: unknown } }>('/api/v1/nodes/node-a');
  const podBefore = await admin.get<{ metadata: Record<string, unknown>; status: Record<string, unknown> }>(`/api/v1/namespaces/${NS}/pods/a-pod-3`);
  const nodeBBefore = await admin.get<{ spec: unknown; status: { conditions?: unknown } }>('/api/v1/nodes/node-b');
  const outcomes: Record<string, string> = {};
  for (const refusal of refusals) {
    const response = await refusal.send(w, admin);
    const body = response.body as { reason?: string; message?: string } | undefined;
    const expected = `ValidatingAdmissionPolicy '${refusal.policy}' with binding '${refusal.policy}' denied request: ${refusal.message}`;
    outcomes[refusal.name] = response.status === 403 && body?.reason === 'Forbidden' && (body.message ?? '').includes(expected) ? 'refused' : `${describe(response)} (expected 403 with: ${expected})`;
  }
  expect(outcomes).toEqual(Object.fromEntries(refusals.map((r) => [r.name, 'refused'])));
  // Nothing was done: the pods of node-b stand, untouched, and both Nodes are as they were.
  for (const name of ['b-pod', 'a-pod-3'] as const) {
    const pod = await admin.get<{ metadata: { deletionTimestamp?: string }; status: { conditions?: unknown[] } }>(`/api/v1/namespaces/${NS}/pods/${name}`);
    expect({ name, deleting: pod.metadata.deletionTimestamp !== undefined, conditions: pod.status.conditions ?? [] }).toEqual({ name, deleting: false, conditions: [] });
  }
  const nodeA = await admin.get<typeof nodeABefore>('/api/v1/nodes/node-a');
  expect({ labels: nodeA.metadata.labels, spec: nodeA.spec, capacity: nodeA.status.capacity }).toEqual({ labels: nodeABefore.metadata.labels, spec: nodeABefore.spec, capacity: nodeABefore.status.capacity });
  expect((nodeA.status.conditions as { type: string; status: string }[]).find((c) => c.type === 'Ready')?.status).toBe('True');
  // Not one write reached the metadata of node-a or of its pod: same resourceVersion, same fields.
  const metadataOf = (m: Record<string, unknown>): unknown => ({ ...m, managedFields: undefined });
  expect(metadataOf(nodeA.metadata)).toEqual(metadataOf(nodeABefore.metadata));
  expect(nodeA.status.volumesInUse).toEqual(nodeABefore.status.volumesInUse);
  const pod = await admin.get<typeof podBefore>(`/api/v1/namespaces/${NS}/pods/a-pod-3`);
  expect({ metadata: metadataOf(pod.metadata), status: pod.status }).toEqual({ metadata: metadataOf(podBefore.metadata), status: podBefore.status });
  const recorded = await admin.get<{ metadata: { finalizers?: string[] } }>(`/api/v1/namespaces/${NS}/events/a-pod-3.recorded`);
  expect(recorded.metadata.finalizers).toBeUndefined();
  expect((await admin.get<{ items: { metadata: Record<string, unknown> }[] }>(`/api/v1/namespaces/${NS}/events`)).items.filter((e) => ['labels', 'finalizers', 'ownerReferences'].some((k) => k in e.metadata))).toEqual([]);
  const nodeB = await admin.get<typeof nodeBBefore>('/api/v1/nodes/node-b');
  expect({ spec: nodeB.spec, conditions: nodeB.status.conditions }).toEqual({ spec: nodeBBefore.spec, conditions: nodeBBefore.status.conditions });
});

suite.test("an ownerReference sent to a pod's status is dropped by the API server before admission sees it: the write changes nothing (real kube-apiserver)", async (context) => {
  const { agent } = await setUp(context);
  const { admin } = context;
  const before = await admin.get<{ metadata: { resourceVersion: string; ownerReferences?: unknown[] } }>(`/api/v1/namespaces/${NS}/pods/a-pod-3`);
  const { ownerReferences } = await metadataField(admin);
  const response = await agent.request('PATCH', `/api/v1/namespaces/${NS}/pods/a-pod-3/status`, { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { ownerReferences } } });
  expect(response.status === 200 ? '' : describe(response)).toBe('');
  const after = await admin.get<typeof before>(`/api/v1/namespaces/${NS}/pods/a-pod-3`);
  expect(after.metadata.ownerReferences).toBeUndefined();
  // Not even written: the pod status strategy puts the owner references back, and an update that changes nothing is not stored.
  expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
});

suite.test('a token of the agent that names no node is refused every write, even on node-a (real kube-apiserver, ValidatingAdmissionPolicy)', async (context) => {
  const { uid } = await setUp(context);
  const unbound = context.plane.client(context.identity.token);
  const requests: Record<string, () => Promise<ApiResponse>> = {
    'delete a pod of node-a': () => unbound.request('DELETE', `/api/v1/namespaces/${NS}/pods/a-pod-3`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: uid['a-pod-3'] } } }),
    'evict a pod of node-a': () => unbound.request('POST', `/api/v1/namespaces/${NS}/pods/a-pod-3/eviction`, { body: eviction('a-pod-3', uid['a-pod-3']) }),
    'a condition on node-a': () => unbound.request('PATCH', '/api/v1/nodes/node-a/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: agentCondition('MemoryPressure') }),
    'an Event from node-a': () => unbound.request('POST', `/api/v1/namespaces/${NS}/events`, { body: event('node-a', { kind: 'Pod', name: 'a-pod-3', namespace: NS }) }),
  };
  const outcomes: Record<string, string> = {};
  for (const [name, send] of Object.entries(requests)) {
    const response = await send();
    outcomes[name] = response.status === 403 && response.text.includes('the token names no node; kube-eviction-agent acts only with the pod-bound token the kubelet mounts into its pod') ? 'refused' : describe(response);
  }
  expect(outcomes).toEqual(Object.fromEntries(Object.keys(requests).map((name) => [name, 'refused'])));
});

suite.test('kubelets, controllers and administrators are not held by the policies (real kube-apiserver, ValidatingAdmissionPolicy)', async (context) => {
  const { uid } = await setUp(context);
  const { admin, plane } = context;
  // A controller's ServiceAccount with the rights the node lifecycle and taint-eviction controllers use.
  await admin.create('/api/v1/namespaces/kube-system/serviceaccounts', { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'e2e-node-controller' } });
  await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterroles', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'e2e-node-controller' },
    rules: [
      { apiGroups: [''], resources: ['pods'], verbs: ['delete'] },
      { apiGroups: [''], resources: ['pods/eviction'], verbs: ['create'] },
      { apiGroups: [''], resources: ['nodes', 'nodes/status'], verbs: ['get', 'patch'] },
    ],
  });
  await admin.create('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'e2e-node-controller' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-node-controller' },
    subjects: [{ kind: 'ServiceAccount', name: 'e2e-node-controller', namespace: 'kube-system' }],
  });
  const controller = plane.client(await serviceAccountToken(admin, 'kube-system', 'e2e-node-controller'));
  const kubelet = plane.node('node-b');
  const requests: Record<string, () => Promise<ApiResponse>> = {
    "node-b's kubelet writes its Ready condition": () =>
      kubelet.request('PATCH', '/api/v1/nodes/node-b/status', { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'still ready' }] } } }),
    "node-b's kubelet marks its pod failed": () => kubelet.request('PATCH', `/api/v1/namespaces/${NS}/pods/b-pod-2/status`, { contentType: CONTENT_TYPE.strategicMergePatch, body: { status: { phase: 'Failed', reason: 'Evicted' } } }),
    "node-b's kubelet deletes its pod": () => kubelet.request('DELETE', `/api/v1/namespaces/${NS}/pods/b-pod-2`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 } }),
    'a controller taints node-b NoExecute': () => controller.request('PATCH', '/api/v1/nodes/node-b', { contentType: CONTENT_TYPE.mergePatch, body: { spec: { taints: [{ key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' }] } } }),
    'a controller evicts a pod of node-b': () => controller.request('POST', `/api/v1/namespaces/${NS}/pods/b-pod-3/eviction`, { body: eviction('b-pod-3') }),
    'an administrator deletes a pod of node-b': () => admin.request('DELETE', `/api/v1/namespaces/${NS}/pods/b-pod-4`, { body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 } }),
    'an administrator labels node-b': () => admin.request('PATCH', '/api/v1/nodes/node-b', { contentType: CONTENT_TYPE.mergePatch, body: { metadata: { labels: { 'example.com/pool': 'batch' } }, spec: { taints: null } } }),
  };
  const outcomes: Record<string, string> = {};
  for (const [name, send] of Object.entries(requests)) {
    const response = await send();
    outcomes[name] = response.status >= 200 && response.status < 300 ? 'allowed' : describe(response);
  }
  expect(outcomes).toEqual(Object.fromEntries(Object.keys(requests).map((name) => [name, 'allowed'])));
  expect(uid['b-pod-3']).toBeDefined();
});

const POLICY_NAMES = ['kube-eviction-agent-pods', 'kube-eviction-agent-evictions', 'kube-eviction-agent-node', 'kube-eviction-agent-events'];

interface PolicyObject {
  spec: { failurePolicy: string };
}

suite.test('every policy has a binding and fails closed: an Eviction the policy cannot evaluate is refused, and let through only with failurePolicy Ignore (real kube-apiserver)', async (context) => {
  const { agent } = await setUp(context);
  const { admin } = context;
  const objects = loadManifest(POLICY_FILE);
  const policies = objects.filter((o: ManifestObject) => o.kind === 'ValidatingAdmissionPolicy');
  const bindings = objects.filter((o: ManifestObject) => o.kind === 'ValidatingAdmissionPolicyBinding') as (ManifestObject & { spec: { policyName: string; validationActions: string[] } })[];
  expect(policies.map((p) => p.metadata.name)).toEqual(POLICY_NAMES);
  expect(bindings.map((b) => [b.spec.policyName, b.spec.validationActions])).toEqual(POLICY_NAMES.map((name) => [name, ['Deny']]));
  for (const name of POLICY_NAMES) {
    const policy = await admin.get<PolicyObject>(`/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${name}`);
    expect({ name, failurePolicy: policy.spec.failurePolicy }).toEqual({ name, failurePolicy: 'Fail' });
  }

  // A namespace without a single pod gives the eviction policy no parameters: the binding cannot be
  // evaluated, and with failurePolicy Fail that refuses the request.
  await createNamespace(admin, 'no-pods');
  const evictGhost = (): Promise<ApiResponse> => agent.request('POST', '/api/v1/namespaces/no-pods/pods/ghost/eviction', { body: eviction('ghost', '00000000-0000-4000-8000-000000000000', 'no-pods') });
  const refused = await evictGhost();
  expect(refused.status === 422 && refused.text.includes('no params found for policy binding') ? 'refused' : describe(refused)).toBe('refused');
  const path = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/kube-eviction-agent-evictions';
  context.defer(async () => {
    await admin.patch(path, { spec: { failurePolicy: 'Fail' } }, CONTENT_TYPE.mergePatch);
  });
  await admin.patch(path, { spec: { failurePolicy: 'Ignore' } }, CONTENT_TYPE.mergePatch);
  // Failing open, the request reaches the Eviction API, which has no such pod.
  await waitFor(async () => (await evictGhost()).status === 404, { what: 'the Eviction to pass the policy that fails open', timeoutMs: 30_000, intervalMs: 250 });
  await admin.patch(path, { spec: { failurePolicy: 'Fail' } }, CONTENT_TYPE.mergePatch);
  await waitFor(async () => (await evictGhost()).status === 422, { what: 'the Eviction to be refused again', timeoutMs: 30_000, intervalMs: 250 });
});

const AGENT_CONFIG = `
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: 100Mi
notifier:
  mode: disabled
taintEviction:
  enabled: true
  useEvictionApi: true
server:
  address: 127.0.0.1
  port: 0
logLevel: debug
`;

const NO_EXECUTE = { key: 'e2e.kube-eviction-agent.io/maintenance', value: 'true', effect: 'NoExecute' } as const;

suite.test('the agent itself, with its pod-bound token, does its work under the policies: a NoExecute taint eviction through the Eviction API, its Events, the DisruptionTarget condition and its node conditions (real kube-apiserver)', async (context) => {
  await setUp(context);
  const { admin, identity } = context;
  let token = '';
  // The scenario starts the agent with the identity's token: this one, bound to the agent's pod on node-agent.
  const scenario = await startNodeScenario({ ...context, identity: { ...identity, get token() { return token; } } }, { nodeName: 'node-agent', namespace: 'agent-under-policy' });
  token = (await agentPodOnNode(admin, identity, 'node-agent')).token;
  // The agent acts only on the Node of its own host: this one carries this machine's nodeInfo, as a
  // kubelet here would report it.
  await context.plane.node('node-agent').patch('/api/v1/nodes/node-agent/status', { status: nodeOfThisHost('node-agent').status }, CONTENT_TYPE.strategicMergePatch);
  await scenario.runPods([{ name: 'intolerant' }]);
  const agent = await scenario.startAgent(AGENT_CONFIG);
  context.defer(() => setTaint(admin, 'node-agent', NO_EXECUTE, false));
  await setTaint(admin, 'node-agent', NO_EXECUTE, true);
  await scenario.pods.waitDeleted('intolerant', 30_000);
  const events = await waitFor(
    async () => {
      const found = await listEvents(admin, 'agent-under-policy', 'TaintManagerEviction');
      return found.length >= 1 ? found : undefined;
    },
    { what: 'the TaintManagerEviction event', timeoutMs: 10_000 },
  );
  expect(events.map((e) => e.involvedObject.name)).toEqual(['intolerant']);
  expect(scenario.pods.first('intolerant', (p) => p.status?.conditions?.some((c) => c.type === 'DisruptionTarget') === true)).toBeDefined();
  // Its node conditions, through nodes/status, under the metadata and status rules.
  await waitFor(async () => (await nodeCondition(admin, 'node-agent', `${PREFIX}MemoryPressure`))?.status === 'False', { what: "the agent's MemoryPressure condition on node-agent", timeoutMs: 10_000 });
  // Not one of its requests was refused.
  const refusedLines = agent.log.lines.filter((l) => /\b(403|422)\b|forbidden|ValidatingAdmissionPolicy/i.test(JSON.stringify(l)));
  expect(refusedLines).toEqual([]);
  expect(agent.log.refusals()).toEqual([]);
}, 120_000);
