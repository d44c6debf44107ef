// The kubelet's ParseThresholdConfig (pkg/kubelet/eviction/helpers.go) with addAllocatableThresholds:
// the five eviction maps become the engine's thresholds, with the kubelet's validation and its
// exact wording. One deliberate difference: every problem is collected, not only the first, and
// each names its field path and raw value, so one run shows everything to fix. The output order
// is fixed where upstream's is map order (random): hard thresholds in the SIGNALS order of
// src/api/signals.ts, then soft thresholds in SIGNALS order, then the allocatable copies in the
// order of the thresholds they copy.

import { formatQuantity, parseQuantity, QuantityParseError, type Quantity } from '../api/quantity.js';
import { isSignal, SIGNALS, type Signal } from '../api/signals.js';
import { isHardEvictionThreshold, percentageRatio, type Threshold, type ThresholdValue } from '../api/threshold.js';
import type { ConfigProblem } from '../errors.js';
import { GoDurationError, parseGoDuration } from './go-duration.js';
import { GoFloatError, parseGoFloat32 } from './go-float.js';
import type { ThresholdSource } from './types.js';

/** The kubelet's NodeAllocatableEnforcementKey: enforcing `pods` adds the allocatable copies. */
export const NODE_ALLOCATABLE_ENFORCEMENT_KEY = 'pods';

export type SignalMap = Readonly<Record<string, string>>;

export interface ThresholdConfigInput {
  readonly enforceNodeAllocatable: readonly string[];
  readonly evictionHard: SignalMap;
  readonly evictionSoft: SignalMap;
  readonly evictionSoftGracePeriod: SignalMap;
  readonly evictionMinimumReclaim: SignalMap;
  /** evictionHard signals that came from the default map rather than the file (for the sources). */
  readonly defaultedHardSignals?: ReadonlySet<string>;
  /** Those of `defaultedHardSignals` added by `mergeDefaultEvictionSettings`. */
  readonly mergedHardSignals?: ReadonlySet<string>;
}

export interface ThresholdConfigResult {
  readonly thresholds: Threshold[];
  /** Every problem; the thresholds are only meaningful when this is empty. */
  readonly problems: ConfigProblem[];
  /** Entries the kubelet accepts and ignores (a grace period or minimum reclaim with no threshold). */
  readonly warnings: ConfigProblem[];
  /** Parallel to `thresholds`. */
  readonly sources: ThresholdSource[];
}

/** `evictionHard["memory.available"]`: the path the problems and sources use. */
export function signalField(mapName: string, key: string): string {
  return `${mapName}[${JSON.stringify(key)}]`;
}

const unsupportedEvictionSignal = (signal: string): string => `unsupported eviction signal ${signal}`;

// Go's strings.TrimRight(val, "%") then ParseFloat(.., 32), then float32(v)/100.
function parsePercentage(val: string): number {
  return percentageRatio(parseGoFloat32(val.replace(/%+$/, '')));
}

type Attempt<T> = { readonly parsed: T } | { readonly error: string };

// A parse that refuses with its own error class: the refusal's message, or the value. Any other
// exception is a bug and propagates.
function attempt<T>(parse: () => T, refusal: new (...args: never[]) => Error): Attempt<T> {
  try {
    return { parsed: parse() };
  } catch (err) {
    if (err instanceof refusal) return { error: err.message };
    throw err;
  }
}

const percentage = (val: string): Attempt<number> => attempt(() => parsePercentage(val), GoFloatError);
const quantityOf = (val: string): Attempt<Quantity> => attempt(() => parseQuantity(val), QuantityParseError);

type StatementResult = { readonly value: ThresholdValue | null } | { readonly error: string };

