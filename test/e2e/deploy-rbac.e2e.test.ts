// deploy/daemonset.yaml against a real kube-apiserver (real API server, RBAC): the whole file
// passes server-side validation and admission (a dry-run apply of every object, the DaemonSet and
// the ConfigMap included), the agent's ClusterRole grants exactly the rights the agent uses, and
// the agent's ServiceAccount is refused everything else, by the authorizer and on real requests.

import { ApiError } from './harness/api-client.js';
import { RBAC_KINDS } from './harness/agent-identity.js';
import { applyObject, describeObject, loadManifest, objectPath } from './harness/manifest.js';
import { e2eSuite } from './harness/suite.js';

const suite = e2eSuite({ nodeNames: ['node-a'] });

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

// Every right the agent uses with the manifest's configuration, as `group/resource:verb` (core group
// empty), and the call that needs it. Not nodes/stats: only observe.source kubelet reads the kubelet's
// /stats/summary, and the chart grants it only then (test/deploy/chart.test.ts).
const EXPECTED_RIGHTS: Readonly<Record<string, string>> = {
  '/pods:get': 'the executor re-reads a pod right before acting on it',
  '/pods:list': 'the pod view lists the pods of its node (spec.nodeName field selector)',
  '/pods:watch': 'the pod view watches the pods of its node',
  '/pods:delete': 'hard evictions and NoExecute taint evictions delete the pod',
  '/pods/eviction:create': 'soft evictions go through the Eviction API',
  '/pods/status:patch': 'the DisruptionTarget condition on an evicted pod',
  '/nodes:get': 'the node reporter reads its Node before patching it',
  '/nodes:list': 'the node view lists its own Node (metadata.name field selector)',
  '/nodes:watch': 'the node view watches its own Node',
  '/nodes:patch': 'the optional NoSchedule pressure taint',
  '/nodes/status:patch': 'the agent\'s node conditions',
  '/events:create': 'Evicted, EvictionThresholdMet and TaintManagerEviction Events',
  '/events:patch': 'repeated Events',
  'apps/replicasets:get': 'the eviction storm guard names an evicted pod\'s Deployment from its ReplicaSet',
};

function rights(rules: readonly PolicyRule[]): string[] {
  const out: string[] = [];
  for (const rule of rules) {
    for (const group of rule.apiGroups ?? []) for (const resource of rule.resources ?? []) for (const verb of rule.verbs) out.push(`${group}/${resource}:${verb}`);
  }
  return [...new Set(out)].sort();
}

suite.test('the whole deploy/daemonset.yaml passes a server-side dry-run apply (real kube-apiserver)', async ({ admin }) => {
  const manifest = loadManifest();
  expect(manifest.map((o) => o.kind)).toEqual(expect.arrayContaining(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'ConfigMap', 'DaemonSet']));
  const failures: string[] = [];
  for (const object of manifest) {
    try {
      const answer = await applyObject<{ metadata: { uid?: string } }>(admin, object, { dryRun: true });
      expect(answer.metadata.uid).toBeDefined();
    } catch (err) {
      failures.push(`${describeObject(object)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  expect(failures).toEqual([]);
  // A dry run stores nothing: only the RBAC objects the suite applied for real exist.
  const ds = await admin.request('GET', '/apis/apps/v1/namespaces/kube-eviction-agent/daemonsets/kube-eviction-agent');
  expect(ds.status).toBe(404);
});

suite.test('the agent\'s ClusterRole grants exactly the rights the agent uses, with no wildcards (real kube-apiserver, RBAC)', async ({ admin, identity }) => {
  const role = await admin.get<{ rules: PolicyRule[] }>(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${identity.clusterRole}`);
  for (const rule of role.rules) {
    expect(rule.nonResourceURLs ?? []).toEqual([]);
    expect(rule.resourceNames ?? []).toEqual([]);
    expect([...(rule.apiGroups ?? []), ...(rule.resources ?? []), ...rule.verbs]).not.toContain('*');
  }
  expect(rights(role.rules)).toEqual(Object.keys(EXPECTED_RIGHTS).sort());
  const binding = await admin.get<{ roleRef: { name: string }; subjects: { kind: string; name: string; namespace?: string }[] }>(
    `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${identity.clusterRole}`,
  );
  expect(binding.roleRef.name).toBe(identity.clusterRole);
  expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: identity.serviceAccount, namespace: identity.namespace }]);
});

