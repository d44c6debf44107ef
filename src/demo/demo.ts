// `kube-eviction-agent demo`: the agent's real run loop, unchanged, on a sandboxed node with a
// leaking pod, no cluster needed. A sandbox node (a real memory cgroup with a 1 GiB limit when
// root and cgroup v1 or v2 are available, simulated stats otherwise), an in-process stand-in for the
// Kubernetes API, a handful of pods as real child processes, and a stand-in kubelet that finishes
// deletions. The sandbox is on whichever cgroup hierarchy the kernel gives, and the agent watches
// it as it would a node of that kind: on cgroup v1 the kernel's memory threshold notification, on
// cgroup v2 the PSI triggers and the working-set fast check. It prints a live timeline and a summary, and removes everything it created, also
// on Ctrl-C. In dry run the agent decides and does not act, so the kernel OOM killer fires at the
// limit, and the demo prints the agent's attribution of the kill: the pod and container, the kind of
// kill, the figures, and what the agent was doing.

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { systemClock } from '../api/clock.js';
import { silentLogger } from '../api/logger.js';
import { nodePodUid } from '../api/node-pod-uid.js';
import { podKey, type Pod } from '../api/pod.js';
import { formatQuantity, quantityFromInteger } from '../api/quantity.js';
import { startNodeAgent } from '../compose/agent.js';
import { parseConfigText } from '../config/load.js';
import type { OomAttribution, RunningAgent } from '../daemon/agent.js';
import type { KernelOomKill, LocalTerminator, MemoryThresholdNotifier, PodActions } from '../daemon/ports.js';
import { isCriticalPod } from '../eviction/critical.js';
import type { EvictionOutcome } from '../eviction/eviction-outcomes.js';
import type { Eviction, SynchronizeResult } from '../eviction/types.js';
import { kubeconfigFor, startApiStandIn, type ApiStandIn } from './api-stand-in.js';
import { realCgroupsAvailable, SandboxNode, type AllocationPlan, type CgroupVersion } from './sandbox-node.js';
import { SimulatedNode } from './simulated-node.js';
import { nodeOfThisHost } from '../compose/this-host.js';

const Mi = 1024 * 1024;
const NODE_NAME = 'demo-node';
const NODE_CAPACITY_BYTES = 1024 * Mi;
const THRESHOLD = '256Mi';
const DEMO_RETRIGGER_WINDOW = '3s';
const DEMO_RETRIGGER_WINDOW_MS = 3000;

export interface DemoOptions {
  /** How fast the leaking pod allocates, in MiB per second. */
  readonly leakMiBPerSecond: number;
  /** Stop after this long whatever happened. */
  readonly timeLimitMs: number;
  /** Use simulated stats even where real cgroups are available. */
  readonly simulated: boolean;
  /** The agent decides and reports but does not act: the kernel OOM killer fires, and its kill is attributed. */
  readonly dryRun?: boolean;
  readonly out: Writable;
  /** Aborting it (Ctrl-C) stops the demo and cleans up. */
  readonly signal?: AbortSignal;
}

export interface DemoSummary {
  readonly mode: 'cgroup-v1' | 'cgroup-v2' | 'simulated';
  /** The agent's notifier: memcg-v1 on cgroup v1, psi on cgroup v2. */
  readonly notifier: string;
  readonly dryRun: boolean;
  readonly evicted: readonly string[];
  /** The pods the agent decided to evict (in dry run, without acting). */
  readonly decided: readonly string[];
  readonly oomKills: number;
  /** The kernel OOM kills the agent found, as it attributed them. */
  readonly attributed: readonly DemoOomKill[];
  readonly peakUsageBytes: number;
  /** From the kernel notification to the first action on the leaking pod. */
  readonly reactionMs: number | null;
  /** The outcomes the agent reported, with their figures, in the order it reported them. */
  readonly outcomes: readonly DemoOutcome[];
  /** The sandbox's memory use as the demo read it from the kernel every 100 ms (the node cgroup's usage). */
  readonly usageSamples: readonly { readonly atMs: number; readonly usageBytes: number }[];
  /** The node's capacity. */
  readonly capacityBytes: number;
}

/** One eviction outcome as the agent reported it. */
export interface DemoOutcome {
  readonly outcome: EvictionOutcome;
  readonly message: string;
}

export interface DemoOomKill {
  /** `namespace/name`, or null for a kill outside the pods. */
  readonly pod: string | null;
  readonly container: string | null;
  readonly kind: OomAttribution['kind'];
  readonly nodeLevel: boolean;
  readonly agentState: OomAttribution['agentState'];
}

