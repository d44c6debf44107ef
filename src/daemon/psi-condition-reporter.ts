// Keeps the PSI node conditions on the agent's Node (opt-in): every `psiConditions.interval` it
// reads the pods' cgroup's memory.pressure and io.pressure (the files the PSI notifier arms its
// triggers on), steps the pure tracker (src/pressure/psi-conditions.ts), and writes
// `<prefix>KubepodsMemoryContentionPressure` / `<prefix>KubepodsDiskContentionPressure` when one
// changes (and every five minutes), with a NoSchedule taint of each while it is True when
// `psiConditions.taint.enabled`. A Node Event says when a condition is set and when it clears.
//
// Like the pressure conditions (node-status.ts), what it puts on the Node it takes off when it
// stops maintaining it: off, dry run, a prefix changed, shutting down, or PSI unreadable on this
// node, its conditions become `Unknown` and its taints go. Where the pods' cgroup has no pressure
// files at all (cgroup v1, a kernel without PSI) it says so once at start and reports nothing.

import type { PsiConditionSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import { PSI_CONDITION_TYPES, PSI_RESOURCES, PSI_TAINT_NAMES, type PressureFile, type PsiLine, type PsiResource } from '../api/psi.js';
import { errorMessage } from '../errors.js';
import { PsiConditionTracker, type PsiConditionStep, type PsiReading, type PsiTrackerSettings } from '../pressure/psi-conditions.js';
import type { AgentMetrics } from './metrics.js';
import type { AgentNodeCondition, ClusterView, EventRecorder, NodeReporter } from './ports.js';

/** The pods' cgroup's pressure files: implemented by src/observe/psi-source.ts. */
export interface PsiSource {
  /** Why the pods' cgroup has no pressure files on this node (cgroup v1, no PSI in the kernel), or null. Fixed for the process's life. */
  readonly unavailable: string | null;
  /** The file read for each resource. */
  readonly paths: Readonly<Record<PsiResource, string>>;
  /** Each resource's file now, or why it could not be read. */
  read(): Record<PsiResource, { readonly ok: true; readonly value: PressureFile } | { readonly ok: false; readonly reason: string }>;
  close(): void;
}

export interface PsiConditionReporterSettings {
  readonly psi: PsiConditionSettings;
  readonly conditionTypePrefix: string;
  readonly dryRun: boolean;
}

export interface PsiConditionReporterDeps {
  readonly source: PsiSource;
  readonly reporter: NodeReporter;
  readonly cluster: ClusterView;
  readonly events: EventRecorder;
  readonly metrics: AgentMetrics;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Null while the agent may act on its Node; else why not (then nothing is written). */
  readonly refusal?: () => string | null;
}

type NotMaintained = 'stopped' | 'dry-run' | 'off' | 'renamed' | 'unavailable';

const UNKNOWN_TEXT: Readonly<Record<NotMaintained, readonly [string, string]>> = {
  stopped: ['AgentStopped', 'kube-eviction-agent stopped; this condition is no longer kept up to date'],
  'dry-run': ['AgentDryRun', 'kube-eviction-agent runs in dry run and does not report this condition'],
  off: ['AgentPsiConditionsOff', 'kube-eviction-agent does not report this condition (psiConditions is off for it)'],
  renamed: ['AgentConditionTypeChanged', 'kube-eviction-agent reports this condition under another type now (reporting.conditionTypePrefix changed)'],
  unavailable: ['AgentPsiUnavailable', 'kube-eviction-agent cannot read the pods\' cgroup pressure on this node'],
};

// Re-sent at least this often (as the pressure conditions are), so a Node edited by hand gets them back.
const HEARTBEAT_MS = 5 * 60_000;

const RESOURCE_WORDS: Readonly<Record<PsiResource, string>> = { memory: 'memory', io: 'I/O' };

/** The tracker's settings from the configuration: the enabled resources with their thresholds. */
export function trackerSettings(psi: PsiConditionSettings): PsiTrackerSettings {
  const resources: Partial<Record<PsiResource, { avg10ThresholdPercent: number; avg60ThresholdPercent: number }>> = {};
  for (const resource of PSI_RESOURCES) {
    const r = psi[resource];
    if (r.enabled) resources[resource] = { avg10ThresholdPercent: r.avg10ThresholdPercent, avg60ThresholdPercent: r.avg60ThresholdPercent };
  }
  return { line: psi.line, setHoldDurationMs: psi.setHoldDurationMs, clearHoldDurationMs: psi.clearHoldDurationMs, resources };
}

/** The line the configuration compares, from one file reading. */
export function readingOf(file: ReturnType<PsiSource['read']>[PsiResource], line: PsiLine): PsiReading {
  if (!file.ok) return { ok: false, reason: file.reason };
  const averages = line === 'full' ? file.value.full : file.value.some;
  return averages === null ? { ok: false, reason: `the pressure file has no "${line}" line` } : { ok: true, averages };
}

export const psiConditionType = (prefix: string, resource: PsiResource): string => `${prefix}${PSI_CONDITION_TYPES[resource]}`;
export const psiTaintKey = (prefix: string, resource: PsiResource): string => `${prefix}${PSI_TAINT_NAMES[resource]}`;

const formatPercent = (p: number): string => `${p.toFixed(2)}%`;

/** The condition as written for one resource's step: reason and message change only with the status. */
export function psiCondition(prefix: string, step: PsiConditionStep, line: PsiLine, thresholds: { avg10ThresholdPercent: number; avg60ThresholdPercent: number }, holdMs: { set: number; clear: number }): AgentNodeCondition {
  const type = psiConditionType(prefix, step.resource);
  const name = PSI_CONDITION_TYPES[step.resource];
  const limits = `avg10 >= ${thresholds.avg10ThresholdPercent}% and avg60 >= ${thresholds.avg60ThresholdPercent}%`;
  const what = `the pods' ${RESOURCE_WORDS[step.resource]} pressure (${line})`;
  switch (step.state.status) {
    case 'True':
      return { type, status: 'True', reason: `AgentHas${name}`, message: `kube-eviction-agent: ${what} has been at or over ${limits} for ${holdMs.set / 1000}s` };
    case 'False':
      return { type, status: 'False', reason: `AgentHasNo${name}`, message: `kube-eviction-agent: ${what} is not over ${limits} (cleared after ${holdMs.clear / 1000}s under both)` };
    case 'Unknown':
      return {
        type,
        status: 'Unknown',
        reason: step.reading.ok ? `Agent${name}Pending` : 'AgentPsiUnreadable',
        message: step.reading.ok
          ? `kube-eviction-agent: ${what} not judged yet: the condition is True once every reading for ${holdMs.set / 1000}s was at or over ${limits}, False once none was`
          : `kube-eviction-agent cannot read ${what}: ${step.reading.reason}`,
      };
  }
}

export class PsiConditionReporter {
  private settings: PsiConditionReporterSettings;
  private readonly tracker: PsiConditionTracker;
  private readonly log: Logger;
  private cancelTimer: (() => void) | null = null;
  private running = false;
  private stopping = false;
  private lastSent: string | null = null;
  private lastSentAtMs = 0;
  private readonly taintPresent = new Map<string, boolean>();
  private readonly prefixes = new Set<string>();
  private adopted = false;
  private last: PsiConditionStep[] = [];
  private inFlight: Promise<void> = Promise.resolve();

  constructor(
    settings: PsiConditionReporterSettings,
    private readonly deps: PsiConditionReporterDeps,
  ) {
    this.settings = settings;
    this.tracker = new PsiConditionTracker(trackerSettings(settings.psi));
    this.log = deps.logger.child({ component: 'psi-conditions' });
    this.prefixes.add(settings.conditionTypePrefix);
  }

  /** The latest step of each tracked resource (for tests and `explain`). */
  get latest(): readonly PsiConditionStep[] {
    return this.last;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { psi } = this.settings;
    const { source } = this.deps;
    this.deps.metrics.psiConditionsAvailable.set(source.unavailable === null ? 1 : 0);
    if (psi.enabled && source.unavailable !== null) {
      this.log.warn('PSI node conditions are on, but this node cannot have them: none is reported', { reason: source.unavailable });
    } else if (psi.enabled) {
      this.log.info('PSI node conditions on', { line: psi.line, memory: psi.memory, io: psi.io, setHoldDurationMs: psi.setHoldDurationMs, clearHoldDurationMs: psi.clearHoldDurationMs, intervalMs: psi.intervalMs, taint: psi.taint.enabled, paths: source.paths });
    }
    this.schedule(0);
  }

  updateSettings(settings: PsiConditionReporterSettings): void {
    const wasEnabled = this.settings.psi.enabled;
    this.settings = settings;
    this.tracker.updateSettings(trackerSettings(settings.psi));
    this.prefixes.add(settings.conditionTypePrefix);
    this.lastSent = null;
    this.taintPresent.clear();
    if (settings.psi.enabled && !wasEnabled) this.log.info('PSI node conditions turned on by a reload', { line: settings.psi.line });
    if (this.running) this.schedule(0);
  }

  /** One reading and its writes, now (the timer calls it; tests may too). */
  async tick(): Promise<void> {
    const run = this.inFlight.then(() => this.pass());
    this.inFlight = run.catch(() => undefined);
    return run;
  }

  /**
   * Stops reading, then retires what it left on the Node (conditions Unknown, taints removed);
   * with `retire` false (a standby takes over and keeps them) it only stops.
   */
  async shutdown(retire = true): Promise<void> {
    this.stopping = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    await this.inFlight;
    this.deps.source.close();
    if (!retire || this.refused()) return;
    await this.retire('stopped', [...this.prefixes]);
  }

  private schedule(delayMs: number): void {
    this.cancelTimer?.();
    if (this.stopping) return;
    this.cancelTimer = this.deps.clock.after(delayMs, () => {
      this.cancelTimer = null;
      // Off, or impossible here: one pass retires what it left, and nothing wakes again until a reload.
      void this.tick().finally(() => {
        if (!this.stopping && this.cancelTimer === null && this.settings.psi.enabled && this.deps.source.unavailable === null) this.schedule(this.settings.psi.intervalMs);
      });
    });
  }

  private refused(): boolean {
    return (this.deps.refusal?.() ?? null) !== null;
  }

  private async pass(): Promise<void> {
    if (this.stopping) return;
    const { psi, conditionTypePrefix, dryRun } = this.settings;
    const { source, clock } = this.deps;
    const nowMs = clock.nowMs();
    const why: NotMaintained | null = !psi.enabled ? 'off' : source.unavailable !== null ? 'unavailable' : null;
    if (why !== null) {
      this.last = [];
      if (!this.refused()) await this.retire(why, [...this.prefixes]);
      return;
    }
    if (!this.adopted) this.adopt(nowMs);
    const files = source.read();
    const steps = this.tracker.observe(Object.fromEntries(PSI_RESOURCES.map((r) => [r, readingOf(files[r], psi.line)])), nowMs);
    this.last = steps;
    this.recordMetrics(steps, files);
    for (const step of steps) if (step.transition !== null) await this.onTransition(step);
    if (this.refused()) return;
    const stale = [...this.prefixes].filter((p) => p !== conditionTypePrefix);
    if (stale.length > 0) await this.retire('renamed', stale);
    if (dryRun) {
      await this.retire('dry-run', [conditionTypePrefix]);
      return;
    }
    // A resource turned off: its condition is retired, the others written.
    const untracked = PSI_RESOURCES.filter((r) => !this.tracker.tracked.includes(r));
    if (untracked.length > 0) await this.retire('off', [conditionTypePrefix], untracked);
    await this.write(steps, nowMs);
  }

  // A restart, or a standby taking over, keeps a True condition the Node already shows.
  private adopt(nowMs: number): void {
    this.adopted = true;
    const node = this.deps.cluster.node();
    for (const resource of this.tracker.tracked) {
      const type = psiConditionType(this.settings.conditionTypePrefix, resource);
      const shown = node?.status?.conditions?.find((c) => c.type === type);
      if (shown?.status === 'True') {
        this.tracker.adopt(resource, 'True', nowMs);
        this.log.info('PSI condition taken over as the Node shows it', { type, status: 'True' });
      }
    }
  }

  private recordMetrics(steps: readonly PsiConditionStep[], files: ReturnType<PsiSource['read']>): void {
    const { metrics } = this.deps;
    for (const resource of PSI_RESOURCES) {
      const file = files[resource];
      for (const line of ['some', 'full'] as const) {
        const averages = file.ok ? (line === 'full' ? file.value.full : file.value.some) : null;
        if (averages === null) continue;
        metrics.psiPressure.set({ resource, line, window: '10s' }, averages.avg10Percent);
        metrics.psiPressure.set({ resource, line, window: '60s' }, averages.avg60Percent);
      }
    }
    for (const step of steps) {
      const condition = PSI_CONDITION_TYPES[step.resource];
      for (const status of ['True', 'False', 'Unknown'] as const) metrics.psiCondition.set({ condition, status }, step.state.status === status ? 1 : 0);
    }
  }

  private async onTransition(step: PsiConditionStep): Promise<void> {
    const condition = PSI_CONDITION_TYPES[step.resource];
    const thresholds = this.tracker.thresholdsOf(step.resource);
    const figures = step.reading.ok ? `avg10=${formatPercent(step.reading.averages.avg10Percent)} avg60=${formatPercent(step.reading.averages.avg60Percent)}` : step.reading.reason;
    const limits = thresholds === undefined ? '' : ` (thresholds avg10 ${thresholds.avg10ThresholdPercent}%, avg60 ${thresholds.avg60ThresholdPercent}%)`;
    this.deps.metrics.psiConditionTransitions.inc({ condition, status: step.state.status });
    const fields = { condition, status: step.state.status, line: this.tracker.line, figures, ...(thresholds === undefined ? {} : thresholds) };
    if (step.transition === 'set') this.log.warn('PSI condition set: the pods are stalled on ' + RESOURCE_WORDS[step.resource], fields);
    else if (step.transition === 'cleared') this.log.info('PSI condition cleared', fields);
    else this.log.warn('PSI condition unknown: the pressure file cannot be read', fields);
    if (this.settings.dryRun || this.refused() || step.transition === 'unknown') return;
    const word = RESOURCE_WORDS[step.resource];
    await this.deps.events.nodeEvent(
      step.transition === 'set'
        ? { type: 'Warning', reason: condition, message: `The pods' ${word} pressure (${this.tracker.line}) is high: ${figures}${limits}` }
        : { type: 'Normal', reason: `${condition}Cleared`, message: `The pods' ${word} pressure (${this.tracker.line}) is low again: ${figures}${limits}` },
    );
  }

  private async write(steps: readonly PsiConditionStep[], nowMs: number): Promise<void> {
    const { psi, conditionTypePrefix: prefix } = this.settings;
    const holds = { set: psi.setHoldDurationMs, clear: psi.clearHoldDurationMs };
    const conditions = steps.map((step) => psiCondition(prefix, step, psi.line, this.tracker.thresholdsOf(step.resource) ?? { avg10ThresholdPercent: 0, avg60ThresholdPercent: 0 }, holds));
    const key = JSON.stringify(conditions);
    if (conditions.length > 0 && (key !== this.lastSent || nowMs - this.lastSentAtMs >= HEARTBEAT_MS)) {
      if (await this.deps.reporter.setConditions(conditions)) {
        this.lastSent = key;
        this.lastSentAtMs = nowMs;
      }
    }
    for (const resource of PSI_RESOURCES) {
      const taintKey = psiTaintKey(prefix, resource);
      const step = steps.find((s) => s.resource === resource);
      const want = psi.taint.enabled && step?.state.status === 'True';
      const known = this.taintPresent.get(taintKey);
      // Absent and not wanted: nothing to write unless the Node (as watched) shows it.
      if (!want && known === undefined && !this.nodeHasTaint(this.deps.cluster.node(), taintKey)) {
        this.taintPresent.set(taintKey, false);
        continue;
      }
      if (want === known) continue;
      if (await this.deps.reporter.setTaint({ key: taintKey, value: '', effect: 'NoSchedule' }, want)) {
        this.taintPresent.set(taintKey, want);
        this.log.info(want ? 'PSI taint added' : 'PSI taint removed', { key: taintKey });
      }
    }
  }

  private nodeHasTaint(node: Node | null, key: string): boolean {
    return (node?.spec?.taints ?? []).some((t) => t.key === key && t.effect === 'NoSchedule');
  }

  // Only what the Node (as watched) still shows is written.
  private async retire(why: NotMaintained, prefixes: readonly string[], resources: readonly PsiResource[] = PSI_RESOURCES): Promise<void> {
    const node = this.deps.cluster.node();
    const [reason, message] = UNKNOWN_TEXT[why];
    const types = new Set(prefixes.flatMap((p) => resources.map((r) => psiConditionType(p, r))));
    const conditions: AgentNodeCondition[] = (node?.status?.conditions ?? []).filter((c) => types.has(c.type) && c.status !== 'Unknown').map((c) => ({ type: c.type, status: 'Unknown', reason, message }));
    try {
      if (conditions.length > 0 && (await this.deps.reporter.setConditions(conditions))) {
        this.log.info('PSI conditions no longer reported: set Unknown', { types: conditions.map((c) => c.type), reason });
        this.lastSent = null;
      }
      for (const key of prefixes.flatMap((p) => resources.map((r) => psiTaintKey(p, r)))) {
        if (!this.nodeHasTaint(node, key)) continue;
        if (await this.deps.reporter.setTaint({ key, value: '', effect: 'NoSchedule' }, false)) {
          this.taintPresent.set(key, false);
          this.log.info('PSI taint removed: the agent no longer maintains it', { key, why });
        }
      }
    } catch (error) {
      this.log.warn('retiring the PSI conditions failed', { err: errorMessage(error) });
    }
  }
}
