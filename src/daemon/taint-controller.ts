// Runs the NoExecute taint logic for the agent's own node against the cluster: feeds watch
// changes into the pure TaintHandler (node work first), records its Events, and performs the
// deletions it asks for the way the taint-eviction controller does (DisruptionTarget condition,
// DELETE, up to `deleteRetries` attempts 10 ms apart), or, when configured, through the
// Eviction API with a deadline after which it falls back to DELETE. Beyond upstream, every
// request is for the pod the decision was about: the fresh read must have the cached pod's UID
// and still be bound to this node, and the DELETE carries the UID as a precondition, so a pod
// recreated under the same name (a StatefulSet's, on another node) is never hit. Off unless
// enabled, and idle while the agent may not act on its Node.

import type { TaintEvictionSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey, type Pod } from '../api/pod.js';
import { formatRfc3339 } from '../api/time.js';
import { errorMessage, KubeApiError } from '../errors.js';
import type { TaintEvent } from '../taint/taint-event.js';
import { TaintHandler } from '../taint/taint-handler.js';
import { pickTaintOptions, TAINT_OPTION_NAMES } from '../taint/taint-options.js';
import type { AgentMetrics } from './metrics.js';
import type { ClusterView, EventRecorder, EvictionOutcome, PodActions } from './ports.js';

export interface TaintControllerDeps {
  readonly nodeName: string;
  readonly dryRun: () => boolean;
  readonly cluster: ClusterView;
  readonly actions: PodActions;
  readonly events: EventRecorder;
  readonly metrics: AgentMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Null while the agent may act on its Node; else why not. */
  readonly refusal?: () => string | null;
}

// Upstream sleeps 10 ms between failed delete attempts.
const DELETE_RETRY_SLEEP_MS = 10;
// How often a PodDisruptionBudget-refused eviction is retried until the deadline.
const EVICTION_API_RETRY_MS = 5_000;
const DISRUPTION_TARGET = { reason: 'DeletionByTaintManager', message: 'Taint manager: deleting due to NoExecute taint' } as const;

export class TaintController {
  private settings: TaintEvictionSettings;
  private readonly deps: TaintControllerDeps;
  private readonly log: Logger;
  private handler: TaintHandler | null = null;
  private unsubscribe: (() => void)[] = [];
  private readonly stopController = new AbortController();
  private readonly inFlight = new Set<Promise<void>>();

  constructor(settings: TaintEvictionSettings, deps: TaintControllerDeps) {
    this.settings = settings;
    this.deps = deps;
    this.log = deps.logger.child({ component: 'taint-handler' });
  }

  start(): void {
    if (!this.settings.enabled || this.handler !== null) return;
    const refused = this.deps.refusal?.() ?? null;
    if (refused !== null) {
      this.log.info('NoExecute taint handling waits until the agent may act on its Node', { node: this.deps.nodeName, reason: refused });
      return;
    }
    const { cluster } = this.deps;
    const handler = new TaintHandler({
      nodeName: this.deps.nodeName,
      clock: this.deps.clock,
      options: pickTaintOptions(this.settings),
      actions: {
        deletePod: (key, pod, fireAtMs) => this.track(this.deletePod(key, pod, fireAtMs)),
        emit: (event) => this.onEvent(event),
        deleteFailed: (key, error) => this.log.error('taint eviction failed', { pod: key, err: errorMessage(error) }),
      },
      listPods: () => cluster.pods(),
      getPod: (namespace, name) => cluster.pods().find((p) => p.metadata.namespace === namespace && p.metadata.name === name) ?? null,
      getNode: () => cluster.node(),
    });
    this.handler = handler;
    this.unsubscribe = [
      cluster.onNodeChange((oldNode, newNode) => {
        if (handler.nodeUpdated(oldNode, newNode)) handler.processPending();
      }),
      cluster.onPodChange((oldPod, newPod) => {
        if (handler.podUpdated(oldPod, newPod)) handler.processPending();
      }),
    ];
    // After a restart, pending evictions are rebuilt from the current taints and pods: the node
    // is processed as if it had just been added.
    const node = cluster.node();
    if (node !== null && handler.nodeUpdated(null, node)) handler.processPending();
    this.log.info('NoExecute taint handling started', { node: this.deps.nodeName });
  }

