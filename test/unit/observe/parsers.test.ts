// The pure parsers of the node observer: memory.stat, meminfo, loadavg and kernel PID limits, the
// "unlimited" sentinels, container IDs, systemd slice naming and mountinfo.

import { readFileSync } from 'node:fs';
import { containerIdCandidates, containerNamesById, parseContainerId } from '../../../src/observe/container-id.js';
import { isMemoryUnlimited, parseCounter, parseMemoryLimit } from '../../../src/observe/memory-limit.js';
import { inactiveFileKey, memoryStatValue, parseMemoryStat, workingSetBytes } from '../../../src/observe/memory-stat.js';
import { memTotalBytes, parseMeminfo } from '../../../src/observe/meminfo.js';
import { mountOption, parseMountInfo, writableLayerDirs } from '../../../src/observe/mountinfo.js';
import { maxPid, parseLoadavgTaskCount } from '../../../src/observe/pid-limits.js';
import { driverForPodCgroupRoot, escapeSystemdUid, podCgroupPath, qosSearchOrder } from '../../../src/observe/pod-cgroup-names.js';
import { countPids } from '../../../src/observe/process-count.js';
import type { Pod } from '../../../src/api/pod.js';

const fixtures = new URL('../../fixtures/', import.meta.url).pathname;

describe('memory.stat', () => {
  const v1Text = readFileSync(`${fixtures}cgroup-v1/cgroupfs/sys/fs/cgroup/memory/memory.stat`, 'utf8');
  const v2Text = readFileSync(`${fixtures}cgroup-v2/systemd/sys/fs/cgroup/memory.stat`, 'utf8');

  test('parses every key of a v1 file exactly', () => {
    const stat = parseMemoryStat(v1Text);
    expect(stat.get('total_inactive_file')).toBe(1000000000n);
    expect(stat.get('inactive_file')).toBe(4096n);
    expect(stat.get('hierarchical_memory_limit')).toBe(9223372036854771712n);
  });

  const keyCases = [
    { name: 'v1-uses-hierarchical-total', version: 'v1' as const, text: v1Text, want: 1000000000n },
    { name: 'v2-uses-inactive-file', version: 'v2' as const, text: v2Text, want: 600000000n },
  ];
  for (const tc of keyCases) {
    test(tc.name, () => {
      expect(memoryStatValue(tc.text, inactiveFileKey(tc.version))).toBe(tc.want);
      expect(parseMemoryStat(tc.text).get(inactiveFileKey(tc.version))).toBe(tc.want);
    });
  }

  const valueCases = [
    { name: 'first-line', text: 'inactive_file 5\nx 1\n', key: 'inactive_file', want: 5n },
    { name: 'last-line-without-newline', text: 'x 1\ninactive_file 6', key: 'inactive_file', want: 6n },
    { name: 'not-matched-inside-total-key', text: 'total_inactive_file 7\n', key: 'inactive_file', want: undefined },
    { name: 'absent', text: 'anon 1\n', key: 'file', want: undefined },
    { name: 'not-a-number', text: 'file abc\n', key: 'file', want: undefined },
    { name: 'beyond-2^53-exact', text: 'file 18446744073709551615\n', key: 'file', want: 18446744073709551615n },
  ];
  for (const tc of valueCases) test(`memoryStatValue ${tc.name}`, () => expect(memoryStatValue(tc.text, tc.key)).toBe(tc.want));

  const workingSetCases = [
    { name: 'usage-minus-inactive', usage: 1000n, inactive: 300n, want: 700n },
    { name: 'floored-at-zero', usage: 300n, inactive: 400n, want: 0n },
    { name: 'equal-is-zero', usage: 5n, inactive: 5n, want: 0n },
  ];
  for (const tc of workingSetCases) test(`working set ${tc.name}`, () => expect(workingSetBytes(tc.usage, tc.inactive)).toBe(tc.want));
});

