// The ports of the running agent, beside the loop and the executor that use them: where
// observations come from, what wakes the loop, the cluster it acts on and the node it acts on.
// Adapters (src/observe, src/notifier, src/kube, src/act) implement these and import nothing else
// of src/daemon; the pure engine (src/eviction) needs none of them.

import type { NotifierMode } from '../api/agent-settings.js';
import type { HugepageAdjustment } from '../api/hugepages.js';
import type { Node, ObjectRef, Pod } from '../api/pod.js';
import type { PodMemoryBound, PodMemoryReading } from '../api/pod-memory.js';
import type { PodStats, PodStatsReads, Summary } from '../api/summary.js';
import type { Threshold } from '../api/threshold.js';

/** One observation of the node: the Summary plus the filesystem layout the kubelet would discover. */
export interface Observation {
  readonly summary: Summary;
  /** A dedicated image filesystem (imagefs on another device than nodefs). */
  readonly dedicatedImageFs: boolean;
  /** Container writable layers on a filesystem split from the image filesystem. */
  readonly splitContainerFs: boolean;
  /** Reasons some stats are missing (a file unreadable, a cgroup not found); each a short sentence. */
  readonly problems: readonly string[];
  /**
   * Why the pods' parent cgroup (`kubepods`), or the memory hierarchy above it, was not found,
   * when a source that reads cgroups did not find it: no pod can then be measured.
   */
  readonly podCgroupRootProblem?: string;
  /**
   * What the cgroupfs source subtracted from node.memory.availableBytes for hugepages (the
   * kubelet's HugepageAwareEviction); absent from the kubelet's summary, which carries its own.
   */
  readonly hugepages?: HugepageAdjustment;
  /**
   * Which of the pods' cgroup figures were read afresh for this observation; the rest are as last
   * read, each stat with the time it was read. Absent: all of them were (a source that reads
   * everything every time, or an observation without a plan).
   */
  readonly podStatsRead?: PodStatsReads;
}

/**
 * How one observation decides what to read of the pods: the node's own figures are read first, and
 * the plan, given them with each pod's figures as last read, says which of the pods' cgroup figures
 * the pass needs afresh (the engine's `podStatsNeeded`). The source may read more (a full read at a
 * bounded interval), never less.
 */
export interface ObservePlan {
  podStatsNeeded(preliminary: Observation): PodStatsReads;
}

/** Produces observations (cgroupfs/proc/statfs, or the kubelet's /stats/summary). */
export interface NodeObserver {
  /**
   * Observes the node now; `pods` are the node's pods, used to find their cgroups and container
   * names. Without a plan every figure is read; with one, the pods' cgroup figures only as the plan
   * needs them (a source that cannot read less ignores it).
   */
  observe(pods: readonly Pod[], plan?: ObservePlan): Promise<Observation>;
  /**
   * The memory figures a memory notification's shortcut reads, when this source can read them in
   * microseconds (the cgroup observer); without it a notification gets a full pass.
   */
  readonly memory?: MemoryReader;
  /**
   * Whether the pod's volumes are still on the kubelet's root directory, read now (the kubelet's
   * podVolumesExist): an evicted pod is not cleaned up before they are gone. Undefined when this
   * source cannot tell; without it the loop goes by the API server alone.
   */
  podVolumesPresent?(pod: Pod): boolean | undefined;
  /** Releases what it holds open (cgroup files), at shutdown. */
  close?(): void;
}

/**
 * The few figures a memory notification needs, each read synchronously (no thread-pool hop), each
 * exactly as `observe` computes it. Nothing here reports problems: the full pass that follows does.
 */
export interface MemoryReader {
  /** The node's memory and the `pods` system container's, now: a Summary with only those node stats. */
  nodeMemory(): Summary;
  /** What is known of each pod's working set without reading it (its cgroup's usage), in `pods` order. */
  podBounds(pods: readonly Pod[]): PodMemoryBound[];
  /** One pod's working set, now. */
  podWorkingSet(pod: Pod): PodMemoryReading;
  /** One pod's memory stats now, its containers' included (the eviction message quotes them). */
  podStats(pod: Pod): PodStats | undefined;
  /** Processes left in the pod's cgroup tree (0 only once none can still hold memory); undefined when that cannot be told. */
  podProcessCount(pod: Pod): number | undefined;
}

