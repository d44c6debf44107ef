// The agent as shipped on a real cgroup v2 node under the systemd cgroup driver: its image (the
// archive the deployed suite imports) imported into the guest node's containerd, and the pod the
// chart's DaemonSet renders (installed by the host test with `helm install`), run by the node's
// kubelet with the chart's securityContext, probes, mounts and resources unchanged. The guest node
// has no controller manager or scheduler (the control plane on the host runs none), so the pod is
// made here from the DaemonSet's own pod template with spec.nodeName set, as the DaemonSet
// controller would make it. The node carries a pod network (guest-kubelet-node.ts, podNetwork): a
// CNI bridge for the pod's address and probes, and the `kubernetes` Service's ClusterIP answered
// in the guest, so the pod's in-cluster configuration (KUBERNETES_SERVICE_HOST/PORT, which the
// kubelet sets) reaches the host's API server. The leak is run and judged by real-kubelet.ts's own
// scenario code: only the agent differs.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importAgentImage, type AgentImage } from '../../../../e2e/harness/agent-image.js';
import { containerLog, type AgentPod } from '../../../../e2e/harness/deployed-agent.js';
import { metricValue } from '../../../../e2e/harness/metric-value.js';
import { offendingUsageBytes, publishNamespaceDefaults } from '../../../../e2e/harness/objects.js';
import { waitFor } from '../../../../e2e/harness/wait.js';
import { GuestKubeletNode } from '../guest-kubelet-node.js';
import { defineSuite, type CaseContext } from '../guest-suite.js';
import { MiB } from '../kernel-numbers.js';
import { assertAgentWon, BALLAST, cluster, FAST, KUBELET_EVICTION_HARD, KUBEPODS_LIMIT_BYTES, noteOutcome, POD_PIDS_LIMIT, ROOT_DIR_BYTES, runLeak, withScenario, type LeakAgent } from './real-kubelet.js';

/** What the host test hands the guest besides the cluster (deployed.json in the shared directory). */
export interface DeployedChart {
  /** The CNI plugins' directory (scripts/build-cni.sh) on the host's shared root. */
  readonly cniBinDir: string;
  readonly image: AgentImage;
  /** The release's namespace and its DaemonSet's name (helm install). */
  readonly namespace: string;
  readonly daemonSet: string;
}

// The chart's non-privileged container, in the kernel's terms: CAP_DAC_READ_SEARCH (2) and
// CAP_KILL (5), nothing else, in every set a process can use.
const CHART_CAPABILITIES = ['DAC_READ_SEARCH', 'KILL'];
const CHART_CAP_MASK = (1n << 2n) | (1n << 5n);
// The chart's startup probe gives the agent a minute; on the emulated node the image's import and
// the container's start come first.
const AGENT_READY_TIMEOUT_MS = 300_000;
const METRICS_PORT = 8080;
// The agent's last pass (1 s housekeeping) against the kernel's figure now: its own pod's memory moves between the two.
const KUBEPODS_TOLERANCE_BYTES = 48 * MiB;
// The bystanders' holdings (real-kubelet.ts's BALLAST: 400 and 24 MiB).
const BYSTANDERS_HELD_BYTES = 424 * MiB;

let node: GuestKubeletNode | null = null;
let agentPod: AgentPod | null = null;

function deployed(): DeployedChart {
  const dir = process.env.KEA_GUEST_CLUSTERS;
  assert.ok(dir !== undefined, 'KEA_GUEST_CLUSTERS is not set');
  return JSON.parse(readFileSync(join(dir, 'deployed.json'), 'utf8')) as DeployedChart;
}

function theNode(): GuestKubeletNode {
  assert.ok(node !== null, 'the node did not start');
  return node;
}

function thePod(): AgentPod {
  assert.ok(agentPod !== null, "the chart's pod did not become Ready");
  return agentPod;
}

