// Kernel OOM kills end to end (root, cgroup v1, real kube-apiserver): the fake kubelet runs each pod
// as a real process in its own cgroup under a node cgroup with a memory limit, a pod's process
// meets a memory limit, and the kernel OOM killer kills it. The agent, running as its
// ServiceAccount with the real OOM kill watcher (kernel log, oom_control eventfds, counters), must
// report that one kill once: an `OOMKilledByKernel` Warning Event on the pod and on the Node, as
// the API server stores them (reason, message, involvedObject with its UID, count), whether the
// pod's own limit was met or the node's.

import type { TestContext } from './harness/suite.js';
import { e2eSuite } from './harness/suite.js';
import { awaitOomReportWindow } from '../helpers/oom-report-window.js';
import { startNodeScenario, type NodeScenario } from './harness/node-scenario.js';
import { listEvents, type EventLike } from './harness/objects.js';
import { waitFor } from './harness/wait.js';
import { NODE_COMM } from '../helpers/node-comm.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const MiB = 1024 * 1024;
const REASON = 'OOMKilledByKernel';

const suite = e2eSuite({ nodeNames: ['node-oom-pod', 'node-oom-node'], needsCgroupV1: true });

// The agent's configuration: a hard memory.available threshold, or none (an empty map: nothing is
// evicted, so the node can run out), the OOM kill watcher as shipped, fast housekeeping. Not a dry
// run: a dry run records no Event.
function agentConfig(options: { hardMi: number | null }): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    ...(options.hardMi === null ? ['evictionHard: {}'] : ['evictionHard:', `  memory.available: ${options.hardMi}Mi`]),
    'housekeepingInterval: 1s',
    'notifier:',
    '  mode: memcg-v1',
    'reporting:',
    '  events: true',
    'oomKills:',
    '  enabled: true',
    '  kernelLog: true',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'logLevel: debug',
    '',
  ].join('\n');
}

/** The pod's and the Node's OOMKilledByKernel Events, once both are stored. */
async function oomEvents(context: TestContext, scenario: NodeScenario, podName: string): Promise<{ pod: EventLike; node: EventLike }> {
  return waitFor(
    async () => {
      const pod = (await listEvents(context.admin, scenario.namespace, REASON)).filter((e) => e.involvedObject.name === podName);
      const node = (await listEvents(context.admin, 'default', REASON)).filter((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === scenario.nodeName);
      return pod.length > 0 && node.length > 0 ? { pod: only(pod), node: only(node) } : undefined;
    },
    { what: `the ${REASON} Events of ${scenario.namespace}/${podName} and Node ${scenario.nodeName}`, timeoutMs: 15_000 },
  );
}

function only(events: EventLike[]): EventLike {
  expect(events).toHaveLength(1);
  return events[0] as EventLike;
}

// A kill is reported once: no second Event, and the one there has count 1, a few seconds on.
async function expectReportedOnce(context: TestContext, scenario: NodeScenario, podName: string): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const { pod, node } = await oomEvents(context, scenario, podName);
  expect([pod.count, node.count]).toEqual([1, 1]);
}

suite.test('a pod meeting its own memory limit is OOM-killed by the kernel: an OOMKilledByKernel Event on the pod and the Node, read back from the API server (root, cgroup v1, real kube-apiserver)', async (context) => {
  // The kill's constraint comes from its summary line in the kernel log, which the kernel rate-limits.
  await awaitOomReportWindow();
  const scenario = await startNodeScenario(context, { nodeName: 'node-oom-pod', namespace: 'oom-pod', memoryLimitBytes: 1024n * BigInt(MiB) });
  const { namespace, kubelet } = scenario;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'quiet', options: { memoryBytes: 16 * MiB } },
    { name: 'limited', options: { memoryBytes: 16 * MiB } },
  ]);
  // The threshold is far below: the node never comes near it, only the pod's own limit is met.
  const agent = await scenario.startAgent(agentConfig({ hardMi: 100 }));
  const podUid = scenario.pods.versions('limited')[0]?.object.metadata.uid;
  expect(podUid).toEqual(expect.any(String));
  // The pod's cgroup gets a 64 MiB limit (as the kubelet sets a pod's limits), without swap.
  const podCgroup = node.resolve(kubelet.pod(namespace, 'limited')?.podCgroup ?? '');
  writeFileSync(join(podCgroup, 'memory.limit_in_bytes'), String(64 * MiB));
  writeFileSync(join(podCgroup, 'memory.swappiness'), '0');
  kubelet.leak(namespace, 'limited', { targetBytes: 256 * MiB, stepBytes: 8 * MiB, intervalMs: 20 });
  await waitFor(() => node.oomKills() > 0 || undefined, { what: 'the kernel OOM killer in the pod\'s cgroup', timeoutMs: 20_000 });

  const { pod, node: nodeEvent } = await oomEvents(context, scenario, 'limited');
  expect(pod).toMatchObject({
    type: 'Warning',
    reason: REASON,
    involvedObject: { kind: 'Pod', namespace, name: 'limited', uid: podUid },
    source: { component: 'kube-eviction-agent', host: scenario.nodeName },
    metadata: { annotations: { oom_kind: 'pod-limit', agent_state: 'not-applicable', oom_constraint: 'CONSTRAINT_MEMCG' } },
  });
  expect(pod.message).toMatch(new RegExp(`^The kernel OOM killer killed process ${NODE_COMM} \\(pid \\d+\\) of container main: the pod reached its memory limit 64Mi\\. Container main was using \\d+Mi at its peak, request is 16Mi, limit is none\\. Node eviction thresholds do not cover a memory limit\\.\\s*$`));
  expect(pod.metadata.annotations?.oom_cgroup).toBe(`/${node.nodeCgroup}/${kubelet.pod(namespace, 'limited')?.podCgroup ?? ''}`);
  expect(nodeEvent).toMatchObject({
    type: 'Warning',
    reason: REASON,
    involvedObject: { kind: 'Node', name: scenario.nodeName, uid: scenario.nodeName },
    metadata: { annotations: { oom_kind: 'pod-limit' } },
  });
  expect(nodeEvent.message).toMatch(new RegExp(`^The kernel OOM killer killed process ${NODE_COMM} \\(pid \\d+\\) of pod ${namespace}/limited, container main: the pod reached its memory limit 64Mi\\. `));
  await expectReportedOnce(context, scenario, 'limited');
  // The other pod, and the node, went on; the agent evicted nothing.
  expect(kubelet.pod(namespace, 'quiet')?.workload?.running).toBe(true);
  expect(await agent.metric('kube_eviction_agent_kernel_oom_kills_total', { kind: 'pod-limit', agent_state: 'not-applicable' })).toBe(1);
  expect(await agent.metric('kube_eviction_agent_evictions_total')).toBe(0);
}, 120_000);

