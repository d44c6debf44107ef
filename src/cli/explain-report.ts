// The `explain` report: one observation and one decision as readable tables. Each signal's value
// against each threshold, the pods left out of the decision and why, the ranked pods with the
// figures that ranked them, and what would be evicted and why. Pure: it formats an engine result,
// so the same report serves a live node and a recording.

import { podKey, type Pod } from '../api/pod.js';
import { formatQuantity, quantityFromInteger } from '../api/quantity.js';
import { SIGNALS, signalToResource, type Signal } from '../api/signals.js';
import type { Summary } from '../api/summary.js';
import { getThresholdQuantity, isHardEvictionThreshold, thresholdEquals, type Threshold } from '../api/threshold.js';
import { makeSignalObservations } from '../eviction/observations.js';
import { rankedPods } from '../eviction/ranking.js';
import { signalQuantityFormat } from '../eviction/observations.js';
import type { DryRunDecision, RankedPod, SynchronizeResult } from '../eviction/types.js';
import { describeStormGuard, formatWindow, type StormGuardState } from '../eviction/storm-guard.js';
import type { OomKillSettings, StormGuardSettings } from '../api/agent-settings.js';
import { containerNamesById, runtimeContainerIdOf } from '../api/container-id.js';
import type { OomKillCounts } from '../compose/node-side.js';
import { ownerKey } from '../eviction/owner.js';
import type { ReplayRefusedPod } from '../replay/input.js';
import type { ReplayStormGuardLine } from '../replay/runner.js';

export interface ExplainInput {
  readonly result: SynchronizeResult;
  /** The thresholds in force (containerfs ones fitted to the layout). */
  readonly thresholds: readonly Threshold[];
  readonly summary: Summary | null;
  readonly pods: readonly Pod[];
  /** A recording's pods refused at the step (never ranked or evicted), each with its line, field and reason. */
  readonly refusedPods?: readonly ReplayRefusedPod[];
  readonly dedicatedImageFs: boolean;
  readonly splitContainerFs: boolean;
  /** A heading line: where the data came from. */
  readonly source: string;
  /** The eviction storm guard: its settings, and with a recording its state and what it did at the step. */
  readonly stormGuard?: { readonly settings: StormGuardSettings; readonly state: StormGuardState | null; readonly line: ReplayStormGuardLine | null };
  /** Kernel OOM kills: how the agent reports them, and on a live node the kernel's counters now (null: no memory hierarchy). */
  readonly oomKills?: { readonly settings: OomKillSettings; readonly counts?: OomKillCounts | null };
  /** The last evictions with their outcomes, each as its sentence, oldest first; or why they cannot be told. */
  readonly outcomes?: { readonly source: string; readonly messages: readonly string[] } | { readonly source: string; readonly unavailable: string };
}

// The last evictions and what they came to (docs/eviction-outcomes.md).
function outcomeLines(outcomes: NonNullable<ExplainInput['outcomes']>): string[] {
  const out = [`Last evictions and their outcomes (${outcomes.source})`];
  if ('unavailable' in outcomes) return [...out, `  Not known: ${outcomes.unavailable}`];
  if (outcomes.messages.length === 0) return [...out, '  None yet: no eviction has reached the end of its re-trigger window'];
  return [...out, ...outcomes.messages.map((m) => `  ${m}`)];
}

// The OOM kill lines: how kills are reported, and on a live node what the kernel has counted.
function oomKillLines(oomKills: NonNullable<ExplainInput['oomKills']>, pods: readonly Pod[]): string[] {
  const { settings, counts } = oomKills;
  const how = settings.enabled
    ? `reported as OOMKilledByKernel Events on the pod and the Node (${settings.kernelLog ? 'the kernel log read for each victim' : 'the kernel log not read'}; counters re-read every ${formatDurationMs(settings.scanIntervalMs)})`
    : 'not watched (oomKills.enabled is false)';
  const out = [`Kernel OOM kills: ${how}`];
  if (counts === undefined) return out;
  if (counts === null) return [...out, '  No memory cgroup hierarchy found: no counters to read'];
  const scope = counts.version === 'v1' ? 'its own processes' : 'its whole tree';
  out.push(`  The node cgroup's oom_kill counter (cgroup ${counts.version}, ${scope}): ${counts.nodeKills === null ? 'not kept by this kernel' : String(counts.nodeKills)}`);
  if (counts.containers.length === 0) return [...out, '  No container cgroup has an OOM kill counted'];
  const byUid = new Map(pods.map((p) => [p.metadata.uid, p]));
  const rows = counts.containers.map((c) => {
    const pod = byUid.get(c.podUid);
    const id = runtimeContainerIdOf(c.name);
    const name = pod === undefined || id === undefined ? undefined : containerNamesById(pod).get(id);
    return [pod === undefined ? `(no pod with UID ${c.podUid})` : podKey(pod), name ?? c.name, String(c.kills)];
  });
  return [...out, '  Counted by the kernel since each container cgroup was created:', table(['POD', 'CONTAINER', 'OOM KILLS'], rows).replace(/^/gm, '  ')];
}

