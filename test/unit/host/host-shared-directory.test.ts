// Whether the node lock's directory is the host's: decided on a /proc laid out by the test (the
// mount namespace links, and pid 1's root as a link to a directory tree), so every verdict is
// reached for real through stat and readlink.

import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hostSharing } from '../../../src/host/host-shared-directory.js';

let root: string;
let proc: string;
let lockDir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kea-sharing-'));
  proc = join(root, 'proc');
  lockDir = join(root, 'run', 'kea');
  mkdirSync(lockDir, { recursive: true });
  mkdirSync(join(proc, 'self', 'ns'), { recursive: true });
  mkdirSync(join(proc, '1', 'ns'), { recursive: true });
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function namespaces(own: string, host: string): void {
  symlinkSync(own, join(proc, 'self', 'ns', 'mnt'));
  symlinkSync(host, join(proc, '1', 'ns', 'mnt'));
}

test('in the host\'s mount namespace: shared', () => {
  namespaces('mnt:[4026531841]', 'mnt:[4026531841]');
  expect(hostSharing(lockDir, proc)).toEqual({ shared: true, how: "this process runs in the host's mount namespace" });
});

test('in a container, the host\'s directory mounted: the same file under pid 1\'s root, shared', () => {
  namespaces('mnt:[4026532999]', 'mnt:[4026531841]');
  symlinkSync('/', join(proc, '1', 'root'));
  expect(hostSharing(lockDir, proc)).toMatchObject({ shared: true });
});

test('in a container, a directory of its own: not shared, and said why', () => {
  namespaces('mnt:[4026532999]', 'mnt:[4026531841]');
  const hostRoot = join(root, 'host');
  mkdirSync(join(hostRoot, lockDir), { recursive: true });
  symlinkSync(hostRoot, join(proc, '1', 'root'));
  expect(hostSharing(lockDir, proc)).toEqual({ shared: false, reason: `${lockDir} is not the host's ${lockDir}: it is private to this container (mount it from the host as a hostPath)` });
  rmSync(join(hostRoot, lockDir), { recursive: true });
  expect(hostSharing(lockDir, proc)).toEqual({ shared: false, reason: `${lockDir} does not exist on the host: it is private to this container` });
});

test('a directory that does not exist here is not mounted from the host; without the host\'s init process it cannot be told', () => {
  namespaces('mnt:[1]', 'mnt:[1]');
  expect(hostSharing(join(root, 'missing'), proc)).toMatchObject({ shared: false, reason: expect.stringContaining('does not exist here') });
  rmSync(join(proc, '1'), { recursive: true });
  expect(hostSharing(lockDir, proc)).toMatchObject({ shared: null, reason: expect.stringContaining("the host's init process is not visible (ENOENT") });
});
