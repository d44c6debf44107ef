// Reports what the dry-run thresholds would do: the metrics (labelled dry_run="true"), a log line,
// and a Normal Event "would evict" on the pod that would go. It acts on nothing, and it never
// touches the node's conditions or taint: a dry-run threshold's pressure is shown only as the
// kube_eviction_agent_dry_run_node_condition gauge, so trying a threshold cannot make the
// scheduler steer away from the node.

import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { podKey } from '../api/pod.js';
import { NODE_CONDITIONS } from '../api/signals.js';
import { isHardEvictionThreshold } from '../api/threshold.js';
import type { DryRunDecision } from '../eviction/types.js';
import { BackgroundTasks } from './background-tasks.js';
import type { AgentMetrics } from './metrics.js';
import type { EventRecorder } from './ports.js';

// A dry-run decision repeats at every pass while its threshold is met (nothing is evicted to end
// it): the Event about one pod and signal is recorded at most this often, the log line likewise.
const WOULD_EVICT_REPORT_INTERVAL_MS = 60_000;
const MAX_EVENTS_IN_FLIGHT = 16;

export class DryRunReporter {
  private readonly log: Logger;
  private readonly lastReportAtMs = new Map<string, number>();
  private readonly events: BackgroundTasks;

  constructor(
    private readonly deps: { readonly metrics: AgentMetrics; readonly events: EventRecorder; readonly clock: Clock; readonly logger: Logger },
  ) {
    this.log = deps.logger.child({ component: 'dry-run' });
    this.events = new BackgroundTasks('dry-run-events', MAX_EVENTS_IN_FLIGHT, this.log);
  }

  /** One pass's dry-run decision (undefined: no dry-run thresholds are configured). */
  report(decision: DryRunDecision | undefined, nowMs: number): void {
    const { metrics } = this.deps;
    for (const condition of NODE_CONDITIONS) metrics.dryRunNodeCondition.set({ condition }, decision?.nodeConditions.includes(condition) === true ? 1 : 0);
    if (decision === undefined) return;
    for (const met of decision.thresholdsMet) metrics.thresholdMet.set({ signal: met.threshold.signal, hard: String(isHardEvictionThreshold(met.threshold)), dry_run: 'true' }, 1);
    const eviction = decision.evictions[0];
    if (eviction === undefined || eviction.reason.kind !== 'threshold') return;
    const { signal, hard } = eviction.reason;
    metrics.evictions.inc({ signal, action: 'none', result: 'would-evict', dry_run: 'true' });
    const key = `${signal}/${eviction.pod.metadata.uid ?? podKey(eviction.pod)}`;
    const lastMs = this.lastReportAtMs.get(key);
    if (lastMs !== undefined && nowMs - lastMs < WOULD_EVICT_REPORT_INTERVAL_MS) return;
    this.lastReportAtMs.set(key, nowMs);
    // Forget pods reported long ago, so the map stays as small as the pods in question.
    for (const [k, atMs] of this.lastReportAtMs) if (nowMs - atMs >= WOULD_EVICT_REPORT_INTERVAL_MS) this.lastReportAtMs.delete(k);
    this.log.info('would evict (dry-run threshold)', { pod: podKey(eviction.pod), signal, hard, gracePeriodSeconds: eviction.gracePeriodSeconds, message: eviction.message });
    const message = `Dry-run threshold ${signal} (${hard ? 'hard' : 'soft'}) would evict this pod: ${eviction.message}`.slice(0, 1024);
    this.events.run('DryRunEviction', () => this.deps.events.podEvent(eviction.pod, { type: 'Normal', reason: 'DryRunEviction', message }));
  }

  /** Resolves once every Event started so far has been answered. */
  async settled(): Promise<void> {
    await this.events.settled();
  }
}
