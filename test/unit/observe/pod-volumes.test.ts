// Whether an evicted pod's volumes are still on the kubelet's root, read from a real directory tree
// laid out as the kubelet lays it out (`pods/<uid>/volumes/<plugin>/<name>`).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeHostFs } from '../../../src/host/host-fs.js';
import { podVolumesOnDisk } from '../../../src/observe/pod-volumes.js';

const UID = 'f1110000-0000-4000-8000-000000000001';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kea-pod-volumes-'));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe('podVolumesOnDisk', () => {
  test.each([
    { name: 'an emptyDir with data', layout: ['volumes/kubernetes.io~empty-dir/scratch/data'], expected: true },
    { name: 'an emptyDir emptied but not removed', layout: ['volumes/kubernetes.io~empty-dir/scratch/'], expected: true },
    { name: 'the plugin directory left after TearDown removed the volume', layout: ['volumes/kubernetes.io~empty-dir/'], expected: false },
    { name: 'a volumes directory without plugins', layout: ['volumes/'], expected: false },
    { name: 'only the etc-hosts file and plugin metadata', layout: ['etc-hosts', 'plugins/kubernetes.io~empty-dir/scratch/ready'], expected: false },
    { name: 'no directory for the pod at all', layout: [], expected: false },
  ])('$name: $expected', ({ layout, expected }) => {
    for (const entry of layout) {
      const path = join(root, 'pods', UID, entry);
      if (entry.endsWith('/')) mkdirSync(path, { recursive: true });
      else {
        mkdirSync(join(path, '..'), { recursive: true });
        writeFileSync(path, 'x');
      }
    }
    expect(podVolumesOnDisk(nodeHostFs, root, UID)).toBe(expected);
  });

  test('a UID the API server could not have issued is never made into a path', () => {
    mkdirSync(join(root, 'pods', '..', 'volumes', 'kubernetes.io~empty-dir', 'x'), { recursive: true });
    expect(podVolumesOnDisk(nodeHostFs, root, '..')).toBeUndefined();
  });

  test('a volumes directory that cannot be read (EACCES) cannot be told', () => {
    const volumes = join(root, 'pods', UID, 'volumes');
    mkdirSync(join(volumes, 'kubernetes.io~empty-dir', 'scratch'), { recursive: true });
    const fs = { ...nodeHostFs, subdirectories: (path: string): string[] => {
      if (path === volumes) throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
      return nodeHostFs.subdirectories(path);
    } };
    expect(podVolumesOnDisk(fs, root, UID)).toBeUndefined();
  });
});
