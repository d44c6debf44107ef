// One metric's value in a Prometheus text scrape (what prom-client serves), for the tests and the
// benchmarks that read the agent's /metrics: no test framework here, the benchmark build compiles it.

/** The sum over the label sets of `name` that include `labels` (0 when absent). */
export function metricValue(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    if (Object.entries(labels).every(([k, v]) => (match[2] ?? '').includes(`${k}="${v}"`))) sum += Number(match[3]);
  }
  return sum;
}