interface DemoPod {
  readonly pod: Pod;
  readonly plan: AllocationPlan;
  readonly role: string;
}

// The agent's configuration, as an operator would write it. `scratchDir` stands in for the
// kubelet's and the runtime's directories; the sandbox cgroup stands in for the node. The notifier
// is the one a node on the sandbox's hierarchy gets (`auto` picks the same).
function demoConfig(scratchDir: string, version: CgroupVersion): string {
  return `
apiVersion: kube-eviction-agent.io/v1alpha1
kind: AgentConfiguration
evictionHard:
  memory.available: ${THRESHOLD}
# The sandbox has no separate kubepods limit to guard.
enforceNodeAllocatable: []
evictionPressureTransitionPeriod: 5s
observe:
  cgroupDriver: cgroupfs
  podCgroupRoot: kubepods
  kubeletRootDir: ${scratchDir}
  imageFsPath: ${scratchDir}
  podLogsDir: ${scratchDir}
notifier:
  mode: ${version === 'v1' ? 'memcg-v1' : 'psi'}
# Each eviction's outcome is known this long after memory is back (60s on a node): the demo shows it.
reporting:
  retriggerWindow: ${DEMO_RETRIGGER_WINDOW}
`;
}

// The static pod's own UID, as the kubelet generates one (the hex of a 128-bit hash of its manifest).
const DEMO_STATIC_POD_UID = '5c0e5f3a9b1d4e7f8a2c6b0d9e1f3a5b';

function demoPods(leakBytesPerSecond: number): DemoPod[] {
  const pod = (name: string, namespace: string, options: { priority?: number; memoryRequest?: string; annotations?: Record<string, string>; qos: string }): Pod => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace, ...(options.annotations === undefined ? {} : { annotations: options.annotations }) },
    spec: {
      nodeName: NODE_NAME,
      ...(options.priority === undefined ? {} : { priority: options.priority }),
      terminationGracePeriodSeconds: 30,
      containers: [{ name: 'main', ...(options.memoryRequest === undefined ? {} : { resources: { requests: { memory: options.memoryRequest } } }) }],
    },
    status: { phase: 'Running', qosClass: options.qos, containerStatuses: [{ name: 'main', containerID: `containerd://${name}0123456789abcdef` }] },
  });
  const still = (bytes: number): AllocationPlan => ({ initialBytes: bytes, stepBytes: 0, intervalMs: 0 });
  return [
    { role: 'a static (mirror) pod, the biggest user: critical, never evicted', pod: pod('etcd-demo-node', 'kube-system', { annotations: { 'kubernetes.io/config.mirror': DEMO_STATIC_POD_UID, 'kubernetes.io/config.hash': DEMO_STATIC_POD_UID, 'kubernetes.io/config.source': 'file' }, qos: 'BestEffort' }), plan: still(300 * Mi) },
    { role: 'a web server within its 256Mi request', pod: pod('web', 'shop', { priority: 1000, memoryRequest: '256Mi', qos: 'Burstable' }), plan: still(100 * Mi) },
    { role: 'a best-effort batch job', pod: pod('batch', 'jobs', { qos: 'BestEffort' }), plan: still(20 * Mi) },
    { role: `the leak: ${Math.round(leakBytesPerSecond / Mi)} MiB/s over its 64Mi request`, pod: pod('leaky', 'shop', { memoryRequest: '64Mi', qos: 'Burstable' }), plan: { initialBytes: 10 * Mi, stepBytes: Math.round(leakBytesPerSecond / 10), intervalMs: 100 } },
  ];
}

const mib = (bytes: number): string => `${Math.round(bytes / Mi)}Mi`;
const seconds = (ms: number): string => `${(ms / 1000).toFixed(2)} s`;