/** kubelet parseThresholdStatement, minus the signal check; `{ value: null }` means disabled (0% or 100%). */
function parseThresholdValue(signal: string, val: string): StatementResult {
  if (val.endsWith('%')) {
    if (val === '0%' || val === '100%') return { value: null };
    const ratio = percentage(val);
    if ('error' in ratio) return ratio;
    // NaN passes both of the kubelet's checks and yields a threshold whose quantity is undefined;
    // it is refused here rather than copied.
    if (Number.isNaN(ratio.parsed)) return { error: `eviction percentage threshold ${signal} must be a number: ${val}` };
    if (ratio.parsed < 0) return { error: `eviction percentage threshold ${signal} must be >= 0%: ${val}` };
    if (ratio.parsed > 1) return { error: `eviction percentage threshold ${signal} must be <= 100%: ${val}` };
    return { value: { kind: 'percentage', ratio: ratio.parsed } };
  }
  const quantity = quantityOf(val);
  if ('error' in quantity) return quantity;
  if (quantity.parsed.nanos <= 0n) return { error: `eviction threshold ${signal} must be positive: ${formatQuantity(quantity.parsed)}` };
  return { value: { kind: 'quantity', quantity: quantity.parsed } };
}

/** kubelet parseMinimumReclaims, one entry. */
function parseMinReclaimValue(signal: string, val: string): { value: ThresholdValue } | { error: string } {
  if (val.endsWith('%')) {
    const ratio = percentage(val);
    if ('error' in ratio) return ratio;
    if (Number.isNaN(ratio.parsed) || ratio.parsed <= 0) return { error: `eviction percentage minimum reclaim ${signal} must be positive: ${val}` };
    return { value: { kind: 'percentage', ratio: ratio.parsed } };
  }
  const quantity = quantityOf(val);
  if ('error' in quantity) return quantity;
  if (quantity.parsed.nanos < 0n) return { error: `negative eviction minimum reclaim specified for ${signal}` };
  return { value: { kind: 'quantity', quantity: quantity.parsed } };
}

/** kubelet parseGracePeriods, one entry: milliseconds, or the error. */
function parseGracePeriodValue(val: string): { valueMs: number } | { error: string } {
  const duration = attempt(() => parseGoDuration(val), GoDurationError);
  if ('error' in duration) return duration;
  if (duration.parsed < 0) return { error: `invalid eviction grace period specified: ${val}, must be a positive value` };
  return { valueMs: duration.parsed };
}

interface Parsed<T> {
  readonly signal: Signal;
  readonly raw: string;
  readonly value: T;
}

function bySignalOrder<T extends { readonly signal: Signal }>(items: T[]): T[] {
  return items.sort((a, b) => SIGNALS.indexOf(a.signal) - SIGNALS.indexOf(b.signal));
}

/**
 * The kubelet's ParseThresholdConfig. Order of work as upstream: hard, soft, grace periods, minimum
 * reclaims; then each soft threshold takes its grace period (one is required); then every
 * threshold takes its signal's minimum reclaim; then, when `pods` is enforced, each hard
 * `memory.available` threshold is copied to `allocatableMemory.available`.
 */
