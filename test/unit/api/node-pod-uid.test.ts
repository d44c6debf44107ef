// The UID the node knows a pod by: the API UID, or for a mirror pod the static pod's own UID from
// its annotation, refused unless it has the form the kubelet gives it (and agrees with config.hash).

import { isStaticPodUid, nodePodUid } from '../../../src/api/node-pod-uid.js';
import type { Pod } from '../../../src/api/pod.js';

const API_UID = '6f0c2a1e-3b4d-4c5e-8f90-a1b2c3d4e5f6';
const HASH = '9b1f7c3ad2e84f6a0c5b8e1d3f7a9c2e';
const pod = (annotations?: Record<string, string>, uid: string | null = API_UID): Pod => ({
  metadata: { name: 'p', namespace: 'ns', ...(uid === null ? {} : { uid }), ...(annotations === undefined ? {} : { annotations }) },
  spec: { containers: [{ name: 'app' }] },
});

describe('nodePodUid', () => {
  const accepted = [
    { name: 'an API pod: its API UID', pod: pod(), uid: API_UID, mirror: false },
    { name: 'a mirror pod: the generated hash', pod: pod({ 'kubernetes.io/config.mirror': HASH, 'kubernetes.io/config.hash': HASH, 'kubernetes.io/config.source': 'file' }), uid: HASH, mirror: true },
    { name: 'a mirror pod without config.hash', pod: pod({ 'kubernetes.io/config.mirror': HASH }), uid: HASH, mirror: true },
    { name: 'a mirror pod whose manifest set a UUID', pod: pod({ 'kubernetes.io/config.mirror': '0a1b2c3d-0000-4000-8000-00000000000a' }), uid: '0a1b2c3d-0000-4000-8000-00000000000a', mirror: true },
    { name: 'a static pod seen directly (config.source file, no mirror annotation): its UID', pod: pod({ 'kubernetes.io/config.source': 'file', 'kubernetes.io/config.hash': HASH }, HASH), uid: HASH, mirror: false },
  ];
  for (const tc of accepted) {
    test(tc.name, () => {
      expect(nodePodUid(tc.pod)).toEqual({ ok: true, uid: tc.uid, mirror: tc.mirror });
    });
  }

  const refused = [
    { name: 'no UID', pod: pod(undefined, null), reason: 'the pod has no UID' },
    { name: 'an empty UID', pod: pod(undefined, ''), reason: 'the pod has no UID' },
    { name: 'an empty mirror annotation', pod: pod({ 'kubernetes.io/config.mirror': '' }), reason: /"" is not a static pod UID/ },
    { name: 'a path in the annotation', pod: pod({ 'kubernetes.io/config.mirror': '../../../etc' }), reason: /is not a static pod UID/ },
    { name: '31 hex digits', pod: pod({ 'kubernetes.io/config.mirror': HASH.slice(1) }), reason: /is not a static pod UID/ },
    { name: '33 hex digits', pod: pod({ 'kubernetes.io/config.mirror': `${HASH}0` }), reason: /is not a static pod UID/ },
    { name: 'upper-case hex', pod: pod({ 'kubernetes.io/config.mirror': HASH.toUpperCase() }), reason: /is not a static pod UID/ },
    { name: 'a trailing newline', pod: pod({ 'kubernetes.io/config.mirror': `${HASH}\n` }), reason: /is not a static pod UID/ },
    { name: 'a short hash (an old test value)', pod: pod({ 'kubernetes.io/config.mirror': 'a1b2c3d4e5f6' }), reason: /is not a static pod UID/ },
    { name: 'config.hash disagrees', pod: pod({ 'kubernetes.io/config.mirror': HASH, 'kubernetes.io/config.hash': 'f'.repeat(32) }), reason: /differs from its kubernetes.io\/config.hash/ },
  ];
  for (const tc of refused) {
    test(`refused: ${tc.name}`, () => {
      const id = nodePodUid(tc.pod);
      expect(id.ok).toBe(false);
      if (!id.ok) expect(id.reason).toMatch(tc.reason);
    });
  }

  test('a long annotation is quoted cut short', () => {
    const id = nodePodUid(pod({ 'kubernetes.io/config.mirror': 'x'.repeat(10_000) }));
    expect(!id.ok && id.reason.length < 300).toBe(true);
  });

  test('isStaticPodUid: the two forms only', () => {
    expect([HASH, '0a1b2c3d-0000-4000-8000-00000000000a', 'abc', '', HASH.toUpperCase()].map(isStaticPodUid)).toEqual([true, true, false, false, false]);
  });
});
