// A timeline of the agent's calls through its ports, for the end-to-end tests that measure where a
// reaction's time goes: each port the agent is given (observer, notifier, terminator, pod actions,
// event recorder) is wrapped so every call leaves a span (start and end, in fractional
// milliseconds since the epoch) before it goes on unchanged. The agent's code is not touched: the
// spans are taken at the boundaries its composition root wires.

import { performance } from 'node:perf_hooks';
import type { Pod } from '../../../src/api/pod.js';
import type { EventRecorder, KillPath, LocalTerminator, MemoryThresholdNotifier, NodeObserver, Observation, PodActions } from '../../../src/daemon/ports.js';

/** The ports the timeline can wrap. */
export type TimedPort = 'notify' | 'observe' | 'terminate' | 'getPod' | 'evictPod' | 'deletePod' | 'addDisruptionTarget' | 'podEvent' | 'nodeEvent';

export interface Span {
  readonly port: TimedPort;
  readonly startMs: number;
  /** When the call settled (equal to startMs for the notification, which is an instant). */
  readonly endMs: number;
  /** `namespace/name` of the pod the call was about, when it was about one. */
  readonly pod?: string;
  readonly detail?: string;
}

/** One reaction: a kernel notification and what the agent did until the API DELETE answered. */
export interface Reaction {
  readonly pod: string;
  readonly notifiedAtMs: number;
  /** From the notification to each step's start (ms); null when the step did not happen. */
  readonly passStartMs: number;
  readonly observeMs: number;
  readonly nodeEventMs: number | null;
  readonly toLocalTerminationMs: number | null;
  readonly terminateCallMs: number | null;
  readonly recheckGetMs: number | null;
  readonly podEventMs: number | null;
  readonly disruptionTargetMs: number | null;
  readonly toDeleteMs: number | null;
  readonly deleteCallMs: number | null;
  /** Pods and containers the observation covered. */
  readonly observedPods: number;
  /** /proc/loadavg at the notification. */
  readonly loadAverage: string;
}

const now = (): number => performance.timeOrigin + performance.now();

function podKey(pod: Pod): string {
  return `${pod.metadata.namespace ?? ''}/${pod.metadata.name ?? ''}`;
}

export class PortTimeline {
  readonly spans: Span[] = [];
  /** Every observation the agent made, with when it completed. */
  readonly observations: { readonly atMs: number; readonly observation: Observation }[] = [];
  private readonly loadAverages = new Map<number, string>();

  constructor(private readonly readLoadAverage: () => string = () => '') {}

  private async timed<T>(port: TimedPort, call: () => Promise<T>, pod?: Pod, detail?: string): Promise<T> {
    const startMs = now();
    try {
      return await call();
    } finally {
      this.spans.push({ port, startMs, endMs: now(), ...(pod === undefined ? {} : { pod: podKey(pod) }), ...(detail === undefined ? {} : { detail }) });
    }
  }

  observer(inner: NodeObserver): NodeObserver {
    return {
      observe: async (pods) => {
        const observation = await this.timed('observe', () => inner.observe(pods), undefined, `${pods.length} pods`);
        this.observations.push({ atMs: now(), observation });
        if (this.observations.length > 600) this.observations.splice(0, 100);
        return observation;
      },
      // The memory shortcut's reader as it is: a notification is acted on as the product acts on it.
      ...(inner.memory === undefined ? {} : { memory: inner.memory }),
      ...(inner.podVolumesPresent === undefined ? {} : { podVolumesPresent: (pod) => inner.podVolumesPresent?.(pod) }),
      ...(inner.close === undefined ? {} : { close: () => inner.close?.() }),
    };
  }

  notifier(inner: MemoryThresholdNotifier): MemoryThresholdNotifier {
    return {
      mode: inner.mode,
      start: (onEvent) =>
        inner.start((event) => {
          const atMs = now();
          this.spans.push({ port: 'notify', startMs: atMs, endMs: atMs, detail: event.description });
          this.loadAverages.set(atMs, this.readLoadAverage());
          onEvent(event);
        }),
      updateThresholds: (summary, thresholds) => inner.updateThresholds(summary, thresholds),
      setActing: (acting) => inner.setActing(acting),
      stop: () => inner.stop(),
    };
  }

  terminator(inner: LocalTerminator): LocalTerminator {
    return {
      terminate: (pod, gracePeriodMs) => this.timed('terminate', () => inner.terminate(pod, gracePeriodMs), pod),
      // Keeping a pod ended after the kill path's signals (its SIGKILL after the grace period), and letting one go, as they are.
      ...(inner.adopt === undefined ? {} : { adopt: (pod, gracePeriodMs) => inner.adopt?.(pod, gracePeriodMs) }),
      ...(inner.release === undefined ? {} : { release: (uid) => inner.release?.(uid) }),
    };
  }

