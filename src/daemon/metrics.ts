// The agent's Prometheus metrics, on a registry of their own (one per running agent, so tests
// and the demo can run several). Every metric is documented in docs/metrics.md.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const PREFIX = 'kube_eviction_agent_';

export interface AgentMetrics {
  readonly registry: Registry;
  readonly evictions: Counter<'signal' | 'action' | 'result'>;
  readonly signalAvailable: Gauge<'signal'>;
  readonly signalCapacity: Gauge<'signal'>;
  readonly thresholdMet: Gauge<'signal' | 'hard'>;
  readonly nodeCondition: Gauge<'condition'>;
  readonly syncDuration: Histogram<'trigger'>;
  readonly syncs: Counter<'trigger'>;
  readonly notifierEvents: Counter<'description'>;
  readonly notificationToEviction: Histogram<'action'>;
  readonly configReloads: Counter<'result'>;
  readonly configInfo: Gauge<'kind'>;
  readonly observeProblems: Gauge;
  readonly apiErrors: Counter<'operation' | 'status'>;
  readonly taintEvictions: Counter<'action' | 'result'>;
  readonly ready: Gauge;
}

/** Creates the metrics on a new registry; `withDefaults` adds Node's process metrics (RSS, CPU). */
export function createAgentMetrics(withDefaults = true): AgentMetrics {
  const registry = new Registry();
  // The event-loop lag monitor samples once a second: at prom-client's default of every 10 ms it
  // alone costs about 1 % of a core on an idle agent, which should wake as rarely as it can.
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: PREFIX, eventLoopMonitoringPrecision: 1000 });
  const registers = [registry];
  return {
    registry,
    evictions: new Counter({
      name: `${PREFIX}evictions_total`,
      help: 'Eviction attempts by signal (or local-storage limit), action (eviction-api, delete, local-termination) and result (accepted, blocked, gone, failed, skipped, dry-run)',
      labelNames: ['signal', 'action', 'result'],
      registers,
    }),
    signalAvailable: new Gauge({ name: `${PREFIX}signal_available`, help: 'Each eviction signal\'s observed available amount (bytes, inodes or PIDs)', labelNames: ['signal'], registers }),
    signalCapacity: new Gauge({ name: `${PREFIX}signal_capacity`, help: 'Each eviction signal\'s observed capacity (bytes, inodes or PIDs)', labelNames: ['signal'], registers }),
    thresholdMet: new Gauge({ name: `${PREFIX}threshold_met`, help: '1 while a threshold is met with its grace period elapsed, else 0', labelNames: ['signal', 'hard'], registers }),
    nodeCondition: new Gauge({ name: `${PREFIX}node_condition`, help: '1 while the node reports the pressure condition (transition period applied), else 0', labelNames: ['condition'], registers }),
    syncDuration: new Histogram({
      name: `${PREFIX}sync_duration_seconds`,
      help: 'Duration of one synchronize pass (observe and decide, actions excluded), by what triggered it',
      labelNames: ['trigger'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers,
    }),
    syncs: new Counter({ name: `${PREFIX}syncs_total`, help: 'Synchronize passes, by trigger (housekeeping, notifier, eviction-wait, reload)', labelNames: ['trigger'], registers }),
    notifierEvents: new Counter({ name: `${PREFIX}notifier_events_total`, help: 'Kernel memory notifications received, by threshold description', labelNames: ['description'], registers }),
    notificationToEviction: new Histogram({
      name: `${PREFIX}notification_to_eviction_seconds`,
      help: 'Latency from a kernel memory notification to the eviction request (or local termination), by action',
      labelNames: ['action'],
      buckets: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers,
    }),
    configReloads: new Counter({ name: `${PREFIX}config_reloads_total`, help: 'Configuration reloads, by result (applied, rejected)', labelNames: ['result'], registers }),
    configInfo: new Gauge({ name: `${PREFIX}config_info`, help: 'The kind of configuration file in use (value 1)', labelNames: ['kind'], registers }),
    observeProblems: new Gauge({ name: `${PREFIX}observe_problems`, help: 'Number of distinct reasons some node stats are missing (see logs and /readyz)', registers }),
    apiErrors: new Counter({ name: `${PREFIX}api_errors_total`, help: 'Failed Kubernetes API calls, by operation and HTTP status (0: not reached)', labelNames: ['operation', 'status'], registers }),
    taintEvictions: new Counter({ name: `${PREFIX}taint_evictions_total`, help: 'NoExecute taint evictions, by action (scheduled, cancelled, deleted) and result', labelNames: ['action', 'result'], registers }),
    ready: new Gauge({ name: `${PREFIX}ready`, help: '1 when the agent is ready (watches synced, observer working)', registers }),
  };
}