/** What a notifier reports when the kernel says memory crossed an armed threshold. */
export interface NotifierEvent {
  /** Like the kubelet's `Description()`: `hard memory eviction threshold`, `soft allocatable memory eviction threshold`, `psi memory pressure`. */
  readonly description: string;
  /** When the wake-up reached JavaScript (ms since the epoch, from the injected clock). */
  readonly atMs: number;
}

/** Wakes the synchronize loop the moment memory crosses a threshold. */
export interface MemoryThresholdNotifier {
  /** `memcg-v1` (eventfd on cgroup v1), `psi` (cgroup v2 PSI trigger plus a fast check), or `disabled`. */
  readonly mode: NotifierMode;
  /** Starts waiting; `onEvent` is called once per wake-up, never concurrently with itself. */
  start(onEvent: (event: NotifierEvent) => void): void;
  /**
   * Re-arms the memory thresholds from the latest observation (kubelet `UpdateThreshold`):
   * `capacity - threshold + inactive_file` on memory.usage_in_bytes, for `memory.available` on the
   * root cgroup and `allocatableMemory.available` on the kubepods cgroup, hard and soft.
   */
  updateThresholds(summary: Summary, thresholds: readonly Threshold[]): void;
  /**
   * Whether the agent acts on what it decides (false in a dry run; true until told). A notifier
   * that changes what the kernel does to buy the agent time (the psi notifier's memory.high
   * wake-up) does so only while it acts.
   */
  setActing(acting: boolean): void;
  /** Stops promptly, even while a wait is outstanding; releases every descriptor. Idempotent. */
  stop(): Promise<void>;
}

// ---- The cluster side: implemented by src/kube (against the API server) and by test fakes. ----

/** The node's pods and its Node object, as a watch keeps them (ListWatch with spec.nodeName=<node>). */
export interface ClusterView {
  /** True once the first list of pods and of the node has been received. */
  readonly synced: boolean;
  /** The pods bound to this node, latest state. */
  pods(): readonly Pod[];
  /** This node's object, or null when it does not exist (or is not known yet). */
  node(): Node | null;
  /** Subscribes to changes; returns an unsubscribe function. `old`/`new` are null for add/delete. */
  onPodChange(listener: (oldPod: Pod | null, newPod: Pod | null) => void): () => void;
  onNodeChange(listener: (oldNode: Node | null, newNode: Node | null) => void): () => void;
}

/** The outcome of one eviction or deletion request. */
export type EvictionOutcome =
  /** Accepted: the pod is being terminated. */
  | { readonly result: 'accepted' }
  /** Refused by a PodDisruptionBudget (HTTP 429): try the next candidate. */
  | { readonly result: 'blocked'; readonly message: string }
  /** The pod is already gone, or is another pod now (404, or a UID precondition failed with 409). */
  | { readonly result: 'gone'; readonly message: string }
  /** Any other failure (network, 5xx, 403, ...): retried later with backoff. */
  | { readonly result: 'failed'; readonly status: number; readonly message: string };

/** The condition upstream components add before deleting a pod. */
export interface DisruptionTargetCondition {
  readonly reason: string;
  readonly message: string;
}

/** Acts on pods through the API server. Every call is bounded in time. */
export interface PodActions {
  /**
   * Re-reads a pod from the API server (not a cache): null when it does not exist (404). Any
   * other failure rejects with a KubeApiError: "unreachable" must never read as "gone".
   */
  getPod(namespace: string, name: string): Promise<Pod | null>;
  /** policy/v1 Eviction subresource: honours PodDisruptionBudgets. Never rejects: failures are outcomes. */
  evictPod(pod: Pod, gracePeriodSeconds: number | null): Promise<EvictionOutcome>;
  /**
   * DELETE with an optional grace period, always with the pod's UID as a precondition, so the
   * API server refuses it (409, `gone`) when the name now belongs to another pod. A pod without a
   * UID is not deleted (`gone`).
   */
  deletePod(pod: Pod, options: { gracePeriodSeconds: number | null }): Promise<EvictionOutcome>;
  /** Adds or updates the DisruptionTarget=True condition through the pod's status subresource. */
  addDisruptionTarget(pod: Pod, condition: DisruptionTargetCondition): Promise<EvictionOutcome>;
}

/** An Event to record: on a pod, or on this node. */
export interface AgentEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
  readonly annotations?: Readonly<Record<string, string>>;
}