export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const startedMs = Date.now();
  const print = (text: string): void => {
    options.out.write(`${`+${((Date.now() - startedMs) / 1000).toFixed(2)}s`.padStart(8)}  ${text}\n`);
  };
  const available = realCgroupsAvailable();
  const version = available.ok && !options.simulated ? available.version : null;
  const scratchDir = mkdtempSync(join(tmpdir(), 'kea-demo-'));
  const node = version !== null ? new SandboxNode(NODE_CAPACITY_BYTES, version) : new SimulatedNode(NODE_CAPACITY_BYTES, systemClock);
  let standIn: ApiStandIn | null = null;
  let agent: RunningAgent | null = null;
  let kubelet: NodeJS.Timeout | null = null;
  let ticker: NodeJS.Timeout | null = null;
  const evicted: string[] = [];
  const decided: string[] = [];
  const attributed: DemoOomKill[] = [];
  const outcomes: DemoOutcome[] = [];
  const usageSamples: { atMs: number; usageBytes: number }[] = [];
  const dryRun = options.dryRun === true;
  let notifiedAtMs: number | null = null;
  let reactionMs: number | null = null;
  let notifierMode = 'none';

  try {
    options.out.write(
      node instanceof SandboxNode
        ? `Sandbox node: cgroup ${node.version} memory cgroup ${node.dir}, limit ${mib(NODE_CAPACITY_BYTES)} (the kernel OOM killer fires at the limit)\n`
        : `Sandbox node: simulated ${mib(NODE_CAPACITY_BYTES)} of memory (${available.ok ? 'as asked' : `real cgroups unavailable: ${available.reason}`}); pods are real processes, usage is their resident memory\n`,
    );
    options.out.write(`Notifier: ${NOTIFIER_LINES[version ?? 'simulated']}\n`);
    options.out.write(`Eviction threshold: memory.available < ${THRESHOLD} (hard), so the agent acts when the pods use more than ${mib(NODE_CAPACITY_BYTES - 256 * Mi)}\n`);
    if (dryRun) options.out.write('Dry run: the agent decides and reports but does not act, so the kernel OOM killer fires at the limit; the agent says whom it killed and what it was doing\n');
    options.out.write('\n');

    // The API stand-in and this node.
    standIn = await startApiStandIn();
    standIn.setNode(nodeOfThisHost(NODE_NAME));
    const processes = new Map<string, ChildProcess>();

    // The stand-in kubelet: a pod marked for deletion has its processes killed, and goes from the
    // API once they have exited, as the kubelet deletes a pod only after its containers stopped and
    // its cgroup was removed (until then, the pod's memory may still be charged to the node).
    const api = standIn;
    const stopping = new Set<string>();
    kubelet = setInterval(() => {
      for (const pod of api.pods()) {
        const uid = pod.metadata.uid ?? '';
        if (pod.metadata.deletionTimestamp === undefined || pod.metadata.deletionTimestamp === null || stopping.has(uid)) continue;
        stopping.add(uid);
        const remove = (): void => {
          if (kubelet === null) return;
          api.deletePodNow(pod.metadata.namespace ?? '', pod.metadata.name ?? '');
          print(`kubelet: pod ${podKey(pod)} stopped and removed`);
        };
        const child = processes.get(uid);
        if (child === undefined || child.exitCode !== null || child.signalCode !== null) remove();
        else {
          child.once('exit', remove);
          child.kill('SIGKILL');
        }
      }
    }, 100);

    // The agent, with its real loop and the real composition; the adapters are wrapped only to
    // print the timeline.
    const onNotified = (atMs: number): void => {
      notifiedAtMs ??= atMs;
    };
    // What the agent acted on (processes ended, a DELETE or an eviction sent), whichever pass decided it.
    const onActed = (pod: Pod): void => {
      if (notifiedAtMs !== null && reactionMs === null) reactionMs = Date.now() - notifiedAtMs;
      if (!evicted.includes(podKey(pod))) evicted.push(podKey(pod));
    };
    agent = await startNodeAgent({
      config: parseConfigText(demoConfig(scratchDir, version ?? 'v1'), 'demo'),
      nodeName: NODE_NAME,
      dryRun,
      cluster: { kubeconfigYaml: kubeconfigFor(standIn) },
      reload: null,
      serverPort: 0,
      clock: systemClock,
      logger: silentLogger,
      // Real cgroups: the host's own adapters, with the sandbox cgroup as the node.
      ...(node instanceof SandboxNode ? { nodeCgroup: node.name } : { nodeSide: node.adapters() }),
      decorate: (deps) => {
        notifierMode = deps.notifier.mode;
        return {
          ...deps,
          actions: printingActions(deps.actions, print, onActed),
          notifier: printingNotifier(deps.notifier, print, onNotified),
          terminator: printingTerminator(deps.terminator, print, onActed),
          onDecision: (result) => {
            for (const eviction of result.evictions) if (!decided.includes(podKey(eviction.pod))) decided.push(podKey(eviction.pod));
            printDecision(result, print, dryRun);
          },
          onOomKill: (kill, attribution) => {
            attributed.push(demoOomKill(attribution));
            printOomKill(kill, attribution, print);
          },
          onShortcut: (eviction) => printShortcut(eviction, api.pods(), print),
          onOutcome: (outcome, message) => {
            outcomes.push({ outcome, message });
            print(`agent: ${message}`);
          },
        };
      },
    });
    print(`agent running (metrics: http://127.0.0.1:${agent.opsPort ?? 0}/metrics)`);

    // The pods start once the agent watches, so the race starts with the agent on the node.
    for (const { pod, plan, role } of demoPods(options.leakMiBPerSecond * Mi)) {
      // The API server assigns the UID; the pod's cgroup is named after it, as the kubelet does
      // (after the static pod's own UID for the mirror pod).
      const created = standIn.createPod(pod);
      const id = nodePodUid(created);
      const cgroupUid = id.ok ? id.uid : '';
      processes.set(created.metadata.uid ?? '', node.startPod(cgroupUid, `${pod.metadata.name ?? ''}0123456789abcdef`, 'main', plan));
      print(`pod ${podKey(pod).padEnd(24)} started: ${role}`);
    }

    ticker = setInterval(() => {
      const used = node.usageBytes();
      print(`memory: pods use ${mib(used).padStart(6)}, available ${mib(NODE_CAPACITY_BYTES - used).padStart(6)} (threshold ${THRESHOLD})`);
    }, 500);

    // Run until the leak is dealt with and its outcome known, the OOM killer fires, or time runs out.
    const deadlineMs = Date.now() + options.timeLimitMs;
    let goneAtMs: number | null = null;
    let oomSeenAtMs: number | null = null;
    while (Date.now() < deadlineMs && options.signal?.aborted !== true) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      usageSamples.push({ atMs: Date.now(), usageBytes: node.usageBytes() });
      if (oomSeenAtMs === null && node.oomKills() > 0) {
        print('kernel: the OOM killer fired');
        oomSeenAtMs = Date.now();
      }
      // The agent's report of the kill follows within milliseconds (at most its kernel-log wait).
      if (oomSeenAtMs !== null && (attributed.length > 0 || Date.now() - oomSeenAtMs > OOM_REPORT_WAIT_MS)) break;
      if (goneAtMs === null && evicted.length > 0 && standIn.pod('shop', 'leaky') === null) goneAtMs = Date.now();
      // The outcome is known one re-trigger window after memory is back; a dry run has none to wait for.
      if (goneAtMs !== null && (outcomes.length > 0 || dryRun || Date.now() - goneAtMs > DEMO_RETRIGGER_WINDOW_MS + OUTCOME_SLACK_MS)) break;
    }
    const summary: DemoSummary = {
      mode: version === null ? 'simulated' : `cgroup-${version}`,
      notifier: notifierMode,
      dryRun,
      evicted,
      decided,
      oomKills: node.oomKills(),
      attributed,
      peakUsageBytes: node.maxUsageBytes(),
      reactionMs,
      outcomes,
      usageSamples,
      capacityBytes: NODE_CAPACITY_BYTES,
    };
    options.out.write(formatSummary(summary, options.signal?.aborted === true));
    return summary;
  } finally {
    if (ticker !== null) clearInterval(ticker);
    if (kubelet !== null) clearInterval(kubelet);
    kubelet = null;
    await agent?.stop();
    await standIn?.stop();
    await node.destroy();
    rmSync(scratchDir, { recursive: true, force: true });
  }
}

