// The Helm chart against a real kube-apiserver: every rendering the chart tests make (the default
// values and each value set under deploy/chart/ci) passes a server-side dry-run apply of every
// object (validation and admission run, nothing is stored), but for the Prometheus Operator's
// ServiceMonitor and PrometheusRule, whose CRDs this API server does not have (test/monitoring
// checks the rules they carry with promtool). Needs the real helm (KEA_HELM_BIN).

import { HELM_SKIP_REASON, renderChart, VALUE_SETS_DIR, valueSets } from '../deploy/helm.js';
import { applyObject, describeObject, type ManifestObject } from './harness/manifest.js';
import { e2eSuite } from './harness/suite.js';
import { join } from 'node:path';

const suite = e2eSuite({ nodeNames: ['node-a'], skipReasons: HELM_SKIP_REASON === null ? [] : [HELM_SKIP_REASON] });

const renderings: readonly { readonly name: string; readonly args: readonly string[] }[] = [
  { name: 'the default values', args: [] },
  ...(HELM_SKIP_REASON === null ? valueSets() : []).map((set) => ({ name: set, args: ['--values', join(VALUE_SETS_DIR, set)] })),
];

suite.test('every rendering of the chart passes a server-side dry-run apply (real kube-apiserver)', async ({ admin }) => {
  const failures: string[] = [];
  let applied = 0;
  for (const rendering of renderings) {
    for (const object of renderChart(rendering.args) as ManifestObject[]) {
      if (object.apiVersion.startsWith('monitoring.coreos.com/')) continue;
      try {
        const answer = await applyObject<{ metadata: { uid?: string } }>(admin, object, { dryRun: true });
        expect(answer.metadata.uid).toBeDefined();
        applied++;
      } catch (err) {
        failures.push(`${rendering.name}: ${describeObject(object)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }
  expect(failures).toEqual([]);
  expect(applied).toBeGreaterThanOrEqual(renderings.length * 5);
  // A dry run stores nothing.
  expect((await admin.request('GET', '/apis/apps/v1/namespaces/kube-eviction-agent/daemonsets/node-eviction')).status).toBe(404);
}, 180_000);