/** The agent pod's log (the kubelet's files), as the leak's checks read an agent's log. */
function podAgent(n: GuestKubeletNode, pod: AgentPod): LeakAgent & { tail(count: number): string; warnings(): string[] } {
  const lines = (): Record<string, unknown>[] =>
    containerLog(n, pod.metadata, 'agent').flatMap((text) => {
      try {
        return [JSON.parse(text) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
  return {
    log: { find: (msg, fields = {}) => lines().filter((l) => l.msg === msg && Object.entries(fields).every(([k, v]) => l[k] === v)) },
    tail: (count) => containerLog(n, pod.metadata, 'agent').slice(-count).join('\n'),
    // pino's levels: 40 is warn, 50 error.
    warnings: () => lines().filter((l) => Number(l.level) >= 40).map((l) => `${String(l.msg)}${l.problem === undefined ? '' : `: ${String(l.problem)}`}`),
  };
}

async function metrics(pod: AgentPod): Promise<string> {
  const response = await fetch(`http://${pod.status?.podIP}:${METRICS_PORT}/metrics`);
  assert.equal(response.status, 200, "the agent's /metrics");
  return response.text();
}

/** The host PID of the pod's agent container (its scope's first process) and that process's status lines. */
function agentProcessStatus(n: GuestKubeletNode, pod: AgentPod): Map<string, string> {
  const id = pod.status?.containerStatuses?.find((c) => c.name === 'agent')?.containerID?.replace(/^containerd:\/\//, '');
  const podCgroup = n.podCgroups().get(pod.metadata.uid);
  assert.ok(id !== undefined && podCgroup !== undefined, `no container ID or pod cgroup for ${pod.metadata.name}`);
  const pid = readFileSync(join(podCgroup, `cri-containerd-${id}.scope`, 'cgroup.procs'), 'utf8').split('\n')[0];
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return new Map(status.split('\n').flatMap((line) => (line.includes(':\t') ? [line.split(':\t') as [string, string]] : [])));
}

async function startNode({ note }: CaseContext): Promise<void> {
  const starting = GuestKubeletNode.create({ cluster: cluster('systemd'), kubepodsLimitBytes: KUBEPODS_LIMIT_BYTES, rootDirBytes: ROOT_DIR_BYTES, evictionHard: KUBELET_EVICTION_HARD, podPidsLimit: POD_PIDS_LIMIT, podNetwork: { cniBinDir: deployed().cniBinDir } });
  node = starting;
  try {
    for (const [step, ms] of Object.entries(await starting.start())) note(step, ms);
  } catch (error) {
    if (error instanceof Error) error.message = `${error.message}\n${['init', 'containerd', 'kubelet'].map((name) => `--- ${name} log (last lines):\n${starting.log(name).split('\n').slice(-30).join('\n')}`).join('\n')}`;
    throw error;
  }
}

async function runChartPod({ note }: CaseContext): Promise<void> {
  const n = theNode();
  const { image, namespace, daemonSet } = deployed();
  const importStartedMs = performance.now();
  await importAgentImage((args) => n.ctr(args), image);
  note('imageImportS', Math.round((performance.now() - importStartedMs) / 100) / 10);
  // The DaemonSet controller's pod for this node: the template as rendered, bound to the node.
  const ds = await n.admin.request<{ spec: { template: { metadata: Record<string, unknown>; spec: Record<string, unknown> & { containers: AgentPod['spec']['containers'] } } } }>('GET', `/apis/apps/v1/namespaces/${namespace}/daemonsets/${daemonSet}`);
  assert.equal(ds.status, 200, `the chart's DaemonSet ${namespace}/${daemonSet}: ${ds.text.slice(0, 300)}`);
  const template = ds.body.spec.template;
  const name = `${daemonSet}-${n.cluster.nodeName}`;
  const createdMs = performance.now();
  await n.admin.create(`/api/v1/namespaces/${namespace}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { ...template.metadata, name, namespace }, spec: { ...template.spec, nodeName: n.cluster.nodeName } });
  let last: AgentPod | undefined;
  const pod = await waitFor(
    async () => {
      last = (await n.admin.request<AgentPod>('GET', `/api/v1/namespaces/${namespace}/pods/${name}`)).body;
      return last.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true ? last : undefined;
    },
    { what: `the chart's pod ${name} Ready`, timeoutMs: AGENT_READY_TIMEOUT_MS, intervalMs: 500, detail: () => `${JSON.stringify(last?.status ?? null).slice(0, 3000)}\n--- agent log:\n${last === undefined ? '' : podAgent(n, last).tail(30)}\n--- kubelet log:\n${n.log('kubelet').split('\n').slice(-30).join('\n')}` },
  );
  agentPod = pod;
  note('createdToReadyS', Math.round((performance.now() - createdMs) / 100) / 10);
  // The chart's securityContext, unchanged: not privileged, root with exactly two capabilities.
  const rendered = template.spec.containers.find((c) => c.name === 'agent')?.securityContext;
  const running = pod.spec.containers.find((c) => c.name === 'agent')?.securityContext as { privileged?: boolean; capabilities?: { drop?: string[]; add?: string[] }; seccompProfile?: unknown } | undefined;
  assert.deepEqual(running, rendered, "the pod's securityContext is not the chart's");
  assert.notEqual(running?.privileged, true);
  assert.deepEqual(running?.capabilities?.drop, ['ALL']);
  assert.deepEqual([...(running?.capabilities?.add ?? [])].sort(), CHART_CAPABILITIES);
  assert.deepEqual(running?.seccompProfile, { type: 'RuntimeDefault' });
  // And as the kernel holds the agent's process to it.
  const status = agentProcessStatus(n, pod);
  for (const set of ['CapEff', 'CapPrm', 'CapBnd']) assert.equal(BigInt(`0x${status.get(set) ?? ''}`), CHART_CAP_MASK, `${set} ${status.get(set)}: not exactly ${CHART_CAPABILITIES.join(' and ')}`);
  assert.equal(status.get('Seccomp'), '2', 'the agent runs without a seccomp filter');
  assert.equal(status.get('NoNewPrivs'), '1');
  // Ready through its in-cluster configuration: its pod and node watches synced with the API server.
  const text = await metrics(pod);
  assert.equal(metricValue(text, 'kube_eviction_agent_ready'), 1);
  // The chart's startup probe allows a minute; the emulated guest with the machine's cores saturated
  // has taken longer, and the kubelet restarted the container once before it became Ready.
  note('restartsBeforeReady', restartsOf(pod));
}

function restartsOf(pod: AgentPod): number {
  return pod.status?.containerStatuses?.find((c) => c.name === 'agent')?.restartCount ?? Number.NaN;
}

// The fast leak of real-kubelet.ts's side-by-side case, beside the same pods, with the chart's pod as the agent.
async function fastLeak({ note }: CaseContext): Promise<void> {
  const n = theNode();
  const pod = thePod();
  const agent = podAgent(n, pod);
  await withScenario(
    'deployed-leak',
    note,
    async (scenario) => {
      // The API server admits pods with their service-account token (the chart's pod needs one).
      await publishNamespaceDefaults(n.admin, scenario.namespace, n.cluster.caPem);
      await scenario.runPods(BALLAST);
      const bystanders = BALLAST.map((p) => p.name);
      // It sees every pod's cgroup under kubepods.slice: no node statistic missing, no pod refused.
      await waitFor(async () => {
        const text = await metrics(pod);
        return metricValue(text, 'kube_eviction_agent_observe_problems') === 0 && metricValue(text, 'kube_eviction_agent_refused_pods') === 0;
      }, { what: 'the agent observing every pod', timeoutMs: 60_000, intervalMs: 1000 });
      // Its kubepods is the node's kubepods.slice (the bystanders' 424 MiB and its own pod), not its
      // container's view: once the bystanders hold their memory, the working set it reports comes
      // to the kernel's (read at the same moment; its passes are a second apart, so it may lag one).
      const kernelBytes = (): number => n.kubepodsCurrentBytes() - Number(/^inactive_file (\d+)$/m.exec(readFileSync(join(n.kubepodsPath, 'memory.stat'), 'utf8'))?.[1] ?? NaN);
      await waitFor(() => kernelBytes() > BYSTANDERS_HELD_BYTES, { what: 'the bystanders holding their memory', timeoutMs: 60_000, intervalMs: 200 });
      const signal = { signal: 'allocatableMemory.available' };
      let last = '';
      await waitFor(async () => {
        const text = await metrics(pod);
        const agentBytes = metricValue(text, 'kube_eviction_agent_signal_capacity', signal) - metricValue(text, 'kube_eviction_agent_signal_available', signal);
        const kernel = kernelBytes();
        last = `agent ${Math.round(agentBytes / MiB)}, kernel ${Math.round(kernel / MiB)}`;
        return Math.abs(agentBytes - kernel) < KUBEPODS_TOLERANCE_BYTES;
      }, { what: "the agent's kubepods working set to be the kernel's kubepods.slice", timeoutMs: 30_000, intervalMs: 500, detail: () => last });
      note('kubepodsWorkingSetMiB', last);
      const name = 'leaky-fast';
      try {
        const outcome = await runLeak(scenario, { name, ...FAST }, bystanders, agent);
        noteOutcome(note, 'chartPod', outcome);
        await assertAgentWon(scenario, name, outcome, bystanders);
      } catch (error) {
        if (error instanceof Error) error.message += `\n--- the chart pod's log (last lines):\n${agent.tail(40)}`;
        throw error;
      }
      // It attributed the leak to its container from the container's own cgroup (its scope under the pod's slice).
      const evicted = (await scenario.events()).agent.find((e) => e.reason === 'Evicted' && e.involvedObject.name === name);
      assert.match(evicted?.metadata.annotations?.offending_containers ?? '', /^main$/);
      const leakBytes = offendingUsageBytes(evicted);
      assert.ok(leakBytes > 0, "no usage of the leak's container on the Evicted Event");
      note('leakAtEvictionMiB', Math.round(leakBytes / MiB));
      // How it was woken, for the page: the notifier's events and passes, and what it warned of
      // (without CAP_SYS_RESOURCE its PSI triggers get a wider window than configured).
      const after = await metrics(pod);
      const byDescription = [...after.matchAll(/^kube_eviction_agent_notifier_events_total\{description="([^"]*)"\} (\S+)$/gm)].map(([, description, count]) => `${description}: ${count}`);
      note('notifierEvents', byDescription.join('; ') || 'none');
      note('notifierSyncs', metricValue(after, 'kube_eviction_agent_syncs_total', { trigger: 'notifier' }));
      note('agentWarnings', [...new Set(agent.warnings())].join(' | ').slice(0, 3000) || 'none');
      // The agent itself: not restarted since it was Ready, still Ready.
      const now = (await n.admin.request<AgentPod>('GET', `/api/v1/namespaces/${pod.metadata.namespace}/pods/${pod.metadata.name}`)).body;
      assert.equal(restartsOf(now), restartsOf(pod), 'the agent container restarted');
      assert.equal(now.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'), true, 'the agent is no longer Ready');
    },
    n,
  );
}

export const suite = defineSuite({
  name: 'deployed-chart',
  title: "the agent's image and the chart's DaemonSet pod on a real kubelet and containerd on cgroup v2 (systemd driver)",
  async tearDown() {
    await node?.stop();
  },
  cases: [
    { name: 'systemd driver, with a pod network: the node starts and its Node is Ready', timeoutMs: 300_000, run: startNode },
    { name: "the agent's image, imported into the node's containerd, runs as the chart's DaemonSet pod: Ready through its in-cluster configuration, not privileged, exactly the chart's two capabilities and RuntimeDefault seccomp, as the kernel holds its process", timeoutMs: 420_000, run: runChartPod },
    { name: "a fast leak (200 MiB/s) is evicted by the chart's pod before the kernel OOM killer (kubepods' oom_kill unchanged) and before the kubelet, which evicts nothing", timeoutMs: 240_000, run: fastLeak },
    {
      name: 'the node ends with no process, cgroup, mount or interface of it left',
      timeoutMs: 120_000,
      async run() {
        const ending = theNode();
        node = null;
        await ending.stop();
        assert.deepEqual(ending.leftovers(), [], 'what the node left');
      },
    },
  ],
});
