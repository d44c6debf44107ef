// deploy/node-restriction.yaml, checked without a cluster against the rest of deploy/ and the
// agent's defaults: every policy is bound, denies and fails closed, matches exactly the
// ServiceAccount the DaemonSet runs as, and every write the ClusterRole grants is under one of them;
// every write it matches is held to unchanged metadata, whatever the subresource; the prefix the
// node policy lets the agent write is the agent's own. What the policies allow and refuse on a real
// API server is test/e2e/node-restriction.e2e.test.ts.

import { join } from 'node:path';
import { parseConfigText } from '../../src/config/load.js';
import { loadManifest, REPO_ROOT, type KubeObject } from './manifest.js';

const policyFile = loadManifest(join(REPO_ROOT, 'deploy', 'node-restriction.yaml'));
const deployment = loadManifest();
const policies = policyFile.documents.filter((d) => d.kind === 'ValidatingAdmissionPolicy');
const bindings = policyFile.documents.filter((d) => d.kind === 'ValidatingAdmissionPolicyBinding');
const account = deployment.one('ServiceAccount');
const username = `system:serviceaccount:${account.metadata.namespace}:${account.metadata.name}`;

test('holds four policies, each with one binding of its name that denies', () => {
  expect(policyFile.documents.map((d) => d.apiVersion).every((v) => v === 'admissionregistration.k8s.io/v1')).toBe(true);
  expect(policies.map((p) => p.metadata.name)).toEqual(['kube-eviction-agent-pods', 'kube-eviction-agent-evictions', 'kube-eviction-agent-node', 'kube-eviction-agent-events']);
  expect(bindings.map((b) => [b.metadata.name, b.spec.policyName, b.spec.validationActions])).toEqual(policies.map((p) => [p.metadata.name, p.metadata.name, ['Deny']]));
});

for (const policy of policies) {
  test(`${policy.metadata.name} fails closed, matches only the DaemonSet's ServiceAccount, and refuses with 403 Forbidden`, () => {
    expect(policy.spec.failurePolicy).toBe('Fail');
    expect(policy.spec.matchConditions).toEqual([{ name: 'the-agent', expression: `request.userInfo.username == '${username}'` }]);
    for (const validation of policy.spec.validations as KubeObject[]) {
      expect(validation.reason).toBe('Forbidden');
      // The fallback message, should the message expression fail.
      expect(typeof validation.message).toBe('string');
    }
    // The first rule of each: a token that names no node is refused.
    expect((policy.spec.validations as KubeObject[])[0]?.expression).toBe("variables.node != ''");
  });
}

test('every write the ClusterRole grants is under a policy; only reads are not', () => {
  const covered = new Set<string>();
  for (const policy of policies) {
    for (const rule of policy.spec.matchConstraints.resourceRules as KubeObject[]) {
      for (const resource of rule.resources as string[]) for (const operation of rule.operations as string[]) covered.add(`${resource}:${operation}`);
    }
  }
  // RBAC verbs as admission sees them: delete is DELETE, create is CREATE, patch and update are UPDATE.
  const operationOf: Record<string, string | null> = { delete: 'DELETE', create: 'CREATE', patch: 'UPDATE', update: 'UPDATE', get: null, list: null, watch: null };
  const uncovered: string[] = [];
  for (const rule of deployment.one('ClusterRole').rules as KubeObject[]) {
    for (const resource of rule.resources as string[]) {
      for (const verb of rule.verbs as string[]) {
        const operation = operationOf[verb];
        if (operation === undefined) uncovered.push(`${resource}:${verb} (unknown verb)`);
        else if (operation !== null && !covered.has(`${resource}:${operation}`)) uncovered.push(`${resource}:${verb}`);
      }
    }
  }
  expect(uncovered).toEqual([]);
});

