// The kernel's OOM kill counters as `explain` reads them, over cgroup files in a temporary
// directory: the node cgroup's count, and every container cgroup with kills (none listed without).

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeHostFs } from '../../../src/host/host-fs.js';
import { readNodeOomKillCounts } from '../../../src/notifier/create-oom-kill-watcher.js';

const UID = '5f0c8a2e-4a61-4c1e-9d55-3f2b8e6b7c10';
const OTHER_UID = '0b1d6c3e-7a2f-4e8d-9c11-2a3b4c5d6e7f';
const ID = 'c'.repeat(64);
const QUIET_ID = 'd'.repeat(64);

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'kea-oom-counts-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

function v1Cgroup(path: string, oomKills: number): void {
  const dir = join(root, 'memory', path);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'memory.usage_in_bytes'), '0\n');
  writeFileSync(join(dir, 'memory.oom_control'), `oom_kill_disable 0\nunder_oom 0\noom_kill ${oomKills}\n`);
}

function v2Cgroup(path: string, oomKills: number): void {
  const dir = join(root, path);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'memory.events'), `low 0\nhigh 0\nmax 3\noom 1\noom_kill ${oomKills}\noom_group_kill 0\n`);
}

test('cgroup v1: the node cgroup\'s own count, and only the containers with kills', () => {
  v1Cgroup('', 1);
  v1Cgroup('kubepods', 0);
  v1Cgroup(`kubepods/burstable/pod${UID}/${ID}`, 2);
  v1Cgroup(`kubepods/burstable/pod${UID}/${QUIET_ID}`, 0);
  v1Cgroup(`kubepods/pod${OTHER_UID}/${QUIET_ID}`, 3);
  const counts = readNodeOomKillCounts({ cgroupRoot: root, nodeCgroup: '', podCgroupRoot: '/kubepods/', fs: nodeHostFs });
  expect(counts?.version).toBe('v1');
  expect(counts?.nodeKills).toBe(1n);
  const found = (counts?.containers ?? []).map((c) => [c.podUid, c.name, c.kills]);
  expect(found).toHaveLength(2);
  expect(found).toEqual(expect.arrayContaining([[OTHER_UID, QUIET_ID, 3n], [UID, ID, 2n]]));
});

test('cgroup v2: memory.events of a sandbox node cgroup and the systemd driver\'s names', () => {
  writeFileSync(join(root, 'cgroup.controllers'), 'cpu memory pids\n');
  v2Cgroup('node', 4);
  const pod = `node/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${UID.replaceAll('-', '_')}.slice`;
  v2Cgroup(pod, 4);
  v2Cgroup(`${pod}/cri-containerd-${ID}.scope`, 4);
  const counts = readNodeOomKillCounts({ cgroupRoot: root, nodeCgroup: 'node', podCgroupRoot: 'node/kubepods.slice', fs: nodeHostFs });
  expect(counts?.version).toBe('v2');
  expect(counts?.nodeKills).toBe(4n);
  expect(counts?.containers.map((c) => [c.podUid, c.name, c.kills])).toEqual([[UID, `cri-containerd-${ID}.scope`, 4n]]);
});

test('no memory hierarchy: null, not an error', () => {
  expect(readNodeOomKillCounts({ cgroupRoot: join(root, 'absent'), nodeCgroup: '', podCgroupRoot: 'kubepods', fs: nodeHostFs })).toBeNull();
});
