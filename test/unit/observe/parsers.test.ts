// The pure parsers of the node observer: loadavg and kernel PID limits, container IDs,
// cgroup.procs and mountinfo.

import { readFileSync } from 'node:fs';
import type { Pod } from '../../../src/api/pod.js';
import { containerIdCandidates, containerNamesById, parseContainerId } from '../../../src/api/container-id.js';
import { mountOption, parseMountInfo, writableLayerDirs } from '../../../src/observe/mountinfo.js';
import { maxPid, parseLoadavgTaskCount } from '../../../src/observe/pid-limits.js';
import { countPids } from '../../../src/observe/process-count.js';

const fixtures = new URL('../../fixtures/', import.meta.url).pathname;

describe('pid limits', () => {
  const loadavgCases = [
    { name: 'fixture', text: readFileSync(`${fixtures}cgroup-v1/cgroupfs/proc/loadavg`, 'utf8'), want: 1234n },
    { name: 'kubelet-example', text: '1.36 3.49 4.53 2/3518 3715089\n', want: 3518n },
    { name: 'above-sysinfo-16-bit-limit', text: '0 0 0 1/70000 1\n', want: 70000n },
    { name: 'too-few-fields', text: '0.1 0.2 0.3 1/100\n', want: undefined },
    { name: 'fourth-field-malformed', text: '0.1 0.2 0.3 100 5\n', want: undefined },
  ];
  for (const tc of loadavgCases) test(`loadavg ${tc.name}`, () => expect(parseLoadavgTaskCount(tc.text)).toBe(tc.want));

  const maxCases = [
    { name: 'threads-max-smaller', limits: [4194304n, 63304n], want: 63304n },
    { name: 'pid-max-smaller', limits: [32768n, 192731n], want: 32768n },
    { name: 'one-unreadable', limits: [undefined, 500n], want: 500n },
    { name: 'none-readable', limits: [undefined, undefined], want: undefined },
  ];
  for (const tc of maxCases) test(`maxpid ${tc.name}`, () => expect(maxPid(tc.limits)).toBe(tc.want));
});

describe('container IDs', () => {
  const idCases = [
    { name: 'containerd', raw: 'containerd://abc123', want: 'abc123' },
    { name: 'cri-o', raw: 'cri-o://def', want: 'def' },
    { name: 'docker', raw: 'docker://0f0f', want: '0f0f' },
    { name: 'bare', raw: 'abc', want: 'abc' },
    { name: 'empty-after-scheme', raw: 'containerd://', want: undefined },
    { name: 'missing', raw: undefined, want: undefined },
  ];
  for (const tc of idCases) test(`parseContainerId ${tc.name}`, () => expect(parseContainerId(tc.raw)).toBe(tc.want));

  const cgroupCases = [
    { name: 'cgroupfs-bare-id', dir: 'abc', want: 'abc' },
    { name: 'systemd-containerd', dir: 'cri-containerd-abc.scope', want: 'abc' },
    { name: 'systemd-crio', dir: 'crio-abc.scope', want: 'abc' },
    { name: 'cgroupfs-crio', dir: 'crio-abc', want: 'abc' },
    { name: 'systemd-docker', dir: 'docker-abc.scope', want: 'abc' },
  ];
  for (const tc of cgroupCases) test(`cgroup name ${tc.name}`, () => expect(containerIdCandidates(tc.dir)).toContain(tc.want));

  test('the CRI-O monitor scope does not stand for the container', () => {
    expect(containerIdCandidates('crio-conmon-abc.scope')).not.toContain('abc');
  });

  test('names from container and init container statuses', () => {
    const pod: Pod = {
      metadata: { name: 'p', uid: 'u' },
      spec: { containers: [{ name: 'app' }], initContainers: [{ name: 'init' }] },
      status: {
        containerStatuses: [{ name: 'app', containerID: 'containerd://111' }, { name: 'waiting' }],
        initContainerStatuses: [{ name: 'init', containerID: 'containerd://222' }],
      },
    };
    expect(containerNamesById(pod)).toEqual(new Map([['222', 'init'], ['111', 'app']]));
  });
});

describe('cgroup.procs', () => {
  const cases = [
    { name: 'empty', text: '', want: 0 },
    { name: 'two-lines', text: '1\n2\n', want: 2 },
    { name: 'no-trailing-newline', text: '1\n2', want: 2 },
    { name: 'blank-lines-ignored', text: '\n1\n\n', want: 1 },
  ];
  for (const tc of cases) test(tc.name, () => expect(countPids(tc.text)).toBe(tc.want));
});

describe('mountinfo', () => {
  const id = 'a'.repeat(63) + '1';
  const text = readFileSync(`${fixtures}cgroup-v1/cgroupfs/proc/1/mountinfo`, 'utf8');

  test('parses mount point, type and super options', () => {
    const entries = parseMountInfo(text);
    expect(entries).toHaveLength(2);
    expect(entries[0]).toEqual({ mountPoint: '/', fsType: 'ext4', source: '/dev/vda1', superOptions: 'rw' });
  });

  test('unescapes octal escapes and keeps optional fields out', () => {
    const [entry] = parseMountInfo('36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue\n');
    expect(entry?.mountPoint).toBe('/mnt two');
    expect(entry?.fsType).toBe('ext3');
    expect(mountOption(entry?.superOptions ?? '', 'errors')).toBe('continue');
  });

  test('finds containerd writable layers of known containers only', () => {
    const entries = parseMountInfo(text);
    expect(writableLayerDirs(entries, new Set([id]))).toEqual(new Map([[id, '/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/7/fs']]));
    expect(writableLayerDirs(entries, new Set(['other'])).size).toBe(0);
  });

  test('malformed lines skipped', () => expect(parseMountInfo('garbage\n\n1 2 3\n')).toEqual([]));
});
