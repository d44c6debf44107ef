// The agent's Prometheus metrics, on a registry of their own (one per running agent, so tests
// and the demo can run several). Every metric is documented in docs/metrics.md.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const PREFIX = 'kube_eviction_agent_';
/** How often the event-loop lag is sampled. */
export const EVENT_LOOP_LAG_SAMPLE_INTERVAL_MS = 10_000;

export interface AgentMetrics {
  readonly registry: Registry;
  readonly evictions: Counter<'signal' | 'action' | 'result' | 'dry_run'>;
  readonly signalAvailable: Gauge<'signal'>;
  readonly signalCapacity: Gauge<'signal'>;
  readonly thresholdMet: Gauge<'signal' | 'hard' | 'dry_run'>;
  readonly nodeCondition: Gauge<'condition'>;
  readonly dryRunNodeCondition: Gauge<'condition'>;
  readonly syncDuration: Histogram<'trigger'>;
  readonly syncs: Counter<'trigger'>;
  readonly notifierEvents: Counter<'description'>;
  readonly notificationToEviction: Histogram<'action'>;
  readonly configReloads: Counter<'result'>;
  readonly configInfo: Gauge<'kind'>;
  readonly thresholdsNearWhole: Gauge<'signal' | 'field'>;
  readonly observeProblems: Gauge;
  readonly refusedPods: Gauge<'reason'>;
  readonly apiErrors: Counter<'operation' | 'status'>;
  readonly taintEvictions: Counter<'action' | 'result'>;
  readonly softEvictionsHeld: Counter<'signal'>;
  readonly escalations: Counter<'signal' | 'kind'>;
  readonly evictionStorms: Counter<'kind'>;
  readonly kernelOomKills: Counter<'kind' | 'agent_state'>;
  readonly kernelOomDetection: Histogram<'source'>;
  readonly evictionOutcomes: Counter<'signal' | 'result'>;
  readonly evictionReclaimedRatio: Histogram<'signal'>;
  readonly evictionTimeToRelief: Histogram<'signal' | 'action'>;
  readonly evictionRetriggers: Counter<'signal'>;
  readonly evictionOutcomeOomKills: Counter<'signal'>;
  readonly psiPressure: Gauge<'resource' | 'line' | 'window'>;
  readonly psiCondition: Gauge<'condition' | 'status'>;
  readonly psiConditionTransitions: Counter<'condition' | 'status'>;
  readonly psiConditionsAvailable: Gauge;
  readonly ready: Gauge;
  readonly notReady: Gauge<'check'>;
}

