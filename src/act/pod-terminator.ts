// Ends an evicted pod's containers on this node, from its cgroup, without waiting for the API server
// or the kubelet: SIGTERM to every process of the pod's containers at once, SIGKILL to whatever is
// left after the grace period (`cgroup.kill` on cgroup v2, which the kernel applies to the whole
// container cgroup at once, forks included). This is what frees memory within milliseconds under hard
// memory pressure. The pod's sandbox (pause) process is never signalled (pod-containers.ts says why
// and how it is told apart), and a container the kubelet restarts in the pod while the deletion has
// not landed (a slow or unreachable API server) is ended as soon as it appears, checked every second,
// for as long as the agent retries the deletion.
//
// Nothing outside the pod can be hit, whatever the API server says: a UID not in the API server's
// form is refused; the pod cgroup is found only inside the pod cgroup root (real paths compared);
// each process is pinned by a pidfd and proven a member of the container's cgroup before it is
// signalled through that pidfd (process-signaller.ts); PID 1 and the agent are never signalled. It
// needs the host's PID namespace (hostPID) and its cgroup mount.

import { join } from 'node:path';
import type { ObserveSettings } from '../api/agent-settings.js';
import type { Clock } from '../api/clock.js';
import type { Logger } from '../api/logger.js';
import { nodePodUid } from '../api/node-pod-uid.js';
import { isPodUid, podKey, printableValue, type Pod } from '../api/pod.js';
import type { LocalTerminator, LocalTermination } from '../daemon/ports.js';
import { logCapabilityError, missingCapabilityError } from '../host/capabilities.js';
import { detectCgroupLayout, type CgroupLayout } from '../host/cgroup-layout.js';
import { nodeHostFs, type HostFs } from '../host/host-fs.js';
import { isPlainRelativePath } from '../host/path-safety.js';
import { PodCgroupLocator } from '../host/pod-cgroup-locator.js';
import { findNamespaceRoot } from '../host/proc-pid.js';
import { readFailed, readOk, type ReadResult } from '../host/read-result.js';
import { createLibcProcessHandles } from '../../native/libc-process-handles.js';
import type { ProcessHandles } from '../../native/process-handles.js';
import { podContainerCgroups, type PodContainerCgroups } from './pod-containers.js';
import { pidsInCgroupTrees, ProcessSignaller, releaseMemoryOfPids, type SignallerPlace, type SignalOutcome } from './process-signaller.js';

export interface PodTerminatorContext {
  /** The cgroup standing for the node, relative to the memory hierarchy's root ('' on a real node). */
  readonly nodeCgroup?: string;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly hostFs?: HostFs;
  /** The kernel's process handles (pidfds) by default; a test may wrap them to inject a race. */
  readonly processes?: ProcessHandles;
  /** The agent's own PID, never signalled: process.pid by default. */
  readonly selfPid?: number;
}

/** How often a terminated pod is checked for a container the kubelet restarted in it. */
export const RESTART_SWEEP_INTERVAL_MS = 1000;
/** How long a terminated pod is kept ended: the time the agent retries its deletion. */
export const TERMINATED_POD_WATCH_MS = 10 * 60_000;
// SIGKILL rounds on cgroup v1 (no cgroup.kill): a forking container is re-read until it is empty.
const MAX_KILL_ROUNDS = 20;

interface NodeCgroups {
  readonly layout: CgroupLayout;
  readonly locator: PodCgroupLocator;
  readonly signaller: ProcessSignaller;
}

/** A pod this terminator ended, kept ended until its cgroup is gone or the watch is over. */
interface TerminatedPod {
  pod: Pod;
  readonly podDir: string;
  sandbox: string | null;
  /** A container the pod's status lists was found in this cgroup: it is this pod's, and its other containers may be ended too. */
  confirmed: boolean;
  readonly untilMs: number;
  /** The container cgroups in their grace period (SIGTERM sent, SIGKILL due); empty once it is over. */
  inGrace: Set<string>;
}

// The listed containers always; the others once the cgroup is known to be this pod's.
function containersToEnd(entry: TerminatedPod, plan: PodContainerCgroups): string[] {
  return entry.confirmed ? [...plan.listed, ...plan.unlisted] : [...plan.listed];
}

/**
 * What the kill path needs to end a pod's containers on a thread of its own: the containers found
 * now (those a terminate would end; none until one the pod's status lists is found), and where the
 * signaller finds each process and proves it inside them.
 */
export interface PreparedTermination {
  readonly podDir: string;
  readonly containers: readonly string[];
  readonly place: SignallerPlace;
}

