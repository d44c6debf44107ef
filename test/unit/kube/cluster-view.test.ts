// The ClusterView over the stand-in, through connect() and a kubeconfig file: this node's pods and
// Node object, and recovery from everything a watch meets in production (closed watches, 410 Gone,
// an API server that restarts, 5xx answers, a watch that never answers).

import type { Node, Pod } from '../../../src/api/pod.js';
import type { ClusterViewHandle } from '../../../src/kube/index.js';
import { names, node, NODE_NAME, pod, startHarness, waitFor, type Harness } from './harness.js';

interface Change {
  readonly kind: 'add' | 'update' | 'delete';
  readonly key: string;
  readonly uid: string | undefined;
}

function recordPodChanges(view: ClusterViewHandle): Change[] {
  const changes: Change[] = [];
  view.onPodChange((oldPod: Pod | null, newPod: Pod | null) => {
    const subject = (newPod ?? oldPod) as Pod;
    changes.push({ kind: oldPod === null ? 'add' : newPod === null ? 'delete' : 'update', key: `${subject.metadata.namespace ?? ''}/${subject.metadata.name ?? ''}`, uid: subject.metadata.uid });
  });
  return changes;
}

function listRequests(h: Harness, path: string): number {
  return h.standIn.requests().filter((r) => r.method === 'GET' && r.path === path && !r.query.includes('watch=true') && r.status === 200).length;
}

function watchRequests(h: Harness, path: string): { query: URLSearchParams; status: number }[] {
  return h.standIn
    .requests()
    .filter((r) => r.path === path && r.query.includes('watch=true'))
    .map((r) => ({ query: new URLSearchParams(r.query), status: r.status }));
}

let h: Harness;
let view: ClusterViewHandle;

async function startView(): Promise<void> {
  view = h.client.clusterView();
  await view.start();
  await view.whenSynced();
  // Watches open right after the lists; wait for both so changes cannot slip between.
  await waitFor('both watches open', () => h.standIn.openWatches() === 2);
}

beforeEach(async () => {
  h = await startHarness();
  h.standIn.setNode(node());
});
afterEach(async () => {
  await h.close();
});

describe('what the view holds', () => {
  test('only this node\'s pods, from every namespace, and this node', async () => {
    h.standIn.createPod(pod('a'));
    h.standIn.createPod(pod('b', { namespace: 'kube-system' }));
    h.standIn.createPod(pod('elsewhere', { node: 'node-b' }));
    h.standIn.setNode(node('node-b'));
    await startView();
    expect(view.synced).toBe(true);
    expect(names(view.pods())).toEqual(['default/a', 'kube-system/b']);
    expect(view.node()?.metadata.name).toBe(NODE_NAME);
    // Pods and timestamps come as the API's JSON, like kubectl get -o json.
    expect(typeof view.pods()[0]?.metadata.creationTimestamp).toBe('string');
  });

  test('a pod of another node never appears, even while the watch delivers this node\'s', async () => {
    await startView();
    const changes = recordPodChanges(view);
    h.standIn.createPod(pod('theirs', { node: 'node-b' }));
    h.standIn.createPod(pod('mine'));
    await waitFor('mine', () => view.pods().length === 1);
    h.standIn.updatePod('default', 'theirs', (p) => {
      p.metadata.labels = { touched: 'yes' };
    });
    h.standIn.createPod(pod('mine-2'));
    await waitFor('mine-2', () => view.pods().length === 2);
    expect(names(view.pods())).toEqual(['default/mine', 'default/mine-2']);
    expect(changes.map((c) => `${c.kind} ${c.key}`)).toEqual(['add default/mine', 'add default/mine-2']);
  });

  test('a pod bound to this node after creation arrives as an add', async () => {
    h.standIn.createPod(pod('pending', { node: null }));
    await startView();
    const changes = recordPodChanges(view);
    h.standIn.updatePod('default', 'pending', (p) => {
      p.spec.nodeName = NODE_NAME;
    });
    await waitFor('bound pod', () => view.pods().length === 1);
    expect(changes.map((c) => `${c.kind} ${c.key}`)).toEqual(['add default/pending']);
  });

  test('listeners get the previous state with the new one, and the final state on delete', async () => {
    h.standIn.createPod(pod('a', { labels: { v: '1' } }));
    await startView();
    const seen: [string | undefined, string | undefined][] = [];
    view.onPodChange((oldPod, newPod) => seen.push([oldPod?.metadata.labels?.v, newPod?.metadata.labels?.v]));
    h.standIn.updatePod('default', 'a', (p) => {
      p.metadata.labels = { v: '2' };
    });
    h.standIn.deletePodNow('default', 'a');
    await waitFor('two changes', () => seen.length === 2);
    expect(seen).toEqual([
      ['1', '2'],
      ['2', undefined],
    ]);
    expect(view.pods()).toEqual([]);
  });

  test('node changes arrive with old and new', async () => {
    await startView();
    const seen: [Node | null, Node | null][] = [];
    view.onNodeChange((oldNode, newNode) => seen.push([oldNode, newNode]));
    h.standIn.setNode({ ...node(), spec: { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] } });
    await waitFor('node update', () => seen.length === 1);
    expect(seen[0]?.[0]?.spec?.taints).toBeUndefined();
    expect(seen[0]?.[1]?.spec?.taints).toEqual([{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }]);
    expect(view.node()?.spec?.taints).toHaveLength(1);
  });

  test('a node that does not exist yet: synced with no node, and it appears when created', async () => {
    h.standIn.deleteNode(NODE_NAME);
    await startView();
    expect(view.synced).toBe(true);
    expect(view.node()).toBeNull();
    h.standIn.setNode(node());
    await waitFor('node', () => view.node() !== null);
  });

  test('an unsubscribed listener hears nothing more, and a listener that throws does not stop the others', async () => {
    await startView();
    const heard: string[] = [];
    const unsubscribe = view.onPodChange(() => heard.push('gone'));
    view.onPodChange(() => {
      throw new Error('listener bug');
    });
    view.onPodChange((_, newPod) => heard.push(newPod?.metadata.name ?? ''));
    unsubscribe();
    h.standIn.createPod(pod('a'));
    h.standIn.createPod(pod('b'));
    await waitFor('two pods', () => heard.length === 2);
    expect(heard).toEqual(['a', 'b']);
    expect(h.logger.lines.some((e) => e.level === 'error' && e.msg === 'a cluster view listener failed')).toBe(true);
  });
});