suite.test('with no memory threshold the node runs out and the kernel OOM-kills the leak: a node-level OOMKilledByKernel Event on the pod and the Node, read back from the API server (root, cgroup v1, real kube-apiserver)', async (context) => {
  // The kill's constraint comes from its summary line in the kernel log, which the kernel rate-limits.
  await awaitOomReportWindow();
  const scenario = await startNodeScenario(context, { nodeName: 'node-oom-node', namespace: 'oom-node', memoryLimitBytes: 512n * BigInt(MiB) });
  const { namespace, kubelet } = scenario;
  const node = scenario.node!;
  await scenario.runPods([
    { name: 'quiet', options: { memoryBytes: 16 * MiB } },
    { name: 'leaky', options: { memoryBytes: 16 * MiB } },
  ]);
  const agent = await scenario.startAgent(agentConfig({ hardMi: null }));
  const podUid = scenario.pods.versions('leaky')[0]?.object.metadata.uid;
  kubelet.leak(namespace, 'leaky', { targetBytes: 1024 * MiB, stepBytes: 8 * MiB, intervalMs: 40 });
  await waitFor(() => node.oomKills() > 0 || undefined, { what: 'the kernel OOM killer in the node cgroup', timeoutMs: 30_000 });

  const { pod, node: nodeEvent } = await oomEvents(context, scenario, 'leaky');
  expect(pod).toMatchObject({
    type: 'Warning',
    reason: REASON,
    involvedObject: { kind: 'Pod', namespace, name: 'leaky', uid: podUid },
    metadata: { annotations: { oom_kind: 'node', agent_state: 'not-armed', oom_cgroup: `/${node.nodeCgroup}` } },
  });
  const agentSentence = 'The agent had no memory eviction threshold\\.';
  expect(pod.message).toMatch(new RegExp(`^The kernel OOM killer killed process ${NODE_COMM} \\(pid \\d+\\) of container main: the node was out of memory \\(/${node.nodeCgroup} at its limit 512Mi\\)\\. Container main was using \\d+Mi at its peak, request is 16Mi, limit is none\\. ${agentSentence}\\s*$`));
  expect(nodeEvent).toMatchObject({
    type: 'Warning',
    reason: REASON,
    involvedObject: { kind: 'Node', name: scenario.nodeName, uid: scenario.nodeName },
    source: { component: 'kube-eviction-agent', host: scenario.nodeName },
    metadata: { annotations: { oom_kind: 'node', agent_state: 'not-armed' } },
  });
  expect(nodeEvent.message).toMatch(new RegExp(`^The kernel OOM killer killed process ${NODE_COMM} \\(pid \\d+\\) of pod ${namespace}/leaky, container main: the node was out of memory \\(/${node.nodeCgroup} at its limit 512Mi\\)\\. ${agentSentence}\\s*$`));
  await expectReportedOnce(context, scenario, 'leaky');
  expect(await agent.metric('kube_eviction_agent_kernel_oom_kills_total', { kind: 'node', agent_state: 'not-armed' })).toBe(1);
  // With no threshold nothing was evicted, ended or deleted: the kernel alone acted.
  expect(await agent.metric('kube_eviction_agent_evictions_total')).toBe(0);
  expect(kubelet.pod(namespace, 'quiet')?.workload?.running).toBe(true);
  expect(scenario.pods.versions('leaky').some((v) => v.object.metadata.deletionTimestamp !== undefined)).toBe(false);
}, 120_000);
