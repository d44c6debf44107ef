// The node observer that reads the host directly: cgroups for node, `pods` and per-pod memory
// and process counts, /proc for memory capacity and PID limits, statfs for nodefs/imagefs/
// containerfs, and a cached background walk for per-pod disk usage. It produces the kubelet Summary
// the engine consumes, with the numbers computed the way cAdvisor computes them. A missing or
// unreadable source leaves its stat out (the kubelet's "no observation") and is reported; observe()
// never rejects.

import type { ObserveSettings } from '../api/agent-settings.js';
import { podIdentityProblem, podKey, printableValue, type Pod } from '../api/pod.js';
import type { MemoryStats, NodeStats, PodStats, PodStatsReads } from '../api/summary.js';
import type { NodeObserver, Observation, ObservePlan } from '../daemon/ports.js';
import { DECISION_GATE_DEFAULTS } from '../api/feature-gates.js';
import type { HugepageAdjustment } from '../api/hugepages.js';
import { nodeHostFs, type HostFs } from '../host/host-fs.js';
import { HUGEPAGES_DIR, listHugepagePools, readHugepageCapacity, readHugepagePools } from '../host/hugepages.js';
import { adjustForHugePages, chooseHugepageCapacity } from './hugepage-adjustment.js';
import { readNodeFilesystems } from './node-filesystems.js';
import { createMemoryReader } from './memory-reader.js';
import { nodePods } from './node-pod-uids.js';
import { nodeMemory, nodeRlimit, podsSystemContainer, readMemTotal } from './node-stats.js';
import { closeObserverCgroups, openObserverCgroups, type ObserverCgroups } from './observer-cgroups.js';
import { DEFAULT_DISK_WALK_BATCH_ENTRIES, DEFAULT_FULL_READ_INTERVAL_MS, resolveObserverPaths, type CgroupObserverContext } from './observer-options.js';
import { PodDiskUsageCache } from './pod-disk-usage.js';
import { podVolumesOnDisk } from './pod-volumes.js';
import { PodStatsCollector } from './pod-stats.js';
import { ProblemLog } from './problem-log.js';

export type { CgroupObserverContext } from './observer-options.js';

/** A NodeObserver over cgroupfs, /proc and statfs. */
export interface CgroupObserver extends NodeObserver {
  /** The problems of the latest observation (each a short sentence). */
  problems(): readonly string[];
  /**
   * Walks the disk usage of these pods now (or joins the walk already running) and resolves when it
   * is done; observe() only starts walks in the background, at most once per `diskUsageIntervalMs`.
   */
  refreshDiskUsage(pods: readonly Pod[]): Promise<void>;
  podVolumesPresent(pod: Pod): boolean | undefined;
  /** Closes the cgroup files kept open between syncs. Idempotent; a later observe() reopens them. */
  close(): void;
}