// The agent's report of a kill comes well inside this (its kernel-log wait is 500 ms by default).
const OOM_REPORT_WAIT_MS = 5000;
// Memory is back within a second or two of the pod's removal; its outcome a window later.
const OUTCOME_SLACK_MS = 5000;

function formatSummary(summary: DemoSummary, interrupted: boolean): string {
  const lines = ['', interrupted ? 'Interrupted.' : 'Summary'];
  if (summary.dryRun) lines.push(`  decided (dry run):    ${summary.decided.length === 0 ? 'nothing' : `evict ${summary.decided.join(', ')}, not acted on`}`);
  lines.push(`  evicted:              ${summary.evicted.length === 0 ? 'nothing' : summary.evicted.join(', ')}`);
  lines.push(`  kernel OOM kills:     ${summary.oomKills}${summary.oomKills === 0 && summary.evicted.length > 0 ? ' (the agent acted first)' : ''}`);
  if (summary.dryRun && summary.attributed.length === 0) lines.push(`  attributed:           nothing${summary.mode === 'simulated' ? ' (a simulated node has no kernel OOM kills to watch)' : ''}`);
  for (const kill of summary.attributed) lines.push(`  attributed:           ${kill.pod ?? 'outside the pods'}${kill.container === null ? '' : `, container ${kill.container}`}: ${kill.nodeLevel ? 'node-level' : 'limit'} kill (${kill.kind}), agent ${kill.agentState}`);
  lines.push(`  peak memory use:      ${mib(summary.peakUsageBytes)} of ${mib(NODE_CAPACITY_BYTES)}`);
  if (summary.reactionMs !== null) lines.push(`  notification to kill: ${summary.reactionMs} ms`);
  for (const { outcome } of summary.outcomes) {
    const relief = outcome.timeToReliefMs === null ? 'memory not back' : `memory back ${Math.round(outcome.timeToReliefMs)} ms after the kill`;
    lines.push(`  outcome:              ${outcome.result}: ${mib(Number(outcome.reclaimedAmount))} freed of ${mib(Number(outcome.neededAmount))} needed, ${relief}${outcome.retriggered ? ', re-triggered' : ''}`);
  }
  lines.push(`  notifier:             ${summary.notifier}`);
  lines.push(`  mode:                 ${MODE_LINES[summary.mode]}`);
  lines.push('  Everything the demo created has been removed.', '');
  return lines.join('\n');
}

