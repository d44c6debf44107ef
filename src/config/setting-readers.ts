// The value readers of the agent's own sections: each reads one entry with the kubelet's decoding
// rules, reports what is wrong with it at its field path and line, and hands a valid value to the
// section that assigns it. Nothing here defaults: an absent or invalid entry leaves the default.

import { posix } from 'node:path';
import { parseQuantity, quantityValue, QuantityParseError } from '../api/quantity.js';
import type { ConfigReader, EntryHandler, MapEntry } from './config-reader.js';
import { DURATION_BOUNDS_MS, type DurationBounds } from './defaults.js';
import { formatShortDuration } from './go-duration.js';

/** The range of the duration setting at `field`; a duration without one is a programming error. */
export function durationBounds(field: string): DurationBounds {
  const bounds = DURATION_BOUNDS_MS[field];
  if (bounds === undefined) throw new Error(`no range for the duration ${field} in DURATION_BOUNDS_MS (src/config/defaults.ts)`);
  return bounds;
}

/** `between 1s and 10m`, with the reason when there is one: how messages, docs and the chart say a range. */
export function describeDurationBounds(bounds: DurationBounds): string {
  const range = `between ${formatShortDuration(bounds.minMs)} and ${formatShortDuration(bounds.maxMs)}`;
  return bounds.why === undefined ? range : `${range} (${bounds.why})`;
}

export class SettingReaders {
  constructor(private readonly reader: ConfigReader) {}

  /** A Go duration within the setting's range of {@link DURATION_BOUNDS_MS}, in milliseconds. */
  duration(entry: MapEntry, assign: (ms: number) => void): void {
    const bounds = durationBounds(entry.field);
    const duration = this.reader.duration(entry.valueNode, entry.field);
    if (duration === undefined) return;
    if (duration.ms < bounds.minMs || duration.ms > bounds.maxMs) {
      this.reader.problem(entry.field, entry.valueNode, `must be ${describeDurationBounds(bounds)}: ${duration.raw}`);
      return;
    }
    assign(duration.ms);
  }

  /** A Kubernetes quantity of bytes above zero (`4Gi`), whole and a safe integer. */
  bytes(entry: MapEntry, assign: (bytes: number) => void): void {
    const value = this.reader.string(entry.valueNode, entry.field, 'a quantity such as "4Gi"');
    if (value === undefined) return;
    let bytes: bigint;
    try {
      bytes = quantityValue(parseQuantity(value));
    } catch (error) {
      if (!(error instanceof QuantityParseError)) throw error;
      this.reader.problem(entry.field, entry.valueNode, `must be a quantity such as "4Gi": ${JSON.stringify(value)}`);
      return;
    }
    if (bytes <= 0n || bytes > BigInt(Number.MAX_SAFE_INTEGER)) {
      this.reader.problem(entry.field, entry.valueNode, `must be above zero and below 8Pi: ${JSON.stringify(value)}`);
      return;
    }
    assign(Number(bytes));
  }

  /** A percentage of time, as the kernel's PSI averages are: above 0, at most 100, at most two decimals. */
  percent(entry: MapEntry, assign: (percent: number) => void): void {
    const raw = this.reader.rawValue(entry.valueNode);
    if (typeof raw !== 'number' || !Number.isFinite(raw)) {
      this.reader.problem(entry.field, entry.valueNode, `must be a number of percent such as 10 or 12.5 (no % sign): ${JSON.stringify(raw)}`);
      return;
    }
    if (raw <= 0 || raw > 100) {
      this.reader.problem(entry.field, entry.valueNode, `must be above 0 and at most 100: ${raw}`);
      return;
    }
    if (Math.abs(raw * 100 - Math.round(raw * 100)) > 1e-6) {
      this.reader.problem(entry.field, entry.valueNode, `must have at most two decimals (the kernel's precision): ${raw}`);
      return;
    }
    assign(raw);
  }

  bool(entry: MapEntry, assign: (value: boolean) => void): void {
    const value = this.reader.boolean(entry.valueNode, entry.field);
    if (value !== undefined) assign(value);
  }

  integer(entry: MapEntry, min: number, max: number, assign: (value: number) => void): void {
    const value = this.reader.integer(entry.valueNode, entry.field, min, max);
    if (value !== undefined) assign(value);
  }

  oneOf<T extends string>(allowed: readonly T[], assign: (value: T) => void): EntryHandler {
    return (entry) => {
      const value = this.reader.enumeration(entry.valueNode, entry.field, allowed);
      if (value !== undefined) assign(value);
    };
  }

  /** An absolute path, normalized without a trailing slash, so joining and comparing paths is predictable. */
  absolutePath(entry: MapEntry, assign: (path: string) => void): void {
    const value = this.reader.string(entry.valueNode, entry.field, 'an absolute path');
    if (value === undefined) return;
    if (!value.startsWith('/')) {
      this.reader.problem(entry.field, entry.valueNode, `must be an absolute path: ${JSON.stringify(value)}`);
      return;
    }
    const normalized = posix.normalize(value);
    assign(normalized.length > 1 ? normalized.replace(/\/+$/, '') : normalized);
  }

  nonEmptyString(entry: MapEntry, assign: (value: string) => void): void {
    const value = this.reader.string(entry.valueNode, entry.field);
    if (value === undefined) return;
    if (value.trim() === '') {
      this.reader.problem(entry.field, entry.valueNode, 'must not be empty');
      return;
    }
    assign(value);
  }

  /** A non-empty string that passes `valid`; otherwise `must be <what>`. */
  matching(entry: MapEntry, valid: (value: string) => boolean, what: string, assign: (value: string) => void): void {
    this.nonEmptyString(entry, (value) => {
      if (valid(value)) assign(value);
      else this.reader.problem(entry.field, entry.valueNode, `must be ${what}: ${JSON.stringify(value)}`);
    });
  }
}
