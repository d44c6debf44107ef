// An eviction outcome as one sentence (the EvictionOutcome Events, the log, `explain`) and as the
// plain JSON the ops endpoint and the replay output carry. Pure formatting.

import { signalToResource, type Signal } from '../api/signals.js';
import { formatRfc3339 } from '../api/time.js';
import type { EvictionOutcome, OutcomeResult } from './eviction-outcomes.js';

const MIB = 1024n * 1024n;

/** An amount of a signal: bytes in MiB with one decimal, inodes and PIDs as counts. */
export function formatOutcomeAmount(signal: Signal, amount: bigint): string {
  const resource = signalToResource[signal];
  if (resource === 'inodes' || resource === 'pids') return `${amount} ${resource === 'inodes' ? 'inodes' : 'PIDs'}`;
  const tenths = (amount * 10n) / MIB;
  const sign = tenths < 0n ? '-' : '';
  const abs = tenths < 0n ? -tenths : tenths;
  return `${sign}${abs / 10n}.${abs % 10n} MiB`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(3)} s`;
}

// `+12 ms` after the crossing.
function after(fromMs: number, atMs: number | null): string {
  return atMs === null ? 'never' : `+${Math.round(atMs - fromMs)} ms`;
}

const RESULT_WORDS: Readonly<Record<OutcomeResult, string>> = Object.freeze({
  relieved: 'relieved',
  'not-relieved': 'not relieved',
  'under-eviction': 'under-eviction (a further pod had to go)',
  'over-eviction': 'over-eviction (more freed than needed, more than one pod gone)',
});

/** Whether the outcome deserves a Warning rather than a Normal Event. */
export function isBadOutcome(outcome: EvictionOutcome): boolean {
  return outcome.result !== 'relieved' || outcome.retriggered || outcome.kernelOomKills > 0;
}

/**
 * One sentence with every figure of the outcome, for instance: `Eviction outcome for
 * memory.available (threshold 500.0 MiB, target 600.0 MiB): relieved; pod default/leak
 * (local-termination) freed 812.0 MiB of the 300.0 MiB needed (ratio 2.71), 0.420 s from the kill
 * to relief; crossed 2026-...Z, notified +3 ms, decided +5 ms, acted +6 ms, pod gone +380 ms, back
 * +426 ms; not re-triggered within 60 s; no kernel OOM kill`.
 */
export function describeOutcome(outcome: EvictionOutcome, retriggerWindowMs: number): string {
  const { signal } = outcome;
  const amount = (a: bigint): string => formatOutcomeAmount(signal, a);
  const first = outcome.pods[0];
  const podsText =
    outcome.pods.length === 1 && first !== undefined
      ? `pod ${first.pod} (${first.action})`
      : `${outcome.pods.length} pods (${outcome.pods.map((p) => `${p.pod} ${p.action}`).join(', ')})`;
  const relief = outcome.timeToReliefMs === null ? `the signal not back within ${seconds(retriggerWindowMs)}` : `${seconds(outcome.timeToReliefMs)} from the first ${first?.action === 'local-termination' ? 'kill' : 'request'} to relief`;
  const from = outcome.crossedAtMs;
  const timeline = [
    `crossed ${formatRfc3339(from)}`,
    ...(outcome.notifiedAtMs === null ? [] : [`notified ${after(from, outcome.notifiedAtMs)}`]),
    `decided ${after(from, outcome.decidedAtMs)}`,
    `acted ${after(from, outcome.actedAtMs)}`,
    `pod gone ${after(from, outcome.goneAtMs)}`,
    `back ${after(from, outcome.relievedAtMs)}`,
  ].join(', ');
  const retrigger = outcome.retriggered ? `re-triggered ${after(from, outcome.retriggeredAtMs)}` : `not re-triggered within ${Math.round(retriggerWindowMs / 1000)} s`;
  const oom = outcome.kernelOomKills === 0 ? 'no kernel OOM kill' : `${outcome.kernelOomKills} kernel OOM kill${outcome.kernelOomKills === 1 ? '' : 's'} meanwhile`;
  return (
    `Eviction outcome for ${signal} (threshold ${amount(outcome.thresholdAmount)}, target ${amount(outcome.targetAmount)}): ${RESULT_WORDS[outcome.result]}; ` +
    `${podsText} freed ${amount(outcome.reclaimedAmount)} of the ${amount(outcome.neededAmount)} needed (ratio ${outcome.reclaimedRatio.toFixed(2)}), ${relief}; ` +
    `${timeline}; ${retrigger}; ${oom}`
  );
}

/** The outcome as plain JSON (amounts as decimal strings, times as RFC 3339). */
export function outcomeJson(outcome: EvictionOutcome): Record<string, unknown> {
  const time = (ms: number | null): string | null => (ms === null ? null : formatRfc3339(ms));
  return {
    signal: outcome.signal,
    result: outcome.result,
    thresholdAmount: String(outcome.thresholdAmount),
    targetAmount: String(outcome.targetAmount),
    availableAtDecision: String(outcome.availableAtDecision),
    availableAfter: String(outcome.availableAfter),
    reclaimedAmount: String(outcome.reclaimedAmount),
    neededAmount: String(outcome.neededAmount),
    reclaimedRatio: Number(outcome.reclaimedRatio.toFixed(4)),
    timeToReliefMs: outcome.timeToReliefMs,
    crossedAt: time(outcome.crossedAtMs),
    notifiedAt: time(outcome.notifiedAtMs),
    decidedAt: time(outcome.decidedAtMs),
    actedAt: time(outcome.actedAtMs),
    goneAt: time(outcome.goneAtMs),
    relievedAt: time(outcome.relievedAtMs),
    retriggered: outcome.retriggered,
    retriggeredAt: time(outcome.retriggeredAtMs),
    kernelOomKills: outcome.kernelOomKills,
    pods: outcome.pods.map((p) => ({ pod: p.pod, uid: p.uid, action: p.action, actedAt: time(p.actedAtMs), goneAt: time(p.goneAtMs) })),
    reportedAt: time(outcome.reportedAtMs),
  };
}
