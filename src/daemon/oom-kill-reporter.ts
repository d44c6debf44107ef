// Reports every kernel OOM kill the watcher finds: the pod and container it hit (from the victim's
// cgroup; pods deleted in the last minutes are remembered, a static pod is found by its config
// hash), what kind of kill it was and what the agent was doing, as a Warning Event on the pod and
// on the Node (`OOMKilledByKernel`), a metric by kind, and a log line.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type Pod } from '../api/pod.js';
import { errorMessage } from '../errors.js';
import { CONFIG_MIRROR_ANNOTATION_KEY } from '../eviction/critical.js';
import type { AgentActivity } from './agent-activity.js';
import type { AgentMetrics } from './metrics.js';
import { attributeOomKill, OOM_KILLED_BY_KERNEL, type OomAttribution } from './oom-attribution.js';
import type { ClusterView, EventRecorder, KernelOomKill, OomKillWatcher } from './ports.js';

export interface OomKillReporterDeps {
  readonly watcher: OomKillWatcher;
  readonly cluster: ClusterView;
  readonly events: EventRecorder;
  readonly metrics: AgentMetrics;
  readonly activity: AgentActivity;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Sees each kill with its attribution (the demo prints it). */
  readonly onKill?: (kill: KernelOomKill, attribution: OomAttribution) => void;
}

// A pod whose container was killed is often deleted moments later (evicted, or its Job failed).
const DELETED_POD_MEMORY_MS = 10 * 60_000;
const DELETED_PODS_KEPT = 256;

export class OomKillReporter {
  private readonly log: Logger;
  private readonly deleted = new Map<string, { pod: Pod; atMs: number }>();
  private unsubscribe: (() => void) | null = null;
  private readonly recording = new Set<Promise<void>>();

  constructor(private readonly deps: OomKillReporterDeps) {
    this.log = deps.logger.child({ component: 'oom-kills' });
  }

  start(): void {
    if (this.unsubscribe !== null) return;
    this.unsubscribe = this.deps.cluster.onPodChange((oldPod, newPod) => {
      if (oldPod === null || newPod !== null) return;
      const uid = oldPod.metadata.uid;
      if (uid === undefined) return;
      this.deleted.set(uid, { pod: oldPod, atMs: this.deps.clock.nowMs() });
      if (this.deleted.size > DELETED_PODS_KEPT) this.deleted.delete(this.deleted.keys().next().value as string);
    });
    this.deps.watcher.start((kill) => this.report(kill));
  }

  async stop(): Promise<void> {
    this.unsubscribe?.();
    await this.deps.watcher.stop();
    await Promise.all(this.recording);
  }

  /** The pod whose cgroup holds `uid` (its API UID, or a static pod's config hash). */
  private podFor(uid: string): Pod | null {
    const matches = (pod: Pod): boolean => pod.metadata.uid === uid || pod.metadata.annotations?.[CONFIG_MIRROR_ANNOTATION_KEY] === uid;
    const live = this.deps.cluster.pods().find(matches);
    if (live !== undefined) return live;
    const nowMs = this.deps.clock.nowMs();
    for (const [key, { pod, atMs }] of this.deleted) {
      if (nowMs - atMs > DELETED_POD_MEMORY_MS) this.deleted.delete(key);
      else if (matches(pod)) return pod;
    }
    return null;
  }

  private report(kill: KernelOomKill): void {
    const { metrics, events } = this.deps;
    const uid = kill.victim?.podUid ?? null;
    const pod = uid === null ? null : this.podFor(uid);
    const attribution = attributeOomKill(kill, pod, this.deps.activity.snapshot());
    metrics.kernelOomKills.inc({ kind: attribution.kind, agent_state: attribution.agentState });
    metrics.kernelOomDetection.observe({ source: kill.source }, Math.max(0, kill.detectedAtMs - kill.atMs) / 1000);
    this.log.warn('kernel OOM kill', {
      kind: attribution.kind,
      pod: pod === null ? null : podKey(pod),
      container: attribution.container,
      process: kill.process,
      pid: kill.pid,
      victimCgroup: kill.victim?.path ?? null,
      oomCgroup: kill.oomCgroup?.path ?? null,
      constraint: kill.constraint,
      source: kill.source,
      detectionMs: kill.detectedAtMs - kill.atMs,
      agentState: attribution.agentState,
      lastPassBeforeMs: attribution.lastPassBeforeMs,
      crossingSeenBeforeMs: attribution.crossingSeenBeforeMs,
      message: attribution.nodeMessage,
    });
    try {
      this.deps.onKill?.(kill, attribution);
    } catch (error) {
      this.log.warn('an OOM kill observer failed', { error: errorMessage(error) });
    }
    const event = { type: 'Warning' as const, reason: OOM_KILLED_BY_KERNEL, annotations: attribution.annotations };
    const recorded = (async () => {
      if (pod !== null && attribution.podMessage !== null) await events.podEvent(pod, { ...event, message: attribution.podMessage });
      await events.nodeEvent({ ...event, message: attribution.nodeMessage });
    })();
    this.recording.add(recorded);
    void recorded.finally(() => this.recording.delete(recorded));
  }
}
