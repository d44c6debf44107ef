// The filter every part of the agent sees the node's pods through: which pods the API server
// lists for this node are refused (another node's, a UID or name that cannot name host paths),
// each logged once while it is listed and counted by reason, and how watch changes are passed on.

import type { Pod } from '../../../src/api/pod.js';
import { NodePodFilter, podRefusal, type PodRefusalReason } from '../../../src/daemon/node-pod-filter.js';
import { FakeClusterView } from '../../fakes/fake-cluster.js';
import { RecordingLogger } from '../../fakes/recording-logger.js';
import { makePod, mirrorAnnotations } from '../../fixtures/pods.js';

const UID = '0b7e4f39-3c1d-4c8e-9f0a-6d2b5e8a1c47';
const pod = (change: (p: Pod) => void = () => {}): Pod => {
  const p = makePod({ name: 'web', uid: UID });
  change(p);
  return p;
};

describe('podRefusal', () => {
  test.each<[string, Pod, PodRefusalReason | null, RegExp | null]>([
    ['a pod of this node with an API UID', pod(), null, null],
    ['a static pod\'s generated UID as the API UID', pod((p) => (p.metadata.uid = '3c9f2b7e1a4d4c8f9e0b5a6d7c8e9f01')), null, null],
    ['a mirror pod with its static pod UID', pod((p) => (p.metadata.annotations = mirrorAnnotations())), null, null],
    ['another node\'s pod', pod((p) => (p.spec.nodeName = 'node-b')), 'other-node', /bound to "node-b" \(6 characters\), not node-a/],
    ['an unscheduled pod', pod((p) => delete p.spec.nodeName), 'other-node', /bound to no node, not node-a/],
    ['a node name that only starts like this one', pod((p) => (p.spec.nodeName = 'node-a ')), 'other-node', /bound to "node-a "/],
    ['a traversal in the UID', pod((p) => (p.metadata.uid = `${UID}/../..`)), 'uid', /the pod UID ".*\/\.\.\/\.\." \(42 characters\) is not in the API server's form/],
    ['an empty UID', pod((p) => (p.metadata.uid = '')), 'uid', /the pod UID "" \(0 characters\)/],
    ['no UID', pod((p) => delete p.metadata.uid), 'uid', /the pod UID "undefined"/],
    ['an uppercase UID', pod((p) => (p.metadata.uid = UID.toUpperCase())), 'uid', /not in the API server's form/],
    ['a NUL after the UID', pod((p) => (p.metadata.uid = `${UID}\u0000`)), 'uid', /\\u0000/],
    ['a crafted mirror annotation', pod((p) => (p.metadata.annotations = mirrorAnnotations('../../..'))), 'uid', /is not a static pod UID/],
    ['a name outside the API syntax', pod((p) => (p.metadata.name = '../web')), 'name', /the pod name "\.\.\/web" \(6 characters\) is not a DNS-1123 subdomain/],
    ['a namespace outside the API syntax', pod((p) => (p.metadata.namespace = 'a/b')), 'name', /the namespace "a\/b"/],
  ])('%s', (_what, p, reason, message) => {
    const refusal = podRefusal(p, 'node-a');
    expect(refusal?.reason ?? null).toBe(reason);
    if (message !== null) expect(refusal?.message).toMatch(message);
  });
});

function filtered(pods: Pod[]): { view: FakeClusterView; filter: NodePodFilter; logger: RecordingLogger; counts: Record<PodRefusalReason, number>[] } {
  const view = new FakeClusterView({ pods });
  const logger = new RecordingLogger();
  const counts: Record<PodRefusalReason, number>[] = [];
  const filter = new NodePodFilter({ nodeName: 'node-a', cluster: view, logger, onRefusedCounts: (c) => counts.push({ ...c }) });
  return { view, filter, logger, counts };
}

const refusedLines = (logger: RecordingLogger): unknown[] => logger.lines.filter((l) => l.msg.startsWith('pod refused')).map((l) => l.fields.pod);

describe('NodePodFilter', () => {
  test('keeps this node\'s pods, logs each refused pod once while it is listed, and counts them by reason', () => {
    const good = makePod({ name: 'good', uid: UID });
    const other = makePod({ name: 'other', uid: '1b7e4f39-3c1d-4c8e-9f0a-6d2b5e8a1c47', nodeName: 'node-b' });
    const crafted = makePod({ name: 'crafted', uid: '/' });
    const { view, filter, logger, counts } = filtered([good, other, crafted]);
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['good']);
    filter.pods();
    expect(filter.pods()).toBe(filter.pods()); // one filtered answer per answer of the view
    expect(refusedLines(logger)).toEqual(['default/other', 'default/crafted']);
    expect(counts).toEqual([{ uid: 1, name: 0, 'other-node': 1 }]);
    // A change elsewhere: no new line for pods already refused.
    view.upsertPod(makePod({ name: 'late', uid: '2b7e4f39-3c1d-4c8e-9f0a-6d2b5e8a1c47' }));
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['good', 'late']);
    expect(refusedLines(logger)).toHaveLength(2);
    // Gone and back: logged again.
    view.removePod('default', 'crafted');
    filter.pods();
    view.upsertPod(crafted);
    filter.pods();
    expect(refusedLines(logger)).toEqual(['default/other', 'default/crafted', 'default/crafted']);
    expect(counts.at(-1)).toEqual({ uid: 1, name: 0, 'other-node': 1 });
  });

  test('pods that share one UID are none of them trusted, until only one has it', () => {
    const { view, filter, logger, counts } = filtered([makePod({ name: 'web', uid: UID }), makePod({ name: 'impostor', uid: UID }), makePod({ name: 'other', uid: '1b7e4f39-3c1d-4c8e-9f0a-6d2b5e8a1c47' })]);
    const changes: [string | null, string | null][] = [];
    filter.onPodChange((oldPod, newPod) => changes.push([oldPod?.metadata.name ?? null, newPod?.metadata.name ?? null]));
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['other']);
    expect(logger.lines.filter((l) => l.msg.startsWith('pod refused')).map((l) => l.fields.reason)).toEqual([
      `the pod UID ${UID} is also listed for "default/impostor" (16 characters): the API server gives every pod its own`,
      `the pod UID ${UID} is also listed for "default/web" (11 characters): the API server gives every pod its own`,
    ]);
    expect(counts.at(-1)).toEqual({ uid: 2, name: 0, 'other-node': 0 });
    view.removePod('default', 'impostor');
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['web', 'other']);
    expect(counts.at(-1)).toEqual({ uid: 0, name: 0, 'other-node': 0 });
    // A third pod taking the UID: it is refused as it arrives, and web with it. The removal of a
    // refused pod is passed on as a deletion, harmless to a listener that never saw the pod.
    view.upsertPod(makePod({ name: 'third', uid: UID }));
    expect(changes).toEqual([['impostor', null]]);
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['other']);
  });

  test('a pod is judged once per object: the watch\'s replacement object is judged afresh', () => {
    const { view, filter } = filtered([makePod({ name: 'web', uid: UID })]);
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['web']);
    view.upsertPod(makePod({ name: 'web', uid: UID, nodeName: 'node-b' }));
    expect(filter.pods()).toEqual([]);
    view.upsertPod(makePod({ name: 'web', uid: UID }));
    expect(filter.pods().map((p) => p.metadata.name)).toEqual(['web']);
  });

  test('a thousand pods sharing one UID are all refused, each naming a few of the others', () => {
    const pods = Array.from({ length: 1000 }, (_, i) => makePod({ name: `copy-${i}`, uid: UID }));
    const { filter, logger, counts } = filtered(pods);
    expect(filter.pods()).toEqual([]);
    expect(counts.at(-1)).toEqual({ uid: 1000, name: 0, 'other-node': 0 });
    expect(logger.lines.find((l) => l.fields.pod === 'default/copy-0')?.fields.reason).toBe(
      `the pod UID ${UID} is also listed for "default/copy-1" (14 characters), "default/copy-2" (14 characters), "default/copy-3" (14 characters) and 996 more: the API server gives every pod its own`,
    );
  });

  test('a key outside the API syntax is logged bounded and escaped', () => {
    const { filter, logger } = filtered([makePod({ name: `${'x'.repeat(300)}\n`, uid: UID })]);
    expect(filter.pods()).toEqual([]);
    expect(refusedLines(logger)).toEqual([expect.stringMatching(/^"default\/x{72}\.\.\." \(309 characters\)$/)]);
  });

  test('watch changes: a pod leaving this node is deleted, one coming to it added, refused states are not passed on', () => {
    const { view, filter, logger } = filtered([makePod({ name: 'web', uid: UID })]);
    const changes: [string | null, string | null][] = [];
    filter.onPodChange((oldPod, newPod) => changes.push([oldPod?.spec.nodeName ?? null, newPod?.spec.nodeName ?? null]));
    view.updatePod('default', 'web', (p) => (p.spec.nodeName = 'node-b'));
    view.updatePod('default', 'web', (p) => (p.metadata.labels = { moved: 'yes' }));
    view.updatePod('default', 'web', (p) => (p.spec.nodeName = 'node-a'));
    view.updatePod('default', 'web', (p) => (p.metadata.labels = { back: 'yes' }));
    expect(changes).toEqual([
      ['node-a', null],
      [null, 'node-a'],
      ['node-a', 'node-a'],
    ]);
    // The refusal is logged as the change arrives, once.
    expect(refusedLines(logger)).toEqual(['default/web']);
  });
});
