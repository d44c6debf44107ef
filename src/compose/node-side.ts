// The node side of the agent, built from the compiled settings as they are: the observer (the
// cgroup observer, or the kubelet's summary), the kernel memory notifier, the kernel OOM kill
// watcher (sharing the notifier's one epoll loop) and the local terminator, all pointed at the
// same cgroups. On a real node the node is the hierarchy's root cgroup; the
// demo, the end-to-end tests and the benchmarks point it at a sandbox cgroup instead.

import { posix } from 'node:path';
import { ThreadedKillPath } from '../act/kill-path.js';
import { createPodTerminator, type PodTerminator } from '../act/pod-terminator.js';
import type { Clock } from '../api/clock.js';
import type { HostIdentity } from '../api/host-identity.js';
import type { Logger } from '../api/logger.js';
import type { Node } from '../api/pod.js';
import { parseQuantity, quantityValue } from '../api/quantity.js';
import type { LoadedConfig } from '../config/types.js';
import type { KillPath, LocalTerminator, MemoryThresholdNotifier, NodeObserver, OomKillWatcher } from '../daemon/ports.js';
import { nodeHostFs } from '../host/host-fs.js';
import { readHostIdentity } from '../host/host-identity.js';
import { resolvePodCgroupRoot } from '../host/pod-cgroup-locator.js';
import { createMemoryThresholdNotifier } from '../notifier/create-memory-threshold-notifier.js';
import { createOomKillWatcher, readNodeOomKillCounts } from '../notifier/create-oom-kill-watcher.js';
import type { OomKillCounts } from '../notifier/oom-cgroup-files.js';

export type { OomKillCounts };
import { createSharedEpollLoop, type SharedEpollLoop } from '../notifier/shared-epoll-loop.js';
import { createCgroupObserver } from '../observe/cgroup-observer.js';
import { nodeHugepageCapacityBytes } from '../observe/hugepage-adjustment.js';
import { createKubeletSummaryObserver } from '../observe/kubelet-summary-client.js';
import { createPsiSource } from '../observe/psi-source.js';
import type { PsiSource } from '../daemon/psi-condition-reporter.js';

/** The node-side ports of the agent, and the host's identity its Node is checked against. */
export interface NodeSide {
  readonly observer: NodeObserver;
  readonly notifier: MemoryThresholdNotifier;
  readonly oomKills: OomKillWatcher;
  readonly terminator: LocalTerminator;
  readonly identity: HostIdentity;
}

export interface NodeSideContext {
  readonly nodeName: string;
  readonly clock: Clock;
  readonly logger: Logger;
  /** The cgroup standing for the node, relative to each hierarchy's root: '' (the root, the default) on a real node. */
  readonly nodeCgroup?: string;
  /** The node's one epoll loop, shared by the notifier and the OOM kill watcher; without it each makes its own. */
  readonly epollLoop?: SharedEpollLoop;
  /** The Node object as last seen, whose hugepage capacity the kubelet subtracts from memory.available. */
  readonly node?: () => Node | null;
}

// The kubelet answers its summary in well under a second; a pass must not wait long for it.
const KUBELET_SUMMARY_TIMEOUT_MS = 5000;

export function hostObserver(config: LoadedConfig, context: NodeSideContext): NodeObserver {
  const settings = config.agent.observe;
  const { clock, logger } = context;
  if (settings.source === 'kubelet') return createKubeletSummaryObserver(settings, { timeoutMs: KUBELET_SUMMARY_TIMEOUT_MS, clock, logger });
  return createCgroupObserver(settings, {
    nodeName: context.nodeName,
    clock,
    logger,
    // Counts are fresh on every housekeeping pass; a notification's pass reuses them.
    processCountIntervalMs: config.eviction.housekeepingIntervalMs,
    // The kubelet's summary provider consults it; the kubelet's own summary needs nothing here.
    ...(config.eviction.featureGates === undefined ? {} : { hugepageAwareEviction: config.eviction.featureGates.HugepageAwareEviction }),
    ...(context.node === undefined ? {} : { nodeHugepageCapacityBytes: nodeHugepageCapacity(context.node) }),
    ...nodeCgroupOf(context),
  });
}

/**
 * The Node's hugepage capacity as the kubelet sums it; unknown until the Node is seen, or when an
 * entry is not a quantity (the host's pools are then used, and the difference reported).
 */
