// Every file of deploy/ against the real kube-apiserver: the whole directory passes a server-side
// dry-run apply (what `kubectl apply --server-side --dry-run=server -f deploy/` sends; with kubectl
// built, that command itself too); Pod Security Admission's own verdict on the agent's pod is that
// it is not privileged but needs the privileged level for host PIDs, host mounts and
// CAP_DAC_READ_SEARCH; and the privileged fallback patch applies to the DaemonSet as documented.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { CONTENT_TYPE } from './harness/api-client.js';
import { findKubectl, REPO_ROOT } from './harness/binaries.js';
import { kubeconfigYaml } from './harness/kubeconfig.js';
import { applyObject, describeObject, loadManifest, objectPath, type ManifestObject } from './harness/manifest.js';
import { e2eSuite } from './harness/suite.js';

const suite = e2eSuite({ nodeNames: ['node-a'] });
const DEPLOY = join(REPO_ROOT, 'deploy');
const deployFiles = readdirSync(DEPLOY).filter((f) => f.endsWith('.yaml')).sort();

interface PodTemplate {
  metadata: Record<string, unknown>;
  spec: { containers: { name: string; args: string[]; securityContext: Record<string, unknown>; volumeMounts: unknown[]; env: unknown[] }[] } & Record<string, unknown>;
}

function daemonSet(): ManifestObject & { spec: { template: PodTemplate } } {
  return loadManifest().find((o) => o.kind === 'DaemonSet') as ManifestObject & { spec: { template: PodTemplate } };
}

suite.test('every file of deploy/ passes a server-side dry-run apply, the node-restriction policies included (real kube-apiserver)', async ({ admin }) => {
  expect(deployFiles).toEqual(['daemonset.yaml', 'node-restriction.yaml']);
  const objects = deployFiles.flatMap((file) => loadManifest(join(DEPLOY, file)));
  expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['DaemonSet', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']));
  const failures: string[] = [];
  for (const object of objects) {
    try {
      const answer = await applyObject<{ metadata: { uid?: string } }>(admin, object, { dryRun: true });
      if (answer.metadata.uid === undefined) failures.push(`${describeObject(object)}: no uid in the answer`);
    } catch (err) {
      failures.push(`${describeObject(object)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  expect(failures).toEqual([]);
  // Nothing was stored by the dry run.
  for (const object of objects.filter((o) => o.kind.startsWith('ValidatingAdmissionPolicy'))) expect((await admin.request('GET', await objectPath(admin, object))).status).toBe(404);
});

suite.test('kubectl apply --server-side --dry-run=server -f deploy/ passes, where kubectl is built (real kube-apiserver)', async ({ plane }) => {
  const kubectl = findKubectl();
  if (kubectl === null) {
    console.log('skipped: no kubectl in the cache (KEA_KUBECTL_BIN unset); the test above sends the same server-side dry-run apply');
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'kea-kubectl-'));
  try {
    const config = join(dir, 'kubeconfig');
    writeFileSync(config, kubeconfigYaml({ server: plane.url, caPem: plane.caPem, token: plane.credentials.adminToken, user: 'admin' }), { mode: 0o600 });
    const result = spawnSync(kubectl, ['--kubeconfig', config, 'apply', '--server-side', '--dry-run=server', '-f', DEPLOY], { encoding: 'utf8', timeout: 60_000 });
    expect(result.status === 0 ? '' : `exit ${result.status}\n${result.stdout}\n${result.stderr}`).toBe('');
    expect(result.stdout).toContain('validatingadmissionpolicy.admissionregistration.k8s.io/kube-eviction-agent-evictions serverside-applied (server dry run)');
    expect(result.stdout).toContain('daemonset.apps/kube-eviction-agent serverside-applied (server dry run)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// Pod Security Admission's message: `violates PodSecurity "baseline:latest": check (detail), check (detail)`.
function violatedChecks(message: string): string[] {
  const list = message.split('violates PodSecurity "baseline:latest": ')[1] ?? '';
  return [...list.matchAll(/(?:^|\), )([a-zA-Z -]+) \(/g)].map((m) => m[1] as string);
}

suite.test('Pod Security Admission: the agent\'s pod is not privileged, and the baseline level refuses it only for host PIDs, host mounts and CAP_DAC_READ_SEARCH (real kube-apiserver)', async ({ admin, identity }) => {
  await admin.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'psa-baseline', labels: { 'pod-security.kubernetes.io/enforce': 'baseline' } } });
  const template = daemonSet().spec.template;
  const pod = (namespace: string) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name: 'agent-pod', namespace }, spec: { ...template.spec, nodeName: 'node-a' } });
  const baseline = await admin.request('POST', '/api/v1/namespaces/psa-baseline/pods', { query: { dryRun: 'All' }, body: pod('psa-baseline') });
  const message = (baseline.body as { message?: string } | undefined)?.message ?? baseline.text;
  expect(baseline.status).toBe(403);
  expect(violatedChecks(message).sort()).toEqual(['host namespaces', 'hostPath volumes', 'non-default capabilities']);
  expect(message).toContain('hostPID=true');
  expect(message).toContain('container "agent" must not include "DAC_READ_SEARCH" in securityContext.capabilities.add');
  expect(message).not.toContain('privileged');
  // In the agent's namespace, labelled privileged, the same pod is admitted.
  const admitted = await admin.request('POST', `/api/v1/namespaces/${identity.namespace}/pods`, { query: { dryRun: 'All' }, body: pod(identity.namespace) });
  expect(admitted.status === 201 ? '' : admitted.text).toBe('');
});

suite.test('the privileged fallback patch turns the DaemonSet privileged with every capability and passes --oom-score-adj=-999, changing nothing else (real kube-apiserver)', async ({ admin, identity, defer }) => {
  const ds = daemonSet();
  const applied = await applyObject<{ spec: { template: PodTemplate } }>(admin, ds);
  const path = await objectPath(admin, ds);
  defer(async () => {
    await admin.request('DELETE', path);
  });
  const patch = parse(readFileSync(join(DEPLOY, 'patches', 'privileged.yaml'), 'utf8')) as unknown;
  const patched = await admin.patch<{ spec: { template: PodTemplate } }>(path, patch, CONTENT_TYPE.strategicMergePatch, { dryRun: 'All' });
  const before = applied.spec.template.spec.containers[0];
  const after = patched.spec.template.spec.containers[0];
  if (before === undefined || after === undefined) throw new Error('no agent container');
  expect(after.securityContext).toEqual({
    privileged: true,
    allowPrivilegeEscalation: true,
    runAsUser: 0,
    runAsNonRoot: false,
    readOnlyRootFilesystem: true,
    seccompProfile: { type: 'Unconfined' },
    appArmorProfile: { type: 'Unconfined' },
  });
  expect(after.args).toEqual([...before.args, '--oom-score-adj=-999']);
  expect({ volumeMounts: after.volumeMounts, env: after.env }).toEqual({ volumeMounts: before.volumeMounts, env: before.env });
  // The patched pod is still admitted in the agent's namespace.
  const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...patched.spec.template.metadata, name: 'agent-privileged', namespace: identity.namespace }, spec: { ...patched.spec.template.spec, nodeName: 'node-a' } };
  const admitted = await admin.request('POST', `/api/v1/namespaces/${identity.namespace}/pods`, { query: { dryRun: 'All' }, body: pod });
  expect(admitted.status === 201 ? '' : admitted.text).toBe('');
});
