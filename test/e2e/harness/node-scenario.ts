// One node of a test, put together: a node sandbox with a memory limit (when the test needs real
// memory), the fake kubelet registered as that node, a namespace of its own, a recorder of that
// namespace's pods, and the agent running as the ServiceAccount of deploy/daemonset.yaml. Every
// part is cleaned up when the test ends, the agent first and the cgroups last.

import type { AgentUnderTest } from './agent-under-test.js';
import { startAgentUnderTest } from './agent-under-test.js';
import { FakeKubelet } from './fake-kubelet.js';
import type { KubeObject } from './list-watch.js';
import { NodeSandbox } from './node-sandbox.js';
import { createNamespace, createPod, testPod, type PodLike, type TestPodOptions } from './objects.js';
import { Recorder } from './recorder.js';
import type { TestContext } from './suite.js';

export interface NodeScenarioOptions {
  readonly nodeName: string;
  readonly namespace: string;
  /** The node cgroup's memory limit; without it pods run without processes. */
  readonly memoryLimitBytes?: bigint;
}

export interface NodeScenario {
  readonly nodeName: string;
  readonly namespace: string;
  readonly node: NodeSandbox | undefined;
  readonly kubelet: FakeKubelet;
  readonly pods: Recorder<PodLike & KubeObject>;
  /** Creates pods (as admin) bound to this node and waits until the fake kubelet runs them all. */
  runPods(pods: readonly { readonly name: string; readonly options?: Omit<TestPodOptions, 'nodeName'> }[]): Promise<PodLike[]>;
  /** Starts the agent with this configuration, as the agent's ServiceAccount. */
  startAgent(configYaml: string): Promise<AgentUnderTest>;
}

export async function startNodeScenario(context: TestContext, options: NodeScenarioOptions): Promise<NodeScenario> {
  const { plane, admin, identity } = context;
  let node: NodeSandbox | undefined;
  if (options.memoryLimitBytes !== undefined) {
    const created = await NodeSandbox.create(options.memoryLimitBytes);
    node = created;
    context.defer(() => created.cleanup());
  }
  await createNamespace(admin, options.namespace);
  const kubelet = await FakeKubelet.start({ nodeName: options.nodeName, api: plane.node(options.nodeName), ...(node === undefined ? {} : { sandbox: node }) });
  context.defer(() => kubelet.stop());
  context.addDiagnostics(() => `fake kubelet of ${options.nodeName}:\n${kubelet.history()}`);
  const pods = await Recorder.pods(admin, options.namespace);
  context.defer(() => pods.stop());

  return {
    nodeName: options.nodeName,
    namespace: options.namespace,
    node,
    kubelet,
    pods,
    async runPods(list) {
      const created: PodLike[] = [];
      for (const { name, options: podOptions } of list) created.push(await createPod(admin, options.namespace, testPod(name, { nodeName: options.nodeName, ...podOptions })));
      await Promise.all(list.map(({ name }) => kubelet.waitRunning(options.namespace, name)));
      return created;
    },
    async startAgent(configYaml) {
      const agent = await startAgentUnderTest({ plane, token: identity.token, nodeName: options.nodeName, configYaml, ...(node === undefined ? {} : { node }) });
      context.defer(() => agent.stop());
      context.addDiagnostics(() => `agent log (last lines):\n${agent.log.tail()}`);
      return agent;
    },
  };
}