interface AccessCase {
  readonly name: string;
  readonly attributes: { verb: string; resource: string; subresource?: string; group?: string; namespace?: string; name?: string };
  readonly allowed: boolean;
}

const accessCases: AccessCase[] = [
  { name: 'list pods in all namespaces', attributes: { verb: 'list', resource: 'pods' }, allowed: true },
  { name: 'create an eviction', attributes: { verb: 'create', resource: 'pods', subresource: 'eviction', namespace: 'app' }, allowed: true },
  { name: 'patch node status', attributes: { verb: 'patch', resource: 'nodes', subresource: 'status', name: 'node-a' }, allowed: true },
  { name: 'create events', attributes: { verb: 'create', resource: 'events', namespace: 'app' }, allowed: true },
  { name: 'get secrets', attributes: { verb: 'get', resource: 'secrets', namespace: 'kube-system' }, allowed: false },
  { name: 'list secrets', attributes: { verb: 'list', resource: 'secrets' }, allowed: false },
  { name: 'get configmaps', attributes: { verb: 'get', resource: 'configmaps', namespace: 'kube-eviction-agent' }, allowed: false },
  { name: 'create pods', attributes: { verb: 'create', resource: 'pods', namespace: 'app' }, allowed: false },
  { name: 'update pods', attributes: { verb: 'update', resource: 'pods', namespace: 'app' }, allowed: false },
  { name: 'patch pods', attributes: { verb: 'patch', resource: 'pods', namespace: 'app' }, allowed: false },
  { name: 'exec into pods', attributes: { verb: 'create', resource: 'pods', subresource: 'exec', namespace: 'app' }, allowed: false },
  { name: 'delete nodes', attributes: { verb: 'delete', resource: 'nodes', name: 'node-a' }, allowed: false },
  { name: 'create nodes', attributes: { verb: 'create', resource: 'nodes' }, allowed: false },
  { name: 'update node status', attributes: { verb: 'update', resource: 'nodes', subresource: 'status', name: 'node-a' }, allowed: false },
  { name: 'delete events', attributes: { verb: 'delete', resource: 'events', namespace: 'app' }, allowed: false },
  { name: 'request service account tokens', attributes: { verb: 'create', resource: 'serviceaccounts', subresource: 'token', namespace: 'kube-system' }, allowed: false },
  { name: 'delete PodDisruptionBudgets', attributes: { verb: 'delete', resource: 'poddisruptionbudgets', group: 'policy', namespace: 'app' }, allowed: false },
  { name: "read any node's kubelet stats (observe.source is cgroupfs)", attributes: { verb: 'get', resource: 'nodes', subresource: 'stats', name: 'node-a' }, allowed: false },
  { name: 'get a ReplicaSet', attributes: { verb: 'get', resource: 'replicasets', group: 'apps', namespace: 'app', name: 'web-5d4f8c' }, allowed: true },
  { name: 'list ReplicaSets', attributes: { verb: 'list', resource: 'replicasets', group: 'apps' }, allowed: false },
  { name: 'update ReplicaSets', attributes: { verb: 'update', resource: 'replicasets', group: 'apps', namespace: 'app', name: 'web-5d4f8c' }, allowed: false },
  { name: 'update DaemonSets', attributes: { verb: 'update', resource: 'daemonsets', group: 'apps', namespace: 'kube-eviction-agent' }, allowed: false },
];

