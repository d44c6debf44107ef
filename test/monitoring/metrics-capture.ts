// A real /metrics capture, taken at test time from a running agent: the demo (the real run loop
// and composition, a leaking pod evicted on a sandboxed node) is scraped every 200 ms while it
// runs, and the last scrape taken after the eviction is kept. The alert rules and the dashboard
// are checked against it, so a renamed or dropped metric fails their tests.

import { Writable } from 'node:stream';
import { runDemo, type DemoSummary } from '../../src/demo/demo.js';

/** One sample line of the Prometheus text format. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricsCapture {
  readonly text: string;
  /** Metric family name to its TYPE (counter, gauge, histogram, summary, untyped). */
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
  readonly demo: DemoSummary;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text exposition format (what prom-client serves). */
export function parseExposition(text: string): { types: Map<string, string>; samples: Sample[] } {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) types.set(type[1] as string, type[2] as string);
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (match[2] ?? '').matchAll(LABEL)) labels[l[1] as string] = JSON.parse(`"${l[2] as string}"`) as string;
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return { types, samples };
}

/** The family a sample belongs to (`x_bucket`, `x_sum`, `x_count` are the histogram `x`'s). */
export function familyOf(sampleName: string, types: ReadonlyMap<string, string>): string {
  if (types.has(sampleName)) return sampleName;
  const base = sampleName.replace(/_(bucket|sum|count|total|created)$/, '');
  return types.has(base) ? base : sampleName;
}

/** Runs the demo and returns the last scrape of its /metrics taken after it evicted. */
export async function captureDemoMetrics(): Promise<MetricsCapture> {
  let url: string | null = null;
  let evicted = false;
  let last: string | null = null;
  let log = '';
  const out = new Writable({
    write(chunk, _encoding, done) {
      const text = String(chunk);
      log += text;
      url ??= /metrics: (http:\/\/\S+\/metrics)/.exec(text)?.[1] ?? null;
      if (/stopped and removed/.test(text)) evicted = true;
      done();
    },
  });
  let scraping = true;
  const scraper = (async () => {
    while (scraping) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (url === null) continue;
      try {
        const response = await fetch(url);
        const text = await response.text();
        if (evicted && response.ok) last = text;
      } catch {
        // The agent is starting or has stopped.
      }
    }
  })();
  let demo: DemoSummary;
  try {
    demo = await runDemo({ leakMiBPerSecond: 200, timeLimitMs: 60_000, simulated: false, out });
  } finally {
    scraping = false;
    await scraper;
  }
  if (last === null) throw new Error(`no /metrics capture after an eviction; the demo said:\n${log}`);
  const text: string = last;
  return { text, ...parseExposition(text), demo };
}