export function nodeHugepageCapacity(node: () => Node | null): () => bigint | undefined {
  return () => {
    try {
      return nodeHugepageCapacityBytes(node()?.status?.capacity, (raw) => quantityValue(parseQuantity(raw)));
    } catch {
      return undefined;
    }
  };
}

// The kernel watches one cgroup: with `auto`, whichever pod cgroup tree exists now.
function kernelCgroups(config: LoadedConfig, context: NodeSideContext): { cgroupRoot: string; nodeCgroup: string; podCgroupRoot: string } {
  const settings = config.agent.observe;
  const cgroupRoot = posix.join(settings.hostRoot, settings.cgroupRoot);
  const nodeCgroup = context.nodeCgroup ?? '';
  const podCgroupRoot = resolvePodCgroupRoot(nodeHostFs, cgroupRoot, nodeCgroup, settings.cgroupDriver, settings.podCgroupRoot);
  return { cgroupRoot, nodeCgroup, podCgroupRoot: posix.join(nodeCgroup, podCgroupRoot) };
}

export function hostNotifier(config: LoadedConfig, context: NodeSideContext): MemoryThresholdNotifier {
  return createMemoryThresholdNotifier(config.agent.notifier, {
    ...kernelCgroups(config, context),
    ...(context.epollLoop === undefined ? {} : { sharedLoop: context.epollLoop }),
    // The PSI trigger fallback writes /proc/pressure/memory: the container's own /proc (the
    // same kernel) is writable where the host's, mounted read-only, is not.
    procRoot: '/proc',
    clock: context.clock,
    logger: context.logger,
  });
}

/** The kubepods cgroup's pressure files (the PSI notifier's), for the PSI node conditions. */
export function hostPsiSource(config: LoadedConfig, context: NodeSideContext): PsiSource {
  const { cgroupRoot, podCgroupRoot } = kernelCgroups(config, context);
  const { hostRoot, procRoot } = config.agent.observe;
  return createPsiSource({ cgroupRoot, podCgroupRoot, procRoot: posix.join(hostRoot, procRoot), fs: nodeHostFs });
}

/** This host's boot ID, machine ID and system UUID, read under the host root. */
export function hostIdentity(config: LoadedConfig): HostIdentity {
  const { hostRoot, procRoot } = config.agent.observe;
  return readHostIdentity({ hostRoot, procRoot });
}

export function hostOomKillWatcher(config: LoadedConfig, context: NodeSideContext): OomKillWatcher {
  return createOomKillWatcher(config.agent.oomKills, { ...kernelCgroups(config, context), loop: context.epollLoop ?? createSharedEpollLoop(context.logger), fs: nodeHostFs, clock: context.clock, logger: context.logger });
}

/** The kernel's OOM kill counters of this node and its containers, for `explain`. */
export function hostOomKillCounts(config: LoadedConfig, context: NodeSideContext): OomKillCounts | null {
  return readNodeOomKillCounts({ ...kernelCgroups(config, context), fs: nodeHostFs });
}

export function hostTerminator(config: LoadedConfig, context: NodeSideContext): PodTerminator {
  return createPodTerminator(config.agent.observe, { clock: context.clock, logger: context.logger, ...nodeCgroupOf(context) });
}

/**
 * The kill path on the host, beside the notifier whose mode it needs: the memcg v1 thresholds
 * (cgroup.event_control) wake it. On any other mode there is none: the main thread answers.
 */
export function hostKillPath(config: LoadedConfig, context: NodeSideContext, notifier: MemoryThresholdNotifier, terminator: PodTerminator): KillPath | undefined {
  if (notifier.mode !== 'memcg-v1' || !config.agent.notifier.killPath) return undefined;
  const { cgroupRoot, nodeCgroup, podCgroupRoot } = kernelCgroups(config, context);
  return new ThreadedKillPath({ memoryMount: posix.join(cgroupRoot, 'memory'), nodeCgroup, podCgroupRoot, terminator, clock: context.clock, logger: context.logger });
}

function nodeCgroupOf(context: NodeSideContext): { nodeCgroup?: string } {
  return context.nodeCgroup === undefined ? {} : { nodeCgroup: context.nodeCgroup };
}
