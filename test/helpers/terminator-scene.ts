// A node in a cgroup sandbox for the local-termination tests, on cgroup v1 (here) and v2 (in the
// guest): the node cgroup nested a few levels down the sandbox, so that any path climbing out of
// the pod (`<uid>/../../..`) still lands inside the sandbox; a pod with a sandbox (pause) process
// and containers, as the kubelet lays them out with the cgroupfs driver; bystanders everywhere a
// wrong path could lead (a sibling pod, a system daemon beside kubepods, cgroups beside and above
// the node); and the crafted UIDs a hostile API server could send.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn, type ChildProcess } from 'node:child_process';
import type { Pod } from '../../src/api/pod.js';
import type { CgroupSandbox, SandboxProcess } from './cgroup-sandbox.js';

/** The node cgroup, relative to the sandbox: deep enough that climbing out of a pod stays in the sandbox. */
export const NODE_CGROUP_IN_SANDBOX = 'outer/middle/node';

let podCounter = 0;

/** A 64-hex-digit container ID made of one repeated digit. */
export const containerIdOf = (digit: string): string => digit.repeat(64);

/** A fresh API-form UID. */
export function freshUid(): string {
  return `5e1f7a2b-3c4d-4e5f-8a6b-${String(++podCounter).padStart(12, '0')}`;
}

/** A Running Burstable pod whose status lists these containers (name → container ID). */
export function scenePod(name: string, uid: string, containers: Record<string, string>): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'termination', uid },
    spec: { containers: Object.keys(containers).map((n) => ({ name: n })) },
    status: { phase: 'Running', qosClass: 'Burstable', containerStatuses: Object.entries(containers).map(([n, id]) => ({ name: n, containerID: `containerd://${id}` })) },
  };
}

/** A pod as the kubelet runs it: its cgroup, sandbox and container processes, and its Pod object. */
export interface ScenePod {
  readonly uid: string;
  readonly pod: Pod;
  /** The pod cgroup, relative to the sandbox. */
  readonly dir: string;
  readonly pause: SandboxProcess;
  readonly containers: Readonly<Record<string, SandboxProcess>>;
  /** A container cgroup of this pod, relative to the sandbox. */
  container(id: string): string;
}

/** The pod cgroup of a UID under the scene's node (cgroupfs names, Burstable), relative to the sandbox. */
export function podDirOf(uid: string): string {
  return `${NODE_CGROUP_IN_SANDBOX}/kubepods/burstable/pod${uid}`;
}

// Start times are in clock ticks (10 ms): a container must start in a later tick than the sandbox.
const sleepMs = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Starts a pod: the sandbox (pause) process first, in a cgroup named after an ID the status does not
 * list, then one idle process per container (name → container ID digit).
 */
export async function startScenePod(sandbox: CgroupSandbox, name: string, containers: Record<string, string>, uid = freshUid()): Promise<ScenePod> {
  const dir = podDirOf(uid);
  const ids = Object.fromEntries(Object.entries(containers).map(([n, digit]) => [n, containerIdOf(digit)]));
  const container = (id: string): string => `${dir}/${id}`;
  const pause = await sandbox.startIdle(container(containerIdOf('0')));
  await sleepMs(30);
  const started: Record<string, SandboxProcess> = {};
  for (const [n, id] of Object.entries(ids)) started[n] = await sandbox.startIdle(container(id));
  return { uid, pod: scenePod(name, uid, ids), dir, pause, containers: started, container };
}

/** Processes where a wrong path could lead: a sibling pod, a system daemon, beside and above the node. */
export async function startBystanders(sandbox: CgroupSandbox): Promise<SandboxProcess[]> {
  const sibling = await startScenePod(sandbox, 'sibling', { web: 'b' });
  return [
    sibling.pause,
    ...Object.values(sibling.containers),
    await sandbox.startIdle(`${NODE_CGROUP_IN_SANDBOX}/system.slice/daemon`),
    await sandbox.startIdle('outer/middle/beside-node'),
    await sandbox.startIdle('outer/beside-middle'),
    await sandbox.startIdle('top-level'),
  ];
}

/**
 * UIDs a hostile or broken API server could send for a pod whose real UID is `real`: traversal out
 * of the pod (to the node and above it, never above the sandbox: the node is three levels down),
 * absolute paths, empty and dot names, very long, unicode look-alikes, slashes, NUL and newlines,
 * and the real UID with something appended. Each label says what it tries.
 */
export function hostileUids(real: string, sandboxPath: string): readonly { readonly label: string; readonly uid: string }[] {
  return [
    { label: 'traversal to the node', uid: `${real}/../../..` },
    { label: 'traversal above the node (still inside the sandbox)', uid: `${real}/../../../../../..` },
    { label: 'bare traversal', uid: '../../..' },
    { label: 'dot-dot', uid: '..' },
    { label: 'dot', uid: '.' },
    { label: 'empty', uid: '' },
    { label: 'absolute root', uid: '/' },
    { label: 'absolute path of the sandbox', uid: sandboxPath },
    { label: 'absolute path of the sandbox, as a pod directory', uid: `/../../../../../..${sandboxPath}` },
    { label: 'trailing slash', uid: `${real}/` },
    { label: 'a container of the real pod', uid: `${real}/${containerIdOf('c')}` },
    { label: 'very long', uid: `${real}${'a'.repeat(5000)}` },
    { label: 'very long traversal', uid: `${real}${'/..'.repeat(1500)}` },
    { label: 'unicode dashes', uid: real.replaceAll('-', '\u2010') },
    { label: 'unicode letters', uid: 'ü'.repeat(36) },
    { label: 'fullwidth digits', uid: real.replace(/[0-9]/g, (d) => String.fromCodePoint(0xff10 + Number(d))) },
    { label: 'NUL inside', uid: `${real}\0/../..` },
    { label: 'newline inside', uid: `${real}\n..` },
    { label: 'leading space', uid: ` ${real}` },
    { label: 'glob', uid: '*' },
    { label: 'the systemd escape of the real UID', uid: real.replaceAll('-', '_') },
  ];
}

/**
 * Starts a long-lived process outside every pod whose PID is `pid` (a PID just freed): the kernel
 * hands out the PID after `ns_last_pid`, so it is set just below. Another process on the machine
 * forking at the same moment takes the PID instead; then null is returned and the caller tries again.
 */
export function startWithPid(pid: number): ChildProcess | null {
  writeFileSync('/proc/sys/kernel/ns_last_pid', String(pid - 1));
  const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
  if (child.pid === pid) return child;
  child.kill('SIGKILL');
  return null;
}

/** Whether the kernel lets this process choose the next PID (root in the host's PID namespace). */
export function pidChoiceUnavailable(): string | null {
  if (!existsSync('/proc/sys/kernel/ns_last_pid')) return 'no /proc/sys/kernel/ns_last_pid';
  try {
    // Writing back what it holds changes nothing.
    writeFileSync('/proc/sys/kernel/ns_last_pid', readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
    return null;
  } catch (error) {
    return `cannot write /proc/sys/kernel/ns_last_pid: ${(error as Error).message}`;
  }
}

/** Waits, synchronously, until a PID is no longer in use (its process exited and was reaped). */
export function waitPidFreedSync(pid: number, timeoutMs = 5000): void {
  const deadline = Date.now() + timeoutMs;
  while (existsSync(`/proc/${pid}`)) {
    if (Date.now() > deadline) throw new Error(`pid ${pid} still in use after ${timeoutMs} ms`);
  }
}