describe('memory limits and counters', () => {
  const cases = [
    { name: 'v1-sentinel-4k-pages', text: '9223372036854771712\n', want: null },
    { name: 'v1-sentinel-64k-pages', text: '9223372036854710272\n', want: null },
    { name: 'v2-max', text: 'max\n', want: null },
    { name: 'just-above-2^62-unlimited', text: `${(1n << 62n) + 1n}\n`, want: null },
    { name: 'exactly-2^62-is-a-limit', text: `${1n << 62n}\n`, want: 1n << 62n },
    { name: 'real-limit', text: '7000000000\n', want: 7000000000n },
    { name: 'garbage', text: 'unlimited\n', want: undefined },
  ];
  for (const tc of cases) test(tc.name, () => expect(parseMemoryLimit(tc.text)).toBe(tc.want));

  test('isMemoryUnlimited is strictly above 2^62', () => {
    expect(isMemoryUnlimited(1n << 62n)).toBe(false);
    expect(isMemoryUnlimited((1n << 62n) + 1n)).toBe(true);
  });

  test('counters', () => {
    expect(parseCounter('123\n')).toBe(123n);
    expect(parseCounter('')).toBeUndefined();
    expect(parseCounter('-1')).toBeUndefined();
  });
});

describe('meminfo', () => {
  test('MemTotal in bytes from the fixture', () => {
    expect(memTotalBytes(readFileSync(`${fixtures}cgroup-v1/cgroupfs/proc/meminfo`, 'utf8'))).toBe(8048576n * 1024n);
  });
  test('unitless fields kept as counts', () => {
    expect(parseMeminfo('HugePages_Total:      12\nMemFree: 1 kB\n')).toEqual(new Map([['HugePages_Total', 12n], ['MemFree', 1024n]]));
  });
  test('no MemTotal', () => expect(memTotalBytes('MemFree: 1 kB\n')).toBeUndefined());
});

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

describe('pod cgroup naming', () => {
  const uid = '0a1b2c3d-0000-4000-8000-00000000000a';
  test('systemd escapes dashes in the UID', () => expect(escapeSystemdUid(uid)).toBe('0a1b2c3d_0000_4000_8000_00000000000a'));

  const cases = [
    { name: 'cgroupfs-burstable', root: 'kubepods', driver: 'cgroupfs' as const, qos: 'Burstable' as const, want: `kubepods/burstable/pod${uid}` },
    { name: 'cgroupfs-besteffort', root: 'kubepods', driver: 'cgroupfs' as const, qos: 'BestEffort' as const, want: `kubepods/besteffort/pod${uid}` },
    { name: 'cgroupfs-guaranteed-directly-under-root', root: '/kubepods/', driver: 'cgroupfs' as const, qos: 'Guaranteed' as const, want: `kubepods/pod${uid}` },
    {
      name: 'systemd-burstable',
      root: 'kubepods.slice',
      driver: 'systemd' as const,
      qos: 'Burstable' as const,
      want: 'kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0a1b2c3d_0000_4000_8000_00000000000a.slice',
    },
    {
      name: 'systemd-besteffort',
      root: 'kubepods.slice',
      driver: 'systemd' as const,
      qos: 'BestEffort' as const,
      want: 'kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod0a1b2c3d_0000_4000_8000_00000000000a.slice',
    },
    { name: 'systemd-guaranteed', root: 'kubepods.slice', driver: 'systemd' as const, qos: 'Guaranteed' as const, want: 'kubepods.slice/kubepods-pod0a1b2c3d_0000_4000_8000_00000000000a.slice' },
    {
      name: 'systemd-custom-cgroup-root',
      root: 'custom.slice/custom-kubepods.slice',
      driver: 'systemd' as const,
      qos: 'Burstable' as const,
      want: 'custom.slice/custom-kubepods.slice/custom-kubepods-burstable.slice/custom-kubepods-burstable-pod0a1b2c3d_0000_4000_8000_00000000000a.slice',
    },
  ];
  for (const tc of cases) test(tc.name, () => expect(podCgroupPath(tc.root, tc.driver, tc.qos, uid)).toBe(tc.want));

  test('driver implied by the root', () => {
    expect(driverForPodCgroupRoot('kubepods.slice')).toBe('systemd');
    expect(driverForPodCgroupRoot('kea-test-1/kubepods')).toBe('cgroupfs');
  });

  test('search order starts with the pod QoS class', () => {
    expect(qosSearchOrder('Guaranteed')).toEqual(['Guaranteed', 'Burstable', 'BestEffort']);
    expect(qosSearchOrder(undefined)).toEqual(['Burstable', 'BestEffort', 'Guaranteed']);
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
