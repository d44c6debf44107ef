// Who the kernel OOM killer killed, why, and what the agent was doing, worked out from a kill
// report, the pod it belongs to and a snapshot of the agent's activity. Pure: it formats the Event
// messages (in the kubelet's style, each sentence ending in ". "), the annotations, the metric's
// labels and the log fields, and decides nothing.

import { containerNamesById } from '../api/container-id.js';
import { podKey, type Pod } from '../api/pod.js';
import { formatQuantity, parseQuantity, quantityValue } from '../api/quantity.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import type { AgentActivitySnapshot } from './agent-activity.js';
import type { KernelOomKill } from './ports.js';

/**
 * What ran out: the node (a node-wide OOM, or the node's cgroup at its limit), the pods' share
 * (kubepods or a QoS tier at its limit: node allocatable), the pod's own limit, the container's own
 * limit, something else (a system cgroup's limit, a cpuset or memory policy), or unknown.
 */
export type OomKillKind = 'node' | 'allocatable' | 'pod-limit' | 'container-limit' | 'other' | 'unknown';

/**
 * The agent at the kill: in dry run (it saw the crossing and did not act), evicting for memory,
 * having seen a memory threshold crossed but not acted yet (a grace period, or a pass in progress),
 * armed but not having seen a crossing, with no memory threshold, or not concerned (a limit kill).
 */
export type AgentStateAtKill = 'dry-run' | 'evicting' | 'saw-crossing' | 'not-crossed' | 'not-armed' | 'not-applicable';

export interface OomAttribution {
  readonly kind: OomKillKind;
  /** The node (or its allocatable memory) ran out, rather than a pod's or container's own limit. */
  readonly nodeLevel: boolean;
  readonly pod: Pod | null;
  readonly container: string | null;
  readonly agentState: AgentStateAtKill;
  /** From the agent's last pass to the kill (how far behind it was; negative when a pass ran between the kill and its report); null before any pass. */
  readonly lastPassBeforeMs: number | null;
  /** How long before the kill the agent had seen a memory threshold met; null when it had not. */
  readonly crossingSeenBeforeMs: number | null;
  /** The Event on the pod (null for a kill outside the pods) and on the Node. */
  readonly podMessage: string | null;
  readonly nodeMessage: string;
  readonly annotations: Readonly<Record<string, string>>;
  /** One line for the demo and `explain`-style output. */
  readonly summary: string;
}

/** The Event reason on the pod and on the Node. */
export const OOM_KILLED_BY_KERNEL = 'OOMKilledByKernel';

// A limit kill is the pod's own business: it is evicted before the node runs out only when the
// node does; an eviction in the last minute counts as "the agent was evicting".
const EVICTION_RECENT_MS = 60_000;

const Mi = 1024n * 1024n;

/** Bytes as the messages print them: Mi (rounded) from 10Mi up, else Ki. */
export function formatBytes(bytes: bigint): string {
  if (bytes >= 10n * Mi) return `${(bytes + Mi / 2n) / Mi}Mi`;
  return `${(bytes + 512n) / 1024n}Ki`;
}

/** Milliseconds as `35ms`, `1.2s`, `3m10s`. */
export function formatDuration(ms: number): string {
  const rounded = Math.max(0, Math.round(ms));
  if (rounded < 1000) return `${rounded}ms`;
  if (rounded < 60_000) return `${(rounded / 1000).toFixed(rounded < 10_000 ? 1 : 0)}s`;
  const minutes = Math.floor(rounded / 60_000);
  const seconds = Math.round((rounded % 60_000) / 1000);
  return seconds === 0 ? `${minutes}m` : `${minutes}m${seconds}s`;
}

/** The kind, from what the kernel said (or what was inferred). */
export function oomKillKind(kill: KernelOomKill): OomKillKind {
  if (kill.constraint === 'CONSTRAINT_NONE') return 'node';
  if (kill.constraint === 'CONSTRAINT_CPUSET' || kill.constraint === 'CONSTRAINT_MEMORY_POLICY') return 'other';
  const level = kill.oomCgroup?.level;
  switch (level) {
    case 'node':
      return 'node';
    case 'pods':
    case 'qos':
      return 'allocatable';
    case 'pod':
      return 'pod-limit';
    case 'container':
      return 'container-limit';
    case 'outside':
      return 'other';
    case undefined:
      // A node-wide kill line, or counters whose path reached no limit: the node ran out.
      if (kill.scope === 'node') return 'node';
      return kill.scope === null && kill.victim !== null && kill.oomCgroupInferred ? 'node' : 'unknown';
  }
}