/** Records Events (best effort: failures are logged by the implementation, never thrown). */
export interface EventRecorder {
  podEvent(pod: Pod, event: AgentEvent): Promise<void>;
  nodeEvent(event: AgentEvent): Promise<void>;
  /** Stops retrying writes the API server did not answer (the agent is stopping). */
  close?(): void;
  /** An Event on another object of a pod's namespace (the owner of evicted pods). */
  objectEvent(object: ObjectRef, event: AgentEvent): Promise<void>;
}

/** Finds who owns a ReplicaSet, to count a Deployment's evictions against the Deployment. */
export interface OwnerLookup {
  /**
   * The ReplicaSet's controlling owner (null: it has none, or it is gone); a string says why the
   * API server could not answer (the caller then falls back to the names).
   */
  replicaSetOwner(namespace: string, name: string): Promise<ObjectRef | null | string>;
}

/** One node condition under the agent's own type (never the kubelet's). */
export interface AgentNodeCondition {
  readonly type: string;
  /** `Unknown` when the agent no longer keeps it current (stopped, dry run, reporting off). */
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

/** Reports node state: the agent's pressure conditions, and its optional NoSchedule taint. */
export interface NodeReporter {
  /** Sets these conditions (adds or updates; others untouched); LastTransitionTime changes only on a flip. */
  setConditions(conditions: readonly AgentNodeCondition[]): Promise<boolean>;
  /** Adds (present=true) or removes the agent's taint; a no-op when already so. */
  setTaint(taint: { key: string; value: string; effect: 'NoSchedule' }, present: boolean): Promise<boolean>;
}

// ---- The node side that acts: implemented by src/act. ----

/** What one local termination did. */
export interface LocalTermination {
  /** Processes signalled (0 when the pod's cgroup is not found, or everything was refused). */
  readonly signalled: number;
  /** Why some or all of the pod's processes were not signalled although found (an unsafe UID, a path or a process outside the pod). */
  readonly refused?: string;
}

/** Ends a pod's containers on this node, from its cgroup, without waiting for the API server or the kubelet. */
export interface LocalTerminator {
  /**
   * Sends SIGTERM to every process of the pod's containers (never its sandbox), then SIGKILL to
   * those left after `gracePeriodMs`, and keeps ending a container restarted in the pod until the
   * pod's cgroup is gone or {@link LocalTerminator.release} is called. Never throws.
   */
  terminate(pod: Pod, gracePeriodMs: number): Promise<LocalTermination>;
  /**
   * The pod's containers were just signalled by the kill path ({@link KillPath}: SIGTERM, or SIGKILL
   * with no grace period): from here on it is kept ended as after `terminate`, SIGKILL to what is
   * left after `gracePeriodMs`, a restarted container ended. Never throws.
   */
  adopt?(pod: Pod, gracePeriodMs: number): void;
  /** Stops keeping the pod's containers ended (its deletion will not be retried: a budget refused it). */
  release?(uid: string): void;
}

// ---- The kill path: implemented by src/act. ----

/** One hard memory threshold as the kill path confirms it on its cgroup (the node's, or the pods'). */
export interface KillPathThreshold {
  /** The kubelet's `Description()`: `hard memory eviction threshold`, `hard allocatable memory eviction threshold`. */
  readonly description: string;
  readonly signal: 'memory.available' | 'allocatableMemory.available';
  /** The usage at which the kernel wakes the kill path (the notifier's formula: capacity − threshold + inactive_file). */
  readonly wakeUsageBytes: bigint;
  /** The threshold is met when the working set is above this (the engine's `threshold > capacity − workingSet`). */
  readonly workingSetLimitBytes: bigint;
  /** The usage at which the kernel wakes the kill path to have the victim ranked again on the way up; null for none. */
  readonly approachUsageBytes: bigint | null;
}

/**
 * What the engine would do if one reading of the node's memory crossed a hard memory threshold:
 * end `victim`'s containers. Valid while the victim still ranks first, which the kill path checks
 * at the crossing with the figures below, declining (the main thread then decides) when it cannot tell.
 */
export interface KillPathPlan {
  readonly victim: Pod;
  /** Its local termination's grace period: SIGTERM first, or SIGKILL at once when 0. */
  readonly gracePeriodMs: number;
  readonly thresholds: readonly KillPathThreshold[];
  /**
   * Every other pod that would rank before the victim once its working set reached
   * `overtakingWorkingSetBytes` (the victim unchanged): the thread reads each one's usage at the
   * crossing, so the kill stands for the ranking on that moment's figures, not the arming's.
   */
  readonly rivals: readonly { readonly pod: Pod; readonly overtakingWorkingSetBytes: bigint }[];
  /** The victim's working set when ranked. */
  readonly victimWorkingSetBytes: bigint;
  /** How far the victim's working set may shrink before it falls back below its request (and behind pods that exceed theirs); null when it is not above it. */
  readonly victimShrinkAllowanceBytes: bigint | null;
  /** The node lock file the kill is checked against at the moment of the signal (its path, and the file it names now); null without a lock. */
  readonly lock: { readonly path: string; readonly fileId: string } | null;
}

/** What the kill path reports, on the main thread, after the fact. */
export type KillPathReport =
  /** A crossing confirmed: the victim's processes were signalled (from `issuedAtMs`). */
  | {
      readonly kind: 'killed';
      readonly plan: KillPathPlan;
      readonly threshold: KillPathThreshold;
      /** The confirming reading. */
      readonly usageBytes: bigint;
      readonly workingSetBytes: bigint;
      /** When the kernel's event woke the kill path, and when its signals went out (the injected clock's time, and the monotonic clock's for the benchmarks). */
      readonly wokeAtMs: number;
      readonly issuedAtMs: number;
      readonly wokeAtNs: bigint;
      readonly issuedAtNs: bigint;
      readonly termination: LocalTermination;
    }
  /** A crossing confirmed, but the plan could not be trusted (the victim may no longer rank first, the node lock moved): nothing signalled. */
  | { readonly kind: 'declined'; readonly plan: KillPathPlan; readonly threshold: KillPathThreshold; readonly reason: string }
  /** Memory reached the approach point: the victim should be ranked again. */
  | { readonly kind: 'approach'; readonly threshold: KillPathThreshold }
  /** The kill path stopped working (its thread failed): nothing is armed any more. */
  | { readonly kind: 'failed'; readonly reason: string };

/**
 * The hard memory kill, armed ahead of the notification on a thread of its own: woken by the kernel,
 * it confirms the crossing with one reading of the cgroup's memory and ends the planned victim's
 * processes, without waiting for the main thread. Exactly one of the kill path and the main thread
 * acts on a crossing: the main thread takes the plan back (`disarm`) before it acts itself.
 */
export interface KillPath {
  /** Reports go to `onReport`, on the main thread. */
  start(onReport: (report: KillPathReport) => void): void;
  /** Arms `plan` in place of the one armed (which stays armed until this one is ready); null once it is on its way, else why it cannot be armed. */
  arm(plan: KillPathPlan): string | null;
  /** Takes the plan back: true when nothing can fire any more; false when it already fired (`collect` then delivers the report). */
  disarm(): boolean;
  /** Delivers what the kill path reported and was not yet delivered, now; waits a moment for a kill being carried out. */
  collect(): void;
  /**
   * The main thread's own notification of a crossing of `description`: when the kill path is armed
   * for it, the main thread waits (a few milliseconds at most, asleep, so the two do not race for a
   * core) until the kill path has judged the crossing; then it collects what was reported.
   */
  standAside(description: string): void;
  /** Whether a plan is armed (ready to fire) now. */
  readonly armed: boolean;
  stop(): Promise<void>;
}

// ---- Kernel OOM kills: implemented by src/notifier. ----

/** What told the agent of an OOM kill: the kernel log, a cgroup v1 oom_control eventfd, a cgroup v2 memory.events change, or a periodic counter scan. */
export type OomKillSource = 'kernel-log' | 'oom-control' | 'memory-events' | 'counter-scan';

/** Where a memory cgroup sits: the node (its cgroup, or the whole machine), the pods' root, a QoS tier, a pod, a container, or outside the pods. */
export type CgroupLevel = 'node' | 'pods' | 'qos' | 'pod' | 'container' | 'outside';

/** A memory cgroup of an OOM kill, as found on the host. */
export interface OomCgroup {
  /** Absolute within the memory hierarchy (`/kubepods/burstable/pod<uid>/<id>`), as the kernel names it. */
  readonly path: string;
  readonly level: CgroupLevel;
  /** The UID in the pod cgroup's name (a static pod's is its config hash), for `pod` and `container`. */
  readonly podUid: string | null;
  /** The container IDs the container cgroup's name may stand for (`cri-containerd-<id>.scope` -> `<id>`). */
  readonly containerIds: readonly string[];
  /** Its memory figures when the kill was found; null when it was already gone. */
  readonly memory: CgroupMemoryFigures | null;
}

/** A memory cgroup's figures: the limit (null: none), the usage now and the highest usage recorded. */
export interface CgroupMemoryFigures {
  readonly limitBytes: bigint | null;
  readonly usageBytes: bigint | null;
  readonly peakBytes: bigint | null;
}

/** One process killed by the kernel OOM killer. */
export interface KernelOomKill {
  /** When it was killed (from the kernel log's timestamp), or, without it, when it was found; ms since the epoch. */
  readonly atMs: number;
  /** When the agent knew of it (ms since the epoch). */
  readonly detectedAtMs: number;
  readonly source: OomKillSource;
  /** When the kernel first signalled the OOM (an oom_control eventfd or memory.events), if it did. */
  readonly oomSignalledAtMs: number | null;
  /** The kernel's constraint (`CONSTRAINT_NONE` for a node-wide OOM, `CONSTRAINT_MEMCG` at a cgroup's limit); null when the log line was not there. */
  readonly constraint: string | null;
  /** From the kill line: a memcg OOM or a node-wide one; null without the kernel log. */
  readonly scope: 'memcg' | 'node' | null;
  /** The victim's cgroup; null when only a pid is known (the kernel rate-limits the line naming it). */
  readonly victim: OomCgroup | null;
  /** The cgroup at its limit; null for a node-wide OOM or when unknown. */
  readonly oomCgroup: OomCgroup | null;
  /** True when the kernel did not name the cgroup at its limit and it was inferred (the deepest on the victim's path whose peak reached its limit). */
  readonly oomCgroupInferred: boolean;
  readonly pid: number | null;
  /** The victim's process name (the kernel's `comm`, at most 15 characters). */
  readonly process: string | null;
  /** The victim's resident memory when killed (anon + file + shmem), from the kernel log. */
  readonly rssBytes: bigint | null;
}

/** Watches the node for kernel OOM kills and reports each once. */
export interface OomKillWatcher {
  /** The sources in use once started, for logs and `explain` (`kernel-log`, `oom-control`, `memory-events`, `counter-scan`). */
  sources(): readonly OomKillSource[];
  /** Starts watching; `onKill` is called once per kill, never concurrently with itself. */
  start(onKill: (kill: KernelOomKill) => void): void;
  /** Stops promptly and releases every descriptor. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The node lock's file in a host directory every agent on the node mounts (src/act/node-lock-file.ts):
 * an exclusive flock, which the kernel drops when its holder dies, beside a small state file the
 * holder rewrites at every heartbeat and presence files of the agents waiting. What is read back
 * is returned as parsed JSON for the caller to validate: another process wrote it.
 */
export interface NodeLockFile {
  /** The directory holding the lock, as configured. */
  readonly directory: string;
  /** The lock file's path in it. */
  readonly path: string;
  /** Tries to take the lock without waiting (creating the directory and file as needed); true once held. */
  tryAcquire(): boolean;
  /**
   * Whether this process holds the lock now: it took it and the lock file's path still names the
   * file it locked (a standby that broke a hung holder's lock moved that file aside). Synchronous,
   * two stat calls.
   */
  held(): boolean;
  /** The lock file's inode now (as `dev:ino`), null when there is none. */
  lockFileId(): string | null;
  /** Moves the lock file aside if it is still `expectedId`, so the next tryAcquire locks a fresh one (a hung holder's lock). */
  breakLock(expectedId: string): boolean;
  /** Gives the lock up (closes the file). Idempotent. */
  release(): void;
  /** The holder's state file, parsed; null when absent or not JSON. */
  readState(): unknown;
  /** Replaces the state file atomically (a reader sees the old or the new, never half). */
  writeState(state: unknown): void;
  /** This process's presence file (a waiting agent says who it is), replaced atomically. */
  writePresence(pid: number, presence: unknown): void;
  removePresence(pid: number): void;
  /** Every presence file but this process's, parsed (unparsable ones left out). */
  readPresences(ownPid: number): unknown[];
}
