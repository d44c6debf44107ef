// Thresholds the kubelet accepts whose meaning is one character away from what was probably meant.
// The kubelet trims every trailing `%` and reads the rest as a float32, and only the exact strings
// "0%" and "100%" disable a threshold; so "100.0%", "100%%" and "99.999999999%" (float32 1.0) are
// thresholds of the whole capacity, met on every pass, and "0.0%" is kept as a threshold of zero,
// never met. The meaning stays the kubelet's; these say so, the first kind loudly.

import { percentageRatio, type Threshold } from '../api/threshold.js';
import type { ConfigProblem } from '../errors.js';
import type { NearWholeThreshold, ThresholdSource } from './types.js';

/** A percentage threshold at or above this ratio (99.9 %, as float32) is within 0.1 % of the whole. */
export const NEAR_WHOLE_RATIO = percentageRatio(99.9);

/** What {@link thresholdWarnings} finds. */
export interface ThresholdWarnings {
  /** Met on (nearly) every pass: check-config, the logs and a metric call these out. */
  readonly nearWhole: NearWholeThreshold[];
  /** Ordinary warnings: a percentage of zero that is kept and never met. */
  readonly warnings: ConfigProblem[];
}

/**
 * The file's percentage thresholds (allocatable copies left out: the entry they copy is named)
 * that are within 0.1 % of the whole capacity, or that are zero without being the disabling "0%".
 * `lineOf` gives an entry's line by its field path. A quantity threshold cannot be judged without
 * the node's capacity, so only percentages are.
 */
export function thresholdWarnings(thresholds: readonly Threshold[], sources: readonly ThresholdSource[], lineOf: (field: string) => number | undefined): ThresholdWarnings {
  const nearWhole: NearWholeThreshold[] = [];
  const warnings: ConfigProblem[] = [];
  thresholds.forEach((threshold, i) => {
    const source = sources[i];
    if (source === undefined || source.origin === 'allocatable-copy' || threshold.value.kind !== 'percentage') return;
    const { ratio } = threshold.value;
    const line = lineOf(source.field);
    const at = { field: source.field, value: source.rawValue, ...(line === undefined ? {} : { line }) };
    if (ratio >= NEAR_WHOLE_RATIO) {
      const whole = ratio >= 1 ? 'is the whole capacity' : 'is within 0.1% of the whole capacity';
      nearWhole.push({
        ...at,
        signal: threshold.signal,
        message:
          `${JSON.stringify(source.rawValue)} ${whole}: the threshold is met on (nearly) every pass, so pods are evicted for ${threshold.signal} continuously. ` +
          'Only the exact "100%" disables a threshold; the kubelet reads this value as a number, and so does the agent',
      });
    } else if (ratio === 0) {
      warnings.push({
        ...at,
        message: `${JSON.stringify(source.rawValue)} is a threshold of zero, never met; unlike the exact "0%", which disables a threshold, it is kept (a soft one still needs a grace period)`,
      });
    }
  });
  return { nearWhole, warnings };
}
