// Tables for what may become a path: pod UIDs and names in the API server's own forms, plain path
// segments, and the containment check on a real directory tree with symlinks pointing out of it
// (the kubelet's cgroupfs has none, but a wrong hostRoot or a hostile tree might).

import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isPodUid, podIdentityProblem, printableValue, type Pod } from '../../../src/api/pod.js';
import { nodeHostFs } from '../../../src/host/host-fs.js';
import { childPath, isPlainName, isPlainRelativePath, resolveInside } from '../../../src/host/path-safety.js';
import { PodCgroupLocator } from '../../../src/host/pod-cgroup-locator.js';

const UID = '0d5f5c6e-1b2a-4c3d-9e8f-7a6b5c4d3e2f';

describe('isPodUid: only the API server\'s UUID form and a static pod\'s hash', () => {
  test.each([
    ['an API UID', UID, true],
    ['an API UID in capitals (the API server writes lowercase)', UID.toUpperCase(), false],
    ['a static pod hash (32 hex digits)', '6d4f1e0a9b8c7d6e5f4a3b2c1d0e9f8a', true],
    ['empty', '', false],
    ['traversal', `${UID}/../../..`, false],
    ['bare dot-dot', '..', false],
    ['absolute', '/sys/fs/cgroup', false],
    ['trailing slash', `${UID}/`, false],
    ['too long', `${UID}0`, false],
    ['too short', UID.slice(1), false],
    ['systemd escape', UID.replaceAll('-', '_'), false],
    ['unicode dashes', UID.replaceAll('-', '\u2010'), false],
    ['fullwidth digits', UID.replace(/[0-9]/g, (d) => String.fromCodePoint(0xff10 + Number(d))), false],
    ['NUL', `${UID}\0`, false],
    ['newline', `${UID}\n`, false],
    ['33 hex digits', 'a'.repeat(33), false],
    ['not a string', 42, false],
    ['undefined', undefined, false],
  ])('%s', (_name, uid, expected) => {
    expect(isPodUid(uid)).toBe(expected);
  });
});

describe('podIdentityProblem: the UID, name and namespace that reach host paths', () => {
  const pod = (metadata: Pod['metadata']): Pod => ({ metadata, spec: { containers: [] } });
  test.each([
    ['a valid pod', { uid: UID, name: 'web-0', namespace: 'default' }, null],
    ['a dotted name', { uid: UID, name: 'web.v2-1', namespace: 'kube-system' }, null],
    ['a bad UID', { uid: '../x', name: 'web', namespace: 'default' }, 'UID'],
    ['a name with a slash', { uid: UID, name: 'web/../..', namespace: 'default' }, 'pod name'],
    ['a name with dot-dot', { uid: UID, name: '..', namespace: 'default' }, 'pod name'],
    ['a name with capitals', { uid: UID, name: 'Web', namespace: 'default' }, 'pod name'],
    ['a name too long', { uid: UID, name: 'a'.repeat(254), namespace: 'default' }, 'pod name'],
    ['a namespace with a dot', { uid: UID, name: 'web', namespace: 'a.b' }, 'namespace'],
    ['a namespace with an underscore', { uid: UID, name: 'web', namespace: 'a_b' }, 'namespace'],
    ['no namespace', { uid: UID, name: 'web' }, 'namespace'],
  ])('%s', (_name, metadata, expected) => {
    const problem = podIdentityProblem(pod(metadata));
    if (expected === null) expect(problem).toBeNull();
    else expect(problem).toContain(expected);
  });

  test('a printed value is bounded and escaped', () => {
    expect(printableValue(`a\nb${'x'.repeat(200)}`)).toBe(`${JSON.stringify(`a\nb${'x'.repeat(77)}...`)} (203 characters)`);
  });
});

describe('plain path segments', () => {
  test.each([
    ['kubepods', true],
    ['pod' + UID, true],
    ['', false],
    ['.', false],
    ['..', false],
    ['a/b', false],
    ['a\0b', false],
    ['x'.repeat(255), true],
    ['x'.repeat(256), false],
    ['é'.repeat(128), false], // 256 bytes
  ])('%j', (segment, expected) => {
    expect(isPlainName(segment)).toBe(expected);
    expect(childPath('/p', segment)).toBe(expected ? `/p/${segment}` : null);
  });

  test.each([
    ['', true],
    ['kubepods', true],
    ['kubepods.slice/kubepods-burstable.slice', true],
    ['kubepods/../..', false],
    ['/kubepods', false],
    ['kubepods/', false],
    ['a//b', false],
  ])('relative path %j', (path, expected) => {
    expect(isPlainRelativePath(path)).toBe(expected);
  });
});

describe('resolveInside on a real tree with symlinks out', () => {
  let root = '';
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'kea-path-safety-'));
    mkdirSync(join(root, 'node/kubepods/burstable'), { recursive: true });
    mkdirSync(join(root, 'node/kubepods/burstable', `pod${UID}`));
    mkdirSync(join(root, 'elsewhere'));
    // A pod directory that is a symlink to the node, and one to the filesystem's root.
    symlinkSync(join(root, 'node'), join(root, 'node/kubepods/burstable/pod11111111-2222-4333-8444-555555555555'));
    symlinkSync('/', join(root, 'node/kubepods/burstable/pod11111111-2222-4333-8444-666666666666'));
    symlinkSync(join(root, 'elsewhere'), join(root, 'node/kubepods-link'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test.each([
    ['a real child', `node/kubepods/burstable/pod${UID}`, true],
    ['the parent itself', 'node/kubepods', false],
    ['a symlink to the node', 'node/kubepods/burstable/pod11111111-2222-4333-8444-555555555555', false],
    ['a symlink to /', 'node/kubepods/burstable/pod11111111-2222-4333-8444-666666666666', false],
    ['dot-dot back out', `node/kubepods/burstable/pod${UID}/../../..`, false],
    ['a sibling of the parent', 'elsewhere', false],
  ])('%s', (_name, relative, expected) => {
    const result = resolveInside(nodeHostFs, join(root, 'node/kubepods'), join(root, relative));
    expect(result.ok).toBe(expected);
  });

  test('a missing path is not found, not refused', () => {
    const result = resolveInside(nodeHostFs, join(root, 'node/kubepods'), join(root, 'node/kubepods/none'));
    expect(result).toEqual({ ok: false, notFound: true, reason: expect.stringContaining('ENOENT') });
  });

  test('the locator takes neither a symlinked pod directory nor a pod cgroup root outside the node', () => {
    const locator = new PodCgroupLocator(nodeHostFs, join(root, 'node'), 'cgroupfs', 'kubepods');
    expect(locator.locate(UID, 'Burstable')).toBe(join(root, `node/kubepods/burstable/pod${UID}`));
    const out = locator.locateOrWhy('11111111-2222-4333-8444-666666666666', 'Burstable');
    expect(out.ok).toBe(false);
    expect(out.ok ? '' : out.reason).toContain('outside');
    expect(locator.locateOrWhy(`${UID}/..`, 'Burstable')).toEqual({ ok: false, notFound: false, reason: expect.stringContaining("not in the API server's form") });
    const linked = new PodCgroupLocator(nodeHostFs, join(root, 'node'), 'cgroupfs', 'kubepods-link');
    expect(linked.podCgroupRootDir()).toEqual({ ok: false, notFound: false, reason: expect.stringContaining('outside') });
  });
});
