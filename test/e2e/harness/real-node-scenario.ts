// One test on the real node, put together: its own namespace, a recorder of that namespace's pods,
// pods built for the kubelet (the host network, the locally built workload image, never pulled),
// the agent started as the DaemonSet's ServiceAccount with the node's real paths in its
// configuration and a timeline of its ports, and, when the test ends, its pods deleted and their
// cgroups gone before the next test starts.

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAgentUnderTest, type AgentUnderTest } from './agent-under-test.js';
import type { KubeObject } from './list-watch.js';
import { createNamespace, createPod, type PodLike } from './objects.js';
import { PortTimeline } from './port-timeline.js';
import { WORKLOAD_IMAGE, type RealNode } from './real-node.js';
import { Recorder } from './recorder.js';
import type { TestContext } from './test-context.js';
import { sleep, waitFor } from './wait.js';

export interface RealPodOptions {
  /** The workload's arguments (test/e2e/node-image/workload.c): `hold 64`, `leak 400`, ... */
  readonly args: readonly string[];
  /** The container's resource requests and limits (`{ memory: '64Mi', cpu: '100m' }`). */
  readonly requests?: Readonly<Record<string, string>>;
  readonly limits?: Readonly<Record<string, string>>;
  readonly priorityClassName?: string;
  /** An emptyDir mounted at /scratch. */
  readonly emptyDir?: boolean;
  readonly namespace?: string;
}

/** A pod for the real kubelet: bound to the node, the host network, one container `main`. */
export function realPod(name: string, nodeName: string, options: RealPodOptions): Record<string, unknown> {
  const { requests, limits } = options;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { app: name }, ...(options.namespace === undefined ? {} : { namespace: options.namespace }) },
    spec: {
      nodeName,
      // No CNI plugin runs on the test node.
      hostNetwork: true,
      dnsPolicy: 'Default',
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'main',
          image: WORKLOAD_IMAGE,
          imagePullPolicy: 'Never',
          args: options.args,
          resources: { ...(requests === undefined ? {} : { requests }), ...(limits === undefined ? {} : { limits }) },
          ...(options.emptyDir === true ? { volumeMounts: [{ name: 'scratch', mountPath: '/scratch' }] } : {}),
        },
      ],
      ...(options.emptyDir === true ? { volumes: [{ name: 'scratch', emptyDir: {} }] } : {}),
      ...(options.priorityClassName === undefined ? {} : { priorityClassName: options.priorityClassName }),
    },
  };
}

export interface RealNodeScenario {
  readonly node: RealNode;
  readonly namespace: string;
  readonly pods: Recorder<PodLike & KubeObject>;
  readonly timeline: PortTimeline;
  /** Creates pods and waits until the kubelet reports each Running with its container started. */
  runPods(pods: readonly { readonly name: string; readonly options: RealPodOptions }[]): Promise<PodLike[]>;
  /** Starts the agent with this configuration (see agentConfig) as the agent's ServiceAccount. */
  startAgent(configYaml: string): Promise<AgentUnderTest>;
  /**
   * Writes the static pod `name` (`<name>.yaml` in the kubelet's manifest directory), removed when
   * the test ends and waited on until its cgroup is gone; returns its mirror pod's name.
   */
  runStaticPod(name: string, args: readonly string[]): string;
  /** Calls `sample` every 50 ms until the pod is deleted; resolves with when it was. */
  sampleUntilDeleted(name: string, sample: () => void, timeoutMs: number): Promise<number>;
}

function running(pod: PodLike | undefined): boolean {
  const statuses = (pod?.status as { containerStatuses?: { state?: { running?: unknown } }[] } | undefined)?.containerStatuses;
  return pod?.status?.phase === 'Running' && statuses !== undefined && statuses.length > 0 && statuses.every((s) => s.state?.running !== undefined);
}

/** The pod cgroups (`pod<uid>`) under kubepods, any QoS class. */
export function podCgroupUids(node: RealNode): string[] {
  const uids: string[] = [];
  for (const tier of ['', 'burstable', 'besteffort']) {
    const dir = join(node.kubepodsMemoryPath, tier);
    if (!existsSync(dir)) continue;
    for (const entry of readdirSync(dir)) if (entry.startsWith('pod')) uids.push(entry.slice(3));
  }
  return uids;
}