const MODE_LINES: Record<DemoSummary['mode'], string> = {
  'cgroup-v1': 'real cgroup v1 memory cgroup and kernel threshold notification (memcg-v1)',
  'cgroup-v2': 'real cgroup v2 memory cgroup, PSI triggers and the working-set fast check (psi)',
  simulated: 'simulated node memory',
};

// What wakes the agent between its 10 s passes, as a node of that kind has it.
const NOTIFIER_LINES: Record<CgroupVersion | 'simulated', string> = {
  v1: 'memcg-v1: the kernel signals the memory threshold through cgroup.event_control',
  v2: 'psi (cgroup v2 has no memory threshold events): PSI triggers on memory.pressure, and the working-set fast check reading memory.current at an interval that shrinks near the threshold',
  simulated: 'a poller of the simulated memory stands in for the kernel notification',
};

function describeEviction(eviction: Eviction): string {
  return `evict ${podKey(eviction.pod)} (${eviction.reason.kind === 'threshold' ? `${eviction.reason.signal}, ${eviction.reason.hard ? 'hard' : 'soft'}` : eviction.reason.limit}, grace ${eviction.gracePeriodSeconds}s)`;
}

// The memory notification's shortcut: the first-ranked pod on fresh memory, critical pods never candidates.
function printShortcut(eviction: Eviction, pods: readonly Pod[], print: (text: string) => void): void {
  print(`decision (memory shortcut): ${describeEviction(eviction)}`);
  print(`  "${eviction.message.trimEnd()}"`);
  const critical = pods.filter(isCriticalPod).map(podKey);
  if (critical.length > 0) print(`  critical pods are never candidates: ${critical.join(', ')}`);
}

function printDecision(result: SynchronizeResult, print: (text: string) => void, dryRun: boolean): void {
  for (const eviction of result.evictions) {
    print(`decision${dryRun ? ' (dry run, not acted on)' : ''}: ${describeEviction(eviction)}`);
    print(`  "${eviction.message.trimEnd()}"`);
  }
  for (const note of result.notes) if (note.code === 'critical-pod') print(`decision: ${note.message} (skipped)`);
  if (result.evictions.length > 0) {
    const ranking = result.ranking.map((r) => `${podKey(r.pod)}${r.critical ? ' (critical)' : ''} ${r.usage === null ? '' : formatQuantity(quantityFromInteger(r.usage))}`);
    print(`  ranking: ${ranking.join(' > ')}`);
  }
}

function demoOomKill(attribution: OomAttribution): DemoOomKill {
  return { pod: attribution.pod === null ? null : podKey(attribution.pod), container: attribution.container, kind: attribution.kind, nodeLevel: attribution.nodeLevel, agentState: attribution.agentState };
}

