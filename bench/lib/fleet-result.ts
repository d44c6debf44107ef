// The fleet benchmark's result, bench/results/fleet-<N>.json, and its writing. The file is
// rewritten (atomically: a temporary file renamed over it) after the set-up and after every
// measured phase, so a run stopped by its time limit, a signal or a failure still leaves every
// phase it finished, and the page can be generated from them.

import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** A FlowSchema and PriorityLevelConfiguration of the chart's, as the storm ran under them. */
export interface FlowControlSetting {
  readonly nominalConcurrencyShares: number;
  readonly queueLengthLimit: number;
  readonly queues: number;
  readonly handSize: number;
}

export interface TimelineSecond {
  readonly second: number;
  /** Pods whose DELETE by an agent was answered 2xx in this second. */
  readonly evictions: number;
  readonly agentRequests: number;
  readonly status429: number;
  readonly mutatingP50Ms: number | null;
  readonly mutatingP99Ms: number | null;
  readonly secondClientP99Ms: number | null;
  /** Nodes showing the agents' pressure condition or taint at the end of this second, and those with the taint. */
  readonly nodesUnderPressure: number;
  readonly nodesTainted: number;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50Ms: number | null;
  readonly p99Ms: number | null;
  readonly maxMs: number | null;
}

/** CPU seconds used over a phase, by process, and the machine's busy share of its cores. */
export interface CpuUse {
  readonly apiServerS: number;
  readonly etcdS: number;
  readonly agentsS: number;
  /** Busy time of all cores over the phase's wall time times the cores (1 = saturated). */
  readonly machineBusy: number;
}

/** What the evictions of a storm (or of the restart) came to. */
export interface EvictionTally {
  readonly podsTargeted: number;
  readonly podsEvicted: number;
  /** From the first crossing until the last targeted pod was gone (null: not all went). */
  readonly allGoneMs: number | null;
  /** Pods whose DELETE an agent sent more than once and saw answered 2xx more than once (the pod itself went once). */
  readonly repeatedDeletes: number;
  /** Pods whose processes an agent ended more than once. */
  readonly repeatedLocalKills: number;
  /** Pods deleted that got no Evicted Event. */
  readonly lostEvents: number;
  /** Pods that got more than one Evicted Event. */
  readonly doubledEvents: number;
}

export interface StormResult extends EvictionTally {
  readonly label: string;
  readonly nodes: number;
  /** Null: the agents fell under the API server's built-in schemas (the chart's default). */
  readonly flowControl: FlowControlSetting | null;
  readonly windowS: number;
  /** From the first crossing until no Node showed the agents' pressure condition or taint. */
  readonly recoveredMs: number | null;
  readonly evictionsPerSecondPeak: number;
  readonly evictionsPerSecondMean: number | null;
  readonly agentRequests: Record<string, number>;
  /** The agents' requests answered other than 2xx, by `verb resource code`. */
  readonly failedRequests: Record<string, number>;
  readonly requestsPerNode: number;
  readonly latencyByVerb: Record<string, LatencySummary>;
  readonly mutating: LatencySummary;
  /** The mutating calls of the first 30 s after the first crossing: the burst itself. */
  readonly mutatingBurst: LatencySummary;
  readonly status429: number;
  readonly agentApiErrors: number;
  readonly stormGuardReports: number;
  readonly apfRejected: number;
  readonly apfDispatchedToAgentSchema: number;
  readonly secondClient: LatencySummary & { readonly failures: number };
  readonly cpu: CpuUse;
  /** Set when the run's time limit ended the phase before everything settled. */
  readonly cutShort?: string;
  /** Nodes still under pressure when the phase gave up waiting: a few, each with the agents' requests about it. */
  readonly stuckNodes?: { name: string; requests: string[] }[];
  readonly timeline: TimelineSecond[];
}

/** A storm's burst sent as a real fleet would send it (bench/lib/fleet-replay.ts). */
export interface ReplayResult {
  readonly nodes: number;
  readonly flowControl: FlowControlSetting | null;
  readonly requests: Record<string, number>;
  /** From the first request sent until the last was answered. */
  readonly answeredWithinMs: number;
  /** The answers by HTTP status (0: none). */
  readonly statuses: Record<string, number>;
  readonly mutating: LatencySummary;
  readonly latencyByVerb: Record<string, LatencySummary>;
  readonly apfRejected: number;
  readonly secondClient: LatencySummary & { readonly failures: number };
  readonly cpu: CpuUse;
}

export interface RestResult {
  readonly minutes: number;
  readonly requestsPerNodePerMinute: Record<string, number>;
  /** One real kubelet's, with kubeletPods pods, in the same window (null: none could run here). */
  readonly kubeletRequestsPerMinute: Record<string, number> | null;
  readonly kubeletPods: number;
  readonly lists: number;
  readonly writes: number;
  readonly watchesOpenPerNode: number;
  /** apiserver_longrunning_requests{verb="WATCH"}: every client's. */
  readonly watchesOpenInAll: number;
  readonly bytesFromApiServerPerNodePerMinute: number;
  readonly cpuPercentPerAgent: number;
  readonly rssBytesPerProcess: number[];
  readonly rssBytesPerAgent: number;
  readonly apiServerObjects: { readonly pods: number; readonly events: number };
  readonly cpu: CpuUse;
}

export interface RestartResult extends EvictionTally {
  readonly stormNodes: number;
  /** From the kill until /readyz answered again. */
  readonly downMs: number;
  /** From /readyz until every agent had both its watches open again. */
  readonly watchesReopenedMs: number | null;
  readonly agentsReopened: number;
  readonly relists: number;
  readonly requests: Record<string, number>;
  /** The agents' requests answered other than 2xx, by `verb resource code`. */
  readonly failedRequests: Record<string, number>;
  readonly status429: number;
  readonly agentApiErrors: number;
  readonly cutShort?: string;
}

export interface PhaseRecord {
  readonly name: string;
  readonly status: 'measured' | 'skipped' | 'failed';
  readonly durationS: number;
  readonly note?: string;
}

export interface FleetResult {
  readonly nodes: number;
  readonly podsPerNode: number;
  readonly processes: number;
  readonly agentsPerProcess: number;
  /** When the run started (ISO 8601). */
  readonly measuredAt: string;
  readonly machine: string;
  /** The commit of the agent measured (with `+changes` when src/ differed from it). */
  readonly commit: string;
  complete: boolean;
  /** Wall time of the run's parts, in seconds (lockWaitS: waiting for other runs). */
  readonly durations: { objectsS: number; startupS: number; lockWaitS: number; measuredS: number; totalS: number };
  readonly phases: PhaseRecord[];
  rest: RestResult | null;
  readonly storms: StormResult[];
  readonly replays: ReplayResult[];
  restart: RestartResult | null;
}

/** Writes `result` to `file` now and after every change the caller reports with save(). */
export class FleetResultFile {
  constructor(
    readonly file: string,
    readonly result: FleetResult,
  ) {}

  save(): void {
    mkdirSync(dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(this.result, null, 2)}\n`);
    renameSync(temporary, this.file);
  }
}
