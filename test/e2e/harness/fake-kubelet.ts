// A stand-in for the kubelet of one node, talking to the real API server with the node's own
// identity (system:node:<name>): it registers the Node (Ready, with the sandbox's memory as
// capacity), runs every pod bound to it as a real process in its own cgroup under the node
// sandbox (`kubepods/<qos>/pod<uid>/<container id>`), reports it Running with the container ID
// the agent's observer looks for, and completes deletions as a kubelet does: once a pod has a
// deletionTimestamp, its processes are stopped, its cgroups removed, and the pod is deleted with
// grace period 0. Without a sandbox (no root) pods only get their Running status.

import { randomBytes } from 'node:crypto';
import { nodePodUid } from '../../../src/api/node-pod-uid.js';
import type { Pod } from '../../../src/api/pod.js';
import { parseQuantity, quantityValue } from '../../../src/api/quantity.js';
import { nodeInfoOf, thisHostIdentity } from '../../../src/host/host-identity.js';
import { CONTENT_TYPE, type ApiClient } from './api-client.js';
import { onProcessExit } from './exit-cleanup.js';
import { ListWatch, type KubeObject } from './list-watch.js';
import { readCgroupMemory, type CgroupMemory, type NodeSandbox } from './node-sandbox.js';
import { waitFor } from './wait.js';
import { Workload, type LeakPlan } from './workload.js';

/** The annotation a test pod sets to have its process hold this much memory from the start. */
export const MEMORY_ANNOTATION = 'e2e.kube-eviction-agent.io/memory';

// How long a terminating pod's processes get after SIGTERM (capped: the tests' pods exit at once).
const MAX_TERMINATION_GRACE_MS = 2_000;

export interface FakeKubeletOptions {
  readonly nodeName: string;
  /** A client with the node's identity. */
  readonly api: ApiClient;
  /** Where pods run; without one, pods get a status but no processes. */
  readonly sandbox?: NodeSandbox;
  /** The Node's memory capacity and allocatable (default: the sandbox's limit, else 8 GiB). */
  readonly memoryCapacityBytes?: bigint;
}

type PodState = 'starting' | 'running' | 'terminating' | 'gone';

/** A pod as the fake kubelet runs it. */
export interface FakePod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly containerId: string;
  /** The pod cgroup, relative to the node cgroup. */
  readonly podCgroup: string;
  readonly workload: Workload | null;
  readonly state: PodState;
}

interface PodRecord {
  namespace: string;
  name: string;
  uid: string;
  containerId: string;
  podCgroup: string;
  workload: Workload | null;
  state: PodState;
  /** Work on this pod runs one step after another. */
  chain: Promise<void>;
  terminationRequested: boolean;
}

interface PodObject extends KubeObject {
  metadata: KubeObject['metadata'] & { annotations?: Record<string, string>; deletionTimestamp?: string; deletionGracePeriodSeconds?: number };
  spec: { nodeName?: string; containers: { name: string; image?: string }[] };
  status?: { phase?: string; qosClass?: string };
}

const key = (namespace: string, name: string): string => `${namespace}/${name}`;

export class FakeKubelet {
  private readonly pods = new Map<string, PodRecord>();
  private watch: ListWatch | null = null;
  private readonly log: string[] = [];
  private readonly unregisterExit: () => void;
  private stopped = false;

  private constructor(private readonly options: FakeKubeletOptions) {
    // Last resort: no workload outlives the test process.
    this.unregisterExit = onProcessExit(() => {
      for (const record of this.pods.values()) record.workload?.signal('SIGKILL');
    });
  }

