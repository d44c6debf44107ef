// connect(): where credentials come from, what every request carries, and that the client library
// is only loaded when a cluster is actually used.

import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { systemClock } from '../../../src/api/clock.js';
import { kubeconfigFor } from '../../../src/demo/api-stand-in.js';
import { KubeApiError } from '../../../src/errors.js';
import { connect } from '../../../src/kube/index.js';
import { node, NODE_NAME, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeEach(async () => {
  h = await startHarness({ userAgent: 'kube-eviction-agent/test (node-a)' });
  h.standIn.setNode(node());
});
afterEach(async () => {
  await h.close();
});

const base = { nodeName: NODE_NAME, logger: new RecordingLogger(), clock: systemClock };

describe('where the credentials come from', () => {
  test('a kubeconfig path: requests carry its bearer token and the User-Agent, watches included', async () => {
    const view = h.client.clusterView();
    await view.start();
    await view.whenSynced();
    await h.client.podActions().getPod('default', 'missing');
    expect(h.client.server).toBe(h.standIn.url);
    const requests = h.standIn.requests();
    expect(requests.some((r) => r.query.includes('watch=true'))).toBe(true);
    for (const request of requests) {
      expect(request.status).not.toBe(401);
      expect(request.userAgent).toBe('kube-eviction-agent/test (node-a)');
    }
  });

  test('a kubeconfig document', async () => {
    const client = await connect({ ...base, kubeconfigYaml: kubeconfigFor(h.standIn), env: {} });
    await expect(client.podActions().getPod('default', 'missing')).resolves.toBeNull();
    expect(h.standIn.requests().at(-1)).toMatchObject({ status: 404, userAgent: 'kube-eviction-agent' });
  });

  test('KUBECONFIG when no path is given', async () => {
    const client = await connect({ ...base, env: { KUBECONFIG: h.kubeconfigPath } });
    expect(client.server).toBe(h.standIn.url);
  });

  test('~/.kube/config when nothing else is set', async () => {
    const home = join(h.kubeconfigPath, '..');
    mkdirSync(join(home, '.kube'));
    writeFileSync(join(home, '.kube', 'config'), kubeconfigFor(h.standIn));
    const client = await connect({ ...base, env: {}, homeDir: home });
    expect(client.server).toBe(h.standIn.url);
  });

  const refusals: { name: string; options: Parameters<typeof connect>[0]; message: RegExp }[] = [
    { name: 'nothing-configured', options: { ...base, env: {}, homeDir: '/nonexistent' }, message: /^No Kubernetes configuration found/ },
    { name: 'unreadable-kubeconfig', options: { ...base, kubeconfig: '/nonexistent/kubeconfig', env: {} }, message: /^The Kubernetes configuration cannot be loaded: / },
    { name: 'no-current-cluster', options: { ...base, kubeconfigYaml: 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n', env: {} }, message: /names no current cluster$/ },
  ];
  for (const tc of refusals) {
    test(`refused with a coded error: ${tc.name}`, async () => {
      const attempt = connect(tc.options);
      await expect(attempt).rejects.toBeInstanceOf(KubeApiError);
      await expect(attempt).rejects.toMatchObject({ code: 'EVA_ERR_KUBE_API', status: 0 });
      await expect(attempt).rejects.toThrow(tc.message);
    });
  }

  test('a token the server rejects: calls fail with 401 rather than throwing', async () => {
    const client = await connect({ ...base, kubeconfigYaml: kubeconfigFor(h.standIn).replace(/ {4}token: .*\n/, ''), env: {} });
    const outcome = await client.podActions().evictPod({ metadata: { name: 'a', namespace: 'default' }, spec: { containers: [] } }, 1);
    expect(outcome).toEqual({ result: 'failed', status: 401, message: 'Unauthorized' });
  });
});

test('one view, one PodActions and one NodeReporter per client', () => {
  expect(h.client.clusterView()).toBe(h.client.clusterView());
  expect(h.client.podActions()).toBe(h.client.podActions());
  expect(h.client.nodeReporter()).toBe(h.client.nodeReporter());
});

test('only client-node-parts.ts names @kubernetes/client-node at run time, and only client-library.ts loads it, lazily; every other import is type-only', () => {
  const dir = new URL('../../../src/kube/', import.meta.url);
  const offenders: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(new URL(file, dir), 'utf8');
    for (const line of text.split('\n')) {
      const library = line.includes("'@kubernetes/client-node'");
      const parts = line.includes("'./client-node-parts.js'");
      if (!library && !parts) continue;
      const typeOnly = /^import type /.test(line);
      const reexport = library && file === 'client-node-parts.ts' && /^export \{ [\w, ]+ \} from /.test(line);
      const lazy = parts && file === 'client-library.ts' && line.includes("import('./client-node-parts.js')");
      if (!typeOnly && !reexport && !lazy) offenders.push(`${file}: ${line.trim()}`);
    }
  }
  expect(offenders).toEqual([]);
});