suite.test('SubjectAccessReview: the agent\'s ServiceAccount may do what it needs and nothing else (real kube-apiserver, RBAC)', async ({ admin, identity }) => {
  const groups = ['system:serviceaccounts', `system:serviceaccounts:${identity.namespace}`, 'system:authenticated'];
  const outcomes: Record<string, boolean> = {};
  for (const tc of accessCases) {
    const review = await admin.create<{ status: { allowed: boolean } }>('/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: { user: identity.username, groups, resourceAttributes: { group: '', ...tc.attributes } },
    });
    outcomes[tc.name] = review.status.allowed;
  }
  expect(outcomes).toEqual(Object.fromEntries(accessCases.map((tc) => [tc.name, tc.allowed])));
});

suite.test('SelfSubjectAccessReview with the agent\'s own token agrees (real kube-apiserver, RBAC)', async ({ plane, identity }) => {
  const agent = plane.client(identity.token);
  const review = async (attributes: AccessCase['attributes']): Promise<boolean> =>
    (
      await agent.create<{ status: { allowed: boolean } }>('/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { group: '', ...attributes } },
      })
    ).status.allowed;
  expect(await review({ verb: 'get', resource: 'secrets', namespace: 'kube-system' })).toBe(false);
  expect(await review({ verb: 'create', resource: 'pods', namespace: 'app' })).toBe(false);
  expect(await review({ verb: 'delete', resource: 'nodes', name: 'node-a' })).toBe(false);
  expect(await review({ verb: 'delete', resource: 'pods', namespace: 'app' })).toBe(true);
});

interface ForbiddenCase {
  readonly name: string;
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
}

suite.test('requests outside the ClusterRole fail with 403 Forbidden for the agent\'s token (real kube-apiserver, RBAC)', async ({ plane, admin, identity }) => {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'forbidden-check' } });
  await admin.create('/api/v1/namespaces/forbidden-check/secrets', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'db-password' }, stringData: { password: 'x' } });
  await admin.create('/api/v1/nodes', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-a' } });
  const cases: ForbiddenCase[] = [
    { name: 'read a secret', method: 'GET', path: '/api/v1/namespaces/forbidden-check/secrets/db-password' },
    { name: 'list secrets', method: 'GET', path: '/api/v1/secrets' },
    { name: 'delete a node', method: 'DELETE', path: '/api/v1/nodes/node-a' },
    { name: 'create a pod', method: 'POST', path: '/api/v1/namespaces/forbidden-check/pods', body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
    { name: 'read the agent\'s ConfigMap', method: 'GET', path: '/api/v1/namespaces/kube-eviction-agent/configmaps/kube-eviction-agent-config' },
    { name: 'delete the namespace', method: 'DELETE', path: '/api/v1/namespaces/forbidden-check' },
  ];
  const agent = plane.client(identity.token);
  const statuses: Record<string, number> = {};
  for (const tc of cases) statuses[tc.name] = (await agent.request(tc.method, tc.path, tc.body === undefined ? {} : { body: tc.body })).status;
  expect(statuses).toEqual(Object.fromEntries(cases.map((tc) => [tc.name, 403])));
  // Still there: nothing was done.
  expect((await admin.request('GET', '/api/v1/nodes/node-a')).status).toBe(200);
  // And what the role grants works with the same token.
  await expect(agent.get('/api/v1/pods', { fieldSelector: 'spec.nodeName=node-a' })).resolves.toMatchObject({ kind: 'PodList' });
  await expect(agent.get('/api/v1/secrets')).rejects.toBeInstanceOf(ApiError);
});

suite.test('the RBAC objects applied for real are the ones in the manifest (real kube-apiserver)', async ({ admin }) => {
  const statuses: Record<string, number> = {};
  const rbac = loadManifest().filter((o) => RBAC_KINDS.includes(o.kind));
  for (const object of rbac) statuses[describeObject(object)] = (await admin.request('GET', await objectPath(admin, object))).status;
  expect(statuses).toEqual(Object.fromEntries(rbac.map((o) => [describeObject(o), 200])));
});
