// Human-readable reports of a configuration: the effective thresholds as a fixed-width table
// (with where each came from, so a default or an allocatable copy is never a surprise), the
// settings that shape eviction timing, and every problem of a rejected file.

import { ERROR_CODES, formatConfigProblem, type ConfigError, type ConfigProblem } from '../errors.js';
import { isHardEvictionThreshold, type Threshold } from '../api/threshold.js';
import { formatGoDuration } from './go-duration.js';
import { NEAR_WHOLE_RATIO } from './threshold-warnings.js';
import type { LoadedConfig, ThresholdSource } from './types.js';

function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] as number))).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

function note(threshold: Threshold, source: ThresholdSource): string {
  const notes: string[] = [];
  if (source.origin === 'default') notes.push(source.merged ? 'default (merged into evictionHard)' : 'default');
  else if (source.origin === 'allocatable-copy') notes.push(`allocatable copy of ${source.field.startsWith('evictionSoft') ? 'soft ' : ''}memory.available`);
  else notes.push('user');
  if (source.field.startsWith('evictionSoft') && isHardEvictionThreshold(threshold) && source.origin !== 'allocatable-copy') {
    notes.push('soft with a 0s grace period: acts as hard');
  }
  const value = threshold.value;
  if ((value.kind === 'percentage' && value.ratio === 0) || (value.kind === 'quantity' && value.quantity.nanos === 0n)) notes.push('never met');
  if (value.kind === 'percentage' && value.ratio >= NEAR_WHOLE_RATIO) notes.push('MET ON (NEARLY) EVERY PASS');
  return notes.join('; ');
}

// What the kubelet does with it for a soft eviction (hard evictions always use 1 s).
function describeMaxPodGracePeriod(seconds: number): string {
  if (seconds === 0) return '0 (soft evictions give the pod no grace period)';
  if (seconds < 0) return `${seconds} (negative: passed to the pod as is, as the kubelet does)`;
  return `${seconds}s (soft evictions: at most this, or the pod's terminationGracePeriodSeconds if shorter)`;
}

/**
 * The effective thresholds, one row each (signal, hard/soft, value as written, grace period,
 * minimum reclaim, source), followed by the settings that shape when and how pods are evicted.
 */
export function formatEffectiveThresholds(cfg: LoadedConfig): string {
  const { eviction } = cfg;
  const live = eviction.thresholds.map((threshold, i) => ({ threshold, source: cfg.thresholdSources[i], dryRun: false }));
  const dryRun = (eviction.dryRunThresholds ?? []).map((threshold, i) => ({ threshold, source: cfg.dryRunThresholdSources[i], dryRun: true }));
  const rows = [...live, ...dryRun].map(({ threshold, source, dryRun: isDryRun }) => {
    const hard = isHardEvictionThreshold(threshold);
    return [
      threshold.signal,
      hard ? 'hard' : 'soft',
      source?.rawValue ?? '?',
      source?.rawGracePeriod ?? (hard ? '-' : formatGoDuration(threshold.gracePeriodMs)),
      source?.rawMinReclaim ?? '-',
      `${source === undefined ? '' : note(threshold, source)}${isDryRun ? ' (dry run: reported, never acted on)' : ''}`.trim(),
    ];
  });
  const out: string[] = [`Effective eviction thresholds (${cfg.kind}):`];
  if (rows.length === 0) out.push('  none: no pod is evicted for node pressure');
  else out.push(...formatTable(['SIGNAL', 'KIND', 'VALUE', 'GRACE PERIOD', 'MIN RECLAIM', 'SOURCE'], rows).map((l) => `  ${l}`));

  const settings: [string, string][] = [
    ['evictionPressureTransitionPeriod', formatGoDuration(eviction.pressureTransitionPeriodMs)],
    ['evictionMaxPodGracePeriod', describeMaxPodGracePeriod(eviction.maxPodGracePeriodSeconds)],
    ['localStorageCapacityIsolation', String(eviction.localStorageCapacityIsolation)],
    ['kernelMemcgNotification', String(eviction.kernelMemcgNotification)],
    ['housekeepingInterval', formatGoDuration(eviction.housekeepingIntervalMs)],
  ];
  const width = Math.max(...settings.map(([name]) => name.length));
  out.push('', ...settings.map(([name, value]) => `${name.padEnd(width)}  ${value}`));
  return `${out.join('\n')}\n`;
}

/** One problem on one line, with its raw value when the message does not already show it. */
export function formatProblemLine(problem: ConfigProblem): string {
  const text = formatConfigProblem(problem);
  const value = problem.value;
  // Maps and lists are left out: the line number points at them, and they can be long.
  if (problem.field === '' || !['string', 'number', 'boolean'].includes(typeof value)) return text;
  if (text.includes(String(value))) return text;
  return `${text} (value: ${JSON.stringify(value)})`;
}

/** Every problem of a rejected configuration, under a heading with the error code. */
export function formatConfigErrors(err: ConfigError, sourceName?: string): string {
  const count = err.problems.length;
  const heading = `${ERROR_CODES[err.code]}${sourceName === undefined ? '' : ` (${sourceName})`}: ${count} problem${count === 1 ? '' : 's'} [${err.code}]`;
  return `${[heading, ...err.problems.map((p) => `  - ${formatProblemLine(p)}`)].join('\n')}\n`;
}

/**
 * The thresholds met on (nearly) every pass, under a heading that cannot be missed (empty when
 * there are none): valid, and the kubelet would run with them, but they evict continuously.
 */
export function formatNearWholeThresholds(cfg: LoadedConfig): string {
  const count = cfg.nearWholeThresholds.length;
  if (count === 0) return '';
  const heading = `WARNING: ${count === 1 ? '1 threshold is' : `${count} thresholds are`} met on (nearly) every pass: pods would be evicted continuously`;
  return `${[heading, ...cfg.nearWholeThresholds.map((t) => `  ! ${formatConfigProblem(t)}`)].join('\n')}\n`;
}

/** The warnings of a loaded configuration, one per line (empty when there are none). */
export function formatConfigWarnings(warnings: readonly ConfigProblem[]): string {
  return warnings.map((w) => `warning: ${formatProblemLine(w)}\n`).join('');
}
