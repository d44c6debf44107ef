// The chart's API Priority and Fairness objects (templates/flowcontrol.yaml, real helm): off by
// default (docs/scale.md says why); turned on, a FlowSchema that sends the release's ServiceAccount, and only it, to a
// PriorityLevelConfiguration of its own, each value of `flowControl` where it belongs, nothing
// by default, and the schema refusing what the API server would. The
// objects pass the API server's own validation in test/e2e/chart.e2e.test.ts, and the fleet suite
// (test/e2e/fleet.e2e.test.ts) sees the agents' requests dispatched under them.

import { helm, HELM_SKIP_REASON, renderChart, CHART_DIR } from './helm.js';
import type { KubeObject } from './manifest.js';

const helmTest = HELM_SKIP_REASON === null ? test : test.skip;
if (HELM_SKIP_REASON !== null) console.log(`skipped: the chart's flow control tests: ${HELM_SKIP_REASON}`);

const flowControl = (args: readonly string[] = []): KubeObject[] => renderChart(['--set', 'flowControl.enabled=true', ...args]).filter((o) => String(o.apiVersion).startsWith('flowcontrol.apiserver.k8s.io/'));

describe('the chart\'s FlowSchema and PriorityLevelConfiguration (real helm)', () => {
  helmTest('turned on: the release\'s ServiceAccount, every request of it, on a queued level of its own ahead of the service-account schemas', () => {
    const objects = flowControl();
    expect(objects.map((o) => `${o.apiVersion} ${o.kind}`).sort()).toEqual(['flowcontrol.apiserver.k8s.io/v1 FlowSchema', 'flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration']);
    const schema = objects.find((o) => o.kind === 'FlowSchema') as KubeObject;
    const level = objects.find((o) => o.kind === 'PriorityLevelConfiguration') as KubeObject;
    const serviceAccount = renderChart().find((o) => o.kind === 'ServiceAccount') as KubeObject;
    expect(schema.spec.priorityLevelConfiguration.name).toBe(level.metadata.name);
    expect(schema.spec.rules).toEqual([
      {
        subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: serviceAccount.metadata.name, namespace: serviceAccount.metadata.namespace } }],
        resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], clusterScope: true, namespaces: ['*'] }],
      },
    ]);
    // Ahead of kube-system-service-accounts (900) and service-accounts (9000).
    expect(schema.spec.matchingPrecedence).toBeLessThan(900);
    expect(level.spec).toEqual({ type: 'Limited', limited: { nominalConcurrencyShares: 20, lendablePercent: 50, limitResponse: { type: 'Queue', queuing: { queues: 64, handSize: 6, queueLengthLimit: 50 } } } });
  });

  helmTest('each flowControl value reaches its field', () => {
    const objects = flowControl(['--set', 'flowControl.matchingPrecedence=700', '--set', 'flowControl.priorityLevel.nominalConcurrencyShares=40', '--set', 'flowControl.priorityLevel.lendablePercent=0', '--set', 'flowControl.priorityLevel.queues=128', '--set', 'flowControl.priorityLevel.handSize=8', '--set', 'flowControl.priorityLevel.queueLengthLimit=200']);
    const schema = objects.find((o) => o.kind === 'FlowSchema') as KubeObject;
    const level = objects.find((o) => o.kind === 'PriorityLevelConfiguration') as KubeObject;
    expect(schema.spec.matchingPrecedence).toBe(700);
    expect(level.spec.limited).toEqual({ nominalConcurrencyShares: 40, lendablePercent: 0, limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 8, queueLengthLimit: 200 } } });
  });

  helmTest('by default (flowControl.enabled: false) neither object is rendered', () => {
    expect(renderChart().filter((o) => String(o.apiVersion).startsWith('flowcontrol.apiserver.k8s.io/'))).toEqual([]);
  });

  helmTest.each([
    ['matchingPrecedence 1 (the exempt schema\'s alone)', 'flowControl.matchingPrecedence=1'],
    ['matchingPrecedence above 10000', 'flowControl.matchingPrecedence=10001'],
    ['lendablePercent above 100', 'flowControl.priorityLevel.lendablePercent=101'],
    ['no queues', 'flowControl.priorityLevel.queues=0'],
    ['a negative share', 'flowControl.priorityLevel.nominalConcurrencyShares=-1'],
    ['an unknown key', 'flowControl.priorityLevel.queueLength=5'],
  ])('the schema refuses %s at helm template', (_name, value) => {
    const run = helm(['template', 'kube-eviction-agent', CHART_DIR, '--set', value]);
    expect(run.status).not.toBe(0);
    expect(run.stderr).toMatch(/values don't meet the specifications of the schema|flowControl/);
  });
});