// The agent's attribution of a kernel OOM kill, as `explain` would put it: who, what kind, the
// figures, and what the agent was doing.
function printOomKill(kill: KernelOomKill, attribution: OomAttribution, print: (text: string) => void): void {
  const who = attribution.pod === null ? (kill.victim?.path ?? 'an unknown cgroup') : `pod ${podKey(attribution.pod)}${attribution.container === null ? '' : `, container ${attribution.container}`}`;
  const victim = kill.process === null ? 'a process' : `process ${kill.process}${kill.pid === null ? '' : ` (pid ${kill.pid})`}`;
  print(`agent: kernel OOM kill of ${who}: ${attribution.nodeLevel ? 'node-level' : 'limit'} kill (${attribution.kind}), ${victim}, found through ${kill.source} ${Math.max(0, kill.detectedAtMs - kill.atMs)} ms after it`);
  const figures = [
    kill.victim?.memory?.peakBytes == null ? null : `victim cgroup peak ${mib(Number(kill.victim.memory.peakBytes))}`,
    kill.oomCgroup?.memory?.limitBytes == null ? null : `${kill.oomCgroup.path} limit ${mib(Number(kill.oomCgroup.memory.limitBytes))}`,
    kill.rssBytes === null ? null : `process resident ${mib(Number(kill.rssBytes))}`,
  ].filter((figure): figure is string => figure !== null);
  if (figures.length > 0) print(`  figures: ${figures.join(', ')}`);
  const behind = [
    attribution.crossingSeenBeforeMs === null ? 'no crossing seen' : `crossing seen ${seconds(attribution.crossingSeenBeforeMs)} before the kill`,
    attribution.lastPassBeforeMs === null
      ? 'no pass yet'
      : // A pass may run between the kill and its report.
        attribution.lastPassBeforeMs >= 0
        ? `last pass ${seconds(attribution.lastPassBeforeMs)} before the kill`
        : `last pass ${seconds(-attribution.lastPassBeforeMs)} after the kill`,
  ];
  print(`  the agent: ${attribution.agentState} (${behind.join(', ')})`);
  print(`  "${(attribution.podMessage ?? attribution.nodeMessage).trimEnd()}"`);
}

function printingNotifier(inner: MemoryThresholdNotifier, print: (text: string) => void, onNotified: (atMs: number) => void): MemoryThresholdNotifier {
  return {
    mode: inner.mode,
    start: (onEvent) =>
      inner.start((event) => {
        onNotified(event.atMs);
        // On v2 a crossing is the fast check's; a PSI trigger is the kernel's.
        const source = inner.mode === 'psi' ? (event.description.startsWith('psi ') ? 'kernel (PSI trigger)' : 'fast check') : 'kernel';
        print(`${source}: ${event.description} ${event.description.startsWith('psi ') ? 'reported' : 'crossed'}: synchronizing now`);
        onEvent(event);
      }),
    updateThresholds: (summary, thresholds) => inner.updateThresholds(summary, thresholds),
    setActing: (acting) => inner.setActing(acting),
    stop: () => inner.stop(),
  };
}

function printingTerminator(inner: LocalTerminator, print: (text: string) => void, onActed: (pod: Pod) => void): LocalTerminator {
  return {
    terminate: async (pod, gracePeriodMs) => {
      onActed(pod);
      const result = await inner.terminate(pod, gracePeriodMs);
      print(`node: SIGTERM to ${result.signalled} process(es) of ${podKey(pod)}, SIGKILL after ${gracePeriodMs} ms`);
      return result;
    },
    adopt: (pod, gracePeriodMs) => {
      onActed(pod);
      inner.adopt?.(pod, gracePeriodMs);
      print(`node: the kill path ended ${podKey(pod)}'s processes; SIGKILL after ${gracePeriodMs} ms to what is left`);
    },
    release: (uid) => inner.release?.(uid),
  };
}

function printingActions(inner: PodActions, print: (text: string) => void, onActed: (pod: Pod) => void): PodActions {
  return {
    getPod: (namespace, name) => inner.getPod(namespace, name),
    evictPod: async (pod, grace) => {
      onActed(pod);
      const outcome = await inner.evictPod(pod, grace);
      print(`API: eviction of ${podKey(pod)}: ${outcome.result}`);
      return outcome;
    },
    deletePod: async (pod, deleteOptions) => {
      onActed(pod);
      const outcome = await inner.deletePod(pod, deleteOptions);
      print(`API: DELETE ${podKey(pod)} (grace ${deleteOptions.gracePeriodSeconds ?? 'default'}s, UID precondition): ${outcome.result}`);
      return outcome;
    },
    addDisruptionTarget: async (pod, condition) => {
      const outcome = await inner.addDisruptionTarget(pod, condition);
      print(`API: DisruptionTarget condition on ${podKey(pod)} (${condition.reason}): ${outcome.result}`);
      return outcome;
    },
  };
}