test("the node policy's prefix is the agent's own: its condition types and its taint key", () => {
  const nodePolicy = policies.find((p) => p.metadata.name === 'kube-eviction-agent-node') as KubeObject;
  const prefix = (nodePolicy.spec.variables as KubeObject[]).find((v) => v.name === 'prefix')?.expression as string;
  const defaults = parseConfigText('apiVersion: kube-eviction-agent.io/v1alpha1\nkind: AgentConfiguration\n', 'defaults');
  expect(prefix).toBe(`'${defaults.agent.reporting.conditionTypePrefix}'`);
  expect(defaults.agent.reporting.taint.key.startsWith(defaults.agent.reporting.conditionTypePrefix)).toBe(true);
  expect(defaults.agent.reporting.taint.effect).toBe('NoSchedule');
});

function variable(policy: KubeObject, name: string): string {
  const found = (policy.spec.variables as KubeObject[]).find((v) => v.name === name);
  if (found === undefined) throw new Error(`${policy.metadata.name} has no variable ${name}`);
  return (found.expression as string).replace(/\s+/g, ' ');
}

// The generic comparison of one part of the object (metadata, spec, status), every field but `except`.
function everyFieldBut(part: string, except: string): string {
  return (
    `dyn(object.${part}).filter(k, k != '${except}' && (!(k in dyn(oldObject.${part})) || dyn(object.${part})[k] != dyn(oldObject.${part})[k])) + ` +
    `dyn(oldObject.${part}).filter(k, k != '${except}' && !(k in dyn(object.${part})))`
  );
}

test('every write the policies match that changes an object is held to its metadata as it was, managedFields aside, on every subresource', () => {
  const updating = policies.filter((p) => (p.spec.matchConstraints.resourceRules as KubeObject[]).some((r) => (r.operations as string[]).includes('UPDATE')));
  expect(updating.map((p) => p.metadata.name)).toEqual(['kube-eviction-agent-pods', 'kube-eviction-agent-node', 'kube-eviction-agent-events']);
  for (const policy of updating) {
    expect({ policy: policy.metadata.name, compares: variable(policy, 'metadataChanges').includes(everyFieldBut('metadata', 'managedFields')) }).toEqual({ policy: policy.metadata.name, compares: true });
    // Refused whatever the subresource: the rule is the bare test, with no condition before it.
    const rules = (policy.spec.validations as KubeObject[]).map((v) => v.expression);
    expect({ policy: policy.metadata.name, rule: rules.includes('size(variables.metadataChanges) == 0') }).toEqual({ policy: policy.metadata.name, rule: true });
  }
});

test('the node policy leaves the agent its taints in the spec and its conditions in the status, and nothing else', () => {
  const nodePolicy = policies.find((p) => p.metadata.name === 'kube-eviction-agent-node') as KubeObject;
  expect(variable(nodePolicy, 'specChanges')).toBe(everyFieldBut('spec', 'taints'));
  expect(variable(nodePolicy, 'statusChanges')).toBe(`${everyFieldBut('status', 'conditions')} + (variables.othersConditions == variables.othersConditionsBefore ? [] : ['conditions'])`);
});

test('the pods policy leaves the agent only the DisruptionTarget condition in a pod status', () => {
  const podsPolicy = policies.find((p) => p.metadata.name === 'kube-eviction-agent-pods') as KubeObject;
  expect(variable(podsPolicy, 'statusChanges')).toBe(
    `request.operation != 'UPDATE' ? [] : ${everyFieldBut('status', 'conditions')} + ` +
      "(object.status.?conditions.orValue([]).filter(c, c.type != 'DisruptionTarget') == oldObject.status.?conditions.orValue([]).filter(c, c.type != 'DisruptionTarget') ? [] : ['conditions'])",
  );
});

test('an Event the agent creates may carry only the metadata the agent sends (name, namespace, annotations) and the API server fills in', () => {
  const eventsPolicy = policies.find((p) => p.metadata.name === 'kube-eviction-agent-events') as KubeObject;
  expect(variable(eventsPolicy, 'metadataChanges')).toContain("request.operation == 'CREATE' ? dyn(object.metadata).filter(k, !(k in ['name', 'namespace', 'annotations', 'uid', 'creationTimestamp', 'managedFields']))");
});