  /**
   * The kill path's thread signals the victim without the terminator port: its report, on the main
   * thread, says when the kernel woke it and when its signals went out, and those become the
   * reaction's notification and local termination (in this timeline's time, from its monotonic stamps).
   */
  killPath(inner: KillPath): KillPath {
    const timeOf = (ns: bigint): number => now() - Number(process.hrtime.bigint() - ns) / 1e6;
    const wrapped: KillPath = {
      start: (onReport) =>
        inner.start((report) => {
          if (report.kind === 'killed') {
            const wokeAtMs = timeOf(report.wokeAtNs);
            const issuedAtMs = timeOf(report.issuedAtNs);
            this.spans.push({ port: 'notify', startMs: wokeAtMs, endMs: wokeAtMs, detail: `${report.threshold.description} (the kill path)` });
            this.loadAverages.set(wokeAtMs, this.readLoadAverage());
            this.spans.push({ port: 'terminate', startMs: issuedAtMs, endMs: issuedAtMs, pod: podKey(report.plan.victim), detail: 'the kill path' });
          }
          onReport(report);
        }),
      arm: (plan) => inner.arm(plan),
      disarm: () => inner.disarm(),
      collect: () => inner.collect(),
      standAside: (description) => inner.standAside(description),
      get armed() {
        return inner.armed;
      },
      stop: () => inner.stop(),
    };
    return wrapped;
  }

  actions(inner: PodActions): PodActions {
    return {
      getPod: (namespace, name) => this.timed('getPod', () => inner.getPod(namespace, name), { metadata: { namespace, name } } as Pod),
      evictPod: (pod, grace) => this.timed('evictPod', () => inner.evictPod(pod, grace), pod),
      deletePod: (pod, options) => this.timed('deletePod', () => inner.deletePod(pod, options), pod),
      addDisruptionTarget: (pod, condition) => this.timed('addDisruptionTarget', () => inner.addDisruptionTarget(pod, condition), pod),
    };
  }

  events(inner: EventRecorder): EventRecorder {
    return {
      podEvent: (pod, event) => this.timed('podEvent', () => inner.podEvent(pod, event), pod, event.reason),
      nodeEvent: (event) => this.timed('nodeEvent', () => inner.nodeEvent(event), undefined, event.reason),
      ...(inner.close === undefined ? {} : { close: () => inner.close?.() }),
      objectEvent: (object, event) => inner.objectEvent(object, event),
    };
  }

  /**
   * The reaction that ended `pod`: the last notification before its local termination (or its
   * DELETE), and every step of the pass that acted, measured from that notification.
   */
  reaction(pod: string): Reaction | null {
    const acted = this.spans.find((s) => (s.port === 'terminate' || s.port === 'deletePod') && s.pod === pod);
    if (acted === undefined) return null;
    const notify = this.spans.filter((s) => s.port === 'notify' && s.startMs <= acted.startMs).at(-1);
    if (notify === undefined) return null;
    const t0 = notify.startMs;
    const after = (port: TimedPort, forPod?: string): Span | undefined => this.spans.find((s) => s.port === port && s.startMs >= t0 && (forPod === undefined || s.pod === forPod));
    // The pass that acted: the last observation that started before the action.
    const observe = this.spans.filter((s) => s.port === 'observe' && s.startMs >= t0 && s.startMs <= acted.startMs).at(-1) ?? this.spans.filter((s) => s.port === 'observe' && s.startMs <= acted.startMs).at(-1);
    const terminate = after('terminate', pod);
    const get = after('getPod', pod);
    const podEvent = after('podEvent', pod);
    const target = after('addDisruptionTarget', pod);
    const del = after('deletePod', pod);
    const nodeEvent = this.spans.find((s) => s.port === 'nodeEvent' && s.startMs >= (observe?.startMs ?? t0) && s.startMs <= acted.startMs);
    const from = (span: Span | undefined): number | null => (span === undefined ? null : span.startMs - t0);
    const took = (span: Span | undefined): number | null => (span === undefined ? null : span.endMs - span.startMs);
    const observation = this.observations.find((o) => observe !== undefined && o.atMs >= observe.endMs - 0.001);
    return {
      pod,
      notifiedAtMs: t0,
      passStartMs: from(observe) ?? 0,
      observeMs: took(observe) ?? 0,
      nodeEventMs: took(nodeEvent),
      toLocalTerminationMs: from(terminate),
      terminateCallMs: took(terminate),
      recheckGetMs: took(get),
      podEventMs: took(podEvent),
      disruptionTargetMs: took(target),
      toDeleteMs: from(del),
      deleteCallMs: took(del),
      observedPods: observation?.observation.summary.pods?.length ?? 0,
      loadAverage: this.loadAverages.get(t0) ?? '',
    };
  }
}

/** One line for a test's output. */
export function describeReaction(r: Reaction): string {
  const ms = (v: number | null): string => (v === null ? '-' : `${v.toFixed(1)}ms`);
  return (
    `${r.pod}: notification -> pass start ${ms(r.passStartMs)}, observe ${ms(r.observeMs)} (${r.observedPods} pods), node Event ${ms(r.nodeEventMs)}, ` +
    `-> local termination ${ms(r.toLocalTerminationMs)} (signalling ${ms(r.terminateCallMs)}), re-check GET ${ms(r.recheckGetMs)}, Evicted Event ${ms(r.podEventMs)}, ` +
    `DisruptionTarget PATCH ${ms(r.disruptionTargetMs)}, -> DELETE ${ms(r.toDeleteMs)} (DELETE ${ms(r.deleteCallMs)}); load ${r.loadAverage}`
  );
}