  /**
   * Starts (rebuilding pending work from the current taints, as after a restart) or stops taint
   * handling as acting on the Node becomes allowed or refused.
   */
  setAllowed(allowed: boolean): void {
    if (allowed) this.start();
    else if (this.handler !== null) {
      this.detach();
      this.log.warn('NoExecute taint handling stopped: the agent may not act on its Node', { node: this.deps.nodeName, reason: this.deps.refusal?.() ?? undefined });
    }
  }

  /** Applies new settings; switching it on or off starts or stops the handler. */
  updateSettings(settings: TaintEvictionSettings): void {
    const restart = settings.enabled !== this.settings.enabled || TAINT_OPTION_NAMES.some((name) => settings[name] !== this.settings[name]);
    this.settings = settings;
    if (!restart) return;
    this.detach();
    this.start();
  }

  async stop(): Promise<void> {
    this.stopController.abort();
    this.detach();
    await Promise.allSettled([...this.inFlight]);
  }

  private detach(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.unsubscribe = [];
    this.handler?.stop();
    this.handler = null;
  }

  private track(work: Promise<void>): Promise<void> {
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  private onEvent(event: TaintEvent): void {
    this.deps.metrics.taintEvictions.inc({ action: event.type, result: this.deps.dryRun() ? 'dry-run' : 'ok' });
    if (event.type === 'scheduled') {
      this.log.info('taint eviction scheduled', { pod: event.podKey, fireAt: formatRfc3339(event.fireAtMs) });
      return;
    }
    this.log.info(event.message, { pod: event.podKey });
    const pod = this.deps.cluster.pods().find((p) => podKey(p) === event.podKey);
    const [namespace = '', name = ''] = event.podKey.split('/');
    // Upstream's events reference the pod by kind, namespace and name.
    const target: Pod = pod ?? { metadata: { namespace, name }, spec: { containers: [] } };
    void this.deps.events.podEvent(target, { type: 'Normal', reason: event.reason, message: event.message });
  }

  private async deletePod(key: string, cached: Pod | null, fireAtMs: number): Promise<void> {
    if (this.deps.dryRun()) {
      this.log.info('would delete pod for a NoExecute taint (dry run)', { pod: key });
      return;
    }
    const refused = this.deps.refusal?.() ?? null;
    if (refused !== null) {
      this.log.warn('not deleting a pod for a NoExecute taint: the agent may not act on its Node', { pod: key, reason: refused });
      this.deps.metrics.taintEvictions.inc({ action: 'delete', result: 'refused' });
      return;
    }
    const [namespace = '', name = ''] = key.split('/');
    if (cached === null) {
      // Without the pod's UID nothing proves that the pod found under this name is the one the
      // decision was about; the watch no longer has it on this node, so it is gone from here.
      this.log.info('not deleting a pod for a NoExecute taint: it is no longer on this node', { pod: key });
      this.deps.metrics.taintEvictions.inc({ action: 'delete', result: 'gone' });
      return;
    }
    if (this.settings.useEvictionApi) {
      const done = await this.evictUntilDeadline(namespace, name, cached, fireAtMs);
      if (done) return;
      this.log.warn('eviction deadline passed; deleting the pod', { pod: key });
    }
    let last: EvictionOutcome | null = null;
    for (let attempt = 1; attempt <= this.settings.deleteRetries; attempt++) {
      if (this.stopController.signal.aborted) return;
      last = await this.deleteOnce(namespace, name, cached);
      if (last.result === 'accepted' || last.result === 'gone') {
        this.deps.metrics.taintEvictions.inc({ action: 'delete', result: last.result });
        return;
      }
      await this.deps.clock.sleep(DELETE_RETRY_SLEEP_MS, this.stopController.signal);
    }
    this.deps.metrics.taintEvictions.inc({ action: 'delete', result: 'failed' });
    throw new Error(`deleting ${key} failed after ${this.settings.deleteRetries} attempts: ${last !== null && 'message' in last ? last.message : 'unknown error'}`);
  }

  /**
   * The pod as the API server has it now, if it is still the pod the decision was about: the
   * cached pod's UID, bound to this node. Otherwise why not (as a `gone` outcome: nothing to do).
   */
  private sameScheduledPod(fresh: Pod | null, cached: Pod): { pod: Pod } | EvictionOutcome {
    if (fresh === null) return { result: 'gone', message: 'the pod no longer exists' };
    if (cached.metadata.uid === undefined || fresh.metadata.uid !== cached.metadata.uid) return { result: 'gone', message: 'the pod was replaced by another with the same name' };
    if (fresh.spec.nodeName !== this.deps.nodeName) return { result: 'gone', message: `the pod is bound to ${fresh.spec.nodeName ?? 'no node'}, not ${this.deps.nodeName}` };
    return { pod: fresh };
  }

  // One upstream attempt: GET from the API server, condition, DELETE. A pod that no longer exists
  // is done (upstream burns its attempts on it and logs an error), and so is one replaced or moved.
  private async deleteOnce(namespace: string, name: string, cached: Pod): Promise<EvictionOutcome> {
    const { actions } = this.deps;
    let fresh: Pod | null;
    try {
      fresh = await actions.getPod(namespace, name);
    } catch (err) {
      return { result: 'failed', status: err instanceof KubeApiError ? err.status : 0, message: errorMessage(err) };
    }
    const checked = this.sameScheduledPod(fresh, cached);
    if (!('pod' in checked)) return this.notTheSamePod(`${namespace}/${name}`, checked);
    const { pod } = checked;
    if (this.settings.skipTerminatingPods && pod.metadata.deletionTimestamp) return { result: 'gone', message: 'the pod is already terminating' };
    const patched = await actions.addDisruptionTarget(pod, DISRUPTION_TARGET);
    if (patched.result !== 'accepted') return patched;
    return actions.deletePod(pod, { gracePeriodSeconds: null });
  }

  private notTheSamePod(key: string, outcome: EvictionOutcome): EvictionOutcome {
    if (outcome.result === 'gone' && outcome.message !== 'the pod no longer exists') this.log.info('not deleting a pod for a NoExecute taint', { pod: key, reason: outcome.message });
    return outcome;
  }

  // Beyond upstream: the Eviction API honours PodDisruptionBudgets; retried until the deadline.
  private async evictUntilDeadline(namespace: string, name: string, cached: Pod, fireAtMs: number): Promise<boolean> {
    const deadlineMs = fireAtMs + this.settings.evictionApiDeadlineMs;
    while (!this.stopController.signal.aborted && this.deps.clock.nowMs() < deadlineMs) {
      const fresh = await this.deps.actions.getPod(namespace, name).catch(() => undefined);
      const checked = fresh === undefined ? undefined : this.sameScheduledPod(fresh, cached);
      if (checked !== undefined && !('pod' in checked)) {
        this.notTheSamePod(`${namespace}/${name}`, checked);
        this.deps.metrics.taintEvictions.inc({ action: 'eviction-api', result: 'gone' });
        return true;
      }
      // Unreachable: the loop retries. The Eviction carries the pod's UID as its precondition.
      const outcome = checked === undefined ? ({ result: 'failed', status: 0, message: 'the API server could not be reached' } as const) : await this.deps.actions.evictPod(checked.pod, null);
      if (outcome.result === 'accepted' || outcome.result === 'gone') {
        this.deps.metrics.taintEvictions.inc({ action: 'eviction-api', result: outcome.result });
        return true;
      }
      this.deps.metrics.taintEvictions.inc({ action: 'eviction-api', result: outcome.result });
      await this.deps.clock.sleep(Math.min(EVICTION_API_RETRY_MS, Math.max(0, deadlineMs - this.deps.clock.nowMs())), this.stopController.signal);
    }
    return this.stopController.signal.aborted;
  }
}
