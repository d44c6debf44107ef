// nodefs, imagefs and containerfs against real filesystems: small tmpfs mounts with known size
// and inode limits, so capacity and inodes can be asserted exactly, the filesystem layout comes
// from real device numbers, and the disk-usage walk is seen to stay on its own device.

import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../fakes/fake-clock.js';
import { observeSettings } from '../fixtures/settings.js';
import { silentLogger } from '../../src/api/logger.js';
import type { Pod } from '../../src/api/pod.js';
import { createCgroupObserver } from '../../src/observe/cgroup-observer.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs-mount.js';

const MiB = 1024 * 1024;

function rootUnavailable(): string | null {
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'not running as root (mount needs it)';
  return null;
}

const unavailable = rootUnavailable();
let hostRoot = '';
const mounted: string[] = [];

function mountFixture(relative: string, sizeMiB: number, inodes: number): string {
  const dir = join(hostRoot, relative);
  mkdirSync(dir, { recursive: true });
  mountTmpfs(dir, sizeMiB, inodes);
  mounted.push(dir);
  return dir;
}

// df as an independent oracle: bytes from statfs the way coreutils reads them.
function df(dir: string): { sizeBytes: number; availBytes: number; usedBytes: number; inodes: number; inodesFree: number } {
  const line = execFileSync('df', ['-B1', '--output=size,avail,used,itotal,iavail', dir], { encoding: 'utf8' }).trim().split('\n')[1] as string;
  const [sizeBytes, availBytes, usedBytes, inodes, inodesFree] = line.trim().split(/\s+/).map(Number) as [number, number, number, number, number];
  return { sizeBytes, availBytes, usedBytes, inodes, inodesFree };
}

beforeAll(() => {
  if (unavailable !== null) return;
  hostRoot = mkdtempSync(join(tmpdir(), 'kea-statfs-'));
  try {
    mountFixture('var/lib/kubelet', 16, 1000);
    mountFixture('var/lib/containerd', 32, 2000);
    mountFixture('var/lib/containers', 8, 500);
  } catch (error) {
    cleanup();
    throw error;
  }
});

function cleanup(): void {
  // Innermost mounts first (a test may mount inside another mount).
  for (const dir of mounted.splice(0).reverse()) unmountTmpfs(dir);
  if (hostRoot !== '') rmSync(hostRoot, { recursive: true, force: true });
}

afterAll(cleanup);

function skipped(): boolean {
  if (unavailable === null) return false;
  console.log(`skipped: ${unavailable}`);
  return true;
}

function observer(containerFsPath?: string, imageFsPath = '/var/lib/containerd') {
  return createCgroupObserver(observeSettings({ hostRoot, imageFsPath, ...(containerFsPath === undefined ? {} : { containerFsPath }) }), { clock: new FakeClock(), logger: silentLogger, processCountIntervalMs: 0 });
}

test('an empty tmpfs reports its exact size and inode limit (root, tmpfs)', async () => {
  if (skipped()) return;
  const { summary } = await observer().observe([]);
  // tmpfs has 4 KiB blocks and reserves nothing: available = capacity; its root directory uses one inode.
  expect(summary.node.fs).toMatchObject({ capacityBytes: 16 * MiB, availableBytes: 16 * MiB, usedBytes: 0, inodes: 1000, inodesFree: 999, inodesUsed: 1 });
  expect(summary.node.runtime?.imageFs).toMatchObject({ capacityBytes: 32 * MiB, inodes: 2000 });
  expect(summary.node.runtime?.containerFs).toEqual(summary.node.runtime?.imageFs);
});

test('usage shows up byte- and inode-exact, and agrees with df (root, tmpfs)', async () => {
  if (skipped()) return;
  const kubelet = join(hostRoot, 'var/lib/kubelet');
  writeFileSync(join(kubelet, 'one-mebibyte'), Buffer.alloc(MiB, 1));
  mkdirSync(join(kubelet, 'a-dir'));
  try {
    const { summary } = await observer().observe([]);
    expect(summary.node.fs).toMatchObject({ capacityBytes: 16 * MiB, availableBytes: 15 * MiB, usedBytes: MiB, inodesFree: 997, inodesUsed: 3 });
    const oracle = df(kubelet);
    expect(summary.node.fs).toMatchObject({ capacityBytes: oracle.sizeBytes, availableBytes: oracle.availBytes, usedBytes: oracle.usedBytes, inodes: oracle.inodes, inodesFree: oracle.inodesFree });
  } finally {
    rmSync(join(kubelet, 'one-mebibyte'));
    rmSync(join(kubelet, 'a-dir'), { recursive: true });
  }
});

const layoutCases = [
  { name: 'imagefs on its own device, containerfs with it', imageFs: '/var/lib/containerd', containerFs: undefined, want: [true, false] },
  { name: 'imagefs and containerfs on separate devices', imageFs: '/var/lib/containerd', containerFs: '/var/lib/containers', want: [true, true] },
  { name: 'imagefs inside the kubelet filesystem', imageFs: '/var/lib/kubelet/images', containerFs: undefined, want: [false, false] },
];
for (const tc of layoutCases) {
  test(`layout from real devices: ${tc.name} (root, tmpfs)`, async () => {
    if (skipped()) return;
    mkdirSync(join(hostRoot, 'var/lib/kubelet/images'), { recursive: true });
    const { dedicatedImageFs, splitContainerFs } = await observer(tc.containerFs, tc.imageFs).observe([]);
    expect([dedicatedImageFs, splitContainerFs]).toEqual(tc.want);
  });
}

test('the disk-usage walk does not cross into another filesystem mounted inside a volume (root, tmpfs)', async () => {
  if (skipped()) return;
  const uid = '99999999-0000-4000-8000-000000000001';
  const volume = join(hostRoot, `var/lib/kubelet/pods/${uid}/volumes/kubernetes.io~empty-dir/cache`);
  mkdirSync(volume, { recursive: true });
  writeFileSync(join(volume, 'local'), Buffer.alloc(64 * 1024, 1));
  const inner = mountFixture(`var/lib/kubelet/pods/${uid}/volumes/kubernetes.io~empty-dir/cache/mnt`, 4, 100);
  writeFileSync(join(inner, 'elsewhere'), Buffer.alloc(2 * MiB, 1));
  const pod: Pod = { metadata: { name: 'p', namespace: 'n', uid }, spec: { containers: [], volumes: [{ name: 'cache', emptyDir: {} }] } };
  const obs = observer();
  await obs.refreshDiskUsage([pod]);
  const { summary } = await obs.observe([pod]);
  const cache = summary.pods?.[0]?.volume?.find((v) => v.name === 'cache');
  // The volume directory (no blocks on tmpfs) and `local` (64 KiB); the mount point and what is
  // under it are on another device.
  expect(cache).toMatchObject({ usedBytes: 64 * 1024, inodesUsed: 2 });
});