function thresholdText(threshold: Threshold): string {
  const value = threshold.value.kind === 'quantity' ? formatQuantity(threshold.value.quantity) : `${Math.round(threshold.value.ratio * 10000) / 100}%`;
  return `${threshold.signal} < ${value} (${isHardEvictionThreshold(threshold) ? 'hard' : 'soft'})`;
}

function containerOf(pod: Pod | null, kill: KernelOomKill): string | null {
  if (pod === null || kill.victim === null) return null;
  const names = containerNamesById(pod);
  for (const id of kill.victim.containerIds) {
    const name = names.get(id);
    if (name !== undefined) return name;
  }
  return null;
}

function requestAndLimit(pod: Pod | null, container: string | null): { request: string; limit: string } {
  const spec = [...(pod?.spec.containers ?? []), ...(pod?.spec.initContainers ?? [])].find((c) => c.name === container);
  const quantity = (value: string | undefined): string => {
    if (value === undefined) return 'none';
    try {
      return formatBytes(quantityValue(parseQuantity(value)));
    } catch {
      return value;
    }
  };
  return { request: spec?.resources?.requests?.memory === undefined ? '0' : quantity(spec.resources.requests.memory), limit: quantity(spec?.resources?.limits?.memory) };
}

function limitText(kill: KernelOomKill): string {
  const limit = kill.oomCgroup?.memory?.limitBytes;
  return limit === null || limit === undefined ? '' : ` ${formatBytes(limit)}`;
}

function why(kind: OomKillKind, kill: KernelOomKill): string {
  const cgroup = kill.oomCgroup;
  switch (kind) {
    case 'node':
      return cgroup !== null && cgroup.path !== '/' ? `the node was out of memory (${cgroup.path} at its limit${limitText(kill)})` : 'the node was out of memory';
    case 'allocatable':
      return `the pods' memory (${cgroup?.path ?? 'kubepods'}) reached its limit${limitText(kill)}, the node's allocatable memory`;
    case 'pod-limit':
      return `the pod reached its memory limit${limitText(kill)}`;
    case 'container-limit':
      return `the container reached its memory limit${limitText(kill)}`;
    case 'other':
      return cgroup === null ? `the allocation was constrained by ${kill.constraint ?? 'a memory policy'}` : `memory cgroup ${cgroup.path} reached its limit${limitText(kill)}`;
    case 'unknown':
      return 'the kernel did not say why';
  }
}

function agentStateOf(kind: OomKillKind, activity: AgentActivitySnapshot, pod: Pod | null, atMs: number): AgentStateAtKill {
  if (kind !== 'node' && kind !== 'allocatable' && kind !== 'unknown') return 'not-applicable';
  if (activity.memoryThresholds.length === 0) return 'not-armed';
  const eviction = activity.lastEviction;
  if (activity.dryRun && activity.memoryMetSinceMs !== null) return 'dry-run';
  const uid = pod?.metadata.uid ?? null;
  if (eviction !== null && atMs - eviction.atMs <= EVICTION_RECENT_MS && eviction.result !== 'dry-run' && (uid === null || eviction.uid === uid || activity.memoryMetSinceMs !== null)) return 'evicting';
  if (activity.memoryMetSinceMs !== null) return 'saw-crossing';
  return 'not-crossed';
}