// The storm guard's lines: what it is set to, and where a history is known, where it stands.
function stormGuardLines(guard: NonNullable<ExplainInput['stormGuard']>): string[] {
  const out = [`Eviction storm guard: ${describeStormGuard(guard.settings)}`];
  const { state, line } = guard;
  if (line?.heldBack !== undefined) out.push(`  Held back: ${line.heldBack.message}`);
  for (const storm of line?.ownerStorms ?? []) out.push(`  Owner Event (EvictionStorm): ${storm.message}`);
  if (state === null) return out;
  if (state.budget !== null) out.push(`  Soft evictions in the last ${formatWindow(state.budget.windowMs)}: ${state.budget.used} of ${state.budget.max}`);
  const window = formatWindow(guard.settings.owners.windowMs);
  if (state.owners.length > 0) out.push(`  Evicted pods by owner in the last ${window}: ${state.owners.map((o) => `${ownerKey(o.owner)} ${o.count}`).join(', ')}`);
  if (state.coolDownUntilMs !== null) out.push(`  The pressure taint stays on until ${new Date(state.coolDownUntilMs).toISOString().replace('.000Z', 'Z')} (cool-down)`);
  return out;
}

/** Left-aligned columns, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

function formatAmount(signal: Signal, value: bigint): string {
  return formatQuantity(quantityFromInteger(value, signalQuantityFormat(signal)));
}

function formatDurationMs(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  return `${ms / 1000}s`;
}

function thresholdState(threshold: Threshold, result: SynchronizeResult): string {
  const met = result.thresholdsMet.some((m) => thresholdEquals(m.threshold, threshold));
  const metIgnoringGrace = result.thresholdsMetIgnoringGrace.some((m) => thresholdEquals(m.threshold, threshold));
  if (met) return 'MET';
  if (metIgnoringGrace) return `met, within its ${formatDurationMs(threshold.gracePeriodMs)} grace period`;
  return 'ok';
}

function signalRows(input: ExplainInput): string[][] {
  const rows: string[][] = [];
  for (const signal of SIGNALS) {
    const observation = input.result.observations.get(signal);
    const thresholds = input.thresholds.filter((t) => t.signal === signal && t.operatorSet !== false);
    if (observation === undefined && thresholds.length === 0) continue;
    const available = observation === undefined ? 'no observation' : formatAmount(signal, observation.available);
    const capacity = observation === undefined ? '' : formatAmount(signal, observation.capacity);
    if (thresholds.length === 0) {
      rows.push([signal, available, capacity, '(none)', '', '']);
      continue;
    }
    for (const threshold of thresholds) {
      const quantity = observation === undefined ? '?' : formatQuantity(getThresholdQuantity(threshold.value, observation.capacity));
      const written = threshold.value.kind === 'percentage' ? ` (${Math.round(threshold.value.ratio * 10000) / 100}%)` : '';
      const kind = isHardEvictionThreshold(threshold) ? 'hard' : `soft ${formatDurationMs(threshold.gracePeriodMs)}`;
      rows.push([signal, available, capacity, `< ${quantity}${written}`, kind, observation === undefined ? 'no observation' : thresholdState(threshold, input.result)]);
    }
  }
  return rows;
}

function usageText(signal: Signal, ranked: RankedPod): string {
  if (ranked.usage === null) return 'no stats';
  const resource = signalToResource[signal];
  return resource === 'pids' || resource === 'inodes' ? ranked.usage.toString() : formatQuantity(quantityFromInteger(ranked.usage));
}

function requestText(signal: Signal, ranked: RankedPod): string {
  const resource = signalToResource[signal];
  return resource === 'pids' || resource === 'inodes' ? ranked.request.toString() : formatQuantity(quantityFromInteger(ranked.request));
}

/** The ranking the decision used, or, with no threshold met, the order memory pressure would use now. */
function ranking(input: ExplainInput): { signal: Signal; ranked: readonly RankedPod[]; hypothetical: boolean } | null {
  if (input.result.reclaim !== null) return { signal: input.result.reclaim.threshold.signal, ranked: input.result.ranking, hypothetical: false };
  if (input.summary === null || input.pods.length === 0) return null;
  const { statsFunc } = makeSignalObservations(input.summary);
  return { signal: 'memory.available', ranked: rankedPods('memory.available', input.dedicatedImageFs, input.splitContainerFs, input.pods, statsFunc), hypothetical: true };
}