  /** Registers the Node and starts running its pods. */
  static async start(options: FakeKubeletOptions): Promise<FakeKubelet> {
    const kubelet = new FakeKubelet(options);
    await kubelet.register();
    kubelet.watch = new ListWatch(options.api, {
      path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${options.nodeName}`,
      onChange: (type, object) => kubelet.onPod(type, object as PodObject),
      onError: (error) => kubelet.note(`pod watch: ${error.message}`),
    });
    await kubelet.watch.synced;
    return kubelet;
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  /** What the fake kubelet did, one line per step (for failure messages). */
  history(): string {
    return this.log.join('\n');
  }

  pod(namespace: string, name: string): FakePod | undefined {
    const record = this.pods.get(key(namespace, name));
    return record === undefined ? undefined : { ...record };
  }

  /** Waits until the pod runs (its process holds its initial memory and its status is Running). */
  async waitRunning(namespace: string, name: string, timeoutMs = 30_000): Promise<FakePod> {
    return waitFor(
      () => {
        const pod = this.pod(namespace, name);
        return pod?.state === 'running' ? pod : undefined;
      },
      { what: `pod ${namespace}/${name} running on ${this.nodeName}`, timeoutMs, detail: () => this.history() },
    );
  }

  /** The pod's process, to make it leak. */
  workload(namespace: string, name: string): Workload {
    const workload = this.pods.get(key(namespace, name))?.workload;
    if (workload === null || workload === undefined) throw new Error(`pod ${namespace}/${name} has no process on ${this.nodeName}`);
    return workload;
  }

  /** Starts a leak in the pod's process. */
  leak(namespace: string, name: string, plan: LeakPlan): void {
    this.note(`leak ${namespace}/${name}: ${JSON.stringify(plan)}`);
    this.workload(namespace, name).leak(plan);
  }

  /** The pod cgroup's memory now (undefined when it has none). */
  podMemory(namespace: string, name: string): CgroupMemory | undefined {
    const record = this.pods.get(key(namespace, name));
    const sandbox = this.options.sandbox;
    if (record === undefined || sandbox === undefined || !sandbox.exists(record.podCgroup)) return undefined;
    return readCgroupMemory(sandbox.resolve(record.podCgroup));
  }

  /** Stops watching and ends every pod's processes and cgroups (the pods stay in the API). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.watch?.stop();
    await Promise.all([...this.pods.values()].map((record) => record.chain));
    await Promise.all([...this.pods.values()].map((record) => this.release(record)));
    this.unregisterExit();
  }

  private note(line: string): void {
    this.log.push(`${new Date().toISOString()} ${line}`);
  }

  private async register(): Promise<void> {
    const { api, nodeName } = this.options;
    const memoryBytes = this.options.memoryCapacityBytes ?? this.options.sandbox?.limitBytes ?? 8n << 30n;
    await api.create('/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: nodeName, labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' } },
    });
    const now = new Date().toISOString();
    const condition = (type: string, status: string, reason: string) => ({ type, status, reason, message: `fake kubelet: ${reason}`, lastHeartbeatTime: now, lastTransitionTime: now });
    const resources = { cpu: '2', memory: String(memoryBytes), pods: '110', 'ephemeral-storage': String(100n << 30n) };
    await api.patch(
      `/api/v1/nodes/${nodeName}/status`,
      {
        status: {
          capacity: resources,
          allocatable: resources,
          conditions: [
            condition('Ready', 'True', 'KubeletReady'),
            condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory'),
            condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure'),
            condition('PIDPressure', 'False', 'KubeletHasSufficientPID'),
          ],
          addresses: [{ type: 'InternalIP', address: '127.0.0.1' }, { type: 'Hostname', address: nodeName }],
          // A kubelet on this machine reports its boot ID, machine ID and system UUID.
          nodeInfo: nodeInfoOf(thisHostIdentity()),
        },
      },
      CONTENT_TYPE.strategicMergePatch,
    );
    this.note(`registered node ${nodeName} (memory ${memoryBytes})`);
  }

  private onPod(type: string, pod: PodObject): void {
    if (this.stopped) return;
    const namespace = pod.metadata.namespace ?? 'default';
    const name = pod.metadata.name ?? '';
    const uid = pod.metadata.uid ?? '';
    let record = this.pods.get(key(namespace, name));
    if (record !== undefined && record.uid !== uid) {
      // Same name, new pod: the old one is finished.
      const old = record;
      old.chain = old.chain.then(() => this.release(old));
      record = undefined;
    }
    if (type === 'DELETED') {
      if (record !== undefined) {
        const gone = record;
        gone.chain = gone.chain.then(() => this.release(gone));
      }
      return;
    }
    const phase = pod.status?.phase;
    if (record === undefined) {
      if (pod.metadata.deletionTimestamp !== undefined || phase === 'Succeeded' || phase === 'Failed') return;
      const containerId = randomBytes(32).toString('hex');
      // A static pod's cgroup is named after its own UID (the mirror annotation), as the kubelet names it.
      const id = nodePodUid(pod as Pod);
      const podCgroup = this.options.sandbox?.podCgroup(pod.status?.qosClass, id.ok ? id.uid : uid) ?? '';
      const created: PodRecord = { namespace, name, uid, containerId, podCgroup, workload: null, state: 'starting', chain: Promise.resolve(), terminationRequested: false };
      this.pods.set(key(namespace, name), created);
      created.chain = created.chain.then(() => this.startPod(created, pod));
      record = created;
    }
    if (pod.metadata.deletionTimestamp !== undefined && pod.metadata.deletionTimestamp !== null && !record.terminationRequested) {
      record.terminationRequested = true;
      const terminating = record;
      const graceMs = Math.min(MAX_TERMINATION_GRACE_MS, (pod.metadata.deletionGracePeriodSeconds ?? 30) * 1000);
      terminating.chain = terminating.chain.then(() => this.terminate(terminating, graceMs));
    }
  }

  private async startPod(record: PodRecord, pod: PodObject): Promise<void> {
    const { sandbox, api } = this.options;
    const container = pod.spec.containers[0];
    if (container === undefined) throw new Error(`pod ${record.namespace}/${record.name} has no container`);
    if (sandbox !== undefined) {
      const initialBytes = Number(quantityValue(parseQuantity(pod.metadata.annotations?.[MEMORY_ANNOTATION] ?? '0')));
      const cgroup = sandbox.resolve(`${record.podCgroup}/${record.containerId}`);
      sandbox.sandbox.mkdir(`${record.podCgroup}/${record.containerId}`);
      record.workload = await Workload.start(cgroup, initialBytes);
      const workload = record.workload;
      void workload.exited.then((exit) => this.note(`process of ${record.namespace}/${record.name} (pid ${workload.pid}) exited: ${JSON.stringify(exit)}`));
      this.note(`started ${record.namespace}/${record.name} (uid ${record.uid}) in ${record.podCgroup}, pid ${workload.pid}, holding ${initialBytes} bytes`);
    }
    const now = new Date().toISOString();
    const condition = (type: string) => ({ type, status: 'True', lastTransitionTime: now });
    const answer = await api.request('PATCH', `/api/v1/namespaces/${record.namespace}/pods/${record.name}/status`, {
      contentType: CONTENT_TYPE.strategicMergePatch,
      body: {
        metadata: { uid: record.uid },
        status: {
          phase: 'Running',
          startTime: now,
          hostIP: '127.0.0.1',
          conditions: ['PodReadyToStartContainers', 'Initialized', 'ContainersReady', 'Ready', 'PodScheduled'].map(condition),
          containerStatuses: [
            {
              name: container.name,
              image: container.image ?? 'e2e',
              imageID: '',
              containerID: `containerd://${record.containerId}`,
              ready: true,
              started: true,
              restartCount: 0,
              state: { running: { startedAt: now } },
            },
          ],
        },
      },
    });
    if (answer.status !== 200) {
      this.note(`status of ${record.namespace}/${record.name} not set: ${answer.status} ${answer.text}`);
      return;
    }
    if (record.state === 'starting') record.state = 'running';
  }

  private async terminate(record: PodRecord, graceMs: number): Promise<void> {
    record.state = 'terminating';
    this.note(`terminating ${record.namespace}/${record.name} (grace ${graceMs} ms)`);
    await this.release(record, graceMs);
    // The kubelet's final step: remove the pod object now that nothing runs.
    const answer = await this.options.api.request('DELETE', `/api/v1/namespaces/${record.namespace}/pods/${record.name}`, {
      body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: record.uid } },
    });
    this.note(`deleted ${record.namespace}/${record.name}: ${answer.status}`);
  }

  // Ends the processes and removes the cgroups; the record is kept for the tests to inspect.
  private async release(record: PodRecord, graceMs = 0): Promise<void> {
    if (record.state === 'gone') return;
    await record.workload?.stop(graceMs);
    if (this.options.sandbox !== undefined && record.podCgroup !== '') await this.options.sandbox.removeCgroup(record.podCgroup);
    record.state = 'gone';
  }
}
