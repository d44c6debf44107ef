// The kernel-file parsers every host adapter shares: memory.stat and the working set, the memory
// limit files and their "unlimited" sentinels, /proc/meminfo, and where the kubelet puts a pod's
// cgroup for each driver.

import { readFileSync } from 'node:fs';
import { machineMemoryUsage, memTotalBytes, parseMeminfo } from '../../../src/host/meminfo.js';
import { isMemoryUnlimited, parseCounter, parseCounterNumber, parseMemoryLimit } from '../../../src/host/memory-limit.js';
import { inactiveFileKey, memoryStatValue, parseMemoryStat, workingSetBytes } from '../../../src/host/memory-stat.js';
import { driverForPodCgroupRoot, escapeSystemdUid, podCgroupPath, podCgroupRootCandidates, podCgroupRootForDriver, qosSearchOrder } from '../../../src/host/pod-cgroup-names.js';

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

  test.each([
    ['123\n', 123],
    ['0\n', 0],
    [' 987654321012345 ', 987654321012345],
    ['18446744073709551615\n', Number(18446744073709551615n)],
    ['', undefined],
    ['\n', undefined],
    ['-1', undefined],
    ['1e3', undefined],
    ['0x10', undefined],
    ['12 34', undefined],
    ['1234567890123456789a', undefined],
  ])('counters as numbers: %j is %p, as parseCounter reads it', (text, expected) => {
    expect(parseCounterNumber(text)).toBe(expected);
    const counter = parseCounter(text);
    expect(counter === undefined ? undefined : Number(counter)).toBe(expected);
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
  test('the machine as one cgroup: MemTotal - MemFree, and Inactive(file)', () => {
    expect(machineMemoryUsage('MemTotal: 10 kB\nMemFree: 4 kB\nInactive(file): 2 kB\n')).toEqual({ usageBytes: 6n * 1024n, inactiveFileBytes: 2n * 1024n });
    expect(machineMemoryUsage('MemTotal: 1 kB\nMemFree: 1 kB\n')).toBeUndefined();
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

describe('podCgroupRootForDriver', () => {
  const cases: { name: string; root: string; driver: 'cgroupfs' | 'systemd'; expected: string }[] = [
    { name: 'cgroupfs-unchanged', root: 'kubepods', driver: 'cgroupfs', expected: 'kubepods' },
    { name: 'systemd-single', root: 'kubepods', driver: 'systemd', expected: 'kubepods.slice' },
    { name: 'systemd-leading-slash', root: '/kubepods', driver: 'systemd', expected: 'kubepods.slice' },
    { name: 'systemd-nested', root: 'a/kubepods', driver: 'systemd', expected: 'a.slice/a-kubepods.slice' },
    { name: 'systemd-dash-escaped', root: 'my-pods', driver: 'systemd', expected: 'my_pods.slice' },
    { name: 'systemd-already-a-slice', root: 'kubepods.slice', driver: 'systemd', expected: 'kubepods.slice' },
  ];
  for (const tc of cases) {
    test(tc.name, () => {
      expect(podCgroupRootForDriver(tc.root, tc.driver)).toBe(tc.expected);
    });
  }
});

describe('podCgroupRootCandidates: where to look for the pods\' cgroups', () => {
  const cases: { name: string; root: string; driver: 'auto' | 'cgroupfs' | 'systemd'; expected: { relativePath: string; driver: string }[] }[] = [
    { name: 'cgroupfs-one-place', root: 'kubepods', driver: 'cgroupfs', expected: [{ relativePath: 'kubepods', driver: 'cgroupfs' }] },
    { name: 'systemd-one-place-in-slice-form', root: 'kubepods', driver: 'systemd', expected: [{ relativePath: 'kubepods.slice', driver: 'systemd' }] },
    {
      name: 'auto-systemd-first-then-cgroupfs',
      root: '/a/kubepods/',
      driver: 'auto',
      expected: [
        { relativePath: 'a.slice/a-kubepods.slice', driver: 'systemd' },
        { relativePath: 'a/kubepods', driver: 'cgroupfs' },
      ],
    },
    { name: 'auto-with-a-slice-is-systemd', root: 'kubepods.slice', driver: 'auto', expected: [{ relativePath: 'kubepods.slice', driver: 'systemd' }] },
  ];
  for (const tc of cases) test(tc.name, () => expect(podCgroupRootCandidates(tc.root, tc.driver)).toEqual(tc.expected));
});
