// Tables for what /proc/<pid> says: the memory hierarchy's line of /proc/<pid>/cgroup on v1 and v2,
// a path shown relative to a private cgroup namespace placed in the hierarchy, containment, and the
// start time from a stat line whose command name holds spaces and parentheses.

import { hierarchyPath, isWithinCgroup, memoryCgroupOf, processStartTicks } from '../../../src/host/proc-pid.js';

describe('/proc/<pid>/cgroup', () => {
  test.each([
    ['v1: the memory line', '12:pids:/a\n4:memory:/kubepods/pod1/c\n0::/\n', 'v1', '/kubepods/pod1/c'],
    ['v1: memory shares a line', '5:cpu,memory:/x\n', 'v1', '/x'],
    ['v1: memsw is not memory', '5:memsw:/x\n', 'v1', undefined],
    ['v2: the 0:: line', '0::/kubepods.slice/a.scope\n', 'v2', '/kubepods.slice/a.scope'],
    ['v2: a path with a colon', '0::/a:b\n', 'v2', '/a:b'],
    ['v2 on a hybrid host: the named v1 lines are not it', '1:name=systemd:/x\n0::/y\n', 'v2', '/y'],
    ['nothing', '', 'v2', undefined],
  ] as const)('%s', (_name, text, version, expected) => {
    expect(memoryCgroupOf(text, version)).toBe(expected);
  });

  test.each([
    ['the host namespace', '/', '/kubepods/pod1', '/kubepods/pod1'],
    ['a private namespace', '/kubepods/besteffort/podA/agent', '/../../../burstable/podB/c', '/kubepods/burstable/podB/c'],
    ['the namespace root itself', '/kubepods/podA/agent', '/', '/kubepods/podA/agent'],
    ['above the hierarchy root', '/a', '/../..', null],
    ['dots and empty parts', '/', '/a/./b//c', '/a/b/c'],
  ])('%s', (_name, root, shown, expected) => {
    expect(hierarchyPath(root, shown)).toBe(expected);
  });

  test.each([
    ['/kubepods/pod1/c', '/kubepods/pod1', true],
    ['/kubepods/pod1', '/kubepods/pod1', true],
    ['/kubepods/pod10', '/kubepods/pod1', false],
    ['/kubepods', '/kubepods/pod1', false],
    ['/anything', '', true],
  ])('%s within %s', (path, dir, expected) => {
    expect(isWithinCgroup(path, dir)).toBe(expected);
  });
});

describe('/proc/<pid>/stat start time', () => {
  test.each([
    ['a plain name', '1 (init) S 0 1 1 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 5 1000 10', 5n],
    ['spaces and parentheses in the name', '7 (a) b (c) S 1 7 7 0 -1 4194304 101 0 0 0 0 0 0 0 20 0 1 0 992028 3133440 380', 992028n],
    ['no closing parenthesis', '7 (a S 1', undefined],
    ['too few fields', '7 (a) S 1 7', undefined],
  ])('%s', (_name, text, expected) => {
    expect(processStartTicks(text)).toBe(expected);
  });
});