/** Creates the metrics on a new registry; `withDefaults` adds Node's process metrics (RSS, CPU). */
export function createAgentMetrics(withDefaults = true): AgentMetrics {
  const registry = new Registry();
  // The event-loop lag monitor is a timer of its own that wakes the main thread at every sample: at
  // prom-client's default of every 10 ms it alone cost about 1 % of a core on an idle agent, and at
  // once a second it was the idle agent's most frequent wake-up. Sampled as often as the housekeeping
  // pass runs (10 s), a minute's scrape interval still holds six samples.
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: PREFIX, eventLoopMonitoringPrecision: EVENT_LOOP_LAG_SAMPLE_INTERVAL_MS });
  // Every metric on this registry, named under the agent's prefix.
  const registers = [registry];
  const counter = <L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> => new Counter({ name: `${PREFIX}${name}`, help, labelNames, registers });
  const gauge = <L extends string>(name: string, help: string, labelNames: readonly L[] = []): Gauge<L> => new Gauge({ name: `${PREFIX}${name}`, help, labelNames, registers });
  const histogram = <L extends string>(name: string, help: string, labelNames: readonly L[], buckets: number[]): Histogram<L> =>
    new Histogram({ name: `${PREFIX}${name}`, help, labelNames, buckets, registers });
  return {
    registry,
    evictions: counter(
      'evictions_total',
      'Eviction attempts by signal (or local-storage limit), action (eviction-api, delete, local-termination) and result (accepted, blocked, gone, failed, skipped, refused, dry-run, held, would-evict); dry_run="true" only on a dry-run threshold\'s would-evict',
      ['signal', 'action', 'result', 'dry_run'],
    ),
    signalAvailable: gauge('signal_available', 'Each eviction signal\'s observed available amount (bytes, inodes or PIDs)', ['signal']),
    signalCapacity: gauge('signal_capacity', 'Each eviction signal\'s observed capacity (bytes, inodes or PIDs)', ['signal']),
    thresholdMet: gauge('threshold_met', '1 while a threshold is met with its grace period elapsed, else 0; dry_run="true" for a threshold listed in dryRunThresholds', ['signal', 'hard', 'dry_run']),
    nodeCondition: gauge('node_condition', '1 while the node reports the pressure condition (transition period applied), else 0', ['condition']),
    dryRunNodeCondition: gauge('dry_run_node_condition', '1 while the dry-run thresholds alone would report the pressure condition (never set on the Node), else 0', ['condition']),
    syncDuration: histogram('sync_duration_seconds', 'Duration of one synchronize pass (observe and decide, actions excluded), by what triggered it', ['trigger'], [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]),
    syncs: counter('syncs_total', 'Synchronize passes, by trigger (housekeeping, notifier, grace-period, eviction-wait, reload, startup)', ['trigger']),
    notifierEvents: counter('notifier_events_total', 'Kernel memory notifications received, by threshold description', ['description']),
    notificationToEviction: histogram(
      'notification_to_eviction_seconds',
      'Latency from a kernel memory notification to the eviction request (or local termination), by action',
      ['action'],
      [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
    ),
    configReloads: counter(
      'config_reloads_total',
      'Configuration reloads, by result (applied, requires-restart: applied but for fields that need a restart, rejected, held: not applied because its thresholds would evict on the node as it stands)',
      ['result'],
    ),
    configInfo: gauge('config_info', 'The kind of configuration file in use (value 1)', ['kind']),
    thresholdsNearWhole: gauge(
      'config_thresholds_near_whole',
      '1 for each percentage threshold in force within 0.1% of the whole capacity ("100.0%", "99.95%"): met on (nearly) every pass, so pods are evicted continuously',
      ['signal', 'field'],
    ),
    observeProblems: gauge('observe_problems', 'Number of distinct reasons some node stats are missing (see logs and /readyz)'),
    refusedPods: gauge('refused_pods', 'Pods the API server lists for this node that the agent never acts on, by reason (uid, name, other-node); each is logged', ['reason']),
    apiErrors: counter('api_errors_total', 'Failed Kubernetes API calls, by operation and HTTP status (0: not reached)', ['operation', 'status']),
    taintEvictions: counter('taint_evictions_total', 'NoExecute taint evictions, by action (scheduled, cancelled, deleted) and result', ['action', 'result']),
    escalations: counter(
      'escalations_total',
      'Pods evicted for a hard threshold that had not freed what they held within actions.escalationTimeout, passed over for the next ranked pod, by signal and kind (local: processes still in its cgroup; api: still on the API server)',
      ['signal', 'kind'],
    ),
    softEvictionsHeld: counter('soft_evictions_held_total', 'Soft evictions held back by the per-node budget (stormGuard.softEvictionBudget), by signal', ['signal']),
    evictionStorms: counter('eviction_storms_total', 'Owners whose evicted pods reached stormGuard.owners.eventThreshold within its window (each reported once a window), by owner kind', ['kind']),
    kernelOomKills: counter(
      'kernel_oom_kills_total',
      'Processes killed by the kernel OOM killer, by kind (node, allocatable, pod-limit, container-limit, other, unknown) and what the agent was doing (dry-run, evicting, saw-crossing, not-crossed, not-armed, not-applicable)',
      ['kind', 'agent_state'],
    ),
    kernelOomDetection: histogram(
      'kernel_oom_kill_detection_seconds',
      'From a kernel OOM kill to the agent knowing of it, by what told it first (kernel-log, oom-control, memory-events, counter-scan)',
      ['source'],
      [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5, 15],
    ),
    evictionOutcomes: counter(
      'eviction_outcomes_total',
      'Eviction outcomes, each reported once its re-trigger window ends, by signal and result (relieved, not-relieved, under-eviction, over-eviction)',
      ['signal', 'result'],
    ),
    evictionReclaimedRatio: histogram(
      'eviction_reclaimed_ratio',
      'What each eviction outcome freed against what it needed (the threshold plus minimum reclaim minus the available amount at decision), by signal',
      ['signal'],
      [0, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2, 3, 5, 10, 20],
    ),
    evictionTimeToRelief: histogram(
      'eviction_time_to_relief_seconds',
      'From an eviction\'s first kill or API call to its signal observed back at the threshold plus minimum reclaim, by signal and action (outcomes never back are not observed here)',
      ['signal', 'action'],
      [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
    ),
    evictionRetriggers: counter('eviction_retriggers_total', 'Eviction outcomes whose signal crossed its threshold again within reporting.retriggerWindow after it was back, by signal', ['signal']),
    evictionOutcomeOomKills: counter('eviction_outcome_kernel_oom_kills_total', 'Kernel OOM kills of node pressure (not a container\'s own limit) within an eviction outcome\'s window, by the outcome\'s signal', ['signal']),
    psiPressure: gauge('psi_pressure_percent', 'The pods\' cgroup\'s PSI averages as last read for the PSI node conditions (psiConditions), in percent of wall time, by resource (memory, io), line (some, full) and window (10s, 60s)', ['resource', 'line', 'window']),
    psiCondition: gauge('psi_condition', '1 for the status each PSI node condition has now (True, False, Unknown), 0 for the others, by condition (KubepodsMemoryContentionPressure, KubepodsDiskContentionPressure)', ['condition', 'status']),
    psiConditionTransitions: counter('psi_condition_transitions_total', 'PSI node condition changes, by condition and the status it changed to', ['condition', 'status']),
    psiConditionsAvailable: gauge('psi_conditions_available', '1 when the pods\' cgroup has pressure files on this node (cgroup v2 with PSI), 0 when PSI node conditions cannot be had here (see the log)'),
    ready: gauge('ready', '1 when the agent is ready (every readiness check passes), else 0'),
    notReady: gauge('not_ready', '1 for each readiness check that fails (see /readyz for why), 0 for each that passes', ['check']),
  };
}