export function parseThresholdConfig(input: ThresholdConfigInput): ThresholdConfigResult {
  const problems: ConfigProblem[] = [];
  const warnings: ConfigProblem[] = [];
  const problem = (mapName: string, key: string, value: unknown, message: string): void => {
    problems.push({ field: signalField(mapName, key), value, message });
  };

  const parseStatements = (mapName: string, statements: SignalMap): Parsed<ThresholdValue>[] => {
    const out: Parsed<ThresholdValue>[] = [];
    for (const [key, raw] of Object.entries(statements)) {
      if (!isSignal(key)) {
        problem(mapName, key, raw, unsupportedEvictionSignal(key));
        continue;
      }
      const result = parseThresholdValue(key, raw);
      if ('error' in result) problem(mapName, key, raw, result.error);
      else if (result.value !== null) out.push({ signal: key, raw, value: result.value });
    }
    return bySignalOrder(out);
  };

  const hard = parseStatements('evictionHard', input.evictionHard);
  const soft = parseStatements('evictionSoft', input.evictionSoft);

  const gracePeriods = new Map<Signal, Parsed<number>>();
  // Signals with a grace period entry, valid or not: an invalid one is reported once, as itself.
  const gracePeriodWritten = new Set<string>();
  for (const [key, raw] of Object.entries(input.evictionSoftGracePeriod)) {
    gracePeriodWritten.add(key);
    if (!isSignal(key)) {
      problem('evictionSoftGracePeriod', key, raw, unsupportedEvictionSignal(key));
      continue;
    }
    const result = parseGracePeriodValue(raw);
    if ('error' in result) problem('evictionSoftGracePeriod', key, raw, result.error);
    else gracePeriods.set(key, { signal: key, raw, value: result.valueMs });
  }

  const minReclaims = new Map<Signal, Parsed<ThresholdValue>>();
  for (const [key, raw] of Object.entries(input.evictionMinimumReclaim)) {
    if (!isSignal(key)) {
      problem('evictionMinimumReclaim', key, raw, unsupportedEvictionSignal(key));
      continue;
    }
    const result = parseMinReclaimValue(key, raw);
    if ('error' in result) problem('evictionMinimumReclaim', key, raw, result.error);
    else minReclaims.set(key, { signal: key, raw, value: result.value });
  }

  const thresholds: Threshold[] = [];
  const sources: ThresholdSource[] = [];
  const add = (mapName: 'evictionHard' | 'evictionSoft', item: Parsed<ThresholdValue>, grace: Parsed<number> | null): void => {
    const minReclaim = minReclaims.get(item.signal) ?? null;
    thresholds.push({ signal: item.signal, value: item.value, gracePeriodMs: grace?.value ?? 0, minReclaim: minReclaim?.value ?? null });
    const defaulted = mapName === 'evictionHard' && (input.defaultedHardSignals?.has(item.signal) ?? false);
    sources.push({
      origin: defaulted ? 'default' : 'user',
      field: signalField(mapName, item.signal),
      rawValue: item.raw,
      rawGracePeriod: grace?.raw ?? null,
      rawMinReclaim: minReclaim?.raw ?? null,
      merged: defaulted && (input.mergedHardSignals?.has(item.signal) ?? false),
    });
  };

  for (const item of hard) add('evictionHard', item, null);
  for (const item of soft) {
    const grace = gracePeriods.get(item.signal);
    if (grace === undefined) {
      if (!gracePeriodWritten.has(item.signal)) {
        problem('evictionSoft', item.signal, item.raw, `grace period must be specified for the soft eviction threshold ${item.signal}`);
      }
      continue;
    }
    add('evictionSoft', item, grace);
  }

  // Accepted and ignored upstream; worth a warning, since it is most often a typo or a leftover.
  const softSignals = new Set(soft.map((t) => t.signal));
  for (const grace of gracePeriods.values()) {
    if (!softSignals.has(grace.signal)) {
      warnings.push({ field: signalField('evictionSoftGracePeriod', grace.signal), value: grace.raw, message: `ignored: there is no soft threshold for ${grace.signal}` });
    }
  }
  const thresholdSignals = new Set([...hard, ...soft].map((t) => t.signal));
  for (const reclaim of minReclaims.values()) {
    if (!thresholdSignals.has(reclaim.signal)) {
      warnings.push({ field: signalField('evictionMinimumReclaim', reclaim.signal), value: reclaim.raw, message: `ignored: there is no threshold for ${reclaim.signal}` });
    }
  }

  if (input.enforceNodeAllocatable.includes(NODE_ALLOCATABLE_ENFORCEMENT_KEY)) {
    // addAllocatableThresholds appends one copy per source, in source order.
    const copiedIndices = thresholds.flatMap((t, i) => (isCopySource(t) ? [i] : []));
    const withCopies = addAllocatableThresholds(thresholds);
    for (const i of copiedIndices) {
      sources.push({ ...(sources[i] as ThresholdSource), origin: 'allocatable-copy', rawGracePeriod: null, merged: false });
    }
    thresholds.splice(0, thresholds.length, ...withCopies);
  }
  return { thresholds, problems, warnings, sources };
}

function isCopySource(threshold: Threshold): boolean {
  return threshold.signal === 'memory.available' && isHardEvictionThreshold(threshold);
}

/**
 * kubelet addAllocatableThresholds: every `memory.available` threshold with a zero grace period
 * (a hard one, or a soft one given `0s`) is copied to `allocatableMemory.available` with the same
 * value and minimum reclaim. The kubepods limit does not subtract the eviction margin, so the
 * same margin is applied again to the pods cgroup.
 */
export function addAllocatableThresholds(thresholds: readonly Threshold[]): Threshold[] {
  const copies: Threshold[] = thresholds
    .filter(isCopySource)
    .map((t) => ({ signal: 'allocatableMemory.available', value: t.value, gracePeriodMs: 0, minReclaim: t.minReclaim }));
  return [...thresholds, ...copies];
}
