// NoExecute taints end to end (real kube-apiserver): the agent, with `taintEviction.enabled`,
// running as its ServiceAccount, does what the taint-eviction controller does for its own node.
// An admin taints the node; a pod that does not tolerate the taint is deleted at once, one that
// tolerates it for 3 s is deleted after 3 s, and one that tolerates it for 10 s stays when the
// taint is removed before then. The Events are upstream's (TaintManagerEviction). Pods here need
// no memory, so this file needs no root: the fake kubelet only reports them Running.

import { e2eSuite } from './harness/suite.js';
import { startNodeScenario } from './harness/node-scenario.js';
import { listEvents, setTaint, type PodLike } from './harness/objects.js';
import { sleep, waitFor } from './harness/wait.js';

const suite = e2eSuite({ nodeNames: ['node-taint', 'node-taint-removed'] });

const TAINT = { key: 'e2e.kube-eviction-agent.io/maintenance', value: 'true', effect: 'NoExecute' } as const;

const CONFIG = `
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: 100Mi
notifier:
  mode: disabled
taintEviction:
  enabled: true
server:
  address: 127.0.0.1
  port: 0
logLevel: debug
`;

function tolerating(seconds: number): Record<string, unknown>[] {
  return [{ key: TAINT.key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: seconds }];
}

function terminating(pod: PodLike): boolean {
  return pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null;
}

suite.test('NoExecute taint: an intolerant pod is deleted at once, a pod tolerating 3 s after about 3 s, with TaintManagerEviction Events (real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-taint', namespace: 'taints' });
  const { namespace, pods, nodeName } = scenario;
  const { admin } = context;
  await scenario.runPods([
    { name: 'intolerant' },
    { name: 'tolerates-3s', options: { tolerations: tolerating(3) } },
    { name: 'tolerates-forever', options: { tolerations: [{ key: TAINT.key, operator: 'Exists', effect: 'NoExecute' }] } },
  ]);
  const agent = await scenario.startAgent(CONFIG);
  context.defer(() => setTaint(admin, nodeName, TAINT, false));

  const taintedAtMs = Date.now();
  await setTaint(admin, nodeName, TAINT, true);
  const intolerantAt = await pods.waitFor('intolerant', terminating, 'deletion requested', 10_000);
  const threeSecondsAt = await pods.waitFor('tolerates-3s', terminating, 'deletion requested', 15_000);
  await pods.waitDeleted('intolerant', 10_000);
  await pods.waitDeleted('tolerates-3s', 10_000);

  expect(intolerantAt.atMs - taintedAtMs).toBeLessThan(2_000);
  expect(threeSecondsAt.atMs - taintedAtMs).toBeGreaterThanOrEqual(2_500);
  expect(threeSecondsAt.atMs - taintedAtMs).toBeLessThan(8_000);
  // The taint-eviction controller's DisruptionTarget condition, set before the DELETE.
  for (const name of ['intolerant', 'tolerates-3s']) {
    expect(pods.first(name, (p) => p.status?.conditions?.some((c) => c.type === 'DisruptionTarget' && c.reason === 'DeletionByTaintManager') === true)).toBeDefined();
  }
  expect(pods.latest('tolerates-forever')).toBeDefined();
  expect(pods.versions('tolerates-forever').some((v) => terminating(v.object))).toBe(false);

  const events = await waitFor(
    async () => {
      const found = await listEvents(admin, namespace, 'TaintManagerEviction');
      return found.length >= 2 ? found : undefined;
    },
    { what: 'two TaintManagerEviction events', timeoutMs: 10_000 },
  );
  expect(events.map((e) => [e.involvedObject.name, e.type, e.message]).sort()).toEqual([
    ['intolerant', 'Normal', `Marking for deletion Pod ${namespace}/intolerant`],
    ['tolerates-3s', 'Normal', `Marking for deletion Pod ${namespace}/tolerates-3s`],
  ]);
  expect(agent.log.refusals()).toEqual([]);
}, 60_000);

suite.test('NoExecute taint removed before tolerationSeconds: the deletion is cancelled and the pod stays (real kube-apiserver)', async (context) => {
  const scenario = await startNodeScenario(context, { nodeName: 'node-taint-removed', namespace: 'taint-removed' });
  const { namespace, pods, nodeName } = scenario;
  const { admin } = context;
  await scenario.runPods([{ name: 'tolerates-10s', options: { tolerations: tolerating(10) } }]);
  const agent = await scenario.startAgent(CONFIG);
  context.defer(() => setTaint(admin, nodeName, TAINT, false));

  const taintedAtMs = Date.now();
  await setTaint(admin, nodeName, TAINT, true);
  await sleep(2_000);
  await setTaint(admin, nodeName, TAINT, false);
  const cancelled = await waitFor(async () => (await listEvents(admin, namespace, 'TaintManagerEviction')).find((e) => e.message.startsWith('Cancelling')), {
    what: 'the cancelling event',
    timeoutMs: 10_000,
  });
  expect(cancelled).toMatchObject({ type: 'Normal', message: `Cancelling deletion of Pod ${namespace}/tolerates-10s`, involvedObject: { kind: 'Pod', name: 'tolerates-10s' } });
  // Past the 10 s the pod tolerated the taint for: still there, never asked to terminate.
  await sleep(Math.max(0, taintedAtMs + 12_000 - Date.now()));
  expect(pods.latest('tolerates-10s')).toBeDefined();
  expect(pods.versions('tolerates-10s').some((v) => terminating(v.object))).toBe(false);
  expect((await listEvents(admin, namespace, 'TaintManagerEviction')).filter((e) => e.message.startsWith('Marking'))).toEqual([]);
  expect(agent.log.refusals()).toEqual([]);
}, 60_000);
