// Shared pieces of the benchmark page: Markdown tables, the headline rows of the summary (a
// figure against its target, met or missed and why), and what every section hands back.

import { formatMachine } from '../lib/machine.js';
import type { PartResult } from '../lib/part.js';

export interface Headline {
  readonly what: string;
  readonly target: string;
  readonly result: string;
  /** null when it could not be judged (the part was skipped or failed). */
  readonly met: boolean | null;
  /** Why it was missed (or a caveat), from the numbers. */
  readonly note?: string;
}

export interface Chart {
  /** A file name `benchmarks-*.svg`, next to the page. */
  readonly file: string;
  readonly svg: string;
}

export interface Section {
  readonly markdown: string;
  readonly charts: readonly Chart[];
  readonly headlines: readonly Headline[];
}

export function table(header: readonly string[], rows: readonly (readonly string[])[], align?: readonly ('l' | 'r')[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.map((c) => c.replace(/\|/g, '\\|')).join(' | ')} |`;
  const rule = header.map((_, i) => ((align?.[i] ?? (i === 0 ? 'l' : 'r')) === 'r' ? '---:' : '---'));
  return [line(header), `|${rule.join('|')}|`, ...rows.map(line)].join('\n');
}

/** The line under every table and chart: what machine, when, and whether it was a quick run. */
export function measuredOn(result: PartResult): string {
  const quick = result.quick ? ' **Quick smoke run (few samples): not for quoting.**' : '';
  const code = result.revision === undefined || result.revision === null ? '' : `; code at \`${result.revision}\``;
  return `_Measured on ${formatMachine(result.machine)}${code}; the part took ${Math.round(result.durationMs / 1000)} s._${quick}`;
}

/** The caption inside a chart. */
export function chartCaption(result: PartResult): string {
  return `${formatMachine(result.machine)}${result.quick ? ' (quick run)' : ''}`;
}

/** A section for a part that has no data: not run yet, skipped (and why), or failed (and why). */
export function missingSection(title: string, result: PartResult | undefined, what: readonly Omit<Headline, 'result' | 'met'>[]): Section {
  const reason =
    result === undefined
      ? 'not run yet (`npm run bench`)'
      : result.skipped !== null
        ? `skipped: ${result.skipped}`
        : `failed: ${result.error ?? 'no data'}`;
  const when = result === undefined ? '' : `\n\n${measuredOn(result)}`;
  return {
    markdown: `## ${title}\n\nNo results: ${reason}.${when}\n`,
    charts: [],
    headlines: what.map((h) => ({ ...h, result: reason, met: null })),
  };
}
