// The kernel log's OOM killer lines, as this machine's kernel (6.18) printed them for real kills in
// a sandbox cgroup, and the ways a record can be malformed; the oom_kill counters of both cgroup
// versions; and where a cgroup sits in the kubelet's pod tree for either driver.

import { parseKernelLogRecord, parseOomKillCount, parseOomLogLine } from '../../../src/host/kernel-log.js';
import { placeInPodTree } from '../../../src/host/pod-cgroup-names.js';

const MEMCG_KILL =
  'oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/kea-test-1651-oom/pod/ctr,task_memcg=/kea-test-1651-oom/pod/ctr,task=node,pid=1662,uid=0';
const MEMCG_KILLED =
  'Memory cgroup out of memory: Killed process 1662 (node) total-vm:1057228kB, anon-rss:64768kB, file-rss:33732kB, shmem-rss:0kB, UID:0 pgtables:580kB oom_score_adj:0';

describe('kernel log records', () => {
  test('a /dev/kmsg record: sequence, timestamp (µs since boot) and the message up to its continuation lines', () => {
    expect(parseKernelLogRecord(`6,4711,12022001152,-;${MEMCG_KILLED}\n SUBSYSTEM=memory\n`)).toEqual({ sequence: 4711, timestampUs: 12022001152, message: MEMCG_KILLED });
    expect(parseKernelLogRecord('no header at all')).toBeNull();
    expect(parseKernelLogRecord('6,x,1,-;text')).toBeNull();
    expect(parseKernelLogRecord('6,1,-5,-;text')).toBeNull();
  });

  test('the oom-kill line of a memcg OOM names both cgroups, the process and its pid', () => {
    expect(parseOomLogLine(MEMCG_KILL)).toEqual({
      kind: 'oom-kill',
      constraint: 'CONSTRAINT_MEMCG',
      oomCgroup: '/kea-test-1651-oom/pod/ctr',
      taskCgroup: '/kea-test-1651-oom/pod/ctr',
      process: 'node',
      pid: 1662,
    });
  });

  test('a node-wide OOM says global_oom where a memcg OOM names its cgroup', () => {
    const line = 'oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/kubepods/besteffort/pod1/abc,task=stress,pid=812,uid=0';
    expect(parseOomLogLine(line)).toMatchObject({ constraint: 'CONSTRAINT_NONE', oomCgroup: null, taskCgroup: '/kubepods/besteffort/pod1/abc', process: 'stress', pid: 812 });
  });

  test('the Killed process line: memcg or node-wide, with anon + file + shmem resident memory', () => {
    expect(parseOomLogLine(MEMCG_KILLED)).toEqual({ kind: 'killed-process', scope: 'memcg', pid: 1662, process: 'node', rssBytes: (64768n + 33732n) * 1024n, oomScoreAdj: 0 });
    const nodeWide = 'Out of memory: Killed process 812 (stress) total-vm:2000kB, anon-rss:1000kB, file-rss:0kB, shmem-rss:24kB, UID:1000 pgtables:12kB oom_score_adj:1000';
    expect(parseOomLogLine(nodeWide)).toMatchObject({ scope: 'node', pid: 812, rssBytes: 1024n * 1024n, oomScoreAdj: 1000 });
  });

  test('a process name with commas, spaces and escaped bytes is taken whole', () => {
    const line = 'oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/a,task_memcg=/a/b,task=my, app\\x09x,pid=7,uid=0';
    expect(parseOomLogLine(line)).toMatchObject({ process: 'my, app\tx', pid: 7 });
  });

  test.each([
    ['another message', 'node invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0'],
    ['an unknown constraint', MEMCG_KILL.replace('CONSTRAINT_MEMCG', 'CONSTRAINT_OTHER')],
    ['a pid out of range', MEMCG_KILL.replace('pid=1662', 'pid=99999999')],
    ['a cgroup path climbing out', MEMCG_KILL.replace('oom_memcg=/kea-test-1651-oom/pod/ctr', 'oom_memcg=/../etc')],
    ['a process name too long to be a comm', MEMCG_KILL.replace('task=node', `task=${'x'.repeat(65)}`)],
    ['a Killed process line without its figures', 'Memory cgroup out of memory: Killed process 1662 (node)'],
  ])('ignored, never guessed at: %s', (_name, message) => {
    expect(parseOomLogLine(message)).toBeNull();
  });

  test('the oom_kill counter of v1 memory.oom_control and v2 memory.events', () => {
    expect(parseOomKillCount('oom_kill_disable 0\nunder_oom 0\noom_kill 3\n')).toBe(3n);
    expect(parseOomKillCount('low 0\nhigh 0\nmax 12\noom 2\noom_kill 2\noom_group_kill 0\n')).toBe(2n);
    // Before Linux 4.13, v1 has no counter.
    expect(parseOomKillCount('oom_kill_disable 0\nunder_oom 0\n')).toBeNull();
  });
});

describe('placeInPodTree', () => {
  const uid = '5f0c8a2e-4a61-4c1e-9d55-3f2b8e6b7c10';
  test.each([
    ['cgroupfs: a container of a burstable pod', 'kubepods', `/kubepods/burstable/pod${uid}/abc`, { level: 'container', podUid: uid, containerCgroup: 'abc' }],
    ['cgroupfs: a guaranteed pod, directly under kubepods', 'kubepods', `/kubepods/pod${uid}`, { level: 'pod', podUid: uid, containerCgroup: null }],
    ['cgroupfs: a QoS tier', 'kubepods', '/kubepods/besteffort', { level: 'qos', podUid: null, containerCgroup: null }],
    ['the pods\' root', 'kubepods', '/kubepods/', { level: 'pods', podUid: null, containerCgroup: null }],
    [
      'systemd: a container scope of a burstable pod',
      'kubepods.slice',
      `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${uid.replaceAll('-', '_')}.slice/cri-containerd-abc.scope`,
      { level: 'container', podUid: uid, containerCgroup: 'cri-containerd-abc.scope' },
    ],
    ['under a node cgroup', 'node-a/kubepods', `/node-a/kubepods/pod${uid}/abc`, { level: 'container', podUid: uid, containerCgroup: 'abc' }],
  ])('%s', (_name, root, cgroup, place) => {
    expect(placeInPodTree(root, cgroup)).toEqual(place);
  });

  test.each([
    ['outside the tree', 'kubepods', '/system.slice/containerd.service'],
    ['a sibling with the same prefix', 'kubepods', '/kubepods-other/pod1/abc'],
    ['not a pod directory', 'kubepods', '/kubepods/burstable/notapod/abc'],
  ])('null %s', (_name, root, cgroup) => {
    expect(placeInPodTree(root, cgroup)).toBeNull();
  });
});