/** The local terminator, and what the kill path asks of it. */
export interface PodTerminator extends LocalTerminator {
  adopt(pod: Pod, gracePeriodMs: number): void;
  /** The pod's containers to end, found now, without signalling or remembering anything. */
  prepare(pod: Pod): ReadResult<PreparedTermination>;
  /**
   * Each pod's cgroup directory, found as `terminate` finds it (null when it has none here); only
   * these pods' and the ended pods' directories stay remembered, so pod churn does not grow them.
   */
  podCgroupDirs(pods: readonly Pod[]): (string | null)[];
}

/** The terminator for the compiled `observe` settings: the pods' cgroups are found as the observer finds them. */
export function createPodTerminator(settings: Pick<ObserveSettings, 'hostRoot' | 'cgroupRoot' | 'procRoot' | 'cgroupDriver' | 'podCgroupRoot'>, context: PodTerminatorContext): PodTerminator {
  const fs = context.hostFs ?? nodeHostFs;
  const log = context.logger.child({ component: 'pod-terminator' });
  const clock = context.clock;
  const handles = context.processes ?? createLibcProcessHandles();
  const selfPid = context.selfPid ?? process.pid;
  const cgroupRoot = join(settings.hostRoot, settings.cgroupRoot);
  const procRoot = join(settings.hostRoot, settings.procRoot);
  const nodeCgroup = (context.nodeCgroup ?? '').replace(/^\/+|\/+$/g, '');
  const terminated = new Map<string, TerminatedPod>();
  let found: NodeCgroups | null = null;
  let cancelSweep: (() => void) | null = null;

  const nodeCgroups = (): ReadResult<NodeCgroups> => {
    if (found !== null) return readOk(found);
    if (!isPlainRelativePath(nodeCgroup)) return readFailed(`the node cgroup ${JSON.stringify(nodeCgroup)} is not a plain relative path`);
    const layout = detectCgroupLayout(fs, cgroupRoot);
    if (!layout.ok) return readFailed(`no memory cgroup hierarchy: ${layout.reason}`);
    const { memoryRoot, version } = layout.value;
    let namespaceRoot: ReadResult<string> | null = null;
    const signaller = new ProcessSignaller({
      fs,
      procRoot,
      handles,
      memoryRoot,
      version,
      selfPid,
      // Found on the first signal and kept once found.
      namespaceRoot: () => {
        if (namespaceRoot?.ok === true) return namespaceRoot;
        let selfText = '';
        try {
          selfText = fs.readSmallFile(`${procRoot}/self/cgroup`);
        } catch {
          // Reported below as a missing line.
        }
        namespaceRoot = findNamespaceRoot(fs, memoryRoot, version, selfText, selfPid);
        return namespaceRoot;
      },
    });
    const nodeDir = nodeCgroup === '' ? memoryRoot : `${memoryRoot}/${nodeCgroup}`;
    found = { layout: layout.value, locator: new PodCgroupLocator(fs, nodeDir, settings.cgroupDriver, settings.podCgroupRoot), signaller };
    return readOk(found);
  };

  // Ends every process of the container cgroups at once: `cgroup.kill` where the kernel has it
  // (v2, Linux 5.14) and neither the agent nor init is inside; pidfd SIGKILL rounds otherwise. Then
  // each killed process's memory is reaped at once with process_mrelease (Linux 5.15), rather than
  // when the process gets to exit (escalation.md has the figures).
  const killNow = (cgroups: NodeCgroups, dirs: readonly string[]): SignalOutcome => {
    const pids = pidsInCgroupTrees(fs, dirs);
    if (pids.size === 0) return { signalled: 0, refusals: [] };
    if (cgroups.layout.version === 'v2' && !pids.has(selfPid) && !pids.has(1) && dirs.every((dir) => fs.exists(`${dir}/cgroup.kill`))) {
      try {
        for (const dir of dirs) fs.writeControlFile(`${dir}/cgroup.kill`, '1');
        return { signalled: pids.size, refusals: [], released: releaseMemoryOfPids(handles, pids.keys()) };
      } catch (error) {
        log.warn('cgroup.kill failed; signalling each process', { err: (error as NodeJS.ErrnoException).code ?? String(error) });
      }
    }
    let signalled = 0;
    let released = 0;
    const refusals: SignalOutcome['refusals'][number][] = [];
    const done = new Set<number>();
    for (let round = 0; round < MAX_KILL_ROUNDS; round++) {
      // A process already killed may be listed until it has exited: each is signalled once.
      const outcome = cgroups.signaller.signalTrees(dirs, 'SIGKILL', done, { release: true });
      signalled += outcome.signalled;
      released += outcome.released ?? 0;
      refusals.push(...outcome.refusals);
      // Done when nothing new was left to signal (a fork since the last round is new).
      if (outcome.signalled === 0) break;
    }
    // A process refused in one round is refused in the next: each is reported once.
    return { signalled, released, refusals: [...new Map(refusals.map((r) => [r.pid, r])).values()] };
  };

  const report = (pod: Pod, what: string, outcome: SignalOutcome): string | undefined => {
    if (outcome.refusals.length === 0) return undefined;
    const reason = `${outcome.refusals.length} process(es) of pod ${printableValue(podKey(pod))} not signalled: ${outcome.refusals
      .slice(0, 3)
      .map((r) => (r.pid === 0 ? r.reason : `pid ${r.pid}: ${r.reason}`))
      .join('; ')}`;
    log.warn(`local termination refused for some processes (${what})`, { pod: podKey(pod), uid: pod.metadata.uid, reason });
    // EPERM from pidfd_send_signal: the pod's processes run as another user and CAP_KILL is missing.
    const denied = outcome.refusals.filter((r) => r.reason.includes('EPERM'));
    if (denied.length > 0) {
      const error = missingCapabilityError('CAP_KILL', `Signalling ${denied.length} process(es) of pod ${printableValue(podKey(pod))} was refused (EPERM)`, 'the pod is left to the API server and the kubelet');
      logCapabilityError(log, error, { pod: podKey(pod), what });
    }
    return reason;
  };

  // Every second, while terminated pods are watched: a container restarted in one is ended at once
  // (its pod already had its grace period); a pod whose cgroup is gone is forgotten.
  const sweep = (): void => {
    const cgroups = nodeCgroups();
    if (!cgroups.ok) return;
    for (const [uid, entry] of terminated) {
      if (clock.nowMs() > entry.untilMs) {
        terminated.delete(uid);
        continue;
      }
      const plan = podContainerCgroups(fs, procRoot, entry.podDir, entry.pod, entry.sandbox);
      if (!plan.ok) {
        if (plan.notFound) terminated.delete(uid);
        continue;
      }
      entry.sandbox = plan.value.sandbox;
      entry.confirmed ||= plan.value.listed.length > 0;
      const due = containersToEnd(entry, plan.value).filter((dir) => !entry.inGrace.has(dir));
      const outcome = killNow(cgroups.value, due);
      if (outcome.signalled > 0) log.warn('ended a container restarted in a pod being evicted', { pod: podKey(entry.pod), uid, processes: outcome.signalled });
      report(entry.pod, 'restarted container', outcome);
    }
    scheduleSweep();
  };
  const scheduleSweep = (): void => {
    if (cancelSweep !== null || terminated.size === 0) return;
    cancelSweep = clock.after(RESTART_SWEEP_INTERVAL_MS, () => {
      cancelSweep = null;
      sweep();
    });
  };

  // The pod's cgroup and the container cgroups to end, found now (nothing is signalled or
  // remembered); a LocalTermination when there is nothing to end, with the reason logged.
  const resolve = (pod: Pod): { uid: string; key: string; cgroups: NodeCgroups; podDir: string; plan: PodContainerCgroups; previous: TerminatedPod | undefined } | LocalTermination => {
    // The UID the pod's cgroup is named after: a static pod's own for a mirror pod.
    const id = isPodUid(pod.metadata.uid) ? nodePodUid(pod) : null;
    const uid = id?.ok === true ? id.uid : pod.metadata.uid;
    const key = podKey(pod);
    if (id?.ok !== true || !isPodUid(uid)) {
      const refused = id === null || id.ok ? `the pod UID ${printableValue(uid)} is not in the API server's form` : `the pod's node UID is refused: ${id.reason}`;
      log.warn('local termination refused', { pod: printableValue(key), reason: refused });
      return { signalled: 0, refused };
    }
    const cgroups = nodeCgroups();
    if (!cgroups.ok) {
      log.warn('cannot terminate pods locally', { reason: cgroups.reason });
      return { signalled: 0 };
    }
    const located = cgroups.value.locator.locateOrWhy(uid, pod.status?.qosClass);
    if (!located.ok) {
      if (located.notFound) {
        log.warn('pod cgroup not found; nothing to terminate locally', { pod: key, uid });
        return { signalled: 0 };
      }
      log.warn('local termination refused', { pod: key, uid, reason: located.reason });
      return { signalled: 0, refused: located.reason };
    }
    const podDir = located.value;
    const previous = terminated.get(uid);
    const plan = podContainerCgroups(fs, procRoot, podDir, pod, previous?.sandbox ?? null);
    if (!plan.ok) {
      log.warn('pod cgroup not readable; nothing to terminate locally', { pod: key, uid, reason: plan.reason });
      return { signalled: 0 };
    }
    return { uid, key, cgroups: cgroups.value, podDir, plan: plan.value, previous };
  };

  // The pod is remembered as ended: its containers in their grace period until SIGKILL, and
  // checked for a restarted container every second. Returns the containers it ends.
  const keepEnded = (found: Exclude<ReturnType<typeof resolve>, LocalTermination>, pod: Pod, gracePeriodMs: number): string[] => {
    const { uid, key, cgroups, podDir, plan, previous } = found;
    const entry: TerminatedPod = previous ?? { pod, podDir, sandbox: plan.sandbox, confirmed: false, untilMs: clock.nowMs() + TERMINATED_POD_WATCH_MS, inGrace: new Set() };
    entry.pod = pod;
    entry.sandbox = plan.sandbox;
    entry.confirmed ||= plan.listed.length > 0;
    terminated.set(uid, entry);
    const containers = containersToEnd(entry, plan);
    if (gracePeriodMs > 0) {
      for (const dir of containers) entry.inGrace.add(dir);
      clock.after(gracePeriodMs, () => {
        for (const dir of containers) entry.inGrace.delete(dir);
        const left = killNow(cgroups, containers);
        if (left.signalled > 0) log.info('grace period over; killed what was left', { pod: key, uid, processes: left.signalled });
        report(pod, 'after the grace period', left);
      });
    }
    scheduleSweep();
    return containers;
  };

  const terminate = async (pod: Pod, gracePeriodMs: number): Promise<LocalTermination> => {
    const found = resolve(pod);
    if (!('plan' in found)) return found;
    const containers = keepEnded(found, pod, gracePeriodMs);
    const outcome = gracePeriodMs <= 0 ? killNow(found.cgroups, containers) : found.cgroups.signaller.signalTrees(containers, 'SIGTERM');
    log.debug('pod containers signalled', { pod: found.key, uid: found.uid, containers: containers.length, sandbox: found.plan.sandbox, spared: found.plan.spared, processes: outcome.signalled, memoryReleased: outcome.released ?? 0 });
    const refused = report(pod, gracePeriodMs <= 0 ? 'SIGKILL' : 'SIGTERM', outcome);
    return refused === undefined ? { signalled: outcome.signalled } : { signalled: outcome.signalled, refused };
  };

  return {
    terminate,
    adopt(pod: Pod, gracePeriodMs: number) {
      const found = resolve(pod);
      if (!('plan' in found)) return;
      // Signalled already (the kill path's one round): with no grace period, at once the rounds
      // that catch what forked meanwhile, as terminate's SIGKILL does.
      const containers = keepEnded(found, pod, gracePeriodMs);
      if (gracePeriodMs <= 0) report(pod, 'SIGKILL', killNow(found.cgroups, containers));
    },
    prepare(pod: Pod): ReadResult<PreparedTermination> {
      const found = resolve(pod);
      if (!('plan' in found)) return readFailed(found.refused ?? 'the pod has no cgroup to end on this node');
      const { cgroups, podDir, plan, previous } = found;
      // As containersToEnd: the others only once a listed container proves the cgroup the pod's.
      const confirmed = previous?.confirmed === true || plan.listed.length > 0;
      const containers = confirmed ? [...plan.listed, ...plan.unlisted] : [];
      const namespaceRoot = cgroups.signaller.namespaceRoot();
      if (!namespaceRoot.ok) return readFailed(namespaceRoot.reason);
      return readOk({ podDir, containers, place: { procRoot, memoryRoot: cgroups.layout.memoryRoot, version: cgroups.layout.version, selfPid, namespaceRoot: namespaceRoot.value } });
    },
    podCgroupDirs(pods: readonly Pod[]): (string | null)[] {
      const cgroups = nodeCgroups();
      if (!cgroups.ok) return pods.map(() => null);
      const { locator } = cgroups.value;
      const uids = new Set(terminated.keys());
      const dirs = pods.map((pod) => {
        const id = isPodUid(pod.metadata.uid) ? nodePodUid(pod) : null;
        if (id?.ok !== true || !isPodUid(id.uid)) return null;
        uids.add(id.uid);
        const located = locator.locateOrWhy(id.uid, pod.status?.qosClass);
        return located.ok ? located.value : null;
      });
      locator.retain(uids);
      return dirs;
    },
    release(uid: string) {
      // By the API UID the daemon knows; a static pod's entry is under its node UID.
      for (const [key, entry] of terminated) if (key === uid || entry.pod.metadata.uid === uid) terminated.delete(key);
    },
  };
}