describe('recovery', () => {
  test('closed watches resume from the last resourceVersion without relisting', async () => {
    h.standIn.createPod(pod('a'));
    await startView();
    const rvBefore = String(h.standIn.resourceVersion());
    h.standIn.closeWatches();
    h.standIn.createPod(pod('b'));
    await waitFor('b', () => view.pods().length === 2);
    expect(listRequests(h, '/api/v1/pods')).toBe(1);
    const resumed = watchRequests(h, '/api/v1/pods').map((w) => w.query.get('resourceVersion'));
    expect(resumed).toHaveLength(2);
    expect(resumed[1]).toBe(rvBefore);
  });

  test('410 Gone: the view relists; no pod is lost, none duplicated, and every missed change is reported once', async () => {
    h.standIn.createPod(pod('stays'));
    h.standIn.createPod(pod('changes', { labels: { v: '1' } }));
    h.standIn.createPod(pod('goes'));
    await startView();
    const changes = recordPodChanges(view);
    // Changes the view cannot see: the API server is down, and its history is compacted meanwhile.
    await h.standIn.stop();
    h.standIn.createPod(pod('arrives'));
    h.standIn.deletePodNow('default', 'goes');
    h.standIn.updatePod('default', 'changes', (p) => {
      p.metadata.labels = { v: '2' };
    });
    h.standIn.expireWatches();
    await h.standIn.restart();
    await waitFor('relisted', () => listRequests(h, '/api/v1/pods') === 2);
    await waitFor('arrives', () => view.pods().some((p) => p.metadata.name === 'arrives'));
    expect(names(view.pods())).toEqual(['default/arrives', 'default/changes', 'default/stays']);
    expect(view.pods().find((p) => p.metadata.name === 'changes')?.metadata.labels).toEqual({ v: '2' });
    expect(changes.map((c) => `${c.kind} ${c.key}`).sort()).toEqual(['add default/arrives', 'delete default/goes', 'update default/changes']);
    expect(view.synced).toBe(true);
  });

  test('410 Gone alone: one relist, and no change reported for pods that did not change', async () => {
    h.standIn.createPod(pod('a'));
    h.standIn.createPod(pod('b'));
    await startView();
    const changes = recordPodChanges(view);
    h.standIn.expireWatches();
    await waitFor('relist', () => listRequests(h, '/api/v1/pods') === 2 && h.standIn.openWatches() === 2);
    expect(watchRequests(h, '/api/v1/pods').some((w) => w.status === 200)).toBe(true);
    expect(names(view.pods())).toEqual(['default/a', 'default/b']);
    expect(changes).toEqual([]);
  });

  test('a pod recreated under the same name while disconnected is reported as a delete, then an add', async () => {
    h.standIn.createPod(pod('web-0'));
    await startView();
    const oldUid = view.pods()[0]?.metadata.uid;
    const changes = recordPodChanges(view);
    await h.standIn.stop();
    h.standIn.deletePodNow('default', 'web-0');
    h.standIn.createPod(pod('web-0'));
    h.standIn.expireWatches();
    await h.standIn.restart();
    await waitFor('new web-0', () => view.pods()[0]?.metadata.uid !== oldUid);
    expect(changes.map((c) => `${c.kind} ${c.uid === oldUid ? 'old' : 'new'}`)).toEqual(['delete old', 'add new']);
  });

  test('the API server going down and coming back: retries with growing delays, then resyncs', async () => {
    h.standIn.createPod(pod('a'));
    await startView();
    await h.standIn.stop();
    await waitFor('several failed attempts', () => h.logger.lines.filter((e) => e.msg === 'watch failed; restarting' && e.fields.resource === 'pods').length >= 3);
    h.standIn.createPod(pod('made-while-down'));
    await h.standIn.restart();
    await waitFor('resynced', () => view.pods().length === 2, 5_000);
    expect(view.synced).toBe(true);
    const attempts = h.logger.lines.filter((e) => e.msg === 'watch failed; restarting' && e.fields.resource === 'pods').map((e) => e.fields.attempt as number);
    expect(attempts.slice(0, 3)).toEqual([1, 2, 3]);
    for (const entry of h.logger.lines.filter((e) => e.msg === 'watch failed; restarting')) expect(entry.fields.retryInMs).toBeLessThanOrEqual(200);
    // Back to a healthy watch: the delays start over.
    h.standIn.closeWatches();
    await h.standIn.stop();
    const podFailures = (): number[] => h.logger.lines.filter((e) => e.msg === 'watch failed; restarting' && e.fields.resource === 'pods').map((e) => e.fields.attempt as number);
    await waitFor('next failure', () => podFailures().length > attempts.length);
    expect(podFailures()[attempts.length]).toBe(1);
  });

  test('500s on the first list: not synced, retried with backoff until the list works', async () => {
    h.standIn.createPod(pod('a'));
    h.standIn.injectFault({ method: 'GET', pathPattern: /^\/api\/v1\/pods\?fieldSelector/, status: 500, count: 3 });
    view = h.client.clusterView();
    await view.start();
    expect(view.synced).toBe(false);
    expect(view.pods()).toEqual([]);
    await expect(view.whenSynced()).resolves.toBe(true);
    expect(names(view.pods())).toEqual(['default/a']);
    const lists = h.standIn.requests().filter((r) => r.path === '/api/v1/pods' && !r.query.includes('watch=true'));
    expect(lists.map((r) => r.status)).toEqual([500, 500, 500, 200]);
    expect(h.logger.lines.filter((e) => e.msg === 'watch failed; restarting' && e.fields.status === 500)).toHaveLength(3);
  });

  test('a 503 on a watch reconnect is retried from the same resourceVersion', async () => {
    await startView();
    h.standIn.injectFault({ pathPattern: /^\/api\/v1\/pods\?.*watch=true/, status: 503, count: 2 });
    h.standIn.closeWatches();
    h.standIn.createPod(pod('a'));
    await waitFor('a', () => view.pods().length === 1);
    const statuses = watchRequests(h, '/api/v1/pods').map((w) => w.status);
    expect(statuses).toEqual([200, 503, 503, 200]);
    expect(listRequests(h, '/api/v1/pods')).toBe(1);
  });

  test('bookmarks move the resume point forward', async () => {
    await startView();
    h.standIn.createPod(pod('elsewhere', { node: 'node-b' }));
    h.standIn.sendBookmarks();
    const bookmarkRv = String(h.standIn.resourceVersion());
    await new Promise((resolve) => setTimeout(resolve, 50));
    h.standIn.closeWatches();
    await waitFor('resumed', () => watchRequests(h, '/api/v1/pods').length === 2);
    expect(watchRequests(h, '/api/v1/pods')[1]?.query.get('resourceVersion')).toBe(bookmarkRv);
  });

  test('stop ends the watches, is idempotent, and nothing reconnects afterwards', async () => {
    await startView();
    await view.stop();
    await view.stop();
    await waitFor('watches closed', () => h.standIn.openWatches() === 0);
    const before = h.standIn.requests().length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(h.standIn.requests().length).toBe(before);
    await expect(view.whenSynced()).resolves.toBe(true);
  });
});

