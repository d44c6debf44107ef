// The real helm for the chart tests (KEA_HELM_BIN, built by scripts/build-tools.sh): `helm lint`
// and `helm template` of deploy/chart with a value set, its objects parsed. Without KEA_HELM_BIN
// the tests that need it skip, saying so; CI sets it, so there they run.

import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from './manifest.js';
import { REPO_ROOT } from './manifest.js';

export const CHART_DIR = join(REPO_ROOT, 'deploy', 'chart');
/** The chart's non-default value sets (helm's ci/ convention), each rendered and applied by the tests. */
export const VALUE_SETS_DIR = join(CHART_DIR, 'ci');

export const HELM_BIN = process.env.KEA_HELM_BIN ?? null;
export const HELM_SKIP_REASON = HELM_BIN === null ? 'KEA_HELM_BIN is not set: run eval "$(bash scripts/build-tools.sh)" (CI does)' : null;

export interface HelmRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function helm(args: readonly string[]): HelmRun {
  if (HELM_BIN === null) throw new Error(HELM_SKIP_REASON ?? '');
  const run = spawnSync(HELM_BIN, args, { encoding: 'utf8', cwd: REPO_ROOT, timeout: 60_000 });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

/** The value-set files under deploy/chart/ci, by name. */
export function valueSets(): string[] {
  return readdirSync(VALUE_SETS_DIR).filter((f) => f.endsWith('-values.yaml')).sort();
}

/** `helm template` of the chart as release `kube-eviction-agent` in its namespace; throws with helm's message on failure. */
export function renderChart(extraArgs: readonly string[] = []): KubeObject[] {
  const run = helm(['template', 'kube-eviction-agent', CHART_DIR, '--namespace', 'kube-eviction-agent', ...extraArgs]);
  if (run.status !== 0) throw new Error(`helm template ${extraArgs.join(' ')} failed:\n${run.stderr}`);
  return parseObjects(run.stdout);
}

export function parseObjects(text: string): KubeObject[] {
  const objects: KubeObject[] = [];
  for (const doc of parseAllDocuments(text, { uniqueKeys: true })) {
    if (doc.errors.length > 0) throw new Error(doc.errors.map((e) => e.message).join('; '));
    const value = doc.toJS() as unknown;
    if (value !== null && value !== undefined) objects.push(value as KubeObject);
  }
  return objects;
}