/** The loadavg line, for timing reports. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

export async function startRealNodeScenario(context: TestContext<RealNode>, namespace: string): Promise<RealNodeScenario> {
  const { admin, plane, identity } = context;
  const node = context.fixture;
  await createNamespace(admin, namespace);
  // With the ServiceAccount admission plugin, a pod is admitted once the controller manager has
  // made the namespace's `default` ServiceAccount.
  if (plane.serviceAccountAdmission) await waitFor(async () => (await admin.request('GET', `/api/v1/namespaces/${namespace}/serviceaccounts/default`)).status === 200, { what: `the default ServiceAccount of ${namespace}`, timeoutMs: 30_000, intervalMs: 100 });
  const pods = await Recorder.pods(admin, namespace);
  const created: PodLike[] = [];
  // Runs after the agent has stopped (deferred first, so it runs last).
  context.defer(async () => {
    await admin.request('DELETE', `/api/v1/namespaces/${namespace}/pods`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    const uids = new Set(created.map((p) => p.metadata.uid));
    await waitFor(() => !podCgroupUids(node).some((uid) => uids.has(uid)), { what: `the pod cgroups of ${namespace} removed by the kubelet`, timeoutMs: 60_000, intervalMs: 200 });
  });
  context.defer(() => pods.stop());
  context.addDiagnostics(() => `pods of ${namespace}:\n${[...new Set(created.map((p) => p.metadata.name))].map((name) => pods.describe(name)).join('\n')}`);
  const timeline = new PortTimeline(loadAverage);
  return {
    node,
    namespace,
    pods,
    timeline,
    async runPods(list) {
      const made: PodLike[] = [];
      for (const { name, options } of list) made.push(await createPod(admin, namespace, realPod(name, node.nodeName, options)));
      created.push(...made);
      await Promise.all(list.map(({ name }) => pods.waitFor(name, running, 'Running', 60_000)));
      return made;
    },
    runStaticPod(name, args) {
      const mirrorName = `${name}-${node.nodeName}`;
      node.writeStaticPod(`${name}.yaml`, realPod(name, node.nodeName, { namespace, args }));
      context.defer(async () => {
        node.removeStaticPod(`${name}.yaml`);
        const uid = pods.versions(mirrorName)[0]?.object.metadata.annotations?.['kubernetes.io/config.mirror'];
        await waitFor(() => uid === undefined || !podCgroupUids(node).includes(uid), { what: 'the static pod removed by the kubelet', timeoutMs: 60_000, intervalMs: 200 });
      });
      return mirrorName;
    },
    async sampleUntilDeleted(name, sample, timeoutMs) {
      const sampling = (async () => {
        while (pods.deletedAtMs(name) === undefined) {
          sample();
          await sleep(50);
        }
      })();
      const deletedAtMs = await pods.waitDeleted(name, timeoutMs);
      await sampling;
      return deletedAtMs;
    },
    async startAgent(configYaml) {
      const agent = await startAgentUnderTest({ plane, token: identity.token, nodeName: node.nodeName, configYaml, realNode: true, timeline });
      context.defer(() => agent.stop());
      context.addDiagnostics(() => `agent log (last lines):\n${agent.log.tail(40)}`);
      return agent;
    },
  };
}

/** The agent's configuration on the real node: these thresholds, the node's real paths, fast passes. */
export function agentConfig(node: RealNode, evictionHard: Readonly<Record<string, string>>): string {
  return [
    'apiVersion: kube-eviction-agent.io/v1alpha1',
    'kind: AgentConfiguration',
    'evictionHard:',
    ...Object.entries(evictionHard).map(([signal, value]) => `  ${signal}: "${value}"`),
    'evictionPressureTransitionPeriod: 5s',
    'housekeepingInterval: 1s',
    'observe:',
    '  cgroupDriver: cgroupfs',
    `  podCgroupRoot: ${node.podCgroupRoot}`,
    `  kubeletRootDir: ${node.rootDir}`,
    `  imageFsPath: ${node.imageFsDir}`,
    `  podLogsDir: ${node.podLogsDir}`,
    '  diskUsageInterval: 1s',
    'notifier:',
    '  mode: memcg-v1',
    'actions:',
    '  localTermination: true',
    '  setDisruptionTargetCondition: true',
    'reporting:',
    '  nodeConditions: true',
    '  events: true',
    'server:',
    '  address: 127.0.0.1',
    '  port: 0',
    'logLevel: debug',
    '',
  ].join('\n');
}