function agentSentence(state: AgentStateAtKill, activity: AgentActivitySnapshot, atMs: number): string {
  const pass = activity.lastPass;
  const thresholds = activity.memoryThresholds.map(thresholdText).join(', ');
  const met = pass?.memoryMet[0];
  const metText = met === undefined ? thresholds : `${thresholdText(met.threshold)}`;
  const seenBefore = activity.memoryMetSinceMs === null ? '' : ` ${formatDuration(atMs - activity.memoryMetSinceMs)} before the kill`;
  switch (state) {
    case 'not-applicable':
      return 'Node eviction thresholds do not cover a memory limit. ';
    case 'not-armed':
      return 'The agent had no memory eviction threshold. ';
    case 'dry-run':
      return `The agent had seen ${metText} crossed${seenBefore} and, in dry run, did not act. `;
    case 'evicting': {
      const eviction = activity.lastEviction;
      return `The agent was evicting ${eviction?.pod ?? 'a pod'} (${eviction?.action ?? 'eviction'}, ${formatDuration(atMs - (eviction?.atMs ?? atMs))} before the kill). `;
    }
    case 'saw-crossing':
      return `The agent had seen ${metText} crossed${seenBefore} and had not evicted yet${met !== undefined && !isHardEvictionThreshold(met.threshold) ? ' (soft: its grace period had not elapsed)' : ''}. `;
    case 'not-crossed': {
      const armed = activity.notifierMode === 'disabled' ? 'set, with no kernel notification armed' : `armed (${activity.notifierMode})`;
      if (pass === null) return `The agent had ${thresholds} ${armed} and had made no pass yet. `;
      const available = pass.available.get('memory.available');
      const saw = available === undefined ? '' : `, which saw ${formatBytes(available)} available`;
      // The report comes after the kill: the last pass may have run in between.
      const when = pass.atMs <= atMs ? `was ${formatDuration(atMs - pass.atMs)} before the kill` : `came ${formatDuration(pass.atMs - atMs)} after the kill`;
      return `The agent had ${thresholds} ${armed} and had not seen it crossed: its last pass ${when}${saw}. `;
    }
  }
}

/** The full attribution of one kill. `pod` is the pod the victim's cgroup belongs to, when found. */
export function attributeOomKill(kill: KernelOomKill, pod: Pod | null, activity: AgentActivitySnapshot): OomAttribution {
  const kind = oomKillKind(kill);
  const container = containerOf(pod, kill);
  const agentState = agentStateOf(kind, activity, pod, kill.atMs);
  const processText = kill.process === null ? 'a process' : `process ${kill.process}${kill.pid === null ? '' : ` (pid ${kill.pid})`}`;
  const where = container !== null ? `container ${container}` : pod !== null ? `pod ${podKey(pod)}` : kill.victim !== null ? `cgroup ${kill.victim.path}` : 'an unknown cgroup';
  let podMessage: string | null = null;
  const because = why(kind, kill);
  const agent = agentSentence(agentState, activity, kill.atMs);
  const peak = kill.victim?.memory?.peakBytes ?? null;
  if (pod !== null) {
    let message = `The kernel OOM killer killed ${processText} of ${where}: ${because}. `;
    if (container !== null && peak !== null) {
      const { request, limit } = requestAndLimit(pod, container);
      message += `Container ${container} was using ${formatBytes(peak)} at its peak, request is ${request}, limit is ${limit}. `;
    } else if (kill.rssBytes !== null) {
      message += `The process was using ${formatBytes(kill.rssBytes)}. `;
    }
    podMessage = (message + agent).slice(0, 1024);
  }
  const subject = pod === null ? where : `pod ${podKey(pod)}${container === null ? '' : `, container ${container}`}`;
  const nodeMessage = `The kernel OOM killer killed ${processText} of ${subject}: ${because}. ${agent}`.slice(0, 1024);
  const pass = activity.lastPass;
  const annotations: Record<string, string> = {
    oom_kind: kind,
    agent_state: agentState,
    ...(kill.process === null ? {} : { victim_process: kill.process }),
    ...(kill.pid === null ? {} : { victim_pid: String(kill.pid) }),
    ...(kill.victim === null ? {} : { victim_cgroup: kill.victim.path }),
    ...(kill.oomCgroup === null ? {} : { oom_cgroup: kill.oomCgroup.path }),
    ...(kill.constraint === null ? {} : { oom_constraint: kill.constraint }),
  };
  return {
    kind,
    nodeLevel: kind === 'node' || kind === 'allocatable',
    pod,
    container,
    agentState,
    lastPassBeforeMs: pass === null ? null : kill.atMs - pass.atMs,
    crossingSeenBeforeMs: activity.memoryMetSinceMs === null ? null : kill.atMs - activity.memoryMetSinceMs,
    podMessage,
    nodeMessage,
    annotations,
    summary: `kernel OOM kill (${kind}): ${processText} of ${subject}: ${because}. ${agent}`.trimEnd(),
  };
}