describe('watch time limits', () => {
  let local: Harness;
  afterEach(async () => {
    await local.close();
  });

  test('each watch asks the server to end it, and the view re-watches when it does', async () => {
    local = await startHarness({ minWatchTimeoutSeconds: 1, random: () => 0 });
    local.standIn.setNode(node());
    const localView = local.client.clusterView();
    await localView.start();
    await waitFor('a second pods watch', () => watchRequests(local, '/api/v1/pods').length >= 2, 4_000);
    expect(watchRequests(local, '/api/v1/pods')[0]?.query.get('timeoutSeconds')).toBe('1');
    local.standIn.createPod(pod('after-rewatch'));
    await waitFor('pod after re-watch', () => localView.pods().length === 1);
  });

  test('a watch that never answers is given up after the connect timeout and retried', async () => {
    local = await startHarness({ watchConnectTimeoutMs: 200 });
    local.standIn.setNode(node());
    local.standIn.injectFault({ pathPattern: /^\/api\/v1\/pods\?.*watch=true/, delayMs: 60_000 });
    const localView = local.client.clusterView();
    await localView.start();
    await waitFor('a second pods watch', () => watchRequests(local, '/api/v1/pods').length >= 2, 4_000);
    local.standIn.createPod(pod('a'));
    await waitFor('a', () => localView.pods().length === 1);
    expect(local.logger.lines.some((e) => e.msg === 'watch failed; restarting' && String(e.fields.error).includes('network timeout'))).toBe(true);
  });
});