export function explainReport(input: ExplainInput): string {
  const { result } = input;
  const out: string[] = [];
  out.push(input.source, '');
  out.push('Signals and thresholds', table(['SIGNAL', 'AVAILABLE', 'CAPACITY', 'THRESHOLD', 'KIND', 'STATE'], signalRows(input)), '');
  out.push(`Node conditions: ${result.nodeConditions.length === 0 ? 'none' : result.nodeConditions.join(', ')} (the pressure transition period applied)`, '');

  const refused = input.refusedPods ?? [];
  if (refused.length > 0) {
    out.push(
      `Refused pods: ${refused.length} of the recording's pods ${refused.length === 1 ? 'is' : 'are'} left out (never ranked or evicted), as the agent leaves out a pod it cannot trust`,
      table(['POD', 'REASON'], refused.map((r) => [r.pod, r.reason])).replace(/^/gm, '  '),
      '',
    );
  }

  const ranks = ranking(input);
  if (ranks !== null) {
    const resource = signalToResource[ranks.signal];
    out.push(
      ranks.hypothetical
        ? `Pod ranking if memory pressure came now (${resource}: exceeds request, then priority, then usage above request)`
        : `Pod ranking for ${ranks.signal} (${resource})`,
    );
    const evictedUids = new Set(result.evictions.map((e) => e.pod.metadata.uid));
    const rows = ranks.ranked.map((r, i) => [
      String(i + 1),
      podKey(r.pod),
      String(r.priority),
      usageText(ranks.signal, r),
      requestText(ranks.signal, r),
      r.exceedsRequest ? 'yes' : 'no',
      r.critical ? 'critical: never evicted' : evictedUids.has(r.pod.metadata.uid) ? '<- evicted' : '',
    ]);
    out.push(table(['RANK', 'POD', 'PRIORITY', 'USAGE', 'REQUEST', 'EXCEEDS', ''], rows), '');
  }

  out.push('Decision');
  if (result.evictions.length === 0) {
    const waiting = result.thresholdsMetIgnoringGrace.length > result.thresholdsMet.length;
    if (result.thresholdsMet.length > 0) out.push('  Thresholds are met, but no pod can be evicted now (see the notes).');
    else if (waiting) out.push('  Nothing yet: a soft threshold is met but its grace period has not elapsed.');
    else out.push('  Nothing to evict: no threshold is met and no pod exceeds a local-storage limit.');
  }
  for (const eviction of result.evictions) {
    const why = eviction.reason.kind === 'threshold' ? `${eviction.reason.signal} (${eviction.reason.hard ? 'hard' : 'soft'})` : eviction.reason.limit;
    out.push(`  Evict ${podKey(eviction.pod)} for ${why}, grace period ${eviction.gracePeriodSeconds}s`);
    out.push(`    ${eviction.message.trimEnd()}`);
  }
  if (result.fallbacks.length > 0) out.push(`  If a PodDisruptionBudget refuses: ${result.fallbacks.map((f) => podKey(f.pod)).join(', then ')}`);
  for (const note of result.notes) out.push(`  note: ${note.message}`);
  if (result.dryRun !== undefined) out.push('', ...dryRunLines(result.dryRun));
  if (input.stormGuard !== undefined) out.push('', ...stormGuardLines(input.stormGuard));
  if (input.oomKills !== undefined) out.push('', ...oomKillLines(input.oomKills, input.pods));
  if (input.outcomes !== undefined) out.push('', ...outcomeLines(input.outcomes));
  return `${out.join('\n')}\n`;
}

// The dry-run thresholds' own decision, after the live one: what they would do, never done.
function dryRunLines(dryRun: DryRunDecision): string[] {
  const out = ['Dry-run thresholds (evaluated and reported, never acted on)'];
  const conditions = dryRun.nodeConditions.length === 0 ? 'none' : dryRun.nodeConditions.join(', ');
  out.push(`  Conditions they alone would report (not set on the Node): ${conditions}`);
  for (const met of dryRun.thresholdsMetIgnoringGrace) {
    const elapsed = dryRun.thresholdsMet.some((m) => thresholdEquals(m.threshold, met.threshold));
    const kind = isHardEvictionThreshold(met.threshold) ? 'hard' : `soft ${formatDurationMs(met.threshold.gracePeriodMs)}`;
    out.push(`  ${met.threshold.signal} < ${met.quantity} (${kind}; ${met.available} available): ${elapsed ? 'MET' : 'met, within its grace period'}`);
  }
  if (dryRun.thresholdsMetIgnoringGrace.length === 0) out.push('  No dry-run threshold is met.');
  for (const eviction of dryRun.evictions) {
    const why = eviction.reason.kind === 'threshold' ? `${eviction.reason.signal} (${eviction.reason.hard ? 'hard' : 'soft'})` : eviction.reason.limit;
    out.push(`  Would evict ${podKey(eviction.pod)} for ${why}, grace period ${eviction.gracePeriodSeconds}s`);
    out.push(`    ${eviction.message.trimEnd()}`);
  }
  return out;
}
