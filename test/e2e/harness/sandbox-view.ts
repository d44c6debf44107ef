// A pod's sandbox as the node shows it, and the small process helpers the tests that pause the API
// server use: whether the sandbox outlived a local kill of the pod's containers is read from the
// pod cgroup, the pause process and containerd's own records.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PodLike } from './objects.js';
import type { RealNode } from './real-node.js';

// The pod's sandbox as the node shows it: the pod cgroup's child the status does not list (the
// runtime names it after the sandbox ID), its pause process, and containerd's own word on both.
export interface SandboxView {
  readonly id: string;
  readonly pid: number;
  /** The pause process's start time (/proc/<pid>/stat field 22): the same process, not a reused PID. */
  readonly startTicks: string;
  /** containerd's task for the sandbox: its PID and status (`ctr tasks ls`). */
  readonly task: { readonly pid: number; readonly status: string } | undefined;
  /** Every sandbox containerd holds for the pod (`ctr containers ls`, by the CRI's labels). */
  readonly sandboxes: readonly string[];
}

export function procStartTicks(pid: number): string {
  // Field 22, counted after the command's closing parenthesis (the command may hold spaces).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? '';
}

export async function sandboxView(node: RealNode, pod: PodLike, podCgroup: string): Promise<SandboxView> {
  const containerd = node.containerd as NonNullable<RealNode['containerd']>;
  // The sandbox by containerd's own labels, not by elimination from the pod's container statuses:
  // with the API server paused those are stale, and a container the kubelet restarted meanwhile has
  // an ID they do not list (its cgroup beside the sandbox's was once taken for a second sandbox).
  const listed = await containerd.ctr(['-n', 'k8s.io', 'containers', 'ls', '-q', `labels."io.kubernetes.pod.uid"==${pod.metadata.uid ?? ''},labels."io.cri-containerd.kind"==sandbox`]);
  const sandboxes = listed.split('\n').filter((l) => l !== '');
  const children = readdirSync(podCgroup, { withFileTypes: true }).filter((e) => e.isDirectory() && sandboxes.includes(e.name));
  if (children.length !== 1) throw new Error(`the pod cgroup ${podCgroup} holds ${children.length} sandbox cgroups, not one`);
  const id = (children[0] as { name: string }).name;
  const pids = readFileSync(join(podCgroup, id, 'cgroup.procs'), 'utf8').trim().split('\n').filter((l) => l !== '').map(Number);
  if (pids.length !== 1) throw new Error(`the sandbox cgroup holds ${pids.length} processes, not one (the pause process)`);
  const pid = pids[0] as number;
  const tasks = await containerd.ctr(['-n', 'k8s.io', 'tasks', 'ls']);
  const row = tasks.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === id);
  return {
    id,
    pid,
    startTicks: procStartTicks(pid),
    task: row === undefined ? undefined : { pid: Number(row[1]), status: row[2] ?? '' },
    sandboxes,
  };
}

export function cgroupProcs(dir: string): number[] {
  try {
    return readFileSync(join(dir, 'cgroup.procs'), 'utf8').trim().split('\n').filter((l) => l !== '').map(Number);
  } catch {
    return [];
  }
}

// Resumes a stopped process; safe to call when it runs or is gone.
export function resume(pid: number): void {
  try {
    process.kill(pid, 'SIGCONT');
  } catch {
    // Gone.
  }
}