/** The observer for the compiled `observe` settings, as they are. */
export function createCgroupObserver(settings: ObserveSettings, context: CgroupObserverContext): CgroupObserver {
  const fs: HostFs = context.hostFs ?? nodeHostFs;
  const clock = context.clock;
  const logger = context.logger.child({ component: 'cgroup-observer' });
  const paths = resolveObserverPaths(settings);
  const nodeCgroup = (context.nodeCgroup ?? '').replace(/^\/+|\/+$/g, '');
  const problemLog = new ProblemLog(logger);
  const report = (reason: string): void => problemLog.report(reason);
  const diskCache = new PodDiskUsageCache(
    fs,
    { kubeletRootDir: paths.kubeletRootDir, podLogsDir: paths.podLogsDir, mountInfoPath: `${paths.procRoot}/1/mountinfo`, resolveHostPath: paths.resolveHostPath },
    settings.diskUsageIntervalMs,
    context.diskWalkBatchEntries ?? DEFAULT_DISK_WALK_BATCH_ENTRIES,
    () => clock.nowMs(),
  );
  const podStats = new PodStatsCollector(diskCache, context.processCountIntervalMs, report);
  const fullReadIntervalMs = context.fullReadIntervalMs ?? DEFAULT_FULL_READ_INTERVAL_MS;
  const hugepageAwareEviction = context.hugepageAwareEviction ?? DECISION_GATE_DEFAULTS.HugepageAwareEviction;
  const hugepagesDir = context.hugepagesDir ?? HUGEPAGES_DIR;

  // The hugepage capacity the last full observation subtracted: pools change rarely (an operator's
  // sysctl), and a notification's shortcut must not wait on sysfs.
  let hugepageBytesInForce = 0n;
  // The pool directories, listed once: the kernel fixes them at boot; only their counts change.
  let poolNames: readonly string[] | undefined;

  // The kubelet's summary provider: node.memory.availableBytes less the hugepage capacity (gate on).
  function hugepageAware(memory: MemoryStats): { memory: MemoryStats; hugepages: HugepageAdjustment } {
    poolNames ??= (() => {
      const listed = listHugepagePools(fs, hugepagesDir);
      return listed.ok ? listed.value : undefined;
    })();
    const host = poolNames === undefined ? readHugepageCapacity(fs, hugepagesDir) : readHugepagePools(fs, hugepagesDir, poolNames);
    if (!host.ok) report(`hugepages not read: ${host.reason}`);
    const nodeCapacityBytes = context.nodeHugepageCapacityBytes?.();
    const chosen = chooseHugepageCapacity(host.ok ? host.value : undefined, nodeCapacityBytes);
    if (chosen.mismatch !== undefined) report(chosen.mismatch);
    hugepageBytesInForce = hugepageAwareEviction ? chosen.capacityBytes : 0n;
    const adjusted = adjustForHugePages(memory, hugepageBytesInForce);
    const unadjusted = memory.availableBytes === undefined ? undefined : BigInt(Math.trunc(memory.availableBytes));
    const after = adjusted.availableBytes === undefined ? undefined : BigInt(Math.trunc(adjusted.availableBytes));
    const hugepages: HugepageAdjustment = {
      gateEnabled: hugepageAwareEviction,
      subtractedBytes: unadjusted === undefined || after === undefined ? 0n : unadjusted - after,
      capacityBytes: chosen.capacityBytes,
      capacitySource: chosen.source,
      ...(host.ok ? { host: host.value } : {}),
      ...(nodeCapacityBytes === undefined ? {} : { nodeCapacityBytes }),
      ...(unadjusted === undefined ? {} : { unadjustedAvailableBytes: unadjusted }),
    };
    return { memory: adjusted, hugepages };
  }

  let found: ObserverCgroups | undefined;
  let memTotalBytes: bigint | undefined;
  // Why the memory hierarchy was not found, the last time it was looked for.
  let hierarchyProblem = '';
  // Found once it succeeds; looked for on every observation until then.
  async function cgroups(): Promise<ObserverCgroups | undefined> {
    if (found !== undefined) return found;
    const opened = await openObserverCgroups(fs, paths.cgroupRoot, nodeCgroup, settings, context.maxOpenCgroupFiles);
    if (!opened.ok) {
      hierarchyProblem = `no memory cgroup hierarchy found under ${paths.cgroupRoot} (${opened.reason})`;
      report(`memory not observed: ${opened.reason}`);
    } else found = opened.value;
    return found;
  }

  // Why no pod can be measured at all, if none can.
  function podCgroupRootProblem(memoryCgroups: ObserverCgroups | undefined): string | undefined {
    if (memoryCgroups === undefined) return hierarchyProblem;
    const root = memoryCgroups.locator.podCgroupRootDir();
    return root.ok ? undefined : root.reason;
  }

  async function observe(allPods: readonly Pod[], plan: ObservePlan | undefined): Promise<Observation> {
    problemLog.begin();
    // A pod whose UID, name or namespace could not have come from the API server never reaches a
    // host path: it gets no stats (the engine cannot rank it on numbers not its own), and says why.
    const pods = allPods.filter((pod) => {
      const problem = podIdentityProblem(pod);
      if (problem !== null) report(`pod ${printableValue(podKey(pod))} refused: ${problem}`);
      return problem === null;
    });
    const nowMs = clock.nowMs();
    const time = new Date(nowMs).toISOString();
    // statfs may wait on a disk: started first, so it runs on the thread pool while cgroups are read.
    const filesystems = readNodeFilesystems(fs, paths, time, report);

    const node: NodeStats = {};
    if (context.nodeName !== undefined) node.nodeName = context.nodeName;
    const memoryCgroups = await cgroups();
    let hugepages: HugepageAdjustment | undefined;
    if (memoryCgroups !== undefined) {
      memTotalBytes = readMemTotal(memoryCgroups.fs, paths.procRoot, report);
      const memory = nodeMemory(memoryCgroups, memTotalBytes, time, report);
      if (memory !== undefined) ({ memory: node.memory, hugepages } = hugepageAware(memory));
      const podsContainer = podsSystemContainer(memoryCgroups, time, report);
      if (podsContainer !== undefined) node.systemContainers = [podsContainer];
    }
    const limits = nodeRlimit(fs, paths.procRoot, time, report);
    if (limits !== undefined) node.rlimit = limits;

    // Each pod under the UID the node knows it by: a static pod's own, not its mirror pod's.
    const { pods: onNode, refused } = nodePods(pods);
    for (const reason of refused) report(reason);
    diskCache.refreshIfDue(onNode);
    const collectPods = (): PodStats[] => {
      const uids = new Set<string>();
      const podStatsList: PodStats[] = [];
      for (const { pod, uid } of onNode) {
        uids.add(uid);
        const stats = podStats.collect(pod, uid, memoryCgroups, time);
        if (stats !== undefined) podStatsList.push(stats);
      }
      podStats.end(memoryCgroups, uids);
      return podStatsList;
    };

    if (plan === undefined) {
      podStats.begin(nowMs);
      const podStatsList = collectPods();
      for (const reason of diskCache.problems()) report(reason);
      return observation(node, await filesystems, podStatsList, memoryCgroups, hugepages, undefined, problemLog.end());
    }
    // The node's figures first, with every pod's as last read: the plan says what the pass needs
    // afresh, and a full read is due at least once per interval whatever it says.
    const layout = await filesystems;
    const carried: PodStatsReads = { memory: false, processes: false };
    podStats.begin(nowMs, carried);
    const beforePods = problemLog.mark();
    const preliminary = observation(node, layout, collectPods(), memoryCgroups, hugepages, carried, problemLog.pending());
    const needed = plan.podStatsNeeded(preliminary);
    const due = podStats.due(nowMs, fullReadIntervalMs);
    const processes = needed.processes || due.processes;
    // Counting walks the cgroups whose memory it reads with them.
    const reads: PodStatsReads = { memory: needed.memory || due.memory || processes, processes };
    let podStatsList = preliminary.summary.pods ?? [];
    if (reads.memory || reads.processes) {
      // The carried readings' problems give way to the fresh reading's.
      problemLog.rewind(beforePods);
      podStats.begin(nowMs, reads);
      podStatsList = collectPods();
    }
    for (const reason of diskCache.problems()) report(reason);
    return observation(node, layout, podStatsList, memoryCgroups, hugepages, reads, problemLog.end());
  }

  function observation(
    node: NodeStats,
    layout: Awaited<ReturnType<typeof readNodeFilesystems>>,
    pods: PodStats[],
    memoryCgroups: ObserverCgroups | undefined,
    hugepages: HugepageAdjustment | undefined,
    podStatsRead: PodStatsReads | undefined,
    problems: readonly string[],
  ): Observation {
    const { nodeFs, imageFs, containerFs, dedicatedImageFs, splitContainerFs } = layout;
    const withFs: NodeStats = { ...node };
    if (nodeFs !== undefined) withFs.fs = nodeFs;
    if (imageFs !== undefined || containerFs !== undefined) {
      withFs.runtime = {};
      if (imageFs !== undefined) withFs.runtime.imageFs = imageFs;
      if (containerFs !== undefined) withFs.runtime.containerFs = containerFs;
    }
    const rootProblem = podCgroupRootProblem(memoryCgroups);
    return {
      summary: { node: withFs, pods },
      dedicatedImageFs,
      splitContainerFs,
      problems,
      ...(rootProblem === undefined ? {} : { podCgroupRootProblem: rootProblem }),
      ...(hugepages === undefined ? {} : { hugepages }),
      ...(podStatsRead === undefined ? {} : { podStatsRead }),
    };
  }

  // Observations run one at a time (a notifier wake-up may arrive while the loop's sync is
  // observing): each one's problems are its own, and the caches are not read half-updated.
  let queue: Promise<unknown> = Promise.resolve();
  const observeSerially = (pods: readonly Pod[], plan?: ObservePlan): Promise<Observation> => {
    const next = queue.then(() => observe(pods, plan));
    queue = next.catch(() => undefined);
    return next;
  };

  const memory = createMemoryReader({
    cgroups: () => found,
    memTotalBytes: () => memTotalBytes,
    hasDiskStats: (uid) => diskCache.get(uid) !== undefined,
    adjustNodeMemory: (memory) => adjustForHugePages(memory, hugepageBytesInForce),
    nowMs: () => clock.nowMs(),
  });

  return {
    observe: observeSerially,
    memory,
    problems: () => problemLog.problems(),
    podVolumesPresent: (pod) => {
      const uid = nodePods([pod]).pods[0]?.uid;
      return uid === undefined ? undefined : podVolumesOnDisk(fs, paths.kubeletRootDir, uid);
    },
    refreshDiskUsage: (pods) => diskCache.refresh(nodePods(pods).pods),
    close: () => closeObserverCgroups(found),
  };
}
